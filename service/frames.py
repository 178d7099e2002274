"""Frames: what the viewer shows at each seq of a match, as one reader may see it.

A frame is the drawing model of the state after one seq (`engines.boards`), whose decision was
awaited and how the match ended, all as `log.state(match, seq, as_seat=K)` gives them: the state
goes through the game's `view` before anything is drawn from it, and whose turn it is loses its
decision when that could tell another seat's secret. `frames` folds a match once to make every
frame (the page's and the HTML export's); `frame_of` makes one from a `Position`, and the tests
hold the two to the same answer at every seq and view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import CHANCE, Turn
from matchlog.engines.boards import Board, board
from matchlog.events import Outcome, Record
from matchlog.log import SPECTATOR, Position
from matchlog.replay import engine_of, timeline

__all__ = ["Frame", "frame_of", "frames", "frames_of"]


class Frame(msgspec.Struct, frozen=True, kw_only=True):
    """The board after `seq` as one reader sees it, whose decision is awaited (as that reader may
    know it), and the outcome once there is one."""

    seq: int
    board: Board
    turn: Turn | None = None
    outcome: Outcome | None = None


def frame_of(position: Position) -> Frame:
    """The frame of one `Position` (a state already as its reader sees it)."""
    return Frame(seq=position.seq, board=board(position.state), turn=position.to_act, outcome=position.outcome)


def frames(records: Sequence[Record], as_seat: int | None, *, start: int = 0, stop: int | None = None) -> list[Frame]:
    """The frames of seqs `start` to `stop` (inclusive; default the last) of the match whose records
    (from seq 0) are given, as `as_seat` sees them (None: the whole record; -1: a spectator)."""
    engine = engine_of(records)
    seat = None if as_seat is None or as_seat == SPECTATOR else as_seat
    upto = records if stop is None else records[: stop + 1]
    made: list[Frame] = []
    for step in timeline(upto):
        if step.record.seq < start:
            continue
        full = step.after
        turn = engine.to_act(full)
        state = full
        if as_seat is not None:
            state = engine.view(full, seat)
            # Whose turn it is everyone sees; what that seat must decide may tell what it holds.
            if turn is not None and turn.seat not in (seat, CHANCE):
                turn = Turn(seat=turn.seat, decision="turn")
        made.append(Frame(seq=step.record.seq, board=board(state), turn=turn, outcome=engine.outcome(full)))
    return made


def frames_of(log: Any, match_id: UUID, as_seat: int | None, *, start: int = 0, stop: int | None = None) -> list[Frame]:
    """The frames of a match in any `Log`: folded here from a file's records, or asked of a server
    a page at a time (it decides from the log's token which views it may have).

    Raises:
        Forbidden: (a server) the token may not see that view.
        UsageError: a seat the match does not have.
    """
    from matchlog.file import FileLog, seat_for

    if isinstance(log, FileLog):  # it holds the whole record
        info = log.info(match_id)
        seat_for(as_seat, len(info.players))
        return frames(log.records(match_id, stop=stop), as_seat, start=start, stop=stop)
    last = log.info(match_id).last_seq if stop is None else stop
    got: list[Frame] = []
    while start <= last:
        params: dict[str, Any] = {"start": start, "stop": last}
        if as_seat is not None:
            params["as_seat"] = as_seat
        # ServerLog's one way to ask: its answers and errors decode as every other method's do.
        page = log._request("GET", f"/api/matches/{match_id}/frames", params=params, decode=list[Frame])
        if not page:
            break
        got += page
        start = page[-1].seq + 1
    return got
