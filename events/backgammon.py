"""Backgammon's events: every die roll (the opening rolls included), every checker moved, and the
doubling cube and resignations of match play.

Chance is data: the referee rolls and records `OpeningRolled` and `DiceRolled`; the engine only
reads them. A move is pygammon's own unit, one die and one checker (`die_index` into the turn's
dice, `source` a point index or None for the bar); undoing it within the turn is the shared
`ActionsUndone`, by the side that moved.

In a match played with the cube or resignations (as GNU Backgammon records its games), the side to
roll first decides: `RollChosen`, `DoubleOffered`, or `ResignationOffered`; a double is answered
`DoubleTaken` or `DoubleDropped`, a resignation `ResignationAccepted` or `ResignationDeclined`. Each
is its seat's answer, judged by the engine like a move.
"""

from __future__ import annotations

from .base import Event

__all__ = [
    "EVENTS",
    "CheckerMoved",
    "DiceRolled",
    "DoubleDropped",
    "DoubleOffered",
    "DoubleTaken",
    "OpeningRolled",
    "ResignationAccepted",
    "ResignationDeclined",
    "ResignationOffered",
    "RollChosen",
]


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


class _Decision(Event):
    """A seat's decision of match play: `seat` is who made it."""

    seat: int

    @property
    def actor(self) -> int | None:
        return self.seat


class RollChosen(_Decision, tag="backgammon.roll_chosen"):
    """`seat`, to roll, rolls rather than doubling or resigning."""


class DoubleOffered(_Decision, tag="backgammon.double_offered"):
    """`seat`, to roll, offers the cube at `cube` (twice its value) instead of rolling."""

    cube: int


class DoubleTaken(_Decision, tag="backgammon.double_taken"):
    """`seat` takes the double: the game goes on at the new value, the cube is `seat`'s."""


class DoubleDropped(_Decision, tag="backgammon.double_dropped"):
    """`seat` drops the double: it loses the game at the cube's value before the double."""


class ResignationOffered(_Decision, tag="backgammon.resignation_offered"):
    """`seat` offers to resign a single game (`value` 1), a gammon (2) or a backgammon (3); the
    points are the value times the cube."""

    value: int


class ResignationAccepted(_Decision, tag="backgammon.resignation_accepted"):
    """`seat` accepts the other side's resignation, and wins what it offered."""


class ResignationDeclined(_Decision, tag="backgammon.resignation_declined"):
    """`seat` declines the other side's resignation: the game goes on."""


EVENTS: tuple[type[Event], ...] = (
    OpeningRolled,
    DiceRolled,
    CheckerMoved,
    RollChosen,
    DoubleOffered,
    DoubleTaken,
    DoubleDropped,
    ResignationOffered,
    ResignationAccepted,
    ResignationDeclined,
)
