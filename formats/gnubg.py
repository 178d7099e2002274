"""A backgammon game as GNU Backgammon's records hold it, between matchlog's events and the two
file formats (`formats.mat`, `formats.sgf`).

Both formats write a game as turns: a roll of two dice and the checkers it moved, one die a step
("13/8 13/11"), each step from the mover's own point numbers (1 to 24, 25 the bar, 0 off); cube
actions; and the result ("Wins 2 points"). `game_of` reads that from a match's records;
`read_game` turns it back into events, each judged by the engine as the referee judges answers:

- the dice of each roll are recorded chance (`DiceRolled`), checked for possibility; the first
  roll is the opening roll (GNU Backgammon's rule: one die each, the higher plays both; written
  the starter's die first), unless the record names an opening roll that was not played
  (matchlog's own default, where the starter rolls again);
- the steps of a roll become `CheckerMoved` events, each checked by `engine.check` in the order
  written (the die of a step is the one its distance needs; bearing off with a higher die, or a
  step written as one move over two dice, is searched for); a play that is not legal is refused
  with the engine's rule;
- "Wins N points" where the rules have ended the game must name the winner and the points the
  rules give; before that it is the loser's resignation (`PlayerRemoved`, code
  `player.resigned`), as is dropping a double. Doubles and takes are not part of matchlog's
  backgammon and are skipped; the cube's value only scales the points checked.

Seats: GNU Backgammon's player 0 (White, the left column of a .mat) is matchlog's seat 0 (X,
moving from point 23 to 0), player 1 (Black) is seat 1.
"""

from __future__ import annotations

import itertools
from typing import Literal

import msgspec

from matchlog.engines.backgammon import ENGINE, BackgammonState
from matchlog.events import (
    ChanceCommitted,
    ChanceRevealed,
    CheckerMoved,
    DiceRolled,
    IllegalAction,
    MatchEnded,
    MatchStarted,
    OpeningRolled,
    PlayerRemoved,
    Record,
    Seat,
    Series,
    UsageError,
)
from matchlog.replay import effective

from .imported import ImportedMatch, Recording

__all__ = ["BAR", "IMPORTED", "OFF", "Action", "Cube", "GameRecord", "Roll", "Step", "Win", "game_of", "read_game"]

#: The bar and borne off, in the mover's point numbers.
BAR, OFF = 25, 0
#: The strategy recorded for a seat whose record does not name one.
IMPORTED = "imported"


class Step(msgspec.Struct, frozen=True):
    """A checker moved from point `start` to point `end` (mover's numbers); `hit` a blot on `end`;
    `seq` the event that moved it, when read from a match's records."""

    start: int
    end: int
    hit: bool = False
    seq: int | None = None


class Roll(msgspec.Struct, kw_only=True):
    """`player` rolled `dice` and moved `steps` (none: it could not move, or it stopped there)."""

    player: int
    dice: tuple[int, int]
    steps: list[Step] = msgspec.field(default_factory=list)
    where: str = ""
    seq: int | None = None  # the roll's event, when read from a match's records


class Cube(msgspec.Struct, kw_only=True):
    """A cube action of `player`: double (to `value` when the record says), take or drop."""

    player: int
    action: Literal["double", "take", "drop"]
    value: int | None = None
    where: str = ""


class Win(msgspec.Struct, kw_only=True):
    """The record's result: `player` wins `points` (`resigned`: the other resigned or forfeited)."""

    player: int
    points: int
    resigned: bool = False
    where: str = ""


Action = Roll | Cube | Win


class GameRecord(msgspec.Struct, kw_only=True):
    """One game as the formats hold it, with what matchlog adds to the formats' headers."""

    names: tuple[str, str]
    strategies: tuple[str, str] = (IMPORTED, IMPORTED)
    rules: str = "standard"
    #: The opening roll (seat 0's die, seat 1's) when it was not played; None: the first roll is it.
    opening: tuple[int, int] | None = None
    commitment: tuple[str, str] | None = None  # (algorithm, hex digest)
    seed: str | None = None
    at_us: int | None = None
    series: Series | None = None
    jacoby: bool = False  # points under the Jacoby rule: a gammon with the cube at 1 counts 1
    actions: list[Action] = msgspec.field(default_factory=list)
    where: str = ""


# -- from a match's records ------------------------------------------------------------------


def game_of(records: list[Record]) -> GameRecord:
    """The game a backgammon match's records hold (its effective history: undone moves left out).

    Raises:
        UsageError: the match is not backgammon.
    """
    history = effective(records)
    started = history[0].event
    if not isinstance(started, MatchStarted) or started.game != "backgammon":
        game = started.game if isinstance(started, MatchStarted) else "?"
        raise UsageError(f"GNU Backgammon's formats hold backgammon, not {game}", code="usage.export")
    state: BackgammonState = ENGINE.start(started)
    game = GameRecord(
        names=(started.seats[0].name, started.seats[1].name),
        strategies=(started.seats[0].player, started.seats[1].player),
        rules=state.options.rules,
        at_us=history[0].at_us,
    )
    for record in history[1:]:
        event = record.event
        after: BackgammonState = ENGINE.apply(state, event)
        match event:
            case OpeningRolled(first=first, second=second):
                if state.options.move_by_turn_rolls:  # the opening roll is the starter's roll: its die first
                    dice = (max(first, second), min(first, second))
                    game.actions.append(Roll(player=after.side, dice=dice, seq=record.seq))
                else:
                    game.opening = (first, second)
            case DiceRolled(seat=seat, dice=dice):
                game.actions.append(Roll(player=seat, dice=dice, seq=record.seq))
            case CheckerMoved(seat=seat, die_index=index, source=source):
                start = BAR if source is None else (source + 1 if seat == 0 else 24 - source)
                end = max(start - state.dice[index], OFF)
                roll = game.actions[-1]
                assert isinstance(roll, Roll)
                roll.steps.append(Step(start, end, after.bar[1 - seat] > state.bar[1 - seat], record.seq))
            case PlayerRemoved(seat=seat) if not state.over:
                game.actions.append(Win(player=1 - seat, points=1, resigned=True))
            case MatchEnded(outcome=outcome) if outcome.winners:
                if not any(isinstance(action, Win) for action in game.actions):
                    winner = outcome.winners[0]
                    points = int(outcome.scores[winner]) if outcome.scores else 1
                    game.actions.append(Win(player=winner, points=points, resigned=outcome.result == "forfeit"))
            case ChanceCommitted(algorithm=algorithm, commitment=digest):
                game.commitment = (algorithm, digest)
            case ChanceRevealed(seed=seed):
                game.seed = seed
        state = after
    return game


# -- to a match's events ---------------------------------------------------------------------


def _source(seat: int, point: int) -> int | None:
    """The engine's source index of the mover's point number (None: the bar)."""
    if point == BAR:
        return None
    return point - 1 if seat == 0 else 24 - point


def _search(state: BackgammonState, seat: int, paths: list[tuple[int, int]], at: int | None) -> list[CheckerMoved]:
    """Moves of `seat` that take checkers along `paths` (start, end), one die a move, each legal where
    it is made; the first found, trying the die a step's distance needs first. Raises the first
    IllegalAction met when no such moves exist (or ValueError when no die fits at all)."""
    if not paths:
        return []
    start, end = paths[0]
    here = start if at is None else at
    distance = here - end
    unplayed: dict[int, int] = {}
    for index, value in enumerate(state.dice):
        if index not in state.played and state.side == seat:
            unplayed.setdefault(value, index)
    # The die that covers the step exactly first; then larger ones (bearing off), then smaller (a
    # step written over several dice).
    order = sorted(unplayed, key=lambda value: (value != distance, value < distance, value))
    first_error: Exception | None = None
    for value in order:
        target = here - value
        if end > OFF and target < end:
            continue  # past the point the record names
        move = CheckerMoved(seat=seat, die_index=unplayed[value], source=_source(seat, here))
        try:
            ENGINE.check(state, seat, move)
            after = ENGINE.apply(state, move)
            reached = target <= OFF if end == OFF else target == end
            rest = _search(after, seat, paths[1:] if reached else paths, None if reached else target)
        except (IllegalAction, ValueError) as error:
            first_error = first_error or error
            continue
        return [move, *rest]
    raise first_error or ValueError(f"no die left moves a checker from {here} to {end}")


def _play(state: BackgammonState, roll: Roll) -> list[CheckerMoved]:
    """The moves of a roll's steps, in the order written or, failing that, in any order.

    Raises:
        IllegalAction, ValueError: no order of the steps is a legal play (the error of the order written).
    """
    paths = [(step.start, step.end) for step in roll.steps]
    try:
        return _search(state, roll.player, paths, None)
    except (IllegalAction, ValueError) as error:
        written = error
    for order in itertools.islice(itertools.permutations(paths), 1, None):
        try:
            return _search(state, roll.player, list(order), None)
        except (IllegalAction, ValueError):
            continue
    raise written


def _notation(roll: Roll) -> str:
    steps = " ".join(f"{step.start}/{step.end}" for step in roll.steps)
    return f"{roll.dice[0]}{roll.dice[1]}: {steps}".rstrip()


def _points(count: int) -> str:
    return f"{count} point{'s' if count != 1 else ''}"


def read_game(game: GameRecord, format: str, key: bytes) -> ImportedMatch:
    """The events of one game, each judged by the engine (see the module docstring).

    Raises:
        FormatError: a roll, play or result the rules do not allow, naming its place in the file.
    """
    options = {"rules": game.rules, "move_by_turn_rolls": game.opening is None}
    seats = tuple(Seat(name, strategy) for name, strategy in zip(game.names, game.strategies, strict=True))
    started = MatchStarted(game="backgammon", options=options, seats=seats, series=game.series)
    recording = Recording(format, started, game.where, at_us=game.at_us)
    if game.commitment is not None:
        recording.record(ChanceCommitted(algorithm=game.commitment[0], commitment=game.commitment[1]), game.where)
    names = game.names
    cube = 1
    unfinished: Roll | None = None  # a roll whose play stops short: only a resignation may follow
    for action in game.actions:
        state: BackgammonState = recording.state
        where = action.where
        if recording.over and not isinstance(action, Win):
            raise recording.error(where, "the game is already over")
        if unfinished is not None and not isinstance(action, Win):
            raise recording.error(
                unfinished.where,
                f"{names[unfinished.player]}'s play {_notation(unfinished)!r} is not a whole play of the roll",
            )
        match action:
            case Roll(player=player, dice=(a, b)):
                if state.side < 0:  # the opening roll
                    if game.opening is not None:
                        first, second = game.opening
                        recording.chance(OpeningRolled(first=first, second=second), game.where)
                        starter = 0 if first > second else 1
                        if player != starter:
                            raise recording.error(
                                where, f"{names[starter]} won the opening roll {first}-{second}, not {names[player]}"
                            )
                        recording.chance(DiceRolled(seat=player, dice=(a, b)), where)
                    else:
                        if a == b:
                            raise recording.error(where, f"the opening roll {a}-{b} is a double (one die each)")
                        # One die each: the higher is the starter's, whichever way the record writes them.
                        high, low = max(a, b), min(a, b)
                        recording.chance(
                            OpeningRolled(first=high if player == 0 else low, second=low if player == 0 else high),
                            where,
                        )
                else:
                    if state.dice or state.side != player:
                        raise recording.error(where, f"{names[player]} rolls, but it is {names[state.side]}'s turn")
                    recording.chance(DiceRolled(seat=player, dice=(a, b)), where)
                try:
                    moves = _play(recording.state, action) if action.steps else []
                except (IllegalAction, ValueError) as error:
                    rule = f" [{error.code}]" if isinstance(error, IllegalAction) else ""
                    raise recording.error(
                        where, f"{_notation(action)!r} is not a legal play for {names[player]}: {error}{rule}"
                    ) from None
                for move in moves:
                    recording.answer(move, where)
                after: BackgammonState = recording.state
                unfinished = action if not recording.over and after.side == player and after.dice else None
                continue
            case Cube(action="double", value=value):  # the cube's value as the double offers it
                cube = value if value else cube * 2
            case Cube(action="take"):
                pass
            case Cube(player=player, action="drop"):
                recording.record(
                    PlayerRemoved(seat=player, code="player.resigned", reason=f"dropped a double to {cube}"), where
                )
            case Win(player=winner, points=points):
                if not recording.over:  # the other side resigned
                    reason = f"resigned: the record gives {names[winner]} {_points(points)}"
                    recording.record(PlayerRemoved(seat=1 - winner, code="player.resigned", reason=reason), where)
                    continue
                outcome = recording.engine.outcome(recording.state)
                assert outcome is not None
                if outcome.winners != (winner,):
                    raise recording.error(
                        where, f"the record says {names[winner]} wins, but the rules give the game to the other side"
                    )
                if not outcome.removed:  # a game ended by the rules: its points are checked too
                    owed = int(outcome.scores[winner]) * cube
                    if points != owed and not (game.jacoby and cube == 1 and points == 1):
                        raise recording.error(
                            where,
                            f"the record gives {names[winner]} {_points(points)}, but a {outcome.result} "
                            f"at cube {cube} is {_points(owed)}",
                        )
        unfinished = None
    if game.seed is not None and recording.over:  # the referee reveals its seed as the match ends
        recording.record(ChanceRevealed(seed=game.seed), game.where)
    recording.end(game.where)
    return recording.finish(key)
