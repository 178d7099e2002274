"""A backgammon game as GNU Backgammon's records hold it, between matchlog's events and the two
file formats (`formats.mat`, `formats.sgf`).

Both formats write a game as turns: a roll of two dice and the checkers it moved, in the mover's
own point numbers (1 to 24, 25 or "bar" the bar, 0 or "off"); cube actions (double, take, drop);
and the result ("Wins 2 points", which a game not yet over by the rules reads as a resignation).
`game_of` reads that from a match's records; `read_game` turns it back into events, each judged by
the engine as the referee judges answers:

- the dice of each roll are recorded chance (`DiceRolled`), checked for possibility; the first
  roll is the opening roll (GNU Backgammon's rule: one die each, the higher plays both; written
  the starter's die first), unless the record names an opening roll that was not played (the
  starter rolled again);
- the steps of a roll become `CheckerMoved` events, each checked by `engine.check` (the die of a
  step is the one its distance needs; bearing off with a higher die, or a step written over two
  dice, `24/13`, is searched for); a play that is not legal is refused with the engine's rule;
- match play (the cube and resignations) is the engine's own: a double, a take and a drop are
  `DoubleOffered`, `DoubleTaken` and `DoubleDropped`, each turn of a match with the cube or
  resignations opens with the roller's `RollChosen`, and "Wins N points" before the rules end the
  game is the loser's `ResignationOffered` (N over the cube: a single, gammon or backgammon) and
  the winner's `ResignationAccepted`; so the points are what the record scored, and checked;
- "Wins N points" where the rules have ended the game must name the winner and those points.

What matchlog adds travels as tags, `[Name "value"]`: a `.mat`'s header comments, and in SGF the
game comment (`GC`), which GNU Backgammon keeps when it loads a game and writes back when it saves
or exports one (it drops properties it does not know): each seat's player (`Strategy 1`), the rules
(`Rules`), an opening roll that was rolled again (`Opening roll`), the chance commitment and its
seed (`Chance commitment`, `Chance seed`), match play (`Cube`, `Resignations`, and `Gammons` for
the Jacoby rule: GNU Backgammon swallows any tag named after Jacoby), and a
side's removal (`Forfeit "SEAT CODE: REASON"`); SGF's game comment also holds the time of day
(`EventTime`, a `.mat` header's tag: SGF's DT is a date only). A record without them (another tool's) is read for
what it shows: the cube is in play when it has a double, resignations when it ends with one.

Seats: GNU Backgammon's player 0 (White, the left column of a .mat) is matchlog's seat 0 (X,
moving from point 23 to 0), player 1 (Black) is seat 1.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Literal

import msgspec

from matchlog.engines import parse_options
from matchlog.engines.backgammon import ENGINE, BackgammonState, plays
from matchlog.engines.backgammon_notation import BAR, OFF, Step, index_of, play_text, point_name, step_of
from matchlog.events import (
    ChanceCommitted,
    ChanceRevealed,
    CheckerMoved,
    DiceRolled,
    DoubleDropped,
    DoubleOffered,
    DoubleTaken,
    IllegalAction,
    MatchEnded,
    MatchStarted,
    OpeningRolled,
    PlayerRemoved,
    Record,
    ResignationAccepted,
    ResignationOffered,
    RollChosen,
    Seat,
    Series,
    UsageError,
)
from matchlog.replay import effective

from .bounds import MAX_STEPS, at_most
from .imported import FormatError, ImportedMatch, Recording

__all__ = [
    "BAR",
    "IMPORTED",
    "OFF",
    "Action",
    "Cube",
    "GameRecord",
    "Roll",
    "Step",
    "Win",
    "apply_tags",
    "game_of",
    "read_game",
    "read_tags",
    "recorded_at",
    "tags_of",
    "write_tag",
]

#: The strategy recorded for a seat whose record does not name one.
IMPORTED = "imported"


class Roll(msgspec.Struct, kw_only=True):
    """`player` rolled `dice` and moved `steps` (none: it could not move, or it stopped there)."""

    player: int
    dice: tuple[int, int]
    steps: list[Step] = msgspec.field(default_factory=list)
    where: str = ""
    #: Read from a match's records: the roll's event and each step's (what an analysis names).
    seq: int | None = None
    step_seqs: list[int] = msgspec.field(default_factory=list)


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
    jacoby: bool = False  # points under the Jacoby rule: a gammon with the cube unturned counts 1
    #: Match play: the cube, resignations (None: as the record shows them).
    cube: bool | None = None
    resignations: bool | None = None
    #: A side removed from the game (seat, code, reason), which the formats write as a resignation.
    forfeit: tuple[int, str, str] | None = None
    actions: list[Action] = msgspec.field(default_factory=list)
    where: str = ""


# -- matchlog's tags -------------------------------------------------------------------------

#: One tag, `[Name "value"]` (a value escapes `"` and `\\`); linear: no two parts take the same characters.
_TAG = re.compile(r'\[([A-Za-z][A-Za-z0-9]*(?: +[A-Za-z0-9]+)*)\s+"([^"\\]*(?:\\.[^"\\]*)*)"\]')
_ON = {"on": True, "off": False}
#: The Gammons tag under the Jacoby rule: a gammon or backgammon counts single while the cube is unturned.
_UNDOUBLED = "single while undoubled"


def write_tag(name: str, value: str) -> str:
    """One tag as the records write it: `[Name "value"]`."""
    return f'[{name} "{_quoted(value)}"]'


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def read_tags(text: str) -> dict[str, str]:
    """The tags in a text (a `.mat` header line, an SGF game comment), by name."""
    return {found.group(1): re.sub(r"\\(.)", r"\1", found.group(2)) for found in _TAG.finditer(text)}


def recorded_at(date: str, clock: str) -> int | None:
    """When a record says its game was played (UTC microseconds): a date (`.mat`'s `2026.11.23`,
    SGF's `2026-11-23`) and a time of day (`EventTime`'s `14.05`; midnight without one), to the
    minute, which is all either record keeps. None without a valid date."""
    found = re.fullmatch(r"\s*(\d{4})[.-](\d{1,2})[.-](\d{1,2})\s*", date)
    if found is None:
        return None
    hour = minute = 0
    if (time := re.fullmatch(r"\s*(\d{1,2})[.:](\d{2})\s*", clock)) is not None:
        hour, minute = int(time.group(1)), int(time.group(2))
    try:
        when = datetime(int(found.group(1)), int(found.group(2)), int(found.group(3)), hour, minute, tzinfo=UTC)
    except ValueError:
        return None
    return int(when.timestamp()) * 1_000_000


def tags_of(game: GameRecord) -> list[tuple[str, str]]:
    """What matchlog adds to a game's record, as (name, value) tags."""
    tags = [(f"Strategy {number}", strategy) for number, strategy in enumerate(game.strategies, start=1)]
    if game.rules != "standard":
        tags.append(("Rules", game.rules))
    if game.opening is not None:
        tags.append(("Opening roll", f"{game.opening[0]} {game.opening[1]}"))
    if game.cube or game.resignations:
        # Each of them, off too: GNU Backgammon writes RU[Jacoby] for a money game it imports (and
        # keeps no tag whose name holds "Jacoby": the Jacoby rule is the tag Gammons).
        tags.append(("Cube", "on" if game.cube else "off"))
        tags.append(("Resignations", "on" if game.resignations else "off"))
        tags.append(("Gammons", _UNDOUBLED if game.jacoby else "count"))
    if game.forfeit is not None:
        seat, code, reason = game.forfeit
        tags.append(("Forfeit", f"{seat} {code}: {reason}"))
    if game.commitment is not None:
        tags.append(("Chance commitment", f"{game.commitment[0]} {game.commitment[1]}"))
    if game.seed is not None:
        tags.append(("Chance seed", game.seed))
    return tags


def apply_tags(game: GameRecord, tags: dict[str, str], format: str, where: str) -> None:
    """Set on `game` what matchlog's tags among `tags` say.

    Raises:
        FormatError: a tag matchlog wrote that does not read as it writes it.
    """
    strategies = (tags.get("Strategy 1"), tags.get("Strategy 2"))
    if strategies != (None, None):
        game.strategies = (strategies[0] or IMPORTED, strategies[1] or IMPORTED)
        # A record matchlog wrote says which match play it had: nothing is guessed.
        game.cube = game.cube or False
        game.resignations = game.resignations or False
    rules = tags.get("Rules", game.rules)
    if rules not in ("standard", "pygammon"):
        raise FormatError(format, f"{where}: rules {rules!r} are not standard or pygammon")
    game.rules = rules
    if "Opening roll" in tags:
        dice = re.fullmatch(r"\s*([1-6])\s+([1-6])\s*", tags["Opening roll"])
        if dice is None or dice.group(1) == dice.group(2):
            raise FormatError(format, f"{where}: the opening roll {tags['Opening roll']!r} is not two different dice")
        game.opening = (int(dice.group(1)), int(dice.group(2)))
    for name in ("Cube", "Resignations"):
        if name in tags:
            on = _ON.get(tags[name].strip().lower())
            if on is None:
                raise FormatError(format, f"{where}: {name} is on or off, not {tags[name]!r}")
            setattr(game, name.lower(), on)
    if "Gammons" in tags:
        if tags["Gammons"].strip() not in ("count", _UNDOUBLED):
            raise FormatError(format, f"{where}: Gammons is 'count' or {_UNDOUBLED!r}, not {tags['Gammons']!r}")
        game.jacoby = tags["Gammons"].strip() == _UNDOUBLED
    if "Forfeit" in tags:
        found = re.fullmatch(r"\s*([01])\s+([a-z_.]+):\s?(.*)", tags["Forfeit"], re.DOTALL)
        if found is None:
            raise FormatError(format, f"{where}: a forfeit is 'SEAT CODE: REASON', not {tags['Forfeit'][:60]!r}")
        game.forfeit = (int(found.group(1)), found.group(2), found.group(3))
    if "Chance commitment" in tags:
        parts = tags["Chance commitment"].split()
        if len(parts) != 2:
            raise FormatError(format, f"{where}: a chance commitment is 'ALGORITHM HEX'")
        game.commitment = (parts[0], parts[1])
    if "Chance seed" in tags:
        game.seed = tags["Chance seed"].strip()


# -- from a match's records ------------------------------------------------------------------


def game_of(records: list[Record]) -> GameRecord:
    """The game a backgammon match's records hold (its effective history: undone moves left out).
    A declined resignation is not in it: GNU Backgammon's records have no place for one.

    Raises:
        UsageError: the match is not backgammon.
    """
    history = effective(records)
    started = history[0].event
    if not isinstance(started, MatchStarted) or started.game != "backgammon":
        game = started.game if isinstance(started, MatchStarted) else "?"
        raise UsageError(f"GNU Backgammon's formats hold backgammon, not {game}", code="usage.export")
    state: BackgammonState = ENGINE.start(started)
    options = state.options
    game = GameRecord(
        names=(started.seats[0].name, started.seats[1].name),
        strategies=(started.seats[0].player, started.seats[1].player),
        rules=options.rules,
        jacoby=options.jacoby,
        cube=options.cube,
        resignations=options.resignations,
        at_us=history[0].at_us,
    )
    for record in history[1:]:
        event = record.event
        after: BackgammonState = ENGINE.apply(state, event)
        match event:
            case OpeningRolled(first=first, second=second):
                if options.move_by_turn_rolls:  # the opening roll is the starter's roll: its die first
                    dice = (max(first, second), min(first, second))
                    game.actions.append(Roll(player=after.side, dice=dice, seq=record.seq))
                else:
                    game.opening = (first, second)
            case DiceRolled(seat=seat, dice=dice):
                game.actions.append(Roll(player=seat, dice=dice, seq=record.seq))
            case CheckerMoved():
                roll = game.actions[-1]
                assert isinstance(roll, Roll)
                roll.steps.append(step_of(state, event, after))
                roll.step_seqs.append(record.seq)
            case DoubleOffered(seat=seat, cube=value):
                game.actions.append(Cube(player=seat, action="double", value=value))
            case DoubleTaken(seat=seat):
                game.actions.append(Cube(player=seat, action="take"))
            case DoubleDropped(seat=seat):
                game.actions.append(Cube(player=seat, action="drop"))
            case ResignationAccepted(seat=seat):
                points = ENGINE.outcome(after).scores[seat]  # type: ignore[union-attr]
                game.actions.append(Win(player=seat, points=int(points), resigned=True))
            case PlayerRemoved(seat=seat, code=code, reason=reason) if not state.over:
                game.forfeit = (seat, code, reason)
                points = ENGINE.outcome(after).scores[1 - seat]  # type: ignore[union-attr]
                game.actions.append(Win(player=1 - seat, points=int(points), resigned=True))
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
    # GNU Backgammon knows a play by the position it reaches, and may write a route the rules do
    # not allow to it (`7/1 1/off` for 7/5 5/off with 6-2): the legal play to that position is it.
    reached = _reached(state, roll.player, roll.steps)
    for play in plays(state) if reached is not None else ():
        if (play.points, play.bar, play.off) == reached:
            return [CheckerMoved(seat=roll.player, die_index=index, source=source) for index, source in play.moves]
    assert written is not None
    raise written


def _reached(
    state: BackgammonState, seat: int, steps: list[Step]
) -> tuple[tuple[int, ...], tuple[int, int], tuple[int, int]] | None:
    """The position `steps` lead to, each checker simply taken from its start to its end (a blot
    there hit), whatever the dice; None when a step has no checker to move."""
    sign = 1 if seat == 0 else -1
    points, bar, off = list(state.points), list(state.bar), list(state.off)
    for step in steps:
        if step.start == BAR:
            if not bar[seat]:
                return None
            bar[seat] -= 1
        else:
            source = index_of(seat, step.start)
            if source is None or points[source] * sign <= 0:
                return None
            points[source] -= sign
        if step.end == OFF:
            off[seat] += 1
            continue
        target = index_of(seat, step.end)
        if target is None:
            return None
        if points[target] == -sign:
            points[target] = 0
            bar[1 - seat] += 1
        points[target] += sign
    return tuple(points), (bar[0], bar[1]), (off[0], off[1])


def _notation(roll: Roll) -> str:
    return f"{roll.dice[0]}{roll.dice[1]}: {play_text(roll.steps)}".rstrip()


def _points(count: int) -> str:
    return f"{count} point{'s' if count != 1 else ''}"


class _Resigns(Exception):
    """A record matchlog did not write ends with a resignation: read it again with resignations on."""


def read_game(game: GameRecord, format: str, key: bytes) -> ImportedMatch:
    """The events of one game, each judged by the engine (see the module docstring).

    Raises:
        FormatError: a roll, play or result the rules do not allow, naming its place in the file.
    """
    if game.cube is None:  # another tool's record: the cube is in play if it was used
        game.cube = any(isinstance(action, Cube) for action in game.actions)
    guessed = game.resignations is None
    if guessed:
        game.resignations = False
    try:
        return _read_game(game, format, key, guessed)
    except _Resigns:
        game.resignations = True
        return _read_game(game, format, key, guessed)
    finally:
        if guessed:
            game.resignations = None


def _read_game(game: GameRecord, format: str, key: bytes, guessed: bool) -> ImportedMatch:
    given = {
        "rules": game.rules,
        "move_by_turn_rolls": game.opening is None,
        "cube": game.cube,
        "resignations": game.resignations,
        "jacoby": game.jacoby,
    }
    seats = tuple(Seat(name, strategy) for name, strategy in zip(game.names, game.strategies, strict=True))
    try:
        options = msgspec.to_builtins(parse_options(ENGINE.spec, given))
    except UsageError as error:
        raise FormatError(format, f"{game.where}: {error.message}") from None
    started = MatchStarted(game="backgammon", options=options, seats=seats, series=game.series)
    recording = Recording(format, started, game.where, at_us=game.at_us)
    if game.commitment is not None:
        recording.record(ChanceCommitted(algorithm=game.commitment[0], commitment=game.commitment[1]), game.where)
    names = game.names

    def decide(player: int, where: str) -> None:
        """The roller's decision to roll, where match play asks for one."""
        turn = recording.engine.to_act(recording.state)
        if turn is not None and turn.decision == "roll" and turn.seat == player:
            recording.answer(RollChosen(seat=player), where)

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
                        decide(player, where)
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
                    decide(player, where)
                    recording.chance(DiceRolled(seat=player, dice=(a, b)), where)
                # More steps than dice can move is no play: refused before the search for one.
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
            case Cube(player=player, action="double", value=value):
                recording.answer(DoubleOffered(seat=player, cube=value or state.cube * 2), where)
            case Cube(player=player, action="take"):
                recording.answer(DoubleTaken(seat=player), where)
            case Cube(player=player, action="drop"):
                recording.answer(DoubleDropped(seat=player), where)
            case Win(player=winner, points=points):
                if not recording.over:
                    _resign(recording, game, winner, points, where, guessed)
                    continue
                outcome = recording.engine.outcome(recording.state)
                assert outcome is not None
                if outcome.winners != (winner,):
                    raise recording.error(
                        where, f"the record says {names[winner]} wins, but the rules give the game to the other side"
                    )
                owed = int(outcome.scores[winner])
                if points != owed:
                    raise recording.error(
                        where,
                        f"the record gives {names[winner]} {_points(points)}, but a {outcome.result} "
                        f"at cube {recording.state.cube} is {_points(owed)}",
                    )
        unfinished = None
    if game.seed is not None and recording.over:  # the referee reveals its seed as the match ends
        recording.record(ChanceRevealed(seed=game.seed), game.where)
    recording.end(game.where)
    return recording.finish(key)


def _resign(recording: Recording, game: GameRecord, winner: int, points: int, where: str, guessed: bool) -> None:
    """The game the record ends before the rules do: the loser's removal (matchlog's `Forfeit`
    tag, or a match matchlog recorded without resignations), else its resignation of `points` over
    the cube, accepted.

    Raises:
        _Resigns: resignations are not in play, and the record did not say so (another tool's).
        FormatError: a resignation the rules cannot take there.
    """
    loser, names = 1 - winner, game.names
    state: BackgammonState = recording.state
    if game.forfeit is not None and game.forfeit[0] == loser:
        recording.record(PlayerRemoved(seat=loser, code=game.forfeit[1], reason=game.forfeit[2]), where)
        return
    if not state.options.resignations:
        if guessed:
            raise _Resigns
        reason = f"resigned: the record gives {names[winner]} {_points(points)}"
        recording.record(PlayerRemoved(seat=loser, code="player.resigned", reason=reason), where)
        return
    value, rest = divmod(points, state.cube)
    if rest or not 1 <= value <= 3:
        raise recording.error(
            where,
            f"{names[loser]} resigns {_points(points)} at cube {state.cube}: a resignation is 1, 2 or 3 times the cube",
        )
    turn = recording.engine.to_act(state)
    if turn is None or turn.seat != loser:
        whose = "chance's" if turn is not None and turn.seat < 0 else f"{names[winner]}'s"
        raise recording.error(where, f"{names[loser]} resigns on {whose} turn; a side resigns when it is to act")
    recording.answer(ResignationOffered(seat=loser, value=value), where)
    recording.answer(ResignationAccepted(seat=winner), where)
