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

from typing import Literal

import msgspec

from matchlog.engines.backgammon import ENGINE, BackgammonState
from matchlog.engines.backgammon_notation import BAR, OFF, Step, index_of, play_text, point_name, step_of
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

from .bounds import MAX_STEPS, at_most
from .imported import ImportedMatch, Recording

__all__ = ["BAR", "IMPORTED", "OFF", "Action", "Cube", "GameRecord", "Roll", "Step", "Win", "game_of", "read_game"]

#: The strategy recorded for a seat whose record does not name one.
IMPORTED = "imported"


class Roll(msgspec.Struct, kw_only=True):
    """`player` rolled `dice` and moved `steps` (none: it could not move, or it stopped there)."""

    player: int
    dice: tuple[int, int]
    steps: list[Step] = msgspec.field(default_factory=list)
    where: str = ""


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
                    game.actions.append(Roll(player=after.side, dice=(max(first, second), min(first, second))))
                else:
                    game.opening = (first, second)
            case DiceRolled(seat=seat, dice=dice):
                game.actions.append(Roll(player=seat, dice=dice))
            case CheckerMoved():
                roll = game.actions[-1]
                assert isinstance(roll, Roll)
                roll.steps.append(step_of(state, event, after))
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


class _NoPlay(Exception):
    """No order of a roll's steps is a legal play; `first` is what refused the first one tried."""

    def __init__(self, first: Exception) -> None:
        super().__init__(str(first))
        self.first = first


def _search(
    state: BackgammonState, seat: int, paths: tuple[tuple[int, int], ...], passing_hits: bool, whole: bool
) -> list[CheckerMoved]:
    """Moves of `seat`, one die each, that take checkers along `paths` (here, end) in any order and
    interleaving (two checkers of a double may go halfway each before either bears off), each legal
    where it is made; the first found, trying the die a step's distance needs first. A checker that
    only passes a point does not hit there unless `passing_hits` (the notation marks a hit on the
    way, `24/18*/13`, and writes `24/13` only where it hit nothing). With `whole`, the moves must
    finish the turn (`3/off` with 5-1 is 3/2 2/off when the 1 must be played, not the 5 alone).

    Raises:
        _NoPlay: no such moves exist (with the first refusal met, naming its step in the mover's numbers).
    """
    if not paths:
        if whole and not state.over and state.side == seat and state.dice:
            raise _NoPlay(ValueError("the steps leave dice the roll can still play"))
        return []
    unplayed: dict[int, int] = {}
    for index, value in enumerate(state.dice):
        if index not in state.played and state.side == seat:
            unplayed.setdefault(value, index)
    first: Exception | None = None
    for at, (here, end) in enumerate(paths):
        if (here, end) in paths[:at]:
            continue  # the same path again: the same moves
        distance = here - end
        # The die that covers the step exactly first; then larger ones (bearing off), then smaller
        # (a step written over several dice).
        for value in sorted(unplayed, key=lambda value: (value != distance, value < distance, value)):
            target = here - value
            if end > OFF and target < end:
                continue  # past the point the record names
            step = f"{point_name(here)}/{point_name(max(target, OFF))}"
            move = CheckerMoved(seat=seat, die_index=unplayed[value], source=index_of(seat, here))
            try:
                ENGINE.check(state, seat, move)
            except IllegalAction as error:
                first = first or IllegalAction(error.code, f"{step}: {error.message}")
                continue
            after = ENGINE.apply(state, move)
            reached = target <= OFF if end == OFF else target == end
            if not reached and not passing_hits and after.bar[1 - seat] > state.bar[1 - seat]:
                first = first or ValueError(f"{step} would hit on the way to {point_name(end)}")
                continue
            rest = paths[:at] + paths[at + 1 :] if reached else (*paths[:at], (target, end), *paths[at + 1 :])
            try:
                return [move, *_search(after, seat, rest, passing_hits, whole)]
            except _NoPlay as deeper:
                first = first or deeper.first
    raise _NoPlay(
        first or ValueError(f"no die left moves a checker {point_name(paths[0][0])}/{point_name(paths[0][1])}")
    )


def _play(state: BackgammonState, roll: Roll) -> list[CheckerMoved]:
    """The moves of a roll's steps: a whole play where there is one (a play that stops short is
    only for a side about to resign), and checkers that pass a point without a hit marked hit
    nothing there, unless no play is found so (a record that does not mark its hits).

    Raises:
        IllegalAction, ValueError: no order of the steps is a legal play (the first refusal met).
    """
    paths = tuple((step.start, step.end) for step in roll.steps)
    written: Exception | None = None
    for whole, passing_hits in ((True, False), (True, True), (False, False), (False, True)):
        try:
            return _search(state, roll.player, paths, passing_hits, whole)
        except _NoPlay as error:
            written = written or error.first
    assert written is not None
    raise written


def _notation(roll: Roll) -> str:
    return f"{roll.dice[0]}{roll.dice[1]}: {play_text(roll.steps)}".rstrip()


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
                # More steps than dice can move is no play, and the search below tries every order of
                # the steps: refused before it, so that it stays at most 4! orders.
                at_most(len(action.steps), MAX_STEPS, format, where, "checkers moved by one roll")
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
