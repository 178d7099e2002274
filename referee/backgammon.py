"""pygammon's protocol, unchanged, in front of matchlog's referee; and backgammon's players.

A program written for `pygammon.run(receive_input, send_output, move_by_turn_rolls=False)` runs
against `matchlog.referee.backgammon.run` by changing only its import: the same `Side`,
`InputType`, `OutputType`, `InvalidMoveCode`, `GameState`, `DieRolls` and `Point`, the same board
indexing and the same order of outputs (GAME_STATE after every valid move, undo within a turn,
the move that completes a turn not undoable, no input asked when no move is possible). The game is
recorded: every roll, move, rejection and undo is an event in the log, which `run`'s keyword
arguments choose (by default `$MATCHLOG_DB` or `matches.duckdb`).

What differs from pygammon, on purpose (docs/rules.md): standard rules by default, under which the number of dice
a turn must play is computed exactly (`rules="pygammon"` restores its looser bear-off, the missing
larger-die rule and its own count of the moves a turn asks for, shortfalls included, so a client
that trusts that count meets exactly the turns pygammon gives it); a negative die or point index is
refused rather than read from the end; and malformed input gets an INVALID_MOVE answer instead of
crashing the game.
Outputs carry copies of the board, so a client may keep them without deep-copying.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from matchlog.engines import CHANCE, parse_options
from matchlog.engines.backgammon import (
    ENGINE,
    FIRST,
    SECOND,
    BackgammonRule,
    BackgammonState,
    Play,
    legal_moves,
    pips,
    plays,
)
from matchlog.engines.chance import ChanceSource, seed_for
from matchlog.engines.contract import shown
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    CheckerMoved,
    IllegalAction,
    MatchStarted,
    OpeningRolled,
    Outcome,
    Seat,
    UsageError,
    uuid7,
)
from matchlog.store import Store

from .calls import Channel, PlayerCalls, Reply
from .match import MAX_DECISIONS, MemoryRecorder, Referee, StoreRecorder
from .messages import Messages
from .registry import register_builtin, register_messages

__all__ = [
    "BackgammonMessages",
    "Board",
    "CallablePlayer",
    "DieRolls",
    "GameState",
    "HeuristicPlayer",
    "InputType",
    "InvalidMoveCode",
    "OutputType",
    "Point",
    "RandomPlayer",
    "Side",
    "run",
]


# -- pygammon's names and values ---------------------------------------------------------------


class Side(IntEnum):
    """Playing side"""

    FIRST = 0
    SECOND = 1


class InputType(Enum):
    """Reason to receive input"""

    MOVE = 0
    UNDO = 1


class OutputType(Enum):
    """Reason to send output"""

    GAME_STATE = 0
    TURN_ROLLS = 1
    MOVE_ROLLS = 2
    INVALID_MOVE = 3
    GAME_WON = 4


class InvalidMoveCode(Enum):
    """Invalid move error codes"""

    DIE_INDEX_INVALID = 0
    SOURCE_INVALID = 1
    SOURCE_NOT_OWNED_PIECE = 2
    DESTINATION_OUT_OF_BOARD = 3
    DESTINATION_OCCUPIED = 4
    INVALID_MOVE_TYPE = 5
    NOTHING_TO_UNDO = 6
    INVALID_INPUT_TYPE = 7


@dataclass
class Point:
    """Board point data"""

    side: Side | None = None
    count: int = 0


class GameState(NamedTuple):
    """Game state data"""

    board: list[Point]
    first_hit: int
    first_borne: int
    second_hit: int
    second_borne: int


class DieRolls(NamedTuple):
    """Two die rolls"""

    first: int
    second: int


#: How each rule the engine enforces is told to a pygammon client.
_PROTOCOL_CODE: dict[str, InvalidMoveCode] = {
    BackgammonRule.DIE_INDEX_INVALID: InvalidMoveCode.DIE_INDEX_INVALID,
    BackgammonRule.SOURCE_INVALID: InvalidMoveCode.SOURCE_INVALID,
    BackgammonRule.SOURCE_NOT_OWNED_PIECE: InvalidMoveCode.SOURCE_NOT_OWNED_PIECE,
    BackgammonRule.DESTINATION_OUT_OF_BOARD: InvalidMoveCode.DESTINATION_OUT_OF_BOARD,
    BackgammonRule.DESTINATION_OCCUPIED: InvalidMoveCode.DESTINATION_OCCUPIED,
    BackgammonRule.INVALID_MOVE_TYPE: InvalidMoveCode.INVALID_MOVE_TYPE,
    BackgammonRule.NOTHING_TO_UNDO: InvalidMoveCode.NOTHING_TO_UNDO,
    BackgammonRule.INVALID_INPUT_TYPE: InvalidMoveCode.INVALID_INPUT_TYPE,
    # Standard rules pygammon has no code for: the die cannot be played that way.
    BackgammonRule.MUST_USE_MORE_DICE: InvalidMoveCode.DIE_INDEX_INVALID,
    BackgammonRule.LARGER_DIE_REQUIRED: InvalidMoveCode.DIE_INDEX_INVALID,
}


def game_state(state: BackgammonState) -> GameState:
    """pygammon's GameState of a board (a fresh copy each time)."""
    board = [
        Point(Side.FIRST, value) if value > 0 else Point(Side.SECOND, -value) if value < 0 else Point()
        for value in state.points
    ]
    return GameState(board, state.bar[FIRST], state.off[FIRST], state.bar[SECOND], state.off[SECOND])


# -- what a player sees ------------------------------------------------------------------------


class Board:
    """A read-only view of the game for a player: the board, the dice, and the legal moves."""

    __slots__ = ("_state", "side")

    def __init__(self, state: BackgammonState, side: int) -> None:
        object.__setattr__(self, "_state", state)
        object.__setattr__(self, "side", Side(side))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("the board is read-only")

    @property
    def state(self) -> BackgammonState:
        """The engine's (frozen) state: nothing in backgammon is hidden."""
        return self._state

    @property
    def points(self) -> tuple[int, ...]:
        """Points 0..23: +n checkers of FIRST, -n of SECOND."""
        return self._state.points

    def game_state(self) -> GameState:
        """The board as pygammon sends it."""
        return game_state(self._state)

    def bar(self, side: int) -> int:
        return self._state.bar[side]

    def off(self, side: int) -> int:
        return self._state.off[side]

    def pips(self, side: int) -> int:
        return pips(self._state, side)

    @property
    def dice(self) -> tuple[int, ...]:
        """This turn's dice, four for a double; die indices refer to this tuple."""
        return self._state.dice

    @property
    def dice_played(self) -> tuple[int, ...]:
        return self._state.played

    def legal_moves(self) -> list[tuple[int, int | None]]:
        """Every (die_index, source) move allowed now."""
        return legal_moves(self._state, self.side)

    def plays(self) -> list[Play]:
        """Every whole legal play of the rest of this turn, one per resulting position."""
        return plays(self._state)

    def __repr__(self) -> str:
        return f"<Board {self.side.name} dice {self.dice} played {self.dice_played}>"


# -- the game loop, pygammon's -----------------------------------------------------------------

Ask = Callable[[int, BackgammonState], Reply]
Tell = Callable[[OutputType, Any, "Side | None"], list[tuple[int | None, Reply]]]


class _Lazy:
    """An output's data, built only if somebody listens (built-in players do not)."""

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build


def _data(value: Any) -> Any:
    return value.build() if isinstance(value, _Lazy) else value


class _Session:
    """One game through pygammon's sequence of inputs and outputs, recorded by a Referee."""

    def __init__(
        self, referee: Referee, rng: random.Random, ask: Ask, tell: Tell, rolls: Iterator[tuple[int, int]] | None = None
    ) -> None:
        self.referee = referee
        self.rng = rng
        self.rolls = rolls
        self.ask = ask
        self.tell = tell
        self.undo_stack: list[tuple[int, BackgammonState]] = []  # this turn's moves: seq, state before
        self.turn_seqs: list[int] = []  # this turn's effective seqs (what an undo may take back)
        self.finished = False

    @property
    def state(self) -> BackgammonState:
        return self.referee.state

    def record(self, *events: Any) -> None:
        self.referee.record(*events)
        self.turn_seqs.extend(range(self.referee.seq - len(events) + 1, self.referee.seq + 1))

    def send(self, output: OutputType, data: Any, side: Side | None = None) -> None:
        """Send an output; a player whose output callable fails forfeits, and if nobody can be
        blamed (an output to both sides) the game is abandoned."""
        if self.finished:
            return
        for blamed, reply in self.tell(output, data, side):
            if self.finished:
                return
            if blamed is None:
                self.finished = True
                self.referee.abandon(f"send_output({output.name}) failed: {reply.detail}")
                return
            self.forfeit(blamed, reply)

    def forfeit(self, seat: int, reply: Reply) -> None:
        if self.finished or seat in self.referee.removed:
            return
        self.referee.remove(seat, reply.failure or "player.failed", reply.detail)
        self.finish()

    def finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        winner = self.state.winner
        outcome: Outcome | None = ENGINE.outcome(self.state)
        self.referee.finish(outcome)
        if winner >= 0:
            # pygammon: the final GAME_STATE is followed by GAME_WON with the winning side.
            for _ in self.tell(OutputType.GAME_WON, Side(winner), None):
                pass

    def play(self) -> None:
        engine = ENGINE
        if self.state.side < 0:
            self.roll()
            self.send(OutputType.GAME_STATE, _Lazy(partial(game_state, self.state)))
            opening = self.state.opening
            assert opening is not None
            self.send(OutputType.TURN_ROLLS, DieRolls(*opening))
        else:  # picked up after the opening (a resumed match, a position): the board, and the dice if rolled
            self.send(OutputType.GAME_STATE, _Lazy(partial(game_state, self.state)))
            if self.state.dice:
                self.send(OutputType.MOVE_ROLLS, DieRolls(*self.state.dice[:2]))
        decisions = 0
        while not self.finished and (turn := engine.to_act(self.state)) is not None:
            if turn.seat == CHANCE:
                rolled = self.roll()
                self.send(OutputType.MOVE_ROLLS, DieRolls(*rolled.dice))
                continue
            decisions += 1
            if decisions > MAX_DECISIONS:
                self.finished = True
                self.referee.abandon(f"no result after {MAX_DECISIONS} inputs")
                return
            self.answer(turn.seat)
        if not self.finished:
            self.finish()

    def roll(self) -> Any:
        """Draw and record what chance does now (the opening roll, or a turn's dice)."""
        given = next(self.rolls, None) if self.rolls is not None else None
        if given is None:
            event = self.referee.draw(self.rng)
        else:
            outcomes = ENGINE.chance_outcomes(self.state)
            event = (
                next((o for o in outcomes if (o.first, o.second) == tuple(given)), None)
                if isinstance(outcomes[0], OpeningRolled)
                else next((o for o in outcomes if o.dice == tuple(given)), None)
            )
            if event is None:
                raise UsageError(
                    f"{given!r} is not a possible roll here (two dice 1..6; the opening's differ)", code="usage.rolls"
                )
        self.referee.record(event)
        self.undo_stack.clear()
        self.turn_seqs.clear()
        return event

    def answer(self, side: int) -> None:
        """Ask `side` for one input and carry it out, as pygammon's inner loop does."""
        reply = self.ask(side, self.state)
        if reply.failed:
            self.forfeit(side, reply)
            return
        raw = reply.value
        if not isinstance(raw, tuple | list) or len(raw) != 2:
            self.reject(side, "input", raw, BackgammonRule.INVALID_INPUT_TYPE, "an input is (InputType, data)")
            return
        kind, data = _input_type(raw[0]), raw[1]
        if kind is InputType.MOVE:
            if data is None:
                self.reject(side, "move", data, BackgammonRule.INVALID_MOVE_TYPE, "a move needs (die_index, source)")
                return
            before = self.state
            try:
                event = ENGINE.parse(before, side, data)
                self.referee.judge.check_answer(side, event)
            except IllegalAction as error:
                self.reject(side, "move", data, error.code, error.message)  # the move, as the rules judged it
                return
            self.record(event)
            self.undo_stack.append((self.referee.seq, before))
            self.send(OutputType.GAME_STATE, _Lazy(partial(game_state, self.state)))
            if self.state.winner >= 0:
                self.finish()
            elif not self.state.dice or self.state.side != side:
                self.undo_stack.clear()  # the move that completes a turn cannot be undone
                self.turn_seqs.clear()
        elif kind is InputType.UNDO:
            if data is not None:
                self.reject(side, "undo", raw, BackgammonRule.INVALID_MOVE_TYPE, "an undo takes no data (None)")
            elif not self.undo_stack:
                self.reject(side, "undo", raw, BackgammonRule.NOTHING_TO_UNDO, "no move of this turn is left to undo")
            else:
                seq, before = self.undo_stack.pop()
                taken = tuple(s for s in self.turn_seqs if s >= seq)
                self.turn_seqs = [s for s in self.turn_seqs if s < seq]
                self.referee.take_back(ActionsUndone(seqs=taken, reason="undo", by=side))
                self.send(OutputType.GAME_STATE, _Lazy(partial(game_state, self.state)))
        else:
            self.reject(
                side, "input", raw, BackgammonRule.INVALID_INPUT_TYPE, f"{shown(raw[0], 40)} is not an InputType"
            )

    def reject(self, side: int, decision: str, raw: object, code: str, message: str) -> None:
        self.record(AnswerRejected(seat=side, decision=decision, answer=shown(raw, 200), code=code, message=message))
        self.send(OutputType.INVALID_MOVE, _PROTOCOL_CODE.get(code, InvalidMoveCode.INVALID_INPUT_TYPE), Side(side))
        if not self.finished and self.referee.over_rejection_limit(side):
            self.finish()  # a side that keeps answering what the rules reject forfeits


def _input_type(value: object) -> InputType | None:
    """Our InputType, or pygammon's own enum of the same name and values."""
    if isinstance(value, InputType):
        return value
    if isinstance(value, Enum) and type(value).__name__ == "InputType":
        try:
            return InputType(value.value)
        except ValueError:
            return None
    return None


# -- run(): pygammon's entry point ---------------------------------------------------------------


class _Callables:
    """pygammon's callables as an object PlayerCalls can time."""

    def __init__(self, receive_input: Callable[..., Any], send_output: Callable[..., Any]) -> None:
        self.receive_input = receive_input
        self.send_output = send_output


def run(
    receive_input: Callable[[Side], Any],
    send_output: Callable[..., Any],
    move_by_turn_rolls: bool | None = None,
    *,
    db: str | Path | None = None,
    store: Store | None = None,
    record: bool = True,
    seed: int | None = None,
    rolls: Iterable[tuple[int, int]] | None = None,
    rules: str = "standard",
    names: tuple[str, str] = ("first", "second"),
    timeout: float | None = None,
) -> Outcome:
    """Play one game through pygammon's callables, and record it.

    `receive_input(side)` returns `(InputType, data)`; `send_output(output_type, data, side=None)`
    is told everything, as in pygammon. The keyword arguments are matchlog's: the log (`store`, or
    the file `db`, default `$MATCHLOG_DB` or `matches.duckdb`; `record=False` keeps no log), the
    `seed` of the dice, or the `rolls` themselves (the opening roll first, then each turn's two
    dice; random ones follow when they run out), the `rules` ("standard" or "pygammon"), the
    sides' `names`, and a `timeout` in seconds for each input (a side that raises or overruns
    forfeits). `move_by_turn_rolls` left unset follows the rules: the starter plays the opening
    roll under standard rules, and rolls again under pygammon's (pygammon's own default). Returns
    the outcome.

    Raises:
        UsageError: a bad option.
        StoreBusy, StoreError: the log cannot be opened or written.
    """
    owned = None
    if record and store is None:
        owned = store = Store(db if db is not None else os.environ.get("MATCHLOG_DB", "matches.duckdb"))
    try:
        callables = PlayerCalls(_Callables(receive_input, send_output), timeout)

        def ask(side: int, state: BackgammonState) -> Reply:
            return callables.call("receive_input", Side(side))

        def tell(output: OutputType, data: Any, side: Side | None) -> list[tuple[int | None, Reply]]:
            data = _data(data)
            reply = (
                callables.call("send_output", output, data)
                if side is None
                else callables.call("send_output", output, data, side)
            )
            return [(None if side is None else int(side), reply)] if reply.failed else []

        seats = (Seat(names[0], "pygammon:run"), Seat(names[1], "pygammon:run"))
        return _play(
            seats,
            ask,
            tell,
            store=store,
            seed=seed,
            rules=rules,
            move_by_turn_rolls=move_by_turn_rolls,
            rolls=iter(rolls) if rolls is not None else None,
        )
    finally:
        callables.close()
        if owned is not None:
            owned.close()


def _play(
    seats: Sequence[Seat],
    ask: Ask,
    tell: Tell,
    *,
    store: Store | None,
    seed: int | None,
    rules: str,
    move_by_turn_rolls: bool | None,
    rolls: Iterator[tuple[int, int]] | None = None,
) -> Outcome:
    if rules not in ("standard", "pygammon"):
        raise UsageError(f"rules must be standard or pygammon, not {rules!r}", code="usage.options")
    # Every option, defaults included, so the match replays under the rules it was played with.
    given = {"rules": rules, "move_by_turn_rolls": move_by_turn_rolls}
    options = msgspec.to_builtins(parse_options(ENGINE.spec, given))
    match_id = uuid7()
    started = MatchStarted(game="backgammon", options=options, seats=tuple(seats))
    recorder = StoreRecorder(store, match_id) if store is not None else MemoryRecorder()
    # Given rolls are the caller's: only a match drawing all its chance from the seed commits to it.
    chance = ChanceSource(seed_for(seed)) if rolls is None else None
    referee = Referee(ENGINE, started, recorder, match_id=match_id, chance=chance)
    session = _Session(referee, chance or random.Random(seed), ask, tell, rolls)
    session.play()
    recorder.wait()
    outcome = referee.outcome
    assert outcome is not None
    return outcome


def refuse_match_play(options: dict[str, Any]) -> None:
    """Refuse options our referee cannot play: pygammon's protocol has no cube and no resignation,
    so its players are never asked to roll, double, take or resign.

    Raises:
        UsageError: the cube or resignations are asked for (they are for records of match play).
    """
    asked = [name for name in ("cube", "resignations") if options.get(name)]
    if asked:
        raise UsageError(
            f"{' and '.join(asked)}: the referee plays pygammon's protocol, which has no cube and no resignation; "
            "these options are for records of match play (an import from GNU Backgammon)",
            code="usage.options",
        )


def referee_match(referee: Referee, calls: Sequence[Channel], rng: random.Random) -> None:
    """Play a recorded match between player objects (the `play` command's way in)."""

    def ask(side: int, state: BackgammonState) -> Reply:
        reply = calls[side].call("move", Board(state, side))
        if reply.failed:
            return reply
        return Reply(value=_as_input(reply.value))

    def tell(output: OutputType, data: Any, side: Side | None) -> list[tuple[int | None, Reply]]:
        failures: list[tuple[int | None, Reply]] = []
        for seat in (int(side),) if side is not None else (FIRST, SECOND):
            if seat in referee.removed or not calls[seat].has("observe"):
                continue
            reply = calls[seat].call("observe", output, _data(data), side)
            if reply.failed:
                failures.append((seat, reply))
        return failures

    for seat in (FIRST, SECOND):
        reply = calls[seat].call("begin_game", Board(referee.state, seat), required=False)
        if reply.failed:
            referee.remove(seat, reply.failure or "player.failed", reply.detail)
    session = _Session(referee, rng, ask, tell)
    if referee.removed:
        session.finish()
    else:
        session.play()
    for seat in (FIRST, SECOND):
        if seat not in referee.removed:
            calls[seat].call("end_game", Board(referee.state, seat), required=False)


def _as_input(answer: object) -> object:
    """A player's answer as pygammon input: (die_index, source) is a move; "undo" an undo."""
    if isinstance(answer, tuple | list) and len(answer) == 2 and _input_type(answer[0]) is not None:
        return tuple(answer)  # already (InputType, data)
    if answer == "undo" or answer is InputType.UNDO:
        return (InputType.UNDO, None)
    return (InputType.MOVE, answer)


# -- players -----------------------------------------------------------------------------------


class CallablePlayer:
    """A pygammon client's pair of callables as a player: `receive_input(side)` answers each input
    and `send_output(output_type, data, side=None)` hears every output meant for this side."""

    def __init__(self, receive_input: Callable[[Side], Any], send_output: Callable[..., Any] | None = None) -> None:
        self.receive_input = receive_input
        self.send_output = send_output

    def move(self, board: Board) -> object:
        return self.receive_input(board.side)

    def observe(self, output: OutputType, data: Any, side: Side | None) -> None:
        if self.send_output is not None:
            if side is None:
                self.send_output(output, data)
            else:
                self.send_output(output, data, side)


class RandomPlayer:
    """Plays a random legal move."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def move(self, board: Board) -> tuple[int, int | None]:
        return self.rng.choice(board.legal_moves())


class HeuristicPlayer:
    """Picks the whole play whose position scores best, then plays it move by move.

    The score counts the race (pip difference), hitting (opponent checkers sent to the bar), the
    danger to its own blots (the opponent's direct and indirect shots at them, worse the farther
    from home), made points (more in its home board, and in a row: a prime), and checkers borne off.

    `blunder` handicaps it (`heuristic:0.1`): at each turn with a choice, with that probability it
    plays a legal play chosen at random instead. Its randomness (ties broken at random, and the
    blunders) comes from the player's own `rng`, which the referee seeds from the match's seed,
    never from the dice: the same seed plays the same match again, and a handicapped player
    leaves a duplicate pair's dice as they were.
    """

    def __init__(self, rng: random.Random | None = None, blunder: float | str = 0.0) -> None:
        self.rng = rng or random.Random()
        try:
            self.blunder = float(blunder)
        except ValueError:
            raise ValueError(f"a blunder rate from 0 to 1, not {blunder!r}") from None
        if not 0.0 <= self.blunder <= 1.0:  # also refuses nan
            raise ValueError(f"a blunder rate from 0 to 1, not {blunder!r}")
        # The blunders draw from a stream of their own, seeded from the player's source without
        # moving it: a handicapped heuristic breaks ties exactly as the plain one does from the
        # same source, so on a duplicate pair's shared seat randomness the two play alike until
        # the first blunder.
        self.blunders = random.Random(hashlib.sha256(repr(self.rng.getstate()).encode()).digest())
        self.plan: list[tuple[int, int | None]] = []
        self.planned_for: BackgammonState | None = None

    def move(self, board: Board) -> tuple[int, int | None]:
        state = board.state
        if self.plan and self.planned_for == state:
            step = self.plan.pop(0)
            self.planned_for = _after(state, board.side, step)
            return step
        options = board.plays()
        best = max(options, key=lambda play: (_score(play, board.side), self.rng.random()))
        if self.blunder and len(options) > 1 and self.blunders.random() < self.blunder:
            best = self.blunders.choice(options)
        self.plan = list(best.moves)
        step = self.plan.pop(0)
        self.planned_for = _after(state, board.side, step)
        return step


def _after(state: BackgammonState, side: int, step: tuple[int, int | None]) -> BackgammonState:
    return ENGINE.apply(state, CheckerMoved(seat=side, die_index=step[0], source=step[1]))


def _score(play: Play, side: int) -> float:
    from matchlog.engines.backgammon import _perspective

    mine, theirs = _perspective(play.points, play.bar, play.off, side)
    # Distances from the opponent's view: theirs[d] sits at distance 25 - d from its home.
    my_pips = sum(d * n for d, n in enumerate(mine) if d)
    their_pips = sum((25 - d) * n for d, n in enumerate(theirs) if 0 < d < 25) + 25 * theirs[0]
    score = (their_pips - my_pips) + 2.0 * mine[0]
    furthest_theirs = max((d for d in range(1, 25) if theirs[d]), default=0)
    contact = theirs[0] > 0 or any(mine[d] for d in range(furthest_theirs + 1, 26))
    if not contact:
        return score  # a pure race: pips and checkers off are all there is
    score += 12.0 * theirs[0]
    for d in range(1, 25):
        if mine[d] >= 2:
            score += 4.0 if d <= 6 else 2.0 if d <= 9 else 0.5
        elif mine[d] == 1:
            # Opponent checkers behind this blot (toward their start) can hit it.
            direct = sum(theirs[e] for e in range(d + 1, min(d + 7, 25))) + (theirs[0] if d >= 19 else 0)
            indirect = sum(theirs[e] for e in range(d + 7, min(d + 13, 25)))
            if direct or indirect:
                score -= (4.0 * min(direct, 3) + 1.5 * min(indirect, 3)) * (0.5 + d / 24)
    run = best = 0
    for d in range(1, 13):
        run = run + 1 if mine[d] >= 2 else 0
        best = max(best, run)
    score += 3.0 * max(0, best - 1) ** 1.5
    return score if math.isfinite(score) else 0.0


class BackgammonMessages(Messages):
    """begin_game, move and end_game carry the `side` asked and the whole `state` (backgammon hides
    nothing); move adds its `legal_moves` and is answered `[die_index, source]`, "undo", or
    pygammon's input `["MOVE", [die_index, source]]` / `["UNDO", null]`. observe carries pygammon's
    `output` (its OutputType's name), `data` and `side`."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        if method == "observe" and len(args) == 3:
            output, data, side = args
            return {
                "call": method,
                "output": output.name,
                "data": _pygammon_data(data),
                "side": None if side is None else int(side),
            }
        if len(args) == 1 and isinstance(args[0], Board):
            board = args[0]
            message = {"call": method, "side": int(board.side), "state": msgspec.to_builtins(board.state)}
            if method == "move":
                message["legal_moves"] = [list(move) for move in board.legal_moves()]
            return message
        return super().request(method, args)

    def answer(self, method: str, value: Any) -> Any:
        if method == "move" and isinstance(value, list) and len(value) == 2 and value[0] in ("MOVE", "UNDO"):
            return (InputType[value[0]], value[1])
        return value

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        if message["call"] == "observe":
            output, data, side = OutputType[message["output"]], message["data"], message["side"]
            if output is OutputType.GAME_STATE:
                board = [Point(None if p["side"] is None else Side(p["side"]), p["count"]) for p in data["board"]]
                data = GameState(
                    board, data["first_hit"], data["first_borne"], data["second_hit"], data["second_borne"]
                )
            elif output in (OutputType.TURN_ROLLS, OutputType.MOVE_ROLLS):
                data = DieRolls(*data)
            elif output is OutputType.INVALID_MOVE:
                data = InvalidMoveCode[data]
            else:
                data = Side(data)
            return (output, data, None if side is None else Side(side))
        if "state" in message:
            return (Board(msgspec.convert(message["state"], BackgammonState), message["side"]),)
        return super().arguments(message)

    def reply(self, method: str, value: Any) -> Any:
        if method != "move":
            return value
        if _is_input_type(value):
            return "undo" if value.name == "UNDO" else value.name
        if isinstance(value, tuple | list) and len(value) == 2 and _is_input_type(value[0]):
            return [value[0].name, value[1]]
        return value


def _is_input_type(value: object) -> bool:
    """Our InputType, or pygammon's own (a client written for pygammon)."""
    return isinstance(value, Enum) and type(value).__name__ == "InputType"


def _pygammon_data(data: Any) -> Any:
    """An output's data as JSON: GameState as an object, DieRolls as a pair, a code or side by name."""
    if isinstance(data, GameState):
        return {
            "board": [{"side": None if p.side is None else int(p.side), "count": p.count} for p in data.board],
            "first_hit": data.first_hit,
            "first_borne": data.first_borne,
            "second_hit": data.second_hit,
            "second_borne": data.second_borne,
        }
    if isinstance(data, DieRolls):
        return [data.first, data.second]
    if isinstance(data, Side):
        return int(data)
    if isinstance(data, Enum):
        return data.name
    return msgspec.to_builtins(data, enc_hook=repr)


register_messages("backgammon", lambda seat: BackgammonMessages())
register_builtin("backgammon", "random", RandomPlayer, "a random legal move")
register_builtin(
    "backgammon",
    "heuristic",
    HeuristicPlayer,
    "the play scoring best on race, hits, blot safety, made points and primes; handicapped by BLUNDER "
    "(0 to 1; 0 unless given), the share of its turns it plays a random legal play instead",
    argument="blunder",
)
