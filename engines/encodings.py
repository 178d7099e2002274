"""Encodings for learners: each game's state as one seat sees it, as a fixed-shape numeric tensor,
and its answers as indices into a fixed action space, so a mask of legal actions has one length.

A learner reads the same encoding in a dataset (`matchlog dataset`) and in an environment
(`matchlog.envs`): the observation is always made from what `engines.views` shows the seat (the
engine's `view`), never from the referee's whole state, so it holds nothing the seat may not know.
Each of our games has one table here (an `Encoding`, in `ENCODINGS` by the game's name); a game
from another package brings its own (`Game.encoding`), and one that brings none is refused by
datasets and environments with `usage.encoding`. What each game's tensor and action space hold, feature by feature, is
written in its class's docstring and in docs/guides/datasets.md.

The shape and the size of the action space are fixed for a match: they follow from its start
(Porrinha's table size and chopsticks, Fish's board), so every decision of one match, and every
episode of one environment, has the same ones. `NO_ACTION` (-1) is the index of an answer the
fixed space has no place for: a rejected answer, or an age other than the three an environment offers.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from matchlog.events import (
    AgeGiven,
    CheckerMoved,
    Event,
    GuessMade,
    GuessStopped,
    HandChosen,
    JokerPlaced,
    Outcome,
    PenguinMoved,
    PenguinPlaced,
    TileGuessed,
    TileRevealed,
    UsageError,
)

from .backgammon import FIRST, BackgammonState
from .davinci import ENGINE as DAVINCI
from .davinci import JOKERS, DavinciState
from .fish import ENGINE as FISH
from .fish import FishState
from .porrinha import ENGINE as PORRINHA
from .porrinha import PorrinhaState
from .registry import game as registered

__all__ = [
    "ENCODINGS",
    "NO_ACTION",
    "BackgammonEncoding",
    "DavinciEncoding",
    "Encoding",
    "FishEncoding",
    "PorrinhaEncoding",
    "encoding",
    "place_reward",
]

#: The index of an answer that has no place in the game's fixed action space.
NO_ACTION = -1


class Encoding(Protocol):
    """One game's tensors and action indices. Pure: no I/O; `view` is always a state as one seat
    sees it (the engine's `view`), `start` the match's state at seq 0."""

    game: str

    def shape(self, start: Any) -> tuple[int, ...]:
        """The observation tensor's shape for a match that starts at `start`."""
        ...

    def bounds(self, start: Any) -> tuple[float, float]:
        """The least and greatest value any feature of the tensor takes in such a match."""
        ...

    def observe(self, view: Any, seat: int) -> list[float]:
        """The tensor (flat, in row-major order) of `view`, the state as `seat` sees it."""
        ...

    def actions(self, start: Any) -> int:
        """The size of the fixed action space for a match that starts at `start`."""
        ...

    def action_of(self, view: Any, event: Event) -> int:
        """The index of the answer `event` records, or NO_ACTION."""
        ...

    def event_of(self, view: Any, seat: int, index: int) -> Event:
        """The answer an index proposes for `seat` (the rules judge it after).

        Raises:
            UsageError: the index is outside the action space (`usage.action`).
        """
        ...

    def reward(self, outcome: Outcome, seat: int) -> float:
        """What the match's outcome is worth to `seat`, from -1 (or less) to 1 (or more)."""
        ...


def place_reward(outcome: Outcome, seat: int) -> float:
    """The outcome as a number by place: 1 for first, -1 for last, evenly between for a table of
    more than two; 0 for everyone in a match that ended without a result (abandoned)."""
    places = outcome.places
    if not outcome.winners or len(places) < 2:
        return 0.0
    return 1.0 - 2.0 * (places[seat] - 1) / (len(places) - 1)


def _outside(index: int, size: int) -> UsageError:
    return UsageError(f"action {index} is not in the action space (0 to {size - 1})", code="usage.action")


def _one_hot(size: int, index: int | None) -> list[float]:
    hot = [0.0] * size
    if index is not None and 0 <= index < size:
        hot[index] = 1.0
    return hot


# -- Porrinha ------------------------------------------------------------------------------------


class PorrinhaEncoding:
    """Porrinha for `n` seats, whose chopsticks add up to `C` at the start.

    Observation, 9n + 4 values (from -3 to C): the seat itself (one-hot, n); the decision it awaits
    (hand, guess: one-hot, 2); chopsticks per seat (n); who still plays (n); who has closed a hand
    this round (n); its own hand this round (-1 before it closes one); each seat's guess this round
    (n: the guess, or -1 to come, -2 not playing, -3 invalid, the game's own markers); the first
    guesser (one-hot, n); the last settled round: hands (n, -1 for a seat that did not play),
    guesses (n), total (-1 before any), and the seat that guessed right (one-hot, n). Another seat's
    hand is never in it: the view has it closed.

    Actions, C + 1: a number 0..C, the hand closed or the total guessed (the decision says which).
    """

    game = "porrinha"

    def shape(self, start: PorrinhaState) -> tuple[int, ...]:
        return (9 * start.players + 4,)

    def bounds(self, start: PorrinhaState) -> tuple[float, float]:
        return -3.0, float(max(1, sum(start.chopsticks)))

    def observe(self, view: PorrinhaState, seat: int) -> list[float]:
        n = view.players
        turn = PORRINHA.to_act(view)
        decision = [0.0, 0.0]
        if turn is not None and turn.seat == seat:
            decision[0 if turn.decision == "hand" else 1] = 1.0
        own = view.hands[seat]
        last_hands = view.last_hands or (-1,) * n
        last_guesses = view.last_guesses or (-2,) * n
        return [
            *_one_hot(n, seat),
            *decision,
            *map(float, view.chopsticks),
            *(float(view.active(s)) for s in range(n)),
            *(float(hand is not None) for hand in view.hands),
            float(own) if own is not None and own >= 0 else -1.0,
            *map(float, view.guesses),
            *_one_hot(n, view.first_guesser),
            *map(float, last_hands),
            *map(float, last_guesses),
            float(view.last_total),
            *_one_hot(n, view.last_winner),
        ]

    def actions(self, start: PorrinhaState) -> int:
        return sum(start.chopsticks) + 1

    def action_of(self, view: PorrinhaState, event: Event) -> int:
        match event:
            case HandChosen(hand=number) | GuessMade(guess=number):
                return number if 0 <= number < 10**9 else NO_ACTION
        return NO_ACTION

    def event_of(self, view: PorrinhaState, seat: int, index: int) -> Event:
        if index < 0:  # (the space's top depends on the start, which an environment checks)
            raise _outside(index, sum(view.chopsticks) + 1)
        turn = PORRINHA.to_act(view)
        if turn is not None and turn.seat == seat and turn.decision == "guess":
            return GuessMade(seat=seat, guess=index)
        return HandChosen(seat=seat, hand=index)

    def reward(self, outcome: Outcome, seat: int) -> float:
        return place_reward(outcome, seat)


# -- backgammon ----------------------------------------------------------------------------------

#: Distances a checker can stand at, from the mover's side: 1..24 the points, 25 the bar.
_BAR_DISTANCE = 25


def _distance(seat: int, source: int | None) -> int:
    """How far a checker at `source` (a point index, None for the bar) is from `seat`'s bearing off."""
    if source is None:
        return _BAR_DISTANCE
    return source + 1 if seat == FIRST else 24 - source


class BackgammonEncoding:
    """Backgammon, always from the seat's own side: points by their distance from its bearing off.

    Observation, 62 values (0 to 15): its checkers on points 1..24 (24), the opponent's checkers on
    those same points (24), its bar, the opponent's bar, its borne-off checkers, the opponent's (4),
    the dice not yet played this turn, counted by value 1..6 (6), who moves now (itself, the
    opponent: 2), and which side it plays (first, second: one-hot, 2).

    Actions, 150: one checker moved with one die, as (die value - 1) * 25 + (distance - 1), the
    distance the checker starts at (1..24 a point, 25 the bar). A turn of two or four dice is two or
    four decisions, as pygammon's protocol and the log have it; among dice of one value the first
    not yet played is used.
    """

    game = "backgammon"

    def shape(self, start: BackgammonState) -> tuple[int, ...]:
        return (62,)

    def bounds(self, start: BackgammonState) -> tuple[float, float]:
        return 0.0, 15.0

    def observe(self, view: BackgammonState, seat: int) -> list[float]:
        other = 1 - seat
        sign = 1 if seat == FIRST else -1
        mine, theirs = [0.0] * 24, [0.0] * 24
        for point, count in enumerate(view.points):
            d = _distance(seat, point) - 1
            if count * sign > 0:
                mine[d] = float(abs(count))
            elif count:
                theirs[d] = float(abs(count))
        dice = [0.0] * 6
        for value in view.remaining:
            dice[value - 1] += 1.0
        moving = view.side if view.dice and not view.over else -1
        return [
            *mine,
            *theirs,
            float(view.bar[seat]),
            float(view.bar[other]),
            float(view.off[seat]),
            float(view.off[other]),
            *dice,
            float(moving == seat),
            float(moving == other),
            *_one_hot(2, seat),
        ]

    def actions(self, start: BackgammonState) -> int:
        return 150

    def action_of(self, view: BackgammonState, event: Event) -> int:
        if not isinstance(event, CheckerMoved) or not 0 <= event.die_index < len(view.dice):
            return NO_ACTION
        source = event.source
        if source is not None and not 0 <= source < 24:
            return NO_ACTION
        return (view.dice[event.die_index] - 1) * 25 + _distance(event.seat, source) - 1

    def event_of(self, view: BackgammonState, seat: int, index: int) -> Event:
        if not 0 <= index < 150:
            raise _outside(index, 150)
        value, distance = index // 25 + 1, index % 25 + 1
        point = distance - 1 if seat == FIRST else 24 - distance
        source = None if distance == _BAR_DISTANCE else point
        unplayed = [i for i, die in enumerate(view.dice) if die == value and i not in view.played]
        # No die of that value: the index of none, which the rules refuse (a die index of -1).
        return CheckerMoved(seat=seat, die_index=unplayed[0] if unplayed else -1, source=source)

    def reward(self, outcome: Outcome, seat: int) -> float:
        points = max(outcome.scores, default=1.0) or 1.0  # single 1, gammon 2, backgammon 3
        return place_reward(outcome, seat) * points


# -- Da Vinci Code -------------------------------------------------------------------------------

#: Seats and tiles a row can hold (four players at most; every tile, jokers included, at most).
_DV_SEATS, _DV_PLACES, _DV_NUMBERS = 4, 26, 13  # numbers 0..11, and 12 for a joker
_DV_TILE = 4 + 2 * _DV_NUMBERS
_DV_DECISIONS = ("guess", "guess_or_stop", "reveal", "place_joker", "place_tile")
_DV_GUESSES = _DV_SEATS * _DV_PLACES * _DV_NUMBERS
_DV_STOP = _DV_GUESSES
_DV_REVEAL = _DV_STOP + 1
_DV_PLACE = _DV_REVEAL + _DV_PLACES
_DV_ACTIONS = _DV_PLACE + _DV_PLACES + 1


def _dv_number(tile: int) -> int | None:
    """A tile's number as the encoding writes it: 0..11, 12 a joker, None for one the viewer cannot see."""
    if tile < 0:
        return None
    return 12 if tile in JOKERS else tile // 2


class DavinciEncoding:
    """Da Vinci Code, for up to four seats (a smaller table leaves its slots empty).

    Observation, 3187 values (-1 to 26): for each seat slot (4) and each place in its row (26), 30
    values: a tile is there, it is white, it is turned up, its number is known to the seat (its own,
    or turned up), that number one-hot (13: 0..11, 12 a joker), and the numbers already guessed
    wrong for it (13). Then: the seat itself (one-hot, 4), the seats at the table (4), the seats
    still in (4), whose decision it is (one-hot, 4) and which (guess, guess_or_stop, reveal,
    place_joker, place_tile, another: one-hot, 6), where the tile drawn this turn went (-1: none),
    the black and the white tiles left in the pile (2), a drawn tile waiting to be placed (its owner
    one-hot 4, it is white, its number one-hot 13 where the seat may know it), and the last guess
    (it exists, the guesser one-hot 4, the target one-hot 4, the place, -1 before any, the number
    one-hot 13, it was right: 24).

    Actions, 1406: a guess, (target * 26 + place) * 13 + number (number 12: a joker), 0..1351;
    stop guessing, 1352; turn up its own tile at a place, 1353 + place; put a joker at a place,
    1379 + place.
    """

    game = "davinci"

    def shape(self, start: DavinciState) -> tuple[int, ...]:
        return (_DV_SEATS * _DV_PLACES * _DV_TILE + 67,)

    def bounds(self, start: DavinciState) -> tuple[float, float]:
        return -1.0, float(_DV_PLACES)

    def observe(self, view: DavinciState, seat: int) -> list[float]:
        values: list[float] = []
        empty = [0.0] * _DV_TILE
        for owner in range(_DV_SEATS):
            row = view.rows[owner] if owner < len(view.rows) else ()
            for place in range(_DV_PLACES):
                if place >= len(row):
                    values.extend(empty)
                    continue
                tile = row[place]
                number = _dv_number(tile)
                wrong = [0.0] * _DV_NUMBERS
                for guessed in view.wrong[owner][place]:
                    wrong[12 if guessed is None else guessed] = 1.0
                values += [1.0, float(tile % 2), float(view.revealed[owner][place]), float(number is not None)]
                values += _one_hot(_DV_NUMBERS, number)
                values += wrong
        turn = DAVINCI.to_act(view)
        decision = turn.decision if turn is not None else ""
        actor = turn.seat if turn is not None else None
        pending_owner, pending_tile = view.pending[0] if view.pending else (None, None)
        black = sum(1 for tile in view.pile if tile % 2 == 0)
        values += _one_hot(_DV_SEATS, seat)
        values += [float(s < view.players) for s in range(_DV_SEATS)]
        values += [float(s < view.players and view.active(s)) for s in range(_DV_SEATS)]
        values += _one_hot(_DV_SEATS, actor)
        values += _one_hot(6, _DV_DECISIONS.index(decision) if decision in _DV_DECISIONS else 5)
        values += [float(view.drawn), float(black), float(len(view.pile) - black)]
        values += _one_hot(_DV_SEATS, pending_owner)
        values.append(float(pending_tile % 2) if pending_tile is not None else 0.0)
        values += _one_hot(_DV_NUMBERS, _dv_number(pending_tile) if pending_tile is not None else None)
        if view.last is None:
            values += [0.0] * 24
        else:
            guesser, target, place, number, right = view.last
            values += [1.0, *_one_hot(_DV_SEATS, guesser), *_one_hot(_DV_SEATS, target), float(place)]
            values += [*_one_hot(_DV_NUMBERS, 12 if number is None else number), float(right)]
        return values

    def actions(self, start: DavinciState) -> int:
        return _DV_ACTIONS

    def action_of(self, view: DavinciState, event: Event) -> int:
        match event:
            case TileGuessed(target=target, position=place, number=number):
                number = 12 if number is None else number
                if 0 <= target < _DV_SEATS and 0 <= place < _DV_PLACES and 0 <= number < _DV_NUMBERS:
                    return (target * _DV_PLACES + place) * _DV_NUMBERS + number
            case GuessStopped():
                return _DV_STOP
            case TileRevealed(position=place) if 0 <= place < _DV_PLACES:
                return _DV_REVEAL + place
            case JokerPlaced(position=place) if 0 <= place <= _DV_PLACES:
                return _DV_PLACE + place
        return NO_ACTION

    def event_of(self, view: DavinciState, seat: int, index: int) -> Event:
        if not 0 <= index < _DV_ACTIONS:
            raise _outside(index, _DV_ACTIONS)
        if index < _DV_GUESSES:
            target, rest = divmod(index, _DV_PLACES * _DV_NUMBERS)
            place, number = divmod(rest, _DV_NUMBERS)
            return TileGuessed(seat=seat, target=target, position=place, number=None if number == 12 else number)
        if index == _DV_STOP:
            return GuessStopped(seat=seat)
        if index < _DV_PLACE:
            return TileRevealed(seat=seat, position=index - _DV_REVEAL)
        return JokerPlaced(seat=seat, position=index - _DV_PLACE)

    def reward(self, outcome: Outcome, seat: int) -> float:
        return place_reward(outcome, seat)


# -- Fish ----------------------------------------------------------------------------------------

#: The ages an environment offers a Fish player (any natural number is an age; these three are the
#: engine's `legal` ones, and they order the players young to old).
_FISH_AGES = (10, 20, 30)
_FISH_SEATS = 4
_FISH_PHASES = ("ages", "place", "move")


def _fish_size(state: FishState) -> tuple[int, int]:
    """The board's rows and columns (known from the options before the board is generated)."""
    if state.board:
        return len(state.board), max(len(row) for row in state.board)
    return state.options.rows, state.options.columns


class FishEncoding:
    """Fish on a board of R rows and C columns (T = R * C tiles), for up to four seats.

    Observation, 7T + 21 values (0 to 5T): for each tile, row by row (7 values): its fish (0 a
    hole), the seat's own penguin stands there, another's does, and whose penguin it is (one-hot by
    seat, 4); then the seat itself (one-hot, 4), the phase (ages, place, move, another: one-hot, 4),
    whose decision it is (one-hot, 4), the scores (4), and the seats removed (4), then how many
    penguins the seat has still to place.

    Actions, 3 + T + T * T: an age, 10, 20 or 30 (0..2; any other age a player gives has no index);
    place a penguin on tile t (t = row * C + column), 3 + t; move the penguin on tile s to tile t,
    3 + T + s * T + t.
    """

    game = "fish"

    def shape(self, start: FishState) -> tuple[int, ...]:
        rows, columns = _fish_size(start)
        return (7 * rows * columns + 21,)

    def bounds(self, start: FishState) -> tuple[float, float]:
        rows, columns = _fish_size(start)
        return 0.0, float(5 * rows * columns)

    def observe(self, view: FishState, seat: int) -> list[float]:
        rows, columns = _fish_size(view)
        owner = {tuple(p): s for s, placed in enumerate(view.penguins) for p in placed}
        values: list[float] = []
        for r in range(rows):
            for c in range(columns):
                stands = owner.get((r, c))
                values += [float(view.fish((r, c))), float(stands == seat), float(stands not in (None, seat))]
                values += _one_hot(_FISH_SEATS, stands)
        turn = FISH.to_act(view)
        phase = _FISH_PHASES.index(view.phase) if view.phase in _FISH_PHASES and not view.over else 3
        scores = [float(s) for s in view.scores[:_FISH_SEATS]]
        values += _one_hot(_FISH_SEATS, seat)
        values += _one_hot(4, phase)
        values += _one_hot(_FISH_SEATS, turn.seat if turn is not None else None)
        values += scores + [0.0] * (_FISH_SEATS - len(scores))
        values += [float(s in view.removed) for s in range(_FISH_SEATS)]
        placed = len(view.penguins[seat]) if seat < len(view.penguins) else 0
        values.append(float(max(0, view.penguins_each - placed)))
        return values

    def actions(self, start: FishState) -> int:
        rows, columns = _fish_size(start)
        tiles = rows * columns
        return 3 + tiles + tiles * tiles

    def action_of(self, view: FishState, event: Event) -> int:
        rows, columns = _fish_size(view)
        tiles = rows * columns

        def tile(position: tuple[int, int]) -> int | None:
            r, c = position
            return r * columns + c if 0 <= r < rows and 0 <= c < columns else None

        match event:
            case AgeGiven(age=age) if age in _FISH_AGES:
                return _FISH_AGES.index(age)
            case PenguinPlaced(position=position) if tile(position) is not None:
                return 3 + tile(position)  # type: ignore[operator]
            case PenguinMoved(source=source, target=target) if None not in (tile(source), tile(target)):
                return 3 + tiles + tile(source) * tiles + tile(target)  # type: ignore[operator]
        return NO_ACTION

    def event_of(self, view: FishState, seat: int, index: int) -> Event:
        rows, columns = _fish_size(view)
        tiles = rows * columns
        size = 3 + tiles + tiles * tiles
        if not 0 <= index < size:
            raise _outside(index, size)
        if index < 3:
            return AgeGiven(seat=seat, age=_FISH_AGES[index])
        if index < 3 + tiles:
            return PenguinPlaced(seat=seat, position=divmod(index - 3, columns))
        source, target = divmod(index - 3 - tiles, tiles)
        return PenguinMoved(seat=seat, source=divmod(source, columns), target=divmod(target, columns))

    def reward(self, outcome: Outcome, seat: int) -> float:
        return place_reward(outcome, seat)


ENCODINGS: Mapping[str, Encoding] = MappingProxyType(
    {
        "porrinha": PorrinhaEncoding(),
        "backgammon": BackgammonEncoding(),
        "davinci": DavinciEncoding(),
        "fish": FishEncoding(),
    }
)


def encoding(game: str) -> Encoding:
    """The encoding of the game called `game` (the one its plugin brings).

    Raises:
        UsageError: the game has none (`usage.encoding`): a tournament's record, a game that brings
            none, or an unknown game.
    """
    code = registered(game).encoding()
    if code is None:
        raise UsageError(
            f"{game!r} has no encoding for learners (its plugin brings none): datasets and environments need one",
            code="usage.encoding",
        )
    return code
