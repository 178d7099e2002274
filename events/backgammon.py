"""Backgammon's events: every die roll (the opening rolls included) and every checker moved.

Chance is data: the referee rolls and records `OpeningRolled` and `DiceRolled`; the engine only
reads them. A move is pygammon's own unit, one die and one checker (`die_index` into the turn's
dice, `source` a point index or None for the bar); undoing it within the turn is the shared
`ActionsUndone`, by the side that moved.
"""

from __future__ import annotations

from .base import Event

__all__ = ["EVENTS", "CheckerMoved", "DiceRolled", "OpeningRolled"]


class OpeningRolled(Event, tag="backgammon.opening_rolled"):
    """One die each decides who starts (never equal): `first` is the first side's, `second` the second's."""

    first: int
    second: int


class DiceRolled(Event, tag="backgammon.dice_rolled"):
    """The dice of `seat`'s turn (a double plays four times)."""

    seat: int
    dice: tuple[int, int]


class CheckerMoved(Event, tag="backgammon.checker_moved"):
    """`seat` played the die at `die_index` with the checker on point `source` (None: from the bar)."""

    seat: int
    die_index: int
    source: int | None

    @property
    def actor(self) -> int | None:
        return self.seat


EVENTS: tuple[type[Event], ...] = (OpeningRolled, DiceRolled, CheckerMoved)
