"""Who won each match, read from the log's own events in the order the log committed them.

Ratings and duel verdicts are projections: they are computed again from the events each time,
never from the catalogue beside them (which `verify --deep` checks, but which is derived data).
A match counts from its effective end (an ended match whose end was undone is running again),
placed in the log's commit order by the leaf of that end; nothing later than `head`, the last
leaf when the reading began, is read, so one reading is one prefix of the log.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from matchlog.events import (
    ActionsUndone,
    ChanceCommitted,
    ChanceRevealed,
    MatchEnded,
    MatchStarted,
    Outcome,
    decode,
)

__all__ = ["LogHead", "Result", "log_head", "results"]

_TYPES = ("match.started", "match.ended", "match.undone", "match.chance_committed", "match.chance_revealed")


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """One match as ratings and duels see it: how it started, how it ended (None while it runs),
    when and where in the log's commit order (`leaf`), and its chance: the first commitment and
    the first seed revealed."""

    match_id: str
    started: MatchStarted
    outcome: Outcome | None
    ended_at_us: int | None
    leaf: int
    commitment: str | None = None
    seed: str | None = None
    started_leaf: int = -1  # the leaf of its start: where the log committed it


class LogHead(msgspec.Struct, frozen=True):
    """The last leaf of the log (-1 for an empty one) and its event's chain hash (hex): what the
    log was when a projection was read from it. The log below it never changes, so the head
    names one prefix of the log, and a projection read at it, for good."""

    leaf: int
    hash: str | None


def log_head(store: Any) -> LogHead:
    """The log's head now."""
    rows = store.query("SELECT leaf, hash FROM events WHERE leaf = (SELECT max(leaf) FROM events)")
    if not rows:
        return LogHead(-1, None)
    return LogHead(int(rows[0][0]), bytes(rows[0][1]).hex())


def results(
    store: Any,
    *,
    game: str | None = None,
    series: str | None = None,
    duel: str | None = None,
    since: datetime | None = None,
    head: int | None = None,
) -> tuple[int, list[Result]]:
    """(head, the matches of the log up to leaf `head`, ended ones in the order their ends were
    committed, then running ones), of one game, series or duel, ended at or after `since`;
    `head` is the log's last leaf unless given.

    Raises:
        DecodeError: a stored event does not decode (see `matchlog verify`).
    """
    if head is None:
        head_row = store.query("SELECT max(leaf) FROM events")
        head = -1 if not head_row or head_row[0][0] is None else int(head_row[0][0])
    where, params = ["e.leaf <= ?"], [head]
    starts = ["s.type = 'match.started'", "s.seq = 0", "s.leaf <= ?"]
    start_params: list[Any] = [head]
    if game is not None:
        starts.append("s.game = ?")
        start_params.append(game)
    if series is not None:
        starts.append("s.payload ->> '$.series.id' = ?")
        start_params.append(series)
    if duel is not None:
        starts.append("s.payload ->> '$.duel.id' = ?")
        start_params.append(duel)
    types = ", ".join(f"'{t}'" for t in _TYPES)
    rows = store.query(
        f"""WITH chosen AS (SELECT s.match_id FROM events s WHERE {" AND ".join(starts)})
        SELECT e.match_id::VARCHAR, e.seq, e.type, e.version, e.payload, e.leaf, epoch_us(e.recorded_at)
        FROM events e JOIN chosen USING (match_id)
        WHERE e.type IN ({types}) AND {" AND ".join(where)}
        ORDER BY e.match_id, e.seq""",
        [*start_params, *params],
    )
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)  # the log's times are UTC
    since_us = None if since is None else int(since.timestamp() * 1_000_000)
    found = [
        result
        for result in _matches(rows)
        if since_us is None or (result.ended_at_us is not None and result.ended_at_us >= since_us)
    ]
    found.sort(key=lambda r: (r.outcome is None, r.leaf, r.match_id))
    return head, found


def _matches(rows: Sequence[tuple[Any, ...]]) -> Iterator[Result]:
    """Each match's Result, from its rows (ordered by match and seq)."""
    group: list[tuple[Any, ...]] = []
    for row in rows:
        if group and row[0] != group[0][0]:
            yield _result(group)
            group = []
        group.append(row)
    if group:
        yield _result(group)


def _result(rows: Sequence[tuple[Any, ...]]) -> Result:
    events = [
        (seq, decode(payload, tag=kind, version=version), leaf, at) for _, seq, kind, version, payload, leaf, at in rows
    ]
    started = events[0][1]
    assert isinstance(started, MatchStarted)
    taken = {seq for _, event, _, _ in events if isinstance(event, ActionsUndone) for seq in event.seqs}
    end = None
    for seq, event, leaf, at in events:
        if isinstance(event, MatchEnded) and seq not in taken:
            end = (event, leaf, at)
    commitment = next((e.commitment for _, e, _, _ in events if isinstance(e, ChanceCommitted)), None)
    seed = next((e.seed for _, e, _, _ in events if isinstance(e, ChanceRevealed)), None)
    return Result(
        match_id=rows[0][0],
        started=started,
        outcome=None if end is None else end[0].outcome,
        ended_at_us=None if end is None else end[2],
        leaf=events[0][2] if end is None else end[1],
        commitment=commitment,
        seed=seed,
        started_leaf=events[0][2],
    )
