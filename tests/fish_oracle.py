"""The house player's maximin by brute force, straight from the course's words: a test oracle and
the benchmark's baseline."""

from __future__ import annotations

from typing import Any

from matchlog.engines import GameTree
from matchlog.engines.fish import FishState, moves


def oracle(node: GameTree, me: int, turns: int) -> int:
    """Maximin from the course's words, by brute force: `turns` of my own turns, everybody else
    minimising my score, leaves scored by my score, my search over once I cannot move."""
    turn = node.turn
    state: FishState = node.state
    if turn is None or (turn.seat == me and turns == 0) or not moves(state, me):
        return state.scores[me]
    values = [oracle(node.after(m), me, turns - (turn.seat == me)) for m in node.valid_moves()]  # type: ignore[arg-type]
    return max(values) if turn.seat == me else min(values)


def oracle_move(tree: GameTree, depth: int) -> tuple[Any, Any]:
    me = tree.turn.seat  # type: ignore[union-attr]
    scored = [(oracle(tree.after(m), me, depth - 1), (m.source, m.target)) for m in tree.valid_moves()]  # type: ignore[arg-type, attr-defined]
    best = max(value for value, _ in scored)
    return min(move for value, move in scored if value == best)
