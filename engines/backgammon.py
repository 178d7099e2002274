"""Backgammon: chance as recorded events, turns of several moves, and forced-move rules.

Every roll, the opening roll included, is an event the referee draws; a turn is up to four
`CheckerMoved` events, one die and one checker each, as in pygammon's protocol. The engine knows
the whole set of legal plays of a turn, so it can refuse a move that would leave dice unplayed
(standard rules) or let it through as pygammon does (`rules="pygammon"`, where a turn also asks for
as many moves as pygammon's own greedy count, which can fall short of what the dice allow).

The board uses pygammon's indexing: points 0..23 from the bottom right to the bottom left, then top
left to top right. FIRST moves 23 -> 0 (home 0..5, enters from the bar onto 24 - die); SECOND moves
0 -> 23 (home 18..23, enters onto die - 1). A point holds +n for n checkers of FIRST, -n for SECOND.
Internally, plays are searched in the mover's own coordinates: distance 1..24 to bearing off, the
bar at 25, borne-off checkers at 0. What people read (the words of `describe`, the text board, the
errors) numbers the points as the mover does, 1..24, through `engines.backgammon_notation`.

Match play, as GNU Backgammon records it, is there for the matches that need it (options `cube`
and `resignations`; imports of gnubg's records turn them on): each turn then opens with the side to
roll's decision, to roll (`RollChosen`), to double (`DoubleOffered`, when the cube is in the middle
or its own) or to resign (`ResignationOffered`, also while it moves); the other side takes or drops
a double, accepts or declines a resignation. The cube's value scales the points a game is worth.
pygammon's protocol has no cube, so our referee never offers these decisions to its players.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache
from operator import neg
from typing import Literal

import msgspec

from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    CheckerMoved,
    DiceRolled,
    DoubleDropped,
    DoubleOffered,
    DoubleTaken,
    Event,
    IllegalAction,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    OpeningRolled,
    Outcome,
    PlayerRemoved,
    ResignationAccepted,
    ResignationDeclined,
    ResignationOffered,
    RollChosen,
)

from .backgammon_notation import Step, labels, number, play_text, step_of
from .contract import CHANCE, GameSpec, Rule, Turn, among_outcomes, describe_lifecycle, parse_options
from .views import Derived, declare, declare_figures, everyone, lifecycle, shared_figures

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
#: The highest value the cube reaches (GNU Backgammon's).
MAX_CUBE = 4096
#: What a resignation offers: a single game, a gammon, a backgammon.
_RESIGNED = {1: "a single game", 2: "a gammon", 3: "a backgammon"}
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
    #: Match play: the cube is not in play, the other side holds it, or the value offered is not twice it.
    CANNOT_DOUBLE = "backgammon.cannot_double"
    #: Match play: resignations are not in play, or the value is not 1 (single), 2 (gammon) or 3 (backgammon).
    CANNOT_RESIGN = "backgammon.cannot_resign"


class BackgammonOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`rules`: "standard", or "pygammon" (any higher die bears off any home checker; the larger-die
    rule and the use-both-dice rule are not checked move by move; a turn asks for as many moves as
    pygammon 0.0.3 counts). `move_by_turn_rolls`: the starting side plays the opening roll
    (pygammon's run() argument of that name); unset, it follows the rules: played under standard
    rules, as everywhere backgammon is played, and rolled again under pygammon's, as pygammon does.
    A match records the value it was played with, so one recorded before the default changed
    replays as it was."""

    rules: Literal["standard", "pygammon"] = "standard"
    move_by_turn_rolls: bool | None = None
    #: The doubling cube is in play (match play as GNU Backgammon records it; never offered by
    #: our referee, whose players speak pygammon's protocol).
    cube: bool = False
    #: A side may resign a single game, a gammon or a backgammon when it is to act.
    resignations: bool = False
    #: Gammons and backgammons count as a single game while the cube has not been turned.
    jacoby: bool = False

    def __post_init__(self) -> None:
        if self.move_by_turn_rolls is None:
            msgspec.structs.force_setattr(self, "move_by_turn_rolls", self.rules == "standard")


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
    moved: tuple[Step, ...] = ()  # this turn's checkers moved so far, in the mover's numbers
    cube: int = 1  # the cube's value
    owner: int = -1  # who holds the cube (-1: in the middle)
    chosen: bool = False  # the side to roll has decided to roll (match play)
    doubled: bool = False  # the side to roll offered the cube; the other is to take or drop
    resigning: tuple[int, int] | None = None  # (seat, value) of a resignation not yet answered
    resigned: int = 0  # the value of the resignation accepted
    dropped: bool = False  # the game ended by a double dropped
    winner: int = -1
    removed: tuple[int, ...] = ()
    ended: bool = False

    @property
    def over(self) -> bool:
        return self.ended or self.winner >= 0

    @property
    def remaining(self) -> tuple[int, ...]:
        """The values of the dice not yet played this turn."""
        played, dice = self.played, self.dice
        if not played:
            return dice
        if len(dice) == 4:
            return dice[len(played) :]  # a double: every die shows the same
        if len(dice) == 2 and len(played) == 1:
            return (dice[1 - played[0]],)
        return tuple([value for index, value in enumerate(dice) if index not in played])


_OPENING, _ROLL = Turn(CHANCE, "opening"), Turn(CHANCE, "roll")
_MOVES = (Turn(FIRST, "move"), Turn(SECOND, "move"))
#: Match play: the side to roll's decision (roll, double or resign), the answer to a double, to a resignation.
_DECIDES = (Turn(FIRST, "roll"), Turn(SECOND, "roll"))
_TAKES = (Turn(FIRST, "take"), Turn(SECOND, "take"))
_ANSWERS = (Turn(FIRST, "resignation"), Turn(SECOND, "resignation"))

#: The opening roll: one die each, never equal (as pygammon draws them); then two dice a turn.
_OPENINGS = tuple(OpeningRolled(first=a, second=b) for a in range(1, 7) for b in range(1, 7) if a != b)
_ROLLS = tuple(tuple(DiceRolled(seat=side, dice=(a, b)) for a in range(1, 7) for b in range(1, 7)) for side in (0, 1))


class Play(msgspec.Struct, frozen=True, gc=False):
    """A whole turn: its moves as (die_index, source) and the position they lead to."""

    # gc=False: a play holds tuples of ints only, so it is never part of a cycle, and players
    # make tens of thousands a second.

    moves: tuple[tuple[int, int | None], ...]
    points: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]


# -- the mover's board ------------------------------------------------------------------------
#
# Plays are searched on one flat list of ints seen from the mover's side, changed in place and
# changed back (never copied while searching): index 0 holds the mover's borne-off checkers,
# 1..24 the points by distance from bearing off (+n the mover's checkers, -n the opponent's),
# 25 the mover's bar and 26 the opponent's. A tuple of that list names a position, so plays that
# reach the same position are found equal as they are generated.

_OFF, _THEIR_BAR = 0, 26
#: The board index a distance moves from, per side (None: the bar), as pygammon's moves name it.
_SOURCE_POINT: tuple[tuple[int | None, ...], tuple[int | None, ...]] = (
    (None, *range(24), None),
    (None, *range(23, -1, -1), None),
)


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


def _board(points: tuple[int, ...], bar: tuple[int, int], off: tuple[int, int], side: int) -> list[int]:
    """The mover's board (see above) of a position."""
    if side == FIRST:
        return [off[0], *points, bar[0], bar[1]]
    return [off[1], *map(neg, reversed(points)), bar[1], bar[0]]


def _sources(board: list[int], value: int, loose: bool, top: int = _BAR) -> list[int]:
    """Distances, highest first and none above `top`, a checker may move `value` from: the bar
    first; bearing off exactly, or with a higher die from the highest point (`loose`: from any)."""
    if board[_BAR]:
        return [_BAR] if board[_BAR - value] > -2 else []
    highest = 24
    while highest and board[highest] <= 0:
        highest -= 1
    found = [d for d in range(highest if highest < top else top, value, -1) if board[d] > 0 and board[d - value] > -2]
    if highest <= 6 and highest:  # every checker home: bearing off
        if loose:
            found.extend(d for d in range(min(value, highest, top), 0, -1) if board[d] > 0)
        elif value > highest:
            if highest <= top:
                found.append(highest)
        elif board[value] > 0 and value <= top:
            found.append(value)
    return found


def _playable(board: list[int], value: int, loose: bool) -> bool:
    """Whether any checker can move `value` (what `_sources` finds, without listing it)."""
    if board[_BAR]:
        return board[_BAR - value] > -2
    highest = 24
    while highest and board[highest] <= 0:
        highest -= 1
    if not highest:
        return False
    # Bearing off: exactly, or a higher die from the highest point (pygammon: from any point below it).
    if highest <= 6 and (board[value] > 0 or highest < value or (loose and any(n > 0 for n in board[1:value]))):
        return True
    return any(board[d] > 0 and board[d - value] > -2 for d in range(highest, value, -1))


def _move(board: list[int], distance: int, value: int) -> bool:
    """Move one checker in place; returns whether it hit a blot."""
    board[distance] -= 1
    target = distance - value
    if target <= 0:
        board[_OFF] += 1
        return False
    if board[target] == -1:
        board[target] = 1
        board[_THEIR_BAR] += 1
        return True
    board[target] += 1
    return False


def _unmove(board: list[int], distance: int, value: int, hit: bool) -> None:
    target = distance - value
    if target <= 0:
        board[_OFF] -= 1
    elif hit:
        board[target] = -1
        board[_THEIR_BAR] -= 1
    else:
        board[target] -= 1
    board[distance] += 1


def _position_after(board: list[int], distance: int, value: int) -> tuple[int, ...]:
    """The position one more move leads to, as a tuple; `board` is left as it was."""
    target = distance - value
    board[distance] -= 1
    if target <= 0:
        board[_OFF] += 1
        position = tuple(board)
        board[_OFF] -= 1
    elif board[target] == -1:
        board[target], board[_THEIR_BAR] = 1, board[_THEIR_BAR] + 1
        position = tuple(board)
        board[target], board[_THEIR_BAR] = -1, board[_THEIR_BAR] - 1
    else:
        board[target] += 1
        position = tuple(board)
        board[target] -= 1
    board[distance] += 1
    return position


def _distinct(values: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
    """Each different die value with the dice left after playing it."""
    seen = []
    for index, value in enumerate(values):
        if all(value != other for other, _ in seen):
            seen.append((value, values[:index] + values[index + 1 :]))
    return seen


def _max_depth(board: list[int], dice: tuple[int, ...], loose: bool) -> int:
    """How many of `dice` can be played from here, in any order (stops early once all can)."""
    if len(dice) <= 1:
        return 1 if dice and _playable(board, dice[0], loose) else 0
    best = 0
    for value, rest in _distinct(dice):
        for distance in _sources(board, value, loose):
            hit = _move(board, distance, value)
            depth = 1 + _max_depth(board, rest, loose)
            _unmove(board, distance, value, hit)
            if depth > best:
                best = depth
                if best == len(dice):
                    return best
    return best


# Doubles: any order of one die value's moves can be replayed highest source first (blocks never
# move, checkers only move homeward, and a bear-off's conditions only get easier), so searching
# sources in non-increasing order finds every position once per order that reaches it, not once
# per permutation.


def _double_depth(board: list[int], value: int, dice: int, top: int, loose: bool) -> int:
    """How many of `dice` moves of `value` can be played from here, sources at most `top`."""
    best = 0
    for distance in _sources(board, value, loose, top):
        if dice == 1:
            return 1
        hit = _move(board, distance, value)
        depth = 1 + _double_depth(board, value, dice - 1, distance, loose)
        _unmove(board, distance, value, hit)
        if depth > best:
            best = depth
            if best == dice:
                break
    return best


def _then_playable(board: list[int], distance: int, value: int, other: int, others: list[int], loose: bool) -> bool:
    """Whether `other` can still be played after moving `value` from `distance`, where `others`
    are the sources of `other` before it."""
    # Another checker that could move `other` before still can: nothing it needed has changed.
    for source in others:
        if source != distance or board[distance] > 1:
            return True
    hit = _move(board, distance, value)
    playable = _playable(board, other, loose)
    _unmove(board, distance, value, hit)
    return playable


_NOTHING: frozenset[tuple[int, int]] = frozenset()


@lru_cache(maxsize=8192)
def _analysis(
    points: tuple[int, ...], bar: tuple[int, int], off: tuple[int, int], side: int, dice: tuple[int, ...], rules: str
) -> tuple[int, tuple[tuple[int, int], ...], frozenset[tuple[int, int]]]:
    """For the remaining `dice`: how many can be played, the (value, distance) first moves of the
    plays that use that many (sorted), and those the larger-die rule takes away."""
    loose = rules == "pygammon"
    board = _board(points, bar, off, side)
    value = dice[0]
    if len(dice) == 1:
        firsts = [(value, d) for d in _sources(board, value, loose)]
        firsts.reverse()
        return (1 if firsts else 0), tuple(firsts), _NOTHING
    if dice[1] != value:
        other = dice[1]
        mine, others = _sources(board, value, loose), _sources(board, other, loose)
        both = [(value, d) for d in mine if _then_playable(board, d, value, other, others, loose)]
        both += [(other, d) for d in others if _then_playable(board, d, other, value, mine, loose)]
        if both:
            return 2, tuple(sorted(both)), _NOTHING
        singles = [(value, d) for d in mine] + [(other, d) for d in others]
        if not singles:
            return 0, (), _NOTHING
        # If either die can be played but not both, the larger one must be.
        larger = max(value, other)
        if loose or not (mine if value == larger else others):
            return 1, tuple(sorted(singles)), _NOTHING
        return 1, tuple(sorted(m for m in singles if m[0] == larger)), frozenset(m for m in singles if m[0] != larger)
    # What is left of a double: each first move, and how many can follow it.
    total, firsts = 0, []
    for distance in _sources(board, value, loose):
        hit = _move(board, distance, value)
        depth = 1 + _double_depth(board, value, len(dice) - 1, _BAR, loose)
        _unmove(board, distance, value, hit)
        if depth > total:
            total, firsts = depth, [(value, distance)]
        elif depth == total:
            firsts.append((value, distance))
    firsts.reverse()
    return total, tuple(firsts), _NOTHING


def _opens(board: list[int], value: int) -> list[int]:
    """Distances, highest first, from which `value` lands on the board on a point the opponent
    does not hold. It stays so while the mover plays: its moves never make the opponent a point."""
    return [d for d in range(24, value, -1) if board[d - value] > -2]


def _outside(board: list[int]) -> int:
    """How many of the mover's checkers are not home yet (the bar included)."""
    return sum(n for n in board[7:26] if n > 0)


def _bear_offs(board: list[int], value: int, loose: bool, top: int = _BAR) -> list[int]:
    """Distances, highest first and none above `top`, a checker bears off from with `value` when
    every checker is home: exactly, or a higher die from the highest point (`loose`: from any)."""
    if loose:
        return [d for d in range(min(value, top), 0, -1) if board[d] > 0]
    if board[value] > 0:
        return [value] if value <= top else []
    for distance in range(6, value, -1):
        if board[distance] > 0:
            return []  # a checker farther back: only an exact die bears off
    for distance in range(value - 1, 0, -1):
        if board[distance] > 0:
            return [distance] if distance <= top else []
    return []


def _sources_from(board: list[int], value: int, opens: list[int], outside: int, loose: bool) -> list[int]:
    """What `_sources` finds, from `value`'s `_opens` and the count of checkers not home."""
    if board[_BAR]:
        return [_BAR] if board[_BAR - value] > -2 else []
    found = [d for d in opens if board[d] > 0]
    if not outside:
        found += _bear_offs(board, value, loose)
    return found


def _plays_of_two(
    board: list[int], dice: tuple[int, int], indices: tuple[int, int], side: int, loose: bool, limit: int
) -> dict[tuple[int, ...], tuple[tuple[int, int | None], ...]]:
    """The distinct positions two different dice reach, each with its first-found moves; single
    moves when both cannot be played (or `limit` is 1)."""
    source_point = _SOURCE_POINT[side]
    found: dict[tuple[int, ...], tuple[tuple[int, int | None], ...]] = {}
    (a, b), (index_a, index_b) = dice, indices
    opens_a, opens_b = _opens(board, a), _opens(board, b)
    outside = _outside(board)
    if limit > 1:
        # `a` first, then `b`.
        for distance in _sources_from(board, a, opens_a, outside, loose):
            hit = _move(board, distance, a)
            left = outside - (distance > 6 and distance - a <= 6)
            for second in _sources_from(board, b, opens_b, left, loose):
                position = _position_after(board, second, b)
                if position not in found:
                    found[position] = ((index_a, source_point[distance]), (index_b, source_point[second]))
            _unmove(board, distance, a, hit)
        # `b` first, then `a`. With nobody on the bar, two moves on the board that `a` could start
        # with were found above in the other order: only the checker `b` moved can add a new `a`
        # move on the board, and bearing off the rest.
        entering = board[_BAR] > 0
        commuting = {d for d in opens_a if board[d] > 0}
        for distance in _sources_from(board, b, opens_b, outside, loose):
            hit = _move(board, distance, b)
            target = distance - b
            left = outside - (distance > 6 and target <= 6)
            if entering or target < 1:
                seconds = _sources_from(board, a, opens_a, left, loose)
            elif left:
                seconds = [target] if target > a and board[target - a] > -2 and target not in commuting else []
            else:
                seconds = [d for d in _sources_from(board, a, opens_a, left, loose) if d not in commuting]
            for second in seconds:
                position = _position_after(board, second, a)
                if position not in found:
                    found[position] = ((index_b, source_point[distance]), (index_a, source_point[second]))
            _unmove(board, distance, b, hit)
        if found:
            return found
    singles = [(a, index_a, _sources(board, a, loose)), (b, index_b, _sources(board, b, loose))]
    if not loose and limit > 1:
        # Only one die can be played: the larger one, if it can.
        larger = max(singles, key=lambda single: single[0])
        if larger[2]:
            singles = [larger]
    for value, index, distances in singles:
        for distance in distances:
            found.setdefault(_position_after(board, distance, value), ((index, source_point[distance]),))
    return found


def _plays_of_one_value(
    board: list[int], value: int, indices: tuple[int, ...], side: int, loose: bool, limit: int
) -> dict[tuple[int, ...], tuple[tuple[int, int | None], ...]]:
    """The distinct positions the most moves (at most `limit`) of one die value reach, each with
    the moves that first reached it (sources never rising: see `_double_depth`)."""
    source_point = _SOURCE_POINT[side]
    found: dict[tuple[int, ...], tuple[tuple[int, int | None], ...]] = {}
    opens = _opens(board, value)
    count = len(opens)
    after = [count] * 26  # where in `opens` the sources after a move from each distance begin
    for at, distance in enumerate(opens):
        after[distance] = at
    after[_BAR] = 0
    enters = board[_BAR - value] > -2
    steps: list[tuple[int, int | None]] = []
    deepest = 0

    def search(first: int, top: int, outside: int) -> None:
        """Extend `steps` from opens[first:], then bearing off from at most `top`."""
        nonlocal found, deepest
        depth = len(steps)
        if depth == limit:
            distances = []
        elif board[_BAR]:
            distances = [_BAR] if enters else []
        else:
            distances = [d for d in opens[first:] if board[d] > 0]
            if not outside:
                distances += _bear_offs(board, value, loose, top)
        if not distances:  # as far as this line goes
            if depth >= deepest:
                if depth > deepest:
                    deepest, found = depth, {}
                found.setdefault(tuple(board), tuple(steps))
            return
        index = indices[depth]
        if depth + 1 < limit:
            for distance in distances:
                hit = _move(board, distance, value)
                steps.append((index, source_point[distance]))
                search(after[distance], distance, outside - (distance > 6 and distance - value <= 6))
                steps.pop()
                _unmove(board, distance, value, hit)
            return
        # The last die: each move ends a play of `limit` moves.
        if deepest < limit:
            deepest, found = limit, {}
        for distance in distances:
            position = _position_after(board, distance, value)
            if position not in found:
                found[position] = (*steps, (index, source_point[distance]))

    search(0, _BAR, _outside(board))
    return found if deepest else {}


def plays(state: BackgammonState) -> list[Play]:
    """Every legal whole play of the side to move from here, one per distinct resulting position."""
    if state.over or not state.dice or state.resigning is not None:
        return []
    side = state.side
    indices = tuple(index for index in range(len(state.dice)) if index not in state.played)
    values = tuple(state.dice[index] for index in indices)
    loose = state.options.rules == "pygammon"
    # pygammon's count may ask for fewer dice than can be played; standard rules play the most.
    need = state.max_moves - len(state.played) if loose else len(values)
    if need <= 0:
        return []
    board = _board(state.points, state.bar, state.off, side)
    if len(values) == 2 and values[0] != values[1]:
        found = _plays_of_two(board, values, indices, side, loose, need)  # type: ignore[arg-type]
    else:
        found = _plays_of_one_value(board, values[0], indices, side, loose, need)
    if loose and found and len(next(iter(found.values()))) < need:
        return []  # an earlier move left the turn unfinishable: only undo helps
    other = state.off[1 - side]
    if side == FIRST:
        return [Play(moves, key[1:25], (key[25], key[26]), (key[0], other)) for key, moves in found.items()]
    return [
        Play(moves, tuple(map(neg, key[24:0:-1])), (key[26], key[25]), (other, key[0])) for key, moves in found.items()
    ]


def _moves_playing(state: BackgammonState, dice: tuple[int, ...], need: int) -> tuple[tuple[int, int], ...]:
    """The (value, distance) moves after which `need` - 1 more dice can be played."""
    loose = state.options.rules == "pygammon"
    board = _board(state.points, state.bar, state.off, state.side)
    found = []
    for value, rest in _distinct(dice):
        for distance in _sources(board, value, loose):
            hit = _move(board, distance, value)
            if 1 + _max_depth(board, rest, loose) >= need:
                found.append((value, distance))
            _unmove(board, distance, value, hit)
    return tuple(sorted(found))


def legal_moves(state: BackgammonState, seat: int) -> list[tuple[int, int | None]]:
    """The (die_index, source) moves `seat` may make now (none if it is not its move)."""
    if state.ended or state.winner >= 0 or not state.dice or state.side != seat or state.resigning is not None:
        return []  # (a resignation offered waits for its answer)
    remaining = state.remaining
    total, firsts, _ = _analysis(state.points, state.bar, state.off, seat, remaining, state.options.rules)
    dice, played = state.dice, state.played
    need = state.max_moves - len(played)
    if total < need:
        return []  # (pygammon rules) an earlier move left the turn unfinishable: only undo helps
    if total > need:
        firsts = _moves_playing(state, remaining, need)  # pygammon's count asked for fewer dice
    source_point = _SOURCE_POINT[seat]
    if len(remaining) == 2 and remaining[0] != remaining[1]:
        first = dice[0]
        return [(0 if value == first else 1, source_point[distance]) for value, distance in firsts]
    index = next(i for i in range(len(dice)) if i not in played)  # one value left: its first unplayed die
    return [(index, source_point[distance]) for _, distance in firsts]


class _AllDicePlayed(Exception):
    """pygammon's MaxMovesFound: some line of its search played every die."""


def _pygammon_count(
    points: tuple[int, ...], bar: tuple[int, int], off: tuple[int, int], side: int, dice: tuple[int, ...]
) -> int:
    """How many moves pygammon 0.0.3 asks for this roll (its `Game.get_max_move_count`).

    Its search is greedy: at each level it plays, on one copy of the game, each unplayed die in turn
    with the first checker (in board order) that can move it, counts from there, and keeps the
    moves made for the next die. So it can miss a play of more dice that starts otherwise; a roll
    it finds a way to play in full counts every die.
    """
    order = range(1, 25) if side == FIRST else range(24, 0, -1)  # board points 0..23
    try:
        return _pygammon_level(_board(points, bar, off, side), dice, frozenset(), order)
    except _AllDicePlayed:
        return len(dice)


def _pygammon_level(board: list[int], dice: tuple[int, ...], played: frozenset[int], order: range) -> int:
    if len(played) == len(dice):
        raise _AllDicePlayed
    game = board.copy()  # one copy per level, changed by each move found for the next die
    best = 0
    for index, value in enumerate(dice):
        if index in played:
            continue
        sources = (_BAR,) if game[_BAR] else order
        source = next((d for d in sources if _pygammon_allows(game, d, value)), None)
        if source is None:
            continue
        _move(game, source, value)
        played = played | {index}
        best = max(best, 1 if game[_OFF] == CHECKERS else 1 + _pygammon_level(game, dice, played, order))
    return best


def _pygammon_allows(board: list[int], distance: int, value: int) -> bool:
    """pygammon's check of one move: any home checker bears off with an exact or higher die."""
    if board[distance] <= 0:
        return False
    target = distance - value
    if target >= 1:
        return board[target] > -2
    return not any(n > 0 for n in board[7:26])


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
        version=3,  # 2: rules="pygammon" asks for pygammon's own count of moves; 3: the turn's steps
    )

    #: Nothing is hidden: every seat sees every event whole.
    views = declare(
        lifecycle(hidden=False),
        {
            OpeningRolled: everyone,
            DiceRolled: everyone,
            CheckerMoved: everyone,
            RollChosen: everyone,
            DoubleOffered: everyone,
            DoubleTaken: everyone,
            DoubleDropped: everyone,
            ResignationOffered: everyone,
            ResignationAccepted: everyone,
            ResignationDeclined: everyone,
        },
    )

    #: Nothing is hidden: every figure is everyone's.
    figures = declare_figures(
        shared_figures(hidden=False),
        {
            "turns": Derived.PUBLIC,
            **{f"die_{face}": Derived.PUBLIC for face in range(1, 7)},
            "gammon": Derived.PUBLIC,
            "backgammon": Derived.PUBLIC,
            "pips": Derived.PUBLIC,
        },
    )

    # -- building and folding ----------------------------------------------------------------

    def start(self, started: MatchStarted) -> BackgammonState:
        """The opening board, or the position `started` describes: a GNU Backgammon position ID,
        optionally the dice rolled and the side on roll (`engines.backgammon_id.parse_position`),
        with no opening roll.

        Raises:
            UsageError: an option, a table size or a position backgammon cannot take.
        """
        options: BackgammonOptions = parse_options(self.spec, started.options, bounded=False)
        self.spec.check_players(len(started.seats))
        state = BackgammonState(options=options, names=tuple(seat.name for seat in started.seats))
        if started.position is None:
            return state
        from .backgammon_id import parse_position

        given = parse_position(started.position)
        placed = msgspec.structs.replace(
            state, points=given.points, bar=given.bar, off=given.off, side=given.turn, opening=None
        )
        if given.dice is None:
            return placed  # the side on roll rolls first
        a, b = given.dice
        return _begin_turn(placed, given.turn, (a, a, a, a) if a == b else (a, b))

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
            case RollChosen():
                return msgspec.structs.replace(state, chosen=True)
            case DoubleOffered():
                return msgspec.structs.replace(state, doubled=True)
            case DoubleTaken(seat=seat):  # the doubler rolls next, without deciding again
                return msgspec.structs.replace(state, doubled=False, cube=state.cube * 2, owner=seat, chosen=True)
            case DoubleDropped(seat=seat):
                return msgspec.structs.replace(state, doubled=False, dropped=True, winner=1 - seat)
            case ResignationOffered(seat=seat, value=value):
                return msgspec.structs.replace(state, resigning=(seat, value))
            case ResignationAccepted(seat=seat):
                offered = state.resigning[1] if state.resigning is not None else 1
                return msgspec.structs.replace(state, resigning=None, resigned=offered, winner=seat)
            case ResignationDeclined():
                return msgspec.structs.replace(state, resigning=None)
            case PlayerRemoved(seat=seat):
                if state.over:
                    return state
                # A side that leaves forfeits the game.
                return msgspec.structs.replace(state, removed=(*state.removed, seat), winner=1 - seat)
            case MatchEnded():
                return msgspec.structs.replace(state, ended=True)
            case AnswerRejected() | ChanceCommitted() | ChanceRevealed() | MatchResumed():
                return state
            case MatchStarted() | ActionsUndone():
                raise ValueError(f"{event.tag} is handled by replay, not by the engine")
        raise ValueError(f"backgammon cannot apply {event.tag}")

    # -- reading a state ---------------------------------------------------------------------

    def to_act(self, state: BackgammonState) -> Turn | None:
        if state.ended or state.winner >= 0:
            return None
        if state.resigning is not None:
            return _ANSWERS[1 - state.resigning[0]]
        if state.side < 0:
            return _OPENING
        if state.doubled:
            return _TAKES[1 - state.side]
        if not state.dice:
            return _DECIDES[state.side] if _decides(state) else _ROLL
        return _MOVES[state.side]

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
        turn = self.to_act(state)
        if turn is None or turn.seat != seat:
            return ()
        resigns = (
            tuple(ResignationOffered(seat=seat, value=value) for value in _RESIGNED)
            if state.options.resignations
            else ()
        )
        match turn.decision:
            case "roll":
                doubles = (DoubleOffered(seat=seat, cube=state.cube * 2),) if _may_double(state) else ()
                return (RollChosen(seat=seat), *doubles, *resigns)
            case "take":
                return (DoubleTaken(seat=seat), DoubleDropped(seat=seat))
            case "resignation":
                return (ResignationAccepted(seat=seat), ResignationDeclined(seat=seat))
        moves = (CheckerMoved(seat=seat, die_index=index, source=source) for index, source in legal_moves(state, seat))
        return (*moves, *resigns)

    def parse(self, state: BackgammonState, seat: int, answer: object) -> Event:
        """`answer` is pygammon's move data, (die_index, source); at match play's other decisions,
        a word: "roll", "double", "take", "drop", "accept", "decline", or ("resign", value)."""
        turn = self._turn_of(state, seat)
        resigning = state.options.resignations and isinstance(answer, tuple | list) and list(answer[:1]) == ["resign"]
        if turn.decision != "move" or resigning:
            return _decision(state, seat, answer)
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
        turn = self._turn_of(state, seat)
        if getattr(action, "seat", seat) != seat:
            raise IllegalAction(Rule.WRONG_DECISION, f"seat {seat} cannot answer for seat {action.seat}")  # type: ignore[attr-defined]
        if isinstance(action, ResignationOffered) and turn.decision in ("roll", "move"):
            _check_resignation(state, action)
            return
        if turn.decision != "move":
            _check_decision(state, seat, turn.decision, action)
            return
        if not isinstance(action, CheckerMoved):
            raise IllegalAction(Rule.WRONG_DECISION, f"seat {seat} must move a checker, not {action.tag}")
        index, source = action.die_index, action.source
        # The die exists and is not played yet (a negative index is not an alias of the last die).
        if not 0 <= index < len(state.dice) or index in state.played:
            raise IllegalAction(
                BackgammonRule.DIE_INDEX_INVALID, f"die index {index} is not an unplayed die of {state.dice}"
            )
        value = state.dice[index]
        standard = state.options.rules == "standard"
        if standard:
            # A move that starts a play of as many dice as the roll allows is allowed.
            distance = _BAR if source is None else 24 - source if seat == SECOND else source + 1
            _, firsts, barred = _analysis(state.points, state.bar, state.off, seat, state.remaining, "standard")
            if (value, distance) in firsts:
                return
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
                raise IllegalAction(BackgammonRule.SOURCE_INVALID, f"source {source} is not a point index (0..23)")
            if state.points[source] * (1 if seat == FIRST else -1) <= 0:
                raise IllegalAction(
                    BackgammonRule.SOURCE_NOT_OWNED_PIECE,
                    f"the {number(seat, source)}-point (source {source}) holds none of your checkers",
                )
            distance = 24 - source if seat == SECOND else source + 1
        target = distance - value
        if target >= 1:
            # Two or more of the opponent's checkers block a point.
            landing = _point_of(seat, target)
            if state.points[landing] * (1 if seat == FIRST else -1) <= -2:
                raise IllegalAction(
                    BackgammonRule.DESTINATION_OCCUPIED, f"the {target}-point is held by the other side"
                )
        else:
            board = _board(state.points, state.bar, state.off, seat)
            if distance not in _sources(board, value, state.options.rules == "pygammon"):
                why = (
                    "not all checkers are home" if any(n > 0 for n in board[7:26]) else "a checker stands farther back"
                )
                raise IllegalAction(
                    BackgammonRule.DESTINATION_OUT_OF_BOARD, f"cannot bear off from the {distance}-point: {why}"
                )
        if not standard:
            return  # pygammon lets any single valid move through; the turn's count still holds
        # Standard rules: play as many dice as the roll allows, the larger one if only one can be played.
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

    def _turn_of(self, state: BackgammonState, seat: int) -> Turn:
        turn = self.to_act(state)
        # Disallow answers once the game is over.
        if turn is None:
            raise IllegalAction(Rule.MATCH_OVER, "the match is over")
        # Disallow answers out of turn, and moves before the dice are rolled.
        if turn.seat != seat:
            raise IllegalAction(Rule.NOT_YOUR_TURN, f"it is not seat {seat}'s turn to act")
        return turn

    def outcome(self, state: BackgammonState) -> Outcome | None:
        """How the game ended, and its points: a single game 1, a gammon 2, a backgammon 3 (a
        single while the cube is unturned under the Jacoby rule), what a resignation offered, 1
        for a side removed or a double dropped; times the cube."""
        if not state.over or state.winner < 0:
            return None if not state.over else Outcome(places=(1, 1), winners=(), result="abandoned")
        winner, loser = state.winner, 1 - state.winner
        if state.removed:
            result, points = "forfeit", 1
        elif state.dropped:
            result, points = "dropped", 1
        elif state.resigned:
            result, points = "resigned", state.resigned
        elif state.off[loser] == 0 and (state.bar[loser] or _in_home_of(state, loser, winner)):
            result, points = "backgammon", 3
        elif state.off[loser] == 0:
            result, points = "gammon", 2
        else:
            result, points = "single", 1
        if state.options.jacoby and state.owner < 0 and result in ("gammon", "backgammon"):
            points = 1
        points *= state.cube
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
        """The board as text: X's home at the bottom right, the points numbered as the side to move
        reads them (X's numbers before the opening roll), as GNU Backgammon draws its board."""

        def cell(point: int) -> str:
            value = state.points[point]
            return " . " if value == 0 else f"{_SYMBOL[0 if value > 0 else 1]}{abs(value):<2}"

        def row(points: range, show: Callable[[int], str]) -> str:
            cells = [show(p) for p in points]
            return " ".join(cells[:6]) + "   |   " + " ".join(cells[6:])

        numbered = labels(state.side if state.side >= 0 else FIRST)
        top, bottom = range(12, 24), range(11, -1, -1)
        names = [f"{_SYMBOL[s]} {state.names[s]}" for s in (FIRST, SECOND)]
        lines = [
            f"Backgammon ({state.options.rules} rules) · " + (f"{names[0]} vs {names[1]}"),
            "  " + row(top, lambda p: f"{numbered[p]:>3}"),
            "  " + row(top, cell),
            "  " + "-" * len(row(top, cell)),
            "  " + row(bottom, cell),
            "  " + row(bottom, lambda p: f"{numbered[p]:>3}"),
            f"  bar: X {state.bar[0]}  O {state.bar[1]}    borne off: X {state.off[0]}  O {state.off[1]}"
            f"    pips: X {pips(state, FIRST)}  O {pips(state, SECOND)}",
        ]
        if state.options.cube or state.cube > 1:
            holder = "in the middle" if state.owner < 0 else f"{_SYMBOL[state.owner]}'s"
            lines.append(f"  cube: {state.cube}, {holder}")
        turn = self.to_act(state)
        if state.over:
            outcome = self.outcome(state)
            if outcome is not None and outcome.winners:
                lines.append(f"  {state.names[state.winner]} ({_SYMBOL[state.winner]}) wins: {_won(outcome)}")
            else:
                lines.append("  the game was abandoned")
        elif state.resigning is not None:
            seat, value = state.resigning
            lines.append(
                f"  {state.names[seat]} ({_SYMBOL[seat]}) offers to resign {_RESIGNED.get(value, value)}:"
                f" {state.names[1 - seat]} to accept or decline"
            )
        elif state.side < 0:
            lines.append("  waiting for the opening roll")
        elif state.doubled:
            lines.append(
                f"  {state.names[state.side]} ({_SYMBOL[state.side]}) doubles to {state.cube * 2}:"
                f" {state.names[1 - state.side]} to take or drop"
            )
        elif turn is not None and turn.decision == "roll":
            lines.append(f"  {state.names[state.side]} ({_SYMBOL[state.side]}) to roll, double or resign")
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

    def continues(self, before: BackgammonState, event: Event) -> bool:
        """Whether `event` goes on the line before it: a checker moved after another of its turn
        (readers show a turn's play as one line, `13/8 6/5`, the last move's words)."""
        return isinstance(event, CheckerMoved) and bool(before.moved)

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
            case CheckerMoved(seat=seat):
                # The turn so far, one line: each checker's move adds to the play of the one before.
                line = f"{before.names[seat]} plays {play_text((*before.moved, step_of(before, event, after)))}"
                if after.over and after.winner == seat:
                    line += f" and wins ({_won(self.outcome(after))})"
            case RollChosen(seat=seat):
                # The decision before the roll: what it could have done instead.
                line = f"{before.names[seat]} " + ("does not double" if _may_double(before) else "does not resign")
            case DoubleOffered(seat=seat, cube=cube):
                line = f"{before.names[seat]} doubles to {cube}"
            case DoubleTaken(seat=seat):
                line = f"{before.names[seat]} takes: the cube is at {after.cube}, {before.names[seat]}'s"
            case DoubleDropped(seat=seat):
                line = f"{before.names[seat]} drops: {after.names[after.winner]} wins ({_won(self.outcome(after))})"
            case ResignationOffered(seat=seat, value=value):
                points = _points(value * before.cube)
                line = f"{before.names[seat]} offers to resign {_RESIGNED.get(value, value)} ({points})"
            case ResignationAccepted(seat=seat):
                line = f"{before.names[seat]} accepts the resignation and wins ({_won(self.outcome(after))})"
            case ResignationDeclined(seat=seat):
                line = f"{before.names[seat]} declines the resignation"
            case _:
                line = event.tag
        return line


def _points(count: int) -> str:
    return f"{count} point{'s' if count != 1 else ''}"


def _won(outcome: Outcome | None) -> str:
    """How a game was won, in words: its result and points ("gammon, 4 points")."""
    if outcome is None or not outcome.winners or not outcome.scores:
        return "?"
    return f"{outcome.result}, {_points(int(outcome.scores[outcome.winners[0]]))}"


def _begin_turn(state: BackgammonState, side: int, dice: tuple[int, ...]) -> BackgammonState:
    if state.options.rules == "pygammon":
        total = _pygammon_count(state.points, state.bar, state.off, side, dice)  # its count, bug for bug
    else:
        total, _, _ = _analysis(state.points, state.bar, state.off, side, dice, state.options.rules)
    started = msgspec.structs.replace(
        state, side=side, dice=dice, played=(), max_moves=total, turns=state.turns + 1, moved=()
    )
    # No move at all: the turn passes at once.
    return _pass_turn(started) if total == 0 else started


def _pass_turn(state: BackgammonState) -> BackgammonState:
    return msgspec.structs.replace(state, side=1 - state.side, dice=(), played=(), max_moves=0, moved=(), chosen=False)


# -- match play: the cube and resignations ------------------------------------------------------


def _may_double(state: BackgammonState) -> bool:
    """Whether the side to roll may offer the cube: it is in play, in the middle or its own."""
    return state.options.cube and state.owner in (-1, state.side) and state.cube < MAX_CUBE


def _decides(state: BackgammonState) -> bool:
    """Whether the side to roll decides first (to roll, double or resign), and has not yet."""
    return not state.chosen and (state.options.resignations or _may_double(state))


def _check_resignation(state: BackgammonState, offer: ResignationOffered) -> None:
    if not state.options.resignations:
        raise IllegalAction(BackgammonRule.CANNOT_RESIGN, "resignations are not part of this match")
    if offer.value not in _RESIGNED:
        raise IllegalAction(
            BackgammonRule.CANNOT_RESIGN,
            f"a resignation offers 1, 2 or 3 (single, gammon, backgammon), not {offer.value}",
        )


def _check_decision(state: BackgammonState, seat: int, decision: str, action: Event) -> None:
    """Judge an answer to match play's decisions: to roll or double, to a double, to a resignation."""
    match decision, action:
        case "roll", RollChosen():
            return
        case "roll", DoubleOffered(cube=cube):
            if not state.options.cube:
                raise IllegalAction(BackgammonRule.CANNOT_DOUBLE, "the cube is not part of this match")
            if not _may_double(state):
                raise IllegalAction(BackgammonRule.CANNOT_DOUBLE, f"the cube at {state.cube} is the other side's")
            if cube != state.cube * 2:
                raise IllegalAction(
                    BackgammonRule.CANNOT_DOUBLE,
                    f"the cube is at {state.cube}: a double offers {state.cube * 2}, not {cube}",
                )
            return
        case "take", DoubleTaken() | DoubleDropped():
            return
        case "resignation", ResignationAccepted() | ResignationDeclined():
            return
    wanted = {
        "roll": "roll, double or resign",
        "take": "take or drop the double",
        "resignation": "accept or decline the resignation",
    }[decision]
    raise IllegalAction(Rule.WRONG_DECISION, f"seat {seat} is to {wanted}, not {action.tag}")


#: The words a player answers match play's decisions with (`Backgammon.parse`).
_WORDS = {"roll": RollChosen, "take": DoubleTaken, "drop": DoubleDropped, "accept": ResignationAccepted,
          "decline": ResignationDeclined}  # fmt: skip


def _decision(state: BackgammonState, seat: int, answer: object) -> Event:
    """The event a word proposes at a decision of match play (judged afterwards by `check`)."""
    if isinstance(answer, str) and answer in _WORDS:
        return _WORDS[answer](seat=seat)
    if answer == "double":
        return DoubleOffered(seat=seat, cube=state.cube * 2)
    if isinstance(answer, tuple | list) and len(answer) == 2 and answer[0] == "resign" and _is_int(answer[1]):
        return ResignationOffered(seat=seat, value=answer[1])
    raise IllegalAction(
        BackgammonRule.INVALID_MOVE_TYPE,
        f"an answer here is roll, double, take, drop, accept, decline or (resign, 1..3), not {_short(answer)}",
    )


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
    hit = False
    if target <= 0:
        off[seat] += 1
    else:
        landing = _point_of(seat, target)
        if points[landing] == -sign:  # a blot: hit it
            points[landing] = 0
            bar[1 - seat] += 1
            hit = True
        points[landing] += sign
    moved = msgspec.structs.replace(
        state,
        points=tuple(points),
        bar=(bar[0], bar[1]),
        off=(off[0], off[1]),
        played=(*state.played, index),
        moved=(*state.moved, Step(distance, max(target, 0), hit)),
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
