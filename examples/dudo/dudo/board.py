"""Dudo's drawing model for matchlog's viewer: what `board.js` draws, from a state as one reader sees it.

It copies what the view kept and works out nothing the view did not show: a cup still down stays
a count of dice (`None` for each), so a reader's board never holds more than its view.
"""

from __future__ import annotations

import msgspec

from .engine import DudoState, _shown

__all__ = ["DudoBoard", "board"]


class DudoBoard(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="dudo"):
    """Each seat's dice (None: under its cup), the last bid (seat, quantity, face), whose turn it
    is (-1: nobody's), who doubted, and once the cups are lifted how many dice show the bid's face."""

    names: tuple[str, ...]
    dice: tuple[tuple[int | None, ...], ...]
    bid: tuple[int, int, int] | None
    turn: int
    doubter: int | None
    counted: int | None
    removed: tuple[int, ...]


def board(state: DudoState) -> DudoBoard:
    """The drawing model of `state` (as one reader sees it)."""
    count = state.options.dice
    dice = tuple(tuple(d) if d else (None,) * count for d in state.dice)
    counted = _shown(state, state.bid[2]) if state.doubter is not None and state.bid is not None else None
    return DudoBoard(
        names=state.names,
        dice=dice,
        bid=state.bid,
        turn=-1 if state.over or state.rolled < state.players else state.turn,
        doubter=state.doubter,
        counted=counted,
        removed=state.removed,
    )
