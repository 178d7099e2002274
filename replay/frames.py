"""Frames: what the viewer shows at each seq of a match, as one reader may see it.

A frame is the drawing model of the state after one seq (`engines.boards`), whose decision was
awaited and how the match ended, all as `log.state(match, seq, as_seat=K)` gives them: the state
goes through the game's `view` before anything is drawn from it, and whose turn it is passes
through `seen_turn`, the one rule both use. `frames` folds a match once to make every frame (the
page's and the HTML export's); `frame_of` makes one from a `Position` (anything with its `game`, `seq`,
`state`, `to_act` and `outcome`), and the tests hold the two to the same answer at every seq and view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from matchlog.engines import Engine, Turn
from matchlog.engines import boards as _boards
from matchlog.engines import game as registered
from matchlog.engines.boards import board
from matchlog.engines.views import shown_outcome, shown_state, shown_turn
from matchlog.events import Outcome, Record

from .fold import engine_of, timeline

__all__ = ["Frame", "frame_of", "frames", "seen_outcome", "seen_turn"]

#: `as_seat` for a spectator.
_SPECTATOR = -1


class Frame(msgspec.Struct, frozen=True, kw_only=True):
    """The board after `seq` as one reader sees it, whose decision is awaited (as that reader may
    know it), and the outcome once there is one."""

    seq: int
    board: _boards.AnyBoard
    turn: Turn | None = None
    outcome: Outcome | None = None


def seen_turn(engine: Engine[Any], state: Any, as_seat: int | None) -> Turn | None:
    """Whose decision is awaited in `state` (the whole state), as `as_seat` may know it (the views'
    `shown_turn`; None: the whole record)."""
    if as_seat is None:
        return engine.to_act(state)
    return shown_turn(engine, state, None if as_seat == _SPECTATOR else as_seat)


def seen_outcome(engine: Engine[Any], state: Any, as_seat: int | None) -> Outcome | None:
    """How the match ended, as `as_seat` may know it (the views' `shown_outcome`)."""
    if as_seat is None:
        return engine.outcome(state)
    return shown_outcome(engine, state, None if as_seat == _SPECTATOR else as_seat)


def frame_of(position: Any) -> Frame:
    """The frame of one `Position` (a state already as its reader sees it)."""
    return Frame(
        seq=position.seq,
        board=board(registered(position.game), position.state),
        turn=position.to_act,
        outcome=position.outcome,
    )


def frames(records: Sequence[Record], as_seat: int | None, *, start: int = 0, stop: int | None = None) -> list[Frame]:
    """The frames of seqs `start` to `stop` (inclusive; default the last) of the match whose records
    (from seq 0) are given, as `as_seat` sees them (None: the whole record; -1: a spectator)."""
    engine = engine_of(records)
    drawn = registered(engine.spec.name)
    seat = None if as_seat is None or as_seat == _SPECTATOR else as_seat
    upto = records if stop is None else records[: stop + 1]
    made: list[Frame] = []
    for step in timeline(upto):
        if step.record.seq < start:
            continue
        full = step.after
        state = full if as_seat is None else shown_state(engine, full, seat)
        made.append(
            Frame(
                seq=step.record.seq,
                board=board(drawn, state),
                turn=seen_turn(engine, full, as_seat),
                outcome=seen_outcome(engine, full, as_seat),
            )
        )
    return made
