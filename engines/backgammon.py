"""Backgammon: chance as recorded events, turns of several moves, and forced-move rules.

Every roll, the opening roll included, is an event the referee draws; a turn is up to four
`CheckerMoved` events, one die and one checker each, as in pygammon's protocol. The engine knows
the whole set of legal plays of a turn, so it can refuse a move that would leave dice unplayed
(standard rules) or let it through as pygammon does (`rules="pygammon"`).

The board uses pygammon's indexing: points 0..23 from the bottom right to the bottom left, then top
left to top right. FIRST moves 23 -> 0 (home 0..5, enters from the bar onto 24 - die); SECOND moves
0 -> 23 (home 18..23, enters onto die - 1). A point holds +n for n checkers of FIRST, -n for SECOND.
Internally, plays are searched in the mover's own coordinates: distance 1..24 to bearing off, the
bar at 25, borne-off checkers at 0.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Literal

import msgspec

from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    CheckerMoved,
    DiceRolled,
    Event,
    IllegalAction,
    MatchEnded,
    MatchStarted,
    OpeningRolled,
    Outcome,
    PlayerRemoved,
)

from .contract import CHANCE, GameSpec, Rule, Turn, among_outcomes, describe_lifecycle, parse_options
from .views import declare, everyone, lifecycle

__all__ = [
    "CHECKERS",
    "ENGINE",
    "FIRST",
    "SECOND",
    "START",
    "Backgammon",
    "BackgammonOptions",
    "BackgammonRule",
    "BackgammonState",
    "Play",
    "legal_moves",
    "pips",
    "plays",
]

FIRST, SECOND = 0, 1
CHECKERS = 15
#: The starting position, pygammon's: point -> +n FIRST / -n SECOND.
START: tuple[int, ...] = tuple({0: -2, 5: 5, 7: 3, 11: -5, 12: 5, 16: -3, 18: -5, 23: 2}.get(p, 0) for p in range(24))
_BAR = 25
_SYMBOL = ("X", "O")


class BackgammonRule:
    """Codes of the rules `parse` and `check` enforce: pygammon's InvalidMoveCode names, and two of
    standard backgammon that pygammon lacks."""

    DIE_INDEX_INVALID = "backgammon.die_index_invalid"
    SOURCE_INVALID = "backgammon.source_invalid"
    SOURCE_NOT_OWNED_PIECE = "backgammon.source_not_owned_piece"
    DESTINATION_OUT_OF_BOARD = "backgammon.destination_out_of_board"
    DESTINATION_OCCUPIED = "backgammon.destination_occupied"
    INVALID_MOVE_TYPE = "backgammon.invalid_move_type"
    NOTHING_TO_UNDO = "backgammon.nothing_to_undo"
    INVALID_INPUT_TYPE = "backgammon.invalid_input_type"
    #: Standard rules: the move would leave fewer dice playable than the roll allows.
    MUST_USE_MORE_DICE = "backgammon.must_use_more_dice"
    #: Standard rules: only one die can be played, and the larger one can, so it must.
    LARGER_DIE_REQUIRED = "backgammon.larger_die_required"


class BackgammonOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`rules`: "standard", or "pygammon" (any higher die bears off any home checker; the larger-die
    rule and the use-both-dice rule are not checked move by move). `move_by_turn_rolls`: the starting
    side plays the opening roll (pygammon's run() argument of that name)."""

    rules: Literal["standard", "pygammon"] = "standard"
    move_by_turn_rolls: bool = False


class BackgammonState(msgspec.Struct, frozen=True, kw_only=True):
    """The board between two events."""

    options: BackgammonOptions
    names: tuple[str, ...]
    points: tuple[int, ...] = START
    bar: tuple[int, int] = (0, 0)
    off: tuple[int, int] = (0, 0)
    side: int = -1  # the side to move; -1 until the opening roll
    dice: tuple[int, ...] = ()  # this turn's dice (four for a double); () while a roll is due
    played: tuple[int, ...] = ()  # indices of the dice played this turn
    max_moves: int = 0  # how many dice this turn's roll lets the side play
    opening: tuple[int, int] | None = None
    turns: int = 0
    winner: int = -1
    removed: tuple[int, ...] = ()
    ended: bool = False

    @property
    def over(self) -> bool:
        return self.ended or self.winner >= 0

    @property
    def remaining(self) -> tuple[int, ...]:
        """The values of the dice not yet played this turn."""
        if not self.played:
            return self.dice
        return tuple([value for index, value in enumerate(self.dice) if index not in self.played])


#: The opening roll: one die each, never equal (as pygammon draws them); then two dice a turn.
_OPENINGS = tuple(OpeningRolled(first=a, second=b) for a in range(1, 7) for b in range(1, 7) if a != b)
_ROLLS = tuple(tuple(DiceRolled(seat=side, dice=(a, b)) for a in range(1, 7) for b in range(1, 7)) for side in (0, 1))


class Play(msgspec.Struct, frozen=True):
    """A whole turn: its moves as (die_index, source) and the position they lead to."""

    moves: tuple[tuple[int, int | None], ...]
    points: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]


# -- the mover's coordinates -----------------------------------------------------------------


def _point_of(side: int, distance: int) -> int:
    """The board index of a distance (1..24) in `side`'s coordinates."""
    return distance - 1 if side == FIRST else 24 - distance


def _perspective(points: tuple[int, ...], bar: tuple[int, int], off: tuple[int, int], side: int):
    """`mine` and `theirs` as lists over distances 0..25 from `side`'s view (0: off, 25: bar;
    theirs[0] holds the opponent's bar)."""
    # FIRST's distance d is point d - 1; SECOND's is point 24 - d, with its checkers counted negative.
    ordered = points if side == FIRST else [-value for value in reversed(points)]
    mine = [off[side], *[value if value > 0 else 0 for value in ordered], bar[side]]
    theirs = [bar[1 - side], *[-value if value < 0 else 0 for value in ordered], 0]
    return mine, theirs


def _absolute(mine: list[int], theirs: list[int], side: int, off_other: int):
    ordered = [a - b for a, b in zip(mine[1:25], theirs[1:25], strict=True)]
    points = tuple(ordered) if side == FIRST else tuple(-value for value in reversed(ordered))
    if side == FIRST:
        return points, (mine[_BAR], theirs[0]), (mine[0], off_other)
    return points, (theirs[0], mine[_BAR]), (off_other, mine[0])


def _sources(mine: list[int], theirs: list[int], value: int, loose: bool) -> list[int]:
    """Distances a checker may move from with `value`: the bar first, bearing off by the rules."""
    if mine[_BAR]:
        return [_BAR] if theirs[_BAR - value] < 2 else []
    found = []
    highest = 24
    while highest and not mine[highest]:
        highest -= 1
    all_home = highest <= 6
    for distance in range(highest, 0, -1):
        if not mine[distance]:
            continue
        target = distance - value
        if target >= 1:
            if theirs[target] < 2:
                found.append(distance)
        # Bearing off: everything home; exactly, or (standard) a higher die from the highest point.
        elif all_home and (loose or target == 0 or distance == highest):
            found.append(distance)
    return found


def _playable(mine: list[int], theirs: list[int], value: int, loose: bool) -> bool:
    """Whether any checker can move `value` (what `_sources` finds, without listing it)."""
    if mine[_BAR]:
        return theirs[_BAR - value] < 2
    highest = 24
    while highest and not mine[highest]:
        highest -= 1
    if not highest:
        return False
    # Bearing off: exactly, or a higher die from the highest point (pygammon: from any point below it).
    if highest <= 6 and (mine[value] or highest <= value or (loose and any(mine[1:value]))):
        return True
    return any(mine[d] and theirs[d - value] < 2 for d in range(highest, value, -1))


def _move(mine: list[int], theirs: list[int], distance: int, value: int) -> bool:
    """Move one checker in place; returns whether it hit a blot."""
    mine[distance] -= 1
    target = distance - value
    if target <= 0:
        mine[0] += 1
        return False
    hit = theirs[target] == 1
    if hit:
        theirs[target] = 0
        theirs[0] += 1
    mine[target] += 1
    return hit


def _unmove(mine: list[int], theirs: list[int], distance: int, value: int, hit: bool) -> None:
    target = distance - value
    if target <= 0:
        mine[0] -= 1
    else:
        mine[target] -= 1
        if hit:
            theirs[target] = 1
            theirs[0] -= 1
    mine[distance] += 1


def _distinct(values: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
    """Each different die value with the dice left after playing it."""
    seen = []
    for index, value in enumerate(values):
        if all(value != other for other, _ in seen):
            seen.append((value, values[:index] + values[index + 1 :]))
    return seen


def _max_depth(mine: list[int], theirs: list[int], dice: tuple[int, ...], loose: bool) -> int:
    """How many of `dice` can be played from here (stops early once all can)."""
    if len(dice) <= 1:
        return 1 if dice and _playable(mine, theirs, dice[0], loose) else 0
    best = 0
    for value, rest in _distinct(dice):
        for distance in _sources(mine, theirs, value, loose):
            hit = _move(mine, theirs, distance, value)
            depth = 1 + _max_depth(mine, theirs, rest, loose)
            _unmove(mine, theirs, distance, value, hit)
            if depth > best:
                best = depth
                if best == len(dice):
                    return best
    return best


@lru_cache(maxsize=8192)
def _analysis(
    points: tuple[int, ...], bar: tuple[int, int], off: tuple[int, int], side: int, dice: tuple[int, ...], rules: str
) -> tuple[int, frozenset[tuple[int, int]], frozenset[tuple[int, int]]]:
    """For the remaining `dice`: how many can be played, the (value, distance) first moves of the
    plays that use that many, and those among them the larger-die rule takes away."""
    loose = rules == "pygammon"
    mine, theirs = _perspective(points, bar, off, side)
    # Each first move, with how many dice can be played after it: the best of those is the total.
    total = 0
    firsts: set[tuple[int, int]] = set()
    for value, rest in _distinct(dice):
        for distance in _sources(mine, theirs, value, loose):
            hit = _move(mine, theirs, distance, value)
            depth = 1 + _max_depth(mine, theirs, rest, loose)
            _unmove(mine, theirs, distance, value, hit)
            if depth > total:
                total, firsts = depth, set()
            if depth == total:
                firsts.add((value, distance))
    if total == 0:
        return 0, frozenset(), frozenset()
    barred: set[tuple[int, int]] = set()
    # If either die can be played but not both, the larger one must be.
    if not loose and total == 1 and len(dice) == 2 and dice[0] != dice[1]:
        larger = max(dice)
        if any(value == larger for value, _ in firsts):
            barred = {move for move in firsts if move[0] != larger}
    return total, frozenset(firsts - barred), frozenset(barred)


def _generate(
    points: tuple[int, ...], bar: tuple[int, int], off: tuple[int, int], side: int, dice: tuple[int, ...], rules: str
) -> list[tuple[tuple[tuple[int, int], ...], tuple]]:
    """Every distinct position a whole legal play reaches, with one (value, distance) sequence to it."""
    loose = rules == "pygammon"
    mine, theirs = _perspective(points, bar, off, side)
    total, firsts, _ = _analysis(points, bar, off, side, dice, rules)
    if total == 0:
        return []
    found: dict[tuple, tuple[tuple[int, int], ...]] = {}
    visited: set[tuple] = set()

    def search(remaining: tuple[int, ...], moves: tuple[tuple[int, int], ...]) -> None:
        if len(moves) == total:
            found.setdefault((tuple(mine), tuple(theirs)), moves)
            return
        key = (tuple(mine), tuple(theirs), remaining)
        if key in visited:
            return
        visited.add(key)
        for value, rest in _distinct(remaining):
            for distance in _sources(mine, theirs, value, loose):
                if not moves and (value, distance) not in firsts:
                    continue  # a first move that cannot lead to a full play (or the larger-die rule bars it)
                hit = _move(mine, theirs, distance, value)
                if len(moves) + 1 + _max_depth(mine, theirs, rest, loose) == total:
                    search(rest, (*moves, (value, distance)))
                _unmove(mine, theirs, distance, value, hit)

    search(dice, ())
    other = off[1 - side]
    return [(moves, _absolute(list(position[0]), list(position[1]), side, other)) for position, moves in found.items()]


def plays(state: BackgammonState) -> list[Play]:
    """Every legal whole play of the side to move from here, one per distinct resulting position."""
    if state.over or not state.dice:
        return []
    result = []
    free = [index for index in range(len(state.dice)) if index not in state.played]
    for moves, (points, bar, off) in _generate(
        state.points, state.bar, state.off, state.side, state.remaining, state.options.rules
    ):
        unused = list(free)
        protocol_moves = []
        for value, distance in moves:
            index = next(i for i in unused if state.dice[i] == value)
            unused.remove(index)
            protocol_moves.append((index, None if distance == _BAR else _point_of(state.side, distance)))
        result.append(Play(tuple(protocol_moves), points, bar, off))
    return result


def legal_moves(state: BackgammonState, seat: int) -> list[tuple[int, int | None]]:
    """The (die_index, source) moves `seat` may make now (none if it is not its move)."""
    if state.over or not state.dice or state.side != seat:
        return []
    total, firsts, _ = _analysis(state.points, state.bar, state.off, seat, state.remaining, state.options.rules)
    if total + len(state.played) < state.max_moves:
        return []  # (pygammon rules) an earlier move left the turn unfinishable: only undo helps
    index_of: dict[int, int] = {}  # each value's first unplayed die
    for index, value in enumerate(state.dice):
        if index not in state.played:
            index_of.setdefault(value, index)
    return [
        (index_of[value], None if distance == _BAR else _point_of(seat, distance)) for value, distance in sorted(firsts)
    ]


def pips(state: BackgammonState, side: int) -> int:
    """The pip count of `side`: the dice total it needs to bear everything off."""
    mine, _ = _perspective(state.points, state.bar, state.off, side)
    return sum(distance * count for distance, count in enumerate(mine) if distance)


class Backgammon:
    """The backgammon engine (see the module docstring)."""

    spec = GameSpec(
        name="backgammon",
        title="Backgammon",
        min_players=2,
        max_players=2,
        chance=True,
        hidden=False,
        options=BackgammonOptions,
        state=BackgammonState,
    )

    #: Nothing is hidden: every seat sees every event whole.
    views = declare(
        lifecycle(hidden=False),
        {OpeningRolled: everyone, DiceRolled: everyone, CheckerMoved: everyone},
    )

    # -- building and folding ----------------------------------------------------------------

    def start(self, started: MatchStarted) -> BackgammonState:
        options: BackgammonOptions = parse_options(self.spec, started.options)
        self.spec.check_players(len(started.seats))
        return BackgammonState(options=options, names=tuple(seat.name for seat in started.seats))

    def apply(self, state: BackgammonState, event: Event) -> BackgammonState:
        """Return the board after `event`. Assumes the referee already checked it."""
        match event:
            case OpeningRolled(first=first, second=second):
                side = FIRST if first > second else SECOND
                opened = msgspec.structs.replace(state, opening=(first, second), side=side)
                if state.options.move_by_turn_rolls:
                    return _begin_turn(opened, side, (first, second))
                return opened
            case DiceRolled(seat=seat, dice=(a, b)):
                return _begin_turn(state, seat, (a, a, a, a) if a == b else (a, b))
            case CheckerMoved(seat=seat, die_index=index, source=source):
                return _after_move(state, seat, index, source)
            case PlayerRemoved(seat=seat):
                if state.over:
                    return state
                # A side that leaves forfeits the game.
                return msgspec.structs.replace(state, removed=(*state.removed, seat), winner=1 - seat)
            case MatchEnded():
                return msgspec.structs.replace(state, ended=True)
            case AnswerRejected() | ChanceCommitted() | ChanceRevealed():
                return state
            case MatchStarted() | ActionsUndone():
                raise ValueError(f"{event.tag} is handled by replay, not by the engine")
        raise ValueError(f"backgammon cannot apply {event.tag}")

    # -- reading a state ---------------------------------------------------------------------

    def to_act(self, state: BackgammonState) -> Turn | None:
        if state.over:
            return None
        if state.side < 0:
            return Turn(CHANCE, "opening")
        if not state.dice:
            return Turn(CHANCE, "roll")
        return Turn(state.side, "move")

    def chance(self, state: BackgammonState, rng: random.Random) -> Event:
        return rng.choice(self.chance_outcomes(state))

    def chance_outcomes(self, state: BackgammonState) -> tuple[Event, ...]:
        turn = self.to_act(state)
        if turn is None or turn.seat != CHANCE:
            return ()
        return _OPENINGS if turn.decision == "opening" else _ROLLS[state.side]

    def tally(
        self, before: BackgammonState, event: Event, after: BackgammonState
    ) -> tuple[tuple[int | None, str, float], ...]:
        match event:
            case OpeningRolled(first=first, second=second):  # one die each
                return ((None, "turns", 1.0), (0, f"die_{first}", 1.0), (1, f"die_{second}", 1.0))
            case DiceRolled(seat=seat, dice=dice):
                return ((None, "turns", 1.0), *((seat, f"die_{die}", 1.0) for die in dice))
            case MatchEnded(outcome=outcome):
                return (
                    (None, "gammon", float(outcome.result in ("gammon", "backgammon"))),
                    (None, "backgammon", float(outcome.result == "backgammon")),
                    *((seat, "pips", float(pips(before, seat))) for seat in (0, 1)),
                )
        return ()

    def check_chance(self, state: BackgammonState, event: Event) -> None:
        among_outcomes(self, state, event)  # two dice 1..6 for the side to roll; an opening's differ

    def legal(self, state: BackgammonState, seat: int) -> tuple[Event, ...]:
        return tuple(
            CheckerMoved(seat=seat, die_index=index, source=source) for index, source in legal_moves(state, seat)
        )

    def parse(self, state: BackgammonState, seat: int, answer: object) -> Event:
        """`answer` is pygammon's move data: (die_index, source)."""
        self._turn_of(state, seat)
        # The move is a pair (pygammon crashed on anything else).
        if not isinstance(answer, tuple | list) or len(answer) != 2:
            raise IllegalAction(
                BackgammonRule.INVALID_MOVE_TYPE, f"a move is (die_index, source), not {_short(answer)}"
            )
        die_index, source = answer
        if not _is_int(die_index):
            raise IllegalAction(BackgammonRule.DIE_INDEX_INVALID, f"die index {_short(die_index)} is not an integer")
        if source is not None and not _is_int(source):
            raise IllegalAction(BackgammonRule.SOURCE_INVALID, f"source {_short(source)} is not a point index or None")
        return CheckerMoved(seat=seat, die_index=die_index, source=source)

    def check(self, state: BackgammonState, seat: int, action: Event) -> None:
        self._turn_of(state, seat)
        if not isinstance(action, CheckerMoved) or action.seat != seat:
            raise IllegalAction(Rule.WRONG_DECISION, f"seat {seat} must move a checker, not {action.tag}")
        index, source = action.die_index, action.source
        # The die exists and is not played yet (a negative index is not an alias of the last die).
        if not 0 <= index < len(state.dice) or index in state.played:
            raise IllegalAction(
                BackgammonRule.DIE_INDEX_INVALID, f"die index {index} is not an unplayed die of {state.dice}"
            )
        value = state.dice[index]
        # A checker on the bar must enter before any other moves.
        if state.bar[seat]:
            if source is not None:
                raise IllegalAction(
                    BackgammonRule.SOURCE_INVALID, "a checker on the bar must enter first (source None)"
                )
            distance = _BAR
        else:
            if source is None:
                raise IllegalAction(BackgammonRule.SOURCE_INVALID, "no checker is on the bar; give a point index")
            if not 0 <= source < 24:
                raise IllegalAction(BackgammonRule.SOURCE_INVALID, f"source {source} is not a point (0..23)")
            if state.points[source] * (1 if seat == FIRST else -1) <= 0:
                raise IllegalAction(
                    BackgammonRule.SOURCE_NOT_OWNED_PIECE, f"point {source} holds none of your checkers"
                )
            distance = 24 - source if seat == SECOND else source + 1
        target = distance - value
        if target >= 1:
            # Two or more of the opponent's checkers block a point.
            landing = _point_of(seat, target)
            if state.points[landing] * (1 if seat == FIRST else -1) <= -2:
                raise IllegalAction(BackgammonRule.DESTINATION_OCCUPIED, f"point {landing} is blocked")
        else:
            mine, theirs = _perspective(state.points, state.bar, state.off, seat)
            loose = state.options.rules == "pygammon"
            if distance not in _sources(mine, theirs, value, loose):
                why = (
                    "not all checkers are home"
                    if any(mine[d] for d in range(7, 26))
                    else "a checker stands farther back"
                )
                raise IllegalAction(
                    BackgammonRule.DESTINATION_OUT_OF_BOARD, f"cannot bear off from point {source}: {why}"
                )
        if state.options.rules == "pygammon":
            return  # pygammon lets any single valid move through; the turn's count still holds
        # Standard rules: play as many dice as the roll allows, the larger one if only one can be played.
        _, firsts, barred = _analysis(state.points, state.bar, state.off, seat, state.remaining, state.options.rules)
        if (value, distance) in barred:
            raise IllegalAction(
                BackgammonRule.LARGER_DIE_REQUIRED,
                f"only one die can be played, so it must be the larger, {max(state.remaining)}",
            )
        if (value, distance) not in firsts:
            raise IllegalAction(
                BackgammonRule.MUST_USE_MORE_DICE,
                f"after this move fewer dice could be played than the roll allows ({state.max_moves})",
            )

    def _turn_of(self, state: BackgammonState, seat: int) -> None:
        turn = self.to_act(state)
        # Disallow moves once the game is over.
        if turn is None:
            raise IllegalAction(Rule.MATCH_OVER, "the match is over")
        # Disallow moves out of turn, and before the dice are rolled.
        if turn.seat != seat:
            raise IllegalAction(Rule.NOT_YOUR_TURN, f"it is not seat {seat}'s turn to move")

    def outcome(self, state: BackgammonState) -> Outcome | None:
        if not state.over or state.winner < 0:
            return None if not state.over else Outcome(places=(1, 1), winners=(), result="abandoned")
        winner, loser = state.winner, 1 - state.winner
        if state.removed:
            result, points = "forfeit", 1
        elif state.off[loser] == 0 and (state.bar[loser] or _in_home_of(state, loser, winner)):
            result, points = "backgammon", 3
        elif state.off[loser] == 0:
            result, points = "gammon", 2
        else:
            result, points = "single", 1
        places = [2, 2]
        places[winner] = 1
        scores = [0.0, 0.0]
        scores[winner] = float(points)
        return Outcome(places=tuple(places), winners=(winner,), scores=tuple(scores), result=result,
                       removed=state.removed)  # fmt: skip

    def view(self, state: BackgammonState, seat: int | None) -> BackgammonState:
        return state  # nothing is hidden

    # -- showing a state ---------------------------------------------------------------------

    def render(self, state: BackgammonState) -> str:
        def cell(point: int) -> str:
            value = state.points[point]
            return " . " if value == 0 else f"{_SYMBOL[0 if value > 0 else 1]}{abs(value):<2}"

        top = " ".join(f"{p:>3}" for p in range(12, 18)) + "   |   " + " ".join(f"{p:>3}" for p in range(18, 24))
        top_cells = " ".join(cell(p) for p in range(12, 18)) + "   |   " + " ".join(cell(p) for p in range(18, 24))
        bottom_cells = (
            " ".join(cell(p) for p in range(11, 5, -1)) + "   |   " + " ".join(cell(p) for p in range(5, -1, -1))
        )
        bottom = (
            " ".join(f"{p:>3}" for p in range(11, 5, -1)) + "   |   " + " ".join(f"{p:>3}" for p in range(5, -1, -1))
        )
        names = [f"{_SYMBOL[s]} {state.names[s]}" for s in (FIRST, SECOND)]
        lines = [
            f"Backgammon ({state.options.rules} rules) · " + (f"{names[0]} vs {names[1]}"),
            "  " + top,
            "  " + top_cells,
            "  " + "-" * len(top),
            "  " + bottom_cells,
            "  " + bottom,
            f"  bar: X {state.bar[0]}  O {state.bar[1]}    borne off: X {state.off[0]}  O {state.off[1]}"
            f"    pips: X {pips(state, FIRST)}  O {pips(state, SECOND)}",
        ]
        if state.over:
            outcome = self.outcome(state)
            if outcome is not None and outcome.winners:
                lines.append(f"  {state.names[state.winner]} ({_SYMBOL[state.winner]}) wins: {outcome.result}")
            else:
                lines.append("  the game was abandoned")
        elif state.side < 0:
            lines.append("  waiting for the opening roll")
        elif not state.dice:
            lines.append(f"  {state.names[state.side]} ({_SYMBOL[state.side]}) to roll")
        else:
            left = ", ".join(str(v) for v in state.remaining)
            mover = f"{state.names[state.side]} ({_SYMBOL[state.side]})"
            lines.append(
                f"  {mover} to move · dice {state.dice} · left to play: {left}"
                f" · {state.max_moves - len(state.played)} more move(s) this turn"
            )
        return "\n".join(lines)

    def describe(self, before: BackgammonState, event: Event, after: BackgammonState) -> str:
        line = describe_lifecycle(before.names, event)
        if line is not None:
            return line
        match event:
            case OpeningRolled(first=first, second=second):
                line = f"opening roll {first} (X) against {second} (O): {after.names[after.side]} starts"
                if after.dice:
                    line += f" and plays {first}-{second}"
            case DiceRolled(seat=seat, dice=(a, b)):
                line = f"{before.names[seat]} rolls {a}-{b}"
                if not after.dice:
                    line += ": no move is possible"
            case CheckerMoved(seat=seat, die_index=index, source=source):
                value = before.dice[index]
                start = "bar" if source is None else str(24 - source if seat == SECOND else source + 1)
                distance = _BAR if source is None else (24 - source if seat == SECOND else source + 1)
                target = distance - value
                end = "off" if target <= 0 else str(target)
                hit = "*" if after.bar[1 - seat] > before.bar[1 - seat] else ""
                line = f"{before.names[seat]} plays {value}: {start}/{end}{hit}"
                if after.over and after.winner == seat:
                    line += f" and wins ({self.outcome(after).result})"  # type: ignore[union-attr]
            case _:
                line = event.tag
        return line


def _begin_turn(state: BackgammonState, side: int, dice: tuple[int, ...]) -> BackgammonState:
    total, _, _ = _analysis(state.points, state.bar, state.off, side, dice, state.options.rules)
    started = msgspec.structs.replace(state, side=side, dice=dice, played=(), max_moves=total, turns=state.turns + 1)
    # No move at all: the turn passes at once.
    return _pass_turn(started) if total == 0 else started


def _pass_turn(state: BackgammonState) -> BackgammonState:
    return msgspec.structs.replace(state, side=1 - state.side, dice=(), played=(), max_moves=0)


def _after_move(state: BackgammonState, seat: int, index: int, source: int | None) -> BackgammonState:
    sign = 1 if seat == FIRST else -1
    points, bar, off = list(state.points), list(state.bar), list(state.off)
    if source is None:
        bar[seat] -= 1
        distance = _BAR
    else:
        points[source] -= sign
        distance = 24 - source if seat == SECOND else source + 1
    target = distance - state.dice[index]
    if target <= 0:
        off[seat] += 1
    else:
        landing = _point_of(seat, target)
        if points[landing] == -sign:  # a blot: hit it
            points[landing] = 0
            bar[1 - seat] += 1
        points[landing] += sign
    moved = msgspec.structs.replace(
        state, points=tuple(points), bar=(bar[0], bar[1]), off=(off[0], off[1]), played=(*state.played, index)
    )
    if off[seat] == CHECKERS:
        return msgspec.structs.replace(moved, winner=seat, dice=(), played=())
    if len(moved.played) >= moved.max_moves:
        return _pass_turn(moved)
    return moved


def _in_home_of(state: BackgammonState, side: int, home_owner: int) -> bool:
    """Whether `side` has a checker in `home_owner`'s home board."""
    home = range(0, 6) if home_owner == FIRST else range(18, 24)
    sign = 1 if side == FIRST else -1
    return any(state.points[p] * sign > 0 for p in home)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _short(value: object) -> str:
    from .contract import shown

    return shown(value, 40)


ENGINE = Backgammon()
