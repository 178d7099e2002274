"""The statistics projections kept up to date: each ended match's figures in the `figures` table.

The referee records a match's figures as it ends (`engines.figures`), so a log written by matchlog
rarely needs this. Matches that got there any other way (an import, a fork, an undo after the
end, an interrupted tournament's abandonments, a figures version change) are projected here, from
their logs, before statistics are read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from matchlog.engines.figures import FIGURES_VERSION, Figure, Tally
from matchlog.events import Record
from matchlog.store import Figures, Store

from .fold import by_match, engine_of, fold

__all__ = ["figures_of", "refresh", "stale"]


def stale(store: Store) -> list[tuple[UUID, int]]:
    """Ended matches whose figures are missing, older than their log, or of another version."""
    return [
        (row[0], row[1])
        for row in store.query(
            """
            SELECT m.match_id, m.last_seq FROM matches m LEFT JOIN projected p USING (match_id)
            WHERE m.status <> 'running'
              AND (p.match_id IS NULL OR p.last_seq <> m.last_seq OR p.version <> ?)
            ORDER BY m.match_id
            """,
            [FIGURES_VERSION],
        )
    ]


class _Tallying:
    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def begin(self, state: Any) -> None:
        pass

    def on_event(self, before: Any, record: Record, after: Any) -> None:
        self.tally.add(record.seq, before, record.event, after)

    def end(self, state: Any) -> None:
        pass


def _projected(records: Sequence[Record], heads: dict[UUID, int]) -> Figures:
    match_id = records[0].match_id
    return Figures(match_id, heads[match_id], FIGURES_VERSION, tuple(figures_of(records)))


def figures_of(records: Sequence[Record]) -> list[Figure]:
    """A match's figures, from its log (its effective history: what undos took back does not count)."""
    engine = engine_of(records)
    tally = Tally(engine)
    fold(records, _Tallying(tally), engine=engine)
    return tally.figures()


def refresh(
    store: Store,
    *,
    batch: int = 500,
    on_progress: Callable[[int, int], None] | None = None,
    skipped: list[str] | None = None,
) -> int:
    """Project every stale match; returns how many there were. A match that cannot be projected
    (a game this matchlog does not know, an event it cannot read or fold) is left out and named
    in `skipped`, so one bad match never keeps the others from their statistics.

    Raises:
        StoreError: the log is read-only or the write failed.
    """
    todo = stale(store)
    done = 0
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        heads = dict(chunk)
        try:
            sets = [_projected(records, heads) for records in by_match(store.records(list(heads)))]
        except Exception:  # one of them cannot be projected: find which, one by one
            sets = []
            for match_id in heads:
                try:
                    sets.append(_projected(store.read(match_id), heads))
                except Exception as error:
                    if skipped is not None:
                        skipped.append(f"match {match_id}: {getattr(error, 'message', None) or error}")
        store.put_figures(sets)
        done += len(chunk)
        if on_progress is not None:
            on_progress(done, len(todo))
    return len(todo)
