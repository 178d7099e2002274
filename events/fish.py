"""Fish's events: the board the referee generated, each player's age (which sets the play order),
penguins placed and moved. A position is (row, column), odd rows shifted right by half a tile."""

from __future__ import annotations

from .base import Event

__all__ = ["EVENTS", "AgeGiven", "BoardGenerated", "PenguinMoved", "PenguinPlaced"]


class BoardGenerated(Event, tag="fish.board_generated"):
    """The referee made the board: fish per tile (0 is a hole), row by row."""

    tiles: tuple[tuple[int, ...], ...]


class AgeGiven(Event, tag="fish.age_given"):
    """A player answered `initialize` with its age; the youngest plays first (ties: seat order)."""

    seat: int
    age: int

    @property
    def actor(self) -> int | None:
        return self.seat


class PenguinPlaced(Event, tag="fish.penguin_placed"):
    """`seat` put a penguin on the tile at `position`."""

    seat: int
    position: tuple[int, int]

    @property
    def actor(self) -> int | None:
        return self.seat


class PenguinMoved(Event, tag="fish.penguin_moved"):
    """`seat` moved its penguin from `source` to `target` in a straight line; it scores the fish it leaves."""

    seat: int
    source: tuple[int, int]
    target: tuple[int, int]

    @property
    def actor(self) -> int | None:
        return self.seat


EVENTS: tuple[type[Event], ...] = (BoardGenerated, AgeGiven, PenguinPlaced, PenguinMoved)
