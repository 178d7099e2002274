"""Aggregates as a reader sees them: the figures and the catalogue rows that statistics, frames and
the service are built from, each through the declarations beside the event views (`engines.views`).

A reader is the whole record's (None: the log's owner, the admin), a spectator (-1), or a seat of
one match. Across matches there are two views: the whole record, and what every reader may know
(a seat of one match reads every other as a spectator, so it is given that too). For each figure a
game declares:

    PUBLIC   the figure as counted                        (`figures` rows named as the figure)
    SEEN     the spectator's count of it                  (`figures` rows named `seen:<figure>`)
    none     nothing: an undeclared figure is withheld

and each column of a catalogue row is kept or emptied as `engines.views.CATALOGUE` declares it (a
head hash only where every reader sees every event whole). A game this matchlog does not know
declares nothing, so readers get none of its figures and no hash of it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from matchlog.engines import GAMES, families, known
from matchlog.engines.figures import SEEN
from matchlog.engines.views import CATALOGUE, Derived, shown_column
from matchlog.events import UsageError
from matchlog.store import MatchInfo

__all__ = ["SPECTATOR", "across_matches", "catalogue_row", "shown_figures"]

#: `as_seat` for a spectator.
SPECTATOR = -1


def across_matches(as_seat: int | None) -> int | None:
    """The view of an aggregate across matches: None (the whole record) or -1 (a spectator's).

    Raises:
        UsageError: a seat's view, which no aggregate across matches has (a seat is one match's).
    """
    if as_seat is None or as_seat == SPECTATOR:
        return as_seat
    raise UsageError(
        f"figures across matches are read whole or as a spectator (-1), not as seat {as_seat}", code="usage.seat"
    )


def shown_figures(as_seat: int | None) -> tuple[str, list[Any]]:
    """A SELECT of the figures (match_id, seat, figure, value) a reader of every match gets, with its
    parameters: the whole record's, or (-1) what every reader may know.

    Raises:
        UsageError: a seat's view (see `across_matches`).
    """
    if across_matches(as_seat) is None:
        return f"SELECT match_id, seat, figure, value FROM figures WHERE NOT starts_with(figure, '{SEEN}')", []
    declared: dict[Derived, list[str]] = {Derived.PUBLIC: [], Derived.SEEN: []}
    # A family's games (openspiel:kuhn_poker) share the family's declarations, keyed by its name.
    owners = [
        *((name, engine.figures) for name, engine in GAMES.items()),
        *((name, family.figures) for name, family in families().items()),
    ]
    for name, figures in owners:
        for figure, derived in figures.items():
            if derived in declared:
                declared[derived].append(f"{name}/{figure}")
    cut = len(SEEN) + 1
    game = "split_part(m.game, ':', 1)"
    query = f"""
        SELECT f.match_id, f.seat, f.figure, f.value FROM figures f JOIN matches m USING (match_id)
        WHERE list_contains(?::VARCHAR[], {game} || '/' || f.figure)
        UNION ALL
        SELECT f.match_id, f.seat, substr(f.figure, {cut}), f.value FROM figures f JOIN matches m USING (match_id)
        WHERE starts_with(f.figure, '{SEEN}') AND list_contains(?::VARCHAR[], {game} || '/' || substr(f.figure, {cut}))
    """
    return query, [declared[Derived.PUBLIC], declared[Derived.SEEN]]


_BLANK = {bytes: b"", str: "", tuple: ()}


def catalogue_row(info: MatchInfo, as_seat: int | None) -> MatchInfo:
    """A match's catalogue row as a reader gets it: whole (None), or as seat `as_seat` of it (-1: a
    spectator) with each column it may not know emptied (a head hash, in a game that hides anything;
    any column `engines.views.CATALOGUE` does not declare)."""
    if as_seat is None:
        return info
    engine = known(info.game)
    seat = None if as_seat == SPECTATOR else as_seat
    withheld = {
        name: _blank(getattr(info, name))
        for name in info.__struct_fields__
        if not shown_column(engine, CATALOGUE.get(name), seat)
    }
    return msgspec.structs.replace(info, **withheld) if withheld else info


def _blank(value: Any) -> Any:
    """What stands for a column a reader may not know: nothing of its kind."""
    return _BLANK.get(type(value)) if type(value) in _BLANK else None
