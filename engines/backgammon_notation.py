"""Backgammon as people read it: points 1 to 24 from one side, the bar and off, and a turn's play
in GNU Backgammon's words ("13/8 6/5", "24/18*/13", "6/2(2)").

pygammon's board (`engines.backgammon`) indexes the points 0 to 23 one way for both sides, and its
protocol speaks that indexing to its clients. People number the points 1 to 24 from the side that
moves (its home board 1 to 6, its farthest checkers on 24), name the bar (25 in a record) and off
(0), as GNU Backgammon and every backgammon site do. Everything a person reads goes through here:
the engine's words and errors, its text board, the viewer's drawing model (the labels of each
side), and the `.mat` and SGF formats, so a board's labels and a replay's words always name the
same point.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from matchlog.events import CheckerMoved

if TYPE_CHECKING:
    from .backgammon import BackgammonState

__all__ = ["BAR", "OFF", "Step", "index_of", "labels", "number", "play_text", "point_name", "step_of", "step_text"]

#: The bar and borne off, in a side's point numbers (as a record writes them: 25 and 0).
BAR, OFF = 25, 0


class Step(msgspec.Struct, frozen=True, gc=False):
    """A checker moved from point `start` to point `end`, in the mover's numbers (25 the bar, 0
    off); `hit`: it sent a blot on `end` to the bar."""

    start: int
    end: int
    hit: bool = False


def number(side: int, index: int | None) -> int:
    """The point number `side` reads for pygammon's point `index` (None: the bar, 25)."""
    if index is None:
        return BAR
    return index + 1 if side == 0 else 24 - index


def index_of(side: int, point: int) -> int | None:
    """pygammon's index of `side`'s point number 1..24 (25, the bar: None)."""
    if point == BAR:
        return None
    return point - 1 if side == 0 else 24 - point


def labels(side: int) -> tuple[int, ...]:
    """The number `side` reads on each of pygammon's points 0..23."""
    return tuple(number(side, index) for index in range(24))


def point_name(point: int) -> str:
    """A point number as people write it: "bar", "off", or the number."""
    return "bar" if point == BAR else "off" if point == OFF else str(point)


def step_text(step: Step) -> str:
    """One checker's step, `13/8` (`*` on a hit)."""
    return f"{point_name(step.start)}/{point_name(step.end)}{'*' if step.hit else ''}"


def step_of(before: BackgammonState, move: CheckerMoved, after: BackgammonState) -> Step:
    """The step a move took, in the mover's numbers (the die from `before`, the hit from `after`)."""
    seat = move.seat
    start = number(seat, move.source)
    end = max(start - before.dice[move.die_index], OFF)
    return Step(start, end, after.bar[1 - seat] > before.bar[1 - seat])


def play_text(steps: Iterable[Step]) -> str:
    """A turn's play as GNU Backgammon writes it: the highest point first, one checker's steps
    joined (`24/13`, the point between kept where it hit: `24/18*/13`), the same move repeated
    counted (`6/2(2)`), a hit marked once where it happened; "" for no move."""
    moves = sorted(steps, key=lambda step: (-step.start, -step.end))
    hit = {step.end for step in moves if step.hit}
    joined = [False] * len(moves)
    paths: list[list[int]] = []
    for at, move in enumerate(moves):
        if joined[at]:
            continue
        path = [move.start, move.end]
        # The checker goes on from where it landed: the moves below it that start there.
        for later in range(at + 1, len(moves)):
            if joined[later] or path[-1] == OFF or moves[later].start != path[-1]:
                continue
            if path[-1] not in hit:
                path.pop()  # a point it only passed shows only when it hit there
            path.append(moves[later].end)
            joined[later] = True
        paths.append(path)
    counted: dict[tuple[int, ...], int] = {}
    for path in paths:
        counted[tuple(path)] = counted.get(tuple(path), 0) + 1
    marked: set[int] = set()  # points whose hit is already marked
    words = []
    for path, times in counted.items():
        text = point_name(path[0])
        for point in path[1:]:
            text += f"/{point_name(point)}"
            if point in hit and point not in marked:
                text += "*"
                marked.add(point)
        words.append(text + (f"({times})" if times > 1 else ""))
    return " ".join(words)
