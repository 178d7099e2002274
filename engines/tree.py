"""A lazy, memoised game tree over any engine: seed 004's API for planning players.

A node holds a state. `valid_moves()` lists what the player to act may do (nothing at the end, or
while chance is to act); `after(move)` is the child that move leads to, built the first time it is
asked for and kept; `winners()` names the winners once the game is over. The engine skips players
with no move, so the player at a node always has one unless the game has ended.
"""

from __future__ import annotations

from typing import Any

from matchlog.engines.contract import CHANCE, Engine, Turn
from matchlog.events import Event, IllegalAction

__all__ = ["GameTree"]


class GameTree:
    """One node of the tree of a game's possible futures."""

    __slots__ = ("_children", "_moves", "_valid", "engine", "state")

    def __init__(self, engine: Engine[Any], state: Any) -> None:
        self.engine = engine
        self.state = state
        self._moves: tuple[Event, ...] | None = None
        self._valid: frozenset[Event] | None = None
        self._children: dict[Event, GameTree] = {}

    @property
    def turn(self) -> Turn | None:
        """Who acts here, or None at the end."""
        return self.engine.to_act(self.state)

    def is_over(self) -> bool:
        return self.turn is None

    def valid_moves(self) -> tuple[Event, ...]:
        """What the player to act may do here; empty at the end (or when chance acts)."""
        if self._moves is None:
            turn = self.turn
            self._moves = () if turn is None or turn.seat == CHANCE else self.engine.legal(self.state, turn.seat)
        return self._moves

    def after(self, move: Event) -> GameTree | None:
        """The node `move` leads to; None if the move is not valid here or the game is over."""
        child = self._children.get(move)
        if child is not None:
            return child
        turn = self.turn
        if turn is None or turn.seat == CHANCE:
            return None
        if self._valid is None:
            self._valid = frozenset(self.valid_moves())
        if move not in self._valid:
            # Not among the listed moves: the engine still judges it (some decisions list a sample).
            try:
                self.engine.check(self.state, turn.seat, move)
            except IllegalAction:
                return None
        child = GameTree(self.engine, self.engine.apply(self.state, move))
        self._children[move] = child
        return child

    def winners(self) -> tuple[int, ...]:
        """The seats that won, once the game is over; empty while it goes on."""
        if self.turn is not None:
            return ()
        outcome = self.engine.outcome(self.state)
        return outcome.winners if outcome is not None else ()

    def __repr__(self) -> str:
        return f"<GameTree {self.engine.spec.name} {self.turn}>"
