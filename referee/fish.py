"""Fish's player protocol (seed 003) and its built-in players: the course's house player and random.

A player is an object with `initialize(board, n_players, color) -> age`, `get_placement(state) ->
position`, `get_move(game) -> (from, to)`, and optionally `listen(tree)` (after every action),
`finalize(end)` and `terminate(reason)`. `state` is the engine's FishState, `game`, `tree` and `end`
are GameTree nodes (seed 004's API: `valid_moves()`, `state`, `after(move)`, `winners()`). The
youngest plays first. An illegal or malformed answer, an exception or a timeout kicks the player:
it is told why (`terminate`), its penguins leave the board, and the kick is recorded with its reason.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from matchlog.engines import GameTree, Turn
from matchlog.engines.fish import (
    COLORS,
    ENGINE,
    FishState,
    Position,
    penguins_that_can_move,
    state_from_json,
    state_to_json,
)
from matchlog.events import Event, IllegalAction, PenguinMoved, PlayerRemoved

from .calls import Channel, Reply
from .messages import Messages
from .registry import register_builtin, register_messages

if TYPE_CHECKING:
    from .match import Referee

__all__ = ["FishMessages", "FishProtocol", "HousePlayer", "RandomPlayer", "maximin", "move_value", "zigzag"]


class FishProtocol:
    """Drives players through initialize, get_placement, get_move, listen, finalize and terminate."""

    def __init__(self, calls: Sequence[Channel]) -> None:
        self.calls = list(calls)
        self.told: set[int] = set()  # kicked players already sent terminate

    def begin(self, referee: Referee) -> None:
        # Initialize is the first decision each player makes (it answers with its age). A match
        # picked up later (a resume, a position) still initializes the players whose age is
        # known, with the board as it is; their answer no longer changes the play order.
        state: FishState = referee.state
        for seat, age in enumerate(state.ages):
            if age is None or seat in referee.removed or not state.active(seat):
                continue
            reply = self.calls[seat].call("initialize", state.board, state.players, COLORS[seat])
            if reply.failed:
                referee.remove(seat, reply.failure or "player.failed", f"initialize: {reply.detail}")
        self._tell_kicked(referee)

    def ask(self, referee: Referee, turn: Turn) -> Reply:
        state: FishState = referee.state
        calls = self.calls[turn.seat]
        if turn.decision == "initialize":
            return calls.call("initialize", state.board, state.players, COLORS[turn.seat])
        if turn.decision == "place":
            return calls.call("get_placement", state)
        return calls.call("get_move", GameTree(ENGINE, state))

    def ruling(self, referee: Referee, turn: Turn, error: IllegalAction) -> list[Event]:
        return [PlayerRemoved(seat=turn.seat, code=error.code, reason=f"{turn.decision}: {error.message}")]

    def after(self, referee: Referee, before: Any, after: Any) -> None:
        self._tell_kicked(referee)
        if after.board:  # every action on the board is heard by every player still in
            tree = GameTree(ENGINE, after)
            for seat, calls in enumerate(self.calls):
                if seat in referee.removed:
                    continue
                reply = calls.call("listen", tree, required=False)
                if reply.failed:
                    referee.remove(seat, reply.failure or "player.failed", f"listen: {reply.detail}")
            self._tell_kicked(referee)

    def end(self, referee: Referee) -> None:
        final = GameTree(ENGINE, referee.state)
        for seat, calls in enumerate(self.calls):
            if seat not in referee.removed:
                reply = calls.call("finalize", final, required=False)
                if reply.failed:
                    referee.remove(seat, reply.failure or "player.failed", f"finalize: {reply.detail}")
        self._tell_kicked(referee)

    def _tell_kicked(self, referee: Referee) -> None:
        """Send each newly kicked player its reason, once."""
        for _, event, _ in referee.step:
            if isinstance(event, PlayerRemoved) and event.seat not in self.told:
                self.told.add(event.seat)
                self.calls[event.seat].call("terminate", f"{event.code}: {event.reason}", required=False)


def run_match(referee: Referee, calls: Sequence[Channel], rng: random.Random) -> None:
    """Play a recorded match between player objects."""
    referee.run(FishProtocol(calls), rng)


# -- strategies ------------------------------------------------------------------------------


def zigzag(state: FishState) -> Position:
    """The course's placement: the first free tile scanning rows top to bottom, each left to right."""
    occupied = state.occupied()
    for r, row in enumerate(state.board):
        for c, fish in enumerate(row):
            if fish > 0 and (r, c) not in occupied:
                return (r, c)
    raise ValueError("no free tile left")  # the referee never asks then


def maximin(tree: GameTree, depth: int) -> tuple[Position, Position] | None:
    """The course's move: the best score it can make sure of over its next `depth` turns, opponents
    playing against it; equal moves break by from-row, from-column, to-row, to-column."""
    turn = tree.turn
    if turn is None:
        return None
    me = turn.seat
    best: PenguinMoved | None = None
    best_value = -math.inf
    for move in sorted(tree.valid_moves(), key=_key):
        child = tree.after(move)
        assert child is not None
        value = _value(child, me, depth - 1, best_value, math.inf)
        if value > best_value:
            best, best_value = move, value  # type: ignore[assignment]
    return (best.source, best.target) if best is not None else None


def move_value(tree: GameTree, move: Event, depth: int) -> float:
    """What `move` makes sure of for the seat to move: its score after its next `depth` turns, the
    others playing against it (the house player's measure, without the pruning that only tells the
    best move). The analyser of Fish (matchlog.analysis) judges moves by it.

    Raises:
        ValueError: `move` is not a valid move of `tree`.
    """
    turn = tree.turn
    child = tree.after(move)
    if turn is None or child is None:
        raise ValueError(f"{move!r} is not a valid move here")
    return _value(child, turn.seat, depth - 1, -math.inf, math.inf)


def _key(move: Event) -> tuple[Position, Position]:
    assert isinstance(move, PenguinMoved)
    return move.source, move.target


def _value(node: GameTree, me: int, turns: int, alpha: float, beta: float) -> float:
    """Alpha-beta maximin over `me`'s next `turns` moves: `me` maximises its score, everybody else
    minimises it. Only `me`'s own moves change its score, so the search ends right after its last
    one, with the game, or once `me` can no longer move."""
    state: FishState = node.state
    turn = node.turn
    movable = penguins_that_can_move(state, me)
    if turns == 0 or turn is None or not movable:
        return float(state.scores[me])
    if turn.seat == me:
        if turns == 1:  # its last move scores the fish under the penguin it moves: take the most
            return float(state.scores[me] + max(state.fish(position) for position in movable))
        value = -math.inf
        for move in sorted(node.valid_moves(), key=_key):
            value = max(value, _value(node.after(move), me, turns - 1, alpha, beta))  # type: ignore[arg-type]
            alpha = max(alpha, value)
            if alpha >= beta:
                break
        return value
    value = math.inf
    for move in node.valid_moves():
        value = min(value, _value(node.after(move), me, turns, alpha, beta))  # type: ignore[arg-type]
        beta = min(beta, value)
        if alpha >= beta:
            break
    return value


class HousePlayer:
    """The course's house player: zig-zag placement, maximin to `depth` of its own turns."""

    def __init__(self, rng: random.Random | None = None, depth: int | str = 2) -> None:
        self.depth = int(depth)
        if not 1 <= self.depth <= 4:
            raise ValueError(f"a depth from 1 to 4, not {depth}")
        self.age = 20

    def initialize(self, board: Any, players: int, color: str) -> int:
        return self.age

    def get_placement(self, state: FishState) -> Position:
        return zigzag(state)

    def get_move(self, game: GameTree) -> tuple[Position, Position] | None:
        return maximin(game, self.depth)


class RandomPlayer:
    """Places and moves at random."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def initialize(self, board: Any, players: int, color: str) -> int:
        return self.rng.randint(8, 80)

    def get_placement(self, state: FishState) -> Position:
        occupied = state.occupied()
        free = [
            (r, c) for r, row in enumerate(state.board) for c, fish in enumerate(row) if fish and (r, c) not in occupied
        ]
        return self.rng.choice(free)

    def get_move(self, game: GameTree) -> tuple[Position, Position]:
        move = self.rng.choice(game.valid_moves())
        return move.source, move.target  # type: ignore[attr-defined]


class FishMessages(Messages):
    """initialize carries the `board`, the number of `players` and the player's `color`; the others
    the course's State (`engines.fish.state_to_json`, as the remote protocol sends it), listen and
    finalize with its `phase`; terminate its `reason`. Nothing is heard before the placements."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        match method, args:
            case "initialize", (board, players, color):
                return {"call": method, "board": [list(row) for row in board], "players": players, "color": color}
            case "terminate", (reason,):
                return {"call": method, "reason": reason}
            case _, ((FishState() | GameTree()) as given,):
                state: FishState = given if isinstance(given, FishState) else given.state
                if state.phase not in ("place", "move", "over") or not state.order:
                    return None  # ages are still being given: there is no State to send yet
                turn = ENGINE.to_act(state)
                first = turn.seat if turn is not None and turn.seat >= 0 else state.order[0]
                message = {"call": method, "state": state_to_json(state, first)}
                if method in ("listen", "finalize"):
                    message["phase"] = state.phase
                return message
        return super().request(method, args)

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        method = message["call"]
        if method == "initialize":
            return (tuple(tuple(row) for row in message["board"]), message["players"], message["color"])
        if method == "terminate":
            return (message["reason"],)
        if "state" in message:
            phase = "place" if method == "get_placement" or message.get("phase") == "place" else "move"
            state = state_from_json(message["state"], phase=phase)
            return (state,) if method == "get_placement" else (GameTree(ENGINE, state),)
        return super().arguments(message)


register_messages("fish", lambda seat: FishMessages())
register_builtin(
    "fish",
    "maximin",
    HousePlayer,
    "the course's house player: zig-zag placement, maximin over its next DEPTH turns (2 unless given; 1 to 4)",
    argument="depth",
)
register_builtin("fish", "random", RandomPlayer, "random placements and moves")
