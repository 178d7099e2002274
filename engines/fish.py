"""Fish ("Hey, That's My Fish!"), as the NEU CS4500 course played it: penguins on hexagonal tiles.

It shows a generated board as a recorded chance event, a play order set by the players' own answers
(their ages), turns that skip a player with no move, and a game that ends when nobody can move.

The board is R rows by C columns of tiles carrying 1 to 5 fish, or holes (0). A position is
(row, column); odd rows sit half a tile to the right, and a tile's neighbours are N (r-2, c),
NE, SE, S (r+2, c), SW and NW, in that order. Each of the 2 to 4 players places 6 - N penguins,
round-robin in play order (youngest first); then each in turn moves one penguin in a straight line
over any number of tiles, never over or onto a hole or a penguin, and scores the fish of the tile
it leaves, which becomes a hole. Fish under penguins at the end do not count; every player with
the top score wins; a kicked player's penguins leave the board and it can never win.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Annotated, Literal

import msgspec

from matchlog.events import (
    ActionsUndone,
    AgeGiven,
    AnswerRejected,
    BoardGenerated,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    IllegalAction,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Outcome,
    PenguinMoved,
    PenguinPlaced,
    PlayerRemoved,
    UsageError,
)

from .contract import CHANCE, GameSpec, Rule, Turn, awaited_turn, describe_lifecycle, parse_options, shown
from .views import Derived, declare, declare_figures, everyone, lifecycle, shared_figures

__all__ = [
    "COLORS",
    "DIRECTIONS",
    "ENGINE",
    "Fish",
    "FishOptions",
    "FishRule",
    "FishState",
    "Position",
    "StateJSON",
    "moves",
    "neighbour",
    "penguins_that_can_move",
    "reachable",
    "state_from_json",
    "state_to_json",
]

Position = tuple[int, int]
#: Penguin colours by seat.
COLORS = ("red", "white", "brown", "black")
#: The six directions, clockwise from north; each maps (row, column) to a neighbour.
DIRECTIONS = ("N", "NE", "SE", "S", "SW", "NW")
MAX_FISH = 5


def neighbour(position: Position, direction: str) -> Position:
    """The tile next to `position` in `direction` (it may be off the board)."""
    row, column = position
    odd = row % 2
    match direction:
        case "N":
            return row - 2, column
        case "S":
            return row + 2, column
        case "NE":
            return row - 1, column + odd
        case "SE":
            return row + 1, column + odd
        case "NW":
            return row - 1, column - 1 + odd
        case "SW":
            return row + 1, column - 1 + odd
    raise ValueError(f"no direction {direction!r}")


class FishRule:
    """Codes of the rules `parse` and `check` enforce."""

    MALFORMED = "fish.malformed"
    NOT_AN_AGE = "fish.not_an_age"
    OFF_THE_BOARD = "fish.off_the_board"
    HOLE = "fish.hole"
    OCCUPIED = "fish.occupied"
    NOT_YOUR_PENGUIN = "fish.not_your_penguin"
    UNREACHABLE = "fish.unreachable"


#: The most tiles a board has (rows x columns; either side at most this too).
MAX_TILES = 400


class FishOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The board: `rows` x `columns` tiles, each with `fish` fish; or, with `random_board`, 1 to 5 fish
    at random, `holes` holes, and at least `one_fish` tiles with a single fish."""

    rows: Annotated[int, msgspec.Meta(ge=1, le=MAX_TILES)] = 5
    columns: Annotated[int, msgspec.Meta(ge=1, le=MAX_TILES)] = 5
    fish: Annotated[int, msgspec.Meta(ge=1, le=MAX_FISH)] = 3
    random_board: bool = False
    holes: Annotated[int, msgspec.Meta(ge=0, le=MAX_TILES)] = 0
    one_fish: Annotated[int, msgspec.Meta(ge=0, le=MAX_TILES)] = 0


class FishState(msgspec.Struct, frozen=True, kw_only=True):
    """The game between two events."""

    options: FishOptions
    names: tuple[str, ...]
    board: tuple[tuple[int, ...], ...] = ()
    ages: tuple[int | None, ...] = ()
    order: tuple[int, ...] = ()  # seats in play order, once every age is known
    penguins: tuple[tuple[Position, ...], ...] = ()
    scores: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()
    phase: str = "board"  # board | ages | place | move | over
    next: int = 0  # index into `order` of the player whose turn comes next (before skipping)
    ended: bool = False

    @property
    def players(self) -> int:
        return len(self.names)

    @property
    def penguins_each(self) -> int:
        return 6 - self.players

    @property
    def over(self) -> bool:
        return self.ended or self.phase == "over"

    def active(self, seat: int) -> bool:
        return seat not in self.removed

    def occupied(self) -> frozenset[Position]:
        return frozenset(p for placed in self.penguins for p in placed)

    def fish(self, position: Position) -> int:
        """Fish on a tile; 0 for a hole or a position off the board."""
        row, column = position
        if 0 <= row < len(self.board) and 0 <= column < len(self.board[row]):
            return self.board[row][column]
        return 0


def reachable(state: FishState, start: Position) -> list[Position]:
    """The tiles a penguin on `start` can move to: straight lines, stopping before a hole or a penguin."""
    return _reachable(state.board, start, state.occupied())


def _reachable(board: tuple[tuple[int, ...], ...], start: Position, occupied: frozenset[Position]) -> list[Position]:
    found = []
    for ray in _rays(tuple(map(len, board))).get(start, ()):
        for position in ray:
            if board[position[0]][position[1]] == 0 or position in occupied:
                break
            found.append(position)
    return found


def _can_move(board: tuple[tuple[int, ...], ...], start: Position, occupied: frozenset[Position]) -> bool:
    """Whether a penguin on `start` has a move: a free tile next to it."""
    for ray in _rays(tuple(map(len, board)))[start]:
        position = ray[0]
        if board[position[0]][position[1]] > 0 and position not in occupied:
            return True
    return False


@lru_cache(maxsize=64)
def _rays(shape: tuple[int, ...]) -> dict[Position, tuple[tuple[Position, ...], ...]]:
    """For a board with rows of the given lengths: from each tile, the tiles in each direction in order
    (empty directions left out). Holes and penguins change; the geometry never does."""
    rays: dict[Position, tuple[tuple[Position, ...], ...]] = {}
    for row, length in enumerate(shape):
        for column in range(length):
            found = []
            for direction in DIRECTIONS:
                ray = []
                position = neighbour((row, column), direction)
                while 0 <= position[0] < len(shape) and 0 <= position[1] < shape[position[0]]:
                    ray.append(position)
                    position = neighbour(position, direction)
                if ray:
                    found.append(tuple(ray))
            rays[(row, column)] = tuple(found)
    return rays


def _on(board: tuple[tuple[int, ...], ...], position: Position) -> bool:
    row, column = position
    return 0 <= row < len(board) and 0 <= column < len(board[row])


def moves(state: FishState, seat: int) -> list[tuple[Position, Position]]:
    """Every (source, target) move of `seat`'s penguins, in tie-break order."""
    occupied = state.occupied()
    found = [
        (source, target) for source in state.penguins[seat] for target in _reachable(state.board, source, occupied)
    ]
    return sorted(found)


def penguins_that_can_move(state: FishState, seat: int) -> list[Position]:
    """The positions of `seat`'s penguins that have a move."""
    occupied = state.occupied()
    return [position for position in state.penguins[seat] if _can_move(state.board, position, occupied)]


class Fish:
    """The Fish engine (see the module docstring)."""

    spec = GameSpec(
        name="fish",
        title="Fish",
        min_players=2,
        max_players=4,
        chance=True,
        hidden=False,
        options=FishOptions,
        state=FishState,
    )

    #: Nothing is hidden: every seat sees every event whole.
    views = declare(
        lifecycle(hidden=False),
        {
            BoardGenerated: everyone,
            AgeGiven: everyone,
            PenguinPlaced: everyone,
            PenguinMoved: everyone,
        },
    )

    #: Nothing is hidden: every figure is everyone's.
    figures = declare_figures(
        shared_figures(hidden=False),
        {"turns": Derived.PUBLIC, "moves": Derived.PUBLIC, "fish": Derived.PUBLIC, "penguins": Derived.PUBLIC},
    )

    # -- building and folding ----------------------------------------------------------------

    def start(self, started: MatchStarted) -> FishState:
        """The state before the board is generated; or the position `started` describes: the
        course's State JSON (players in turn order from the one to act, colours for seats, and
        the board), placing while some player has penguins left to place, else moving.

        Raises:
            UsageError: an option, a table size or a position Fish cannot take.
        """
        options: FishOptions = parse_options(self.spec, started.options, bounded=False)
        players = len(started.seats)
        self.spec.check_players(players)
        names = tuple(seat.name for seat in started.seats)
        if started.position is not None:
            return _from_position(started.position, options, names)
        _check_board_options(options, players)
        return FishState(
            options=options,
            names=names,
            ages=(None,) * players,
            penguins=((),) * players,
            scores=(0,) * players,
        )

    def apply(self, state: FishState, event: Event) -> FishState:
        """Return the game after `event`. Assumes the referee already checked it."""
        match event:
            case BoardGenerated(tiles=tiles):
                return msgspec.structs.replace(state, board=tiles, phase="ages")
            case AgeGiven(seat=seat, age=age):
                aged = msgspec.structs.replace(state, ages=_put(state.ages, seat, age))
                return _after_ages(aged)
            case PenguinPlaced(seat=seat, position=position):
                placed = msgspec.structs.replace(
                    state, penguins=_put(state.penguins, seat, (*state.penguins[seat], position))
                )
                return _after_placement(placed)
            case PenguinMoved(seat=seat, source=source, target=target):
                return _after_move(state, seat, source, target)
            case PlayerRemoved(seat=seat):
                if state.over or not state.active(seat):
                    return state
                # A kicked player's penguins leave the board; it keeps its score but can never win.
                kicked = msgspec.structs.replace(
                    state, removed=(*state.removed, seat), penguins=_put(state.penguins, seat, ())
                )
                if state.phase == "ages":
                    return _after_ages(kicked)
                if state.phase == "place":
                    return _after_placement(kicked, advance=False)
                return _settle(kicked)
            case MatchEnded():
                return msgspec.structs.replace(state, ended=True)
            case AnswerRejected() | ChanceCommitted() | ChanceRevealed() | MatchResumed():
                return state
            case MatchStarted() | ActionsUndone():
                raise ValueError(f"{event.tag} is handled by replay, not by the engine")
        raise ValueError(f"Fish cannot apply {event.tag}")

    # -- reading a state ---------------------------------------------------------------------

    def to_act(self, state: FishState) -> Turn | None:
        if state.over:
            return None
        if state.phase == "board":
            return Turn(CHANCE, "board")
        if state.phase == "ages":
            seat = next(s for s in range(state.players) if state.ages[s] is None and state.active(s))
            return Turn(seat, "initialize")
        if state.phase == "place":
            return Turn(state.order[state.next], "place")
        return Turn(state.order[state.next], "move")  # settled: `next` is a player that can move

    def chance(self, state: FishState, rng: random.Random) -> Event:
        options = state.options
        tiles = [[options.fish] * options.columns for _ in range(options.rows)]
        if options.random_board:
            cells = [(r, c) for r in range(options.rows) for c in range(options.columns)]
            for r, c in cells:
                tiles[r][c] = rng.randint(1, MAX_FISH)
            holes = rng.sample(cells, options.holes)
            for r, c in holes:
                tiles[r][c] = 0
            # At least `one_fish` tiles with a single fish, among those that are not holes.
            singles = [cell for cell in cells if tiles[cell[0]][cell[1]] == 1]
            others = [cell for cell in cells if tiles[cell[0]][cell[1]] > 1]
            for r, c in rng.sample(others, max(0, options.one_fish - len(singles))):
                tiles[r][c] = 1
        return BoardGenerated(tiles=tuple(tuple(row) for row in tiles))

    def chance_outcomes(self, state: FishState) -> tuple[Event, ...]:
        if self.to_act(state) != Turn(CHANCE, "board") or state.options.random_board:
            return ()  # a random board has too many outcomes to list
        return (self.chance(state, random.Random(0)),)  # a uniform board is the only possible one

    def tally(self, before: FishState, event: Event, after: FishState) -> tuple[tuple[int | None, str, float], ...]:
        match event:
            case PenguinMoved(seat=seat):
                return ((None, "turns", 1.0), (seat, "moves", 1.0))
            case MatchEnded():
                return tuple(
                    figure
                    for seat in range(before.players)
                    for figure in (
                        (seat, "fish", float(before.scores[seat])),
                        (seat, "penguins", float(before.penguins_each)),
                    )
                )
        return ()

    def check_chance(self, state: FishState, event: Event) -> None:
        if self.to_act(state) != Turn(CHANCE, "board") or not isinstance(event, BoardGenerated):
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"chance does not record {event.tag} here")
        options = state.options
        tiles = event.tiles
        cells = [fish for row in tiles for fish in row]
        problems = []
        # The board has the shape asked for...
        if len(tiles) != options.rows or any(len(row) != options.columns for row in tiles):
            problems.append(f"is not {options.rows}x{options.columns}")
        # ...uniform, or 1 to 5 fish a tile with exactly the holes asked for and enough one-fish tiles.
        if not options.random_board and any(fish != options.fish for fish in cells):
            problems.append(f"is not {options.fish} fish on every tile")
        if options.random_board:
            if cells.count(0) != options.holes or any(not 0 <= fish <= MAX_FISH for fish in cells):
                problems.append(f"does not have {options.holes} holes and 1 to {MAX_FISH} fish elsewhere")
            if cells.count(1) < options.one_fish:
                problems.append(f"has fewer than {options.one_fish} one-fish tiles")
        if problems:
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, "the board " + " and ".join(problems))

    def legal(self, state: FishState, seat: int) -> tuple[Event, ...]:
        turn = self.to_act(state)
        if turn is None or turn.seat != seat:
            return ()
        if turn.decision == "initialize":
            return tuple(AgeGiven(seat=seat, age=age) for age in (10, 20, 30))  # any natural number will do
        if turn.decision == "place":
            occupied = state.occupied()
            return tuple(
                PenguinPlaced(seat=seat, position=(r, c))
                for r, row in enumerate(state.board)
                for c, fish in enumerate(row)
                if fish > 0 and (r, c) not in occupied
            )
        return tuple(PenguinMoved(seat=seat, source=s, target=t) for s, t in moves(state, seat))

    def parse(self, state: FishState, seat: int, answer: object) -> Event:
        """An age is a natural number; a placement a position [row, column]; a move [from, to]."""
        turn = awaited_turn(self, state, seat)
        if turn.decision == "initialize":
            if not _is_int(answer) or answer < 0:  # type: ignore[operator]
                raise IllegalAction(FishRule.NOT_AN_AGE, f"an age is a natural number, not {shown(answer, 40)}")
            return AgeGiven(seat=seat, age=answer)  # type: ignore[arg-type]
        if turn.decision == "place":
            return PenguinPlaced(seat=seat, position=_position(answer))
        if not isinstance(answer, tuple | list) or len(answer) != 2:
            raise IllegalAction(FishRule.MALFORMED, f"a move is [from, to], not {shown(answer, 40)}")
        return PenguinMoved(seat=seat, source=_position(answer[0]), target=_position(answer[1]))

    def check(self, state: FishState, seat: int, action: Event) -> None:
        turn = awaited_turn(self, state, seat)
        match action:
            case AgeGiven(seat=acting, age=age) if turn.decision == "initialize" and acting == seat:
                if age < 0:
                    raise IllegalAction(FishRule.NOT_AN_AGE, f"an age is a natural number, not {age}")
            case PenguinPlaced(seat=acting, position=position) if turn.decision == "place" and acting == seat:
                # A penguin goes on a tile of the board...
                if not _on(state.board, position):
                    raise IllegalAction(FishRule.OFF_THE_BOARD, f"{list(position)} is not on the board")
                # ...that is not a hole...
                if state.fish(position) == 0:
                    raise IllegalAction(FishRule.HOLE, f"{list(position)} is a hole")
                # ...and has no penguin on it.
                if position in state.occupied():
                    raise IllegalAction(FishRule.OCCUPIED, f"a penguin already stands on {list(position)}")
            case PenguinMoved(seat=acting, source=source, target=target) if turn.decision == "move" and acting == seat:
                # The player moves one of its own penguins...
                if source not in state.penguins[seat]:
                    raise IllegalAction(
                        FishRule.NOT_YOUR_PENGUIN, f"no penguin of seat {seat} stands on {list(source)}"
                    )
                # ...in a straight line, over no hole and no penguin.
                if target not in _reachable(state.board, source, state.occupied()):
                    raise IllegalAction(FishRule.UNREACHABLE, f"{list(target)} cannot be reached from {list(source)}")
            case _:
                raise IllegalAction(Rule.WRONG_DECISION, f"seat {seat} must answer {turn.decision}, not {action.tag}")

    def outcome(self, state: FishState) -> Outcome | None:
        if not state.over:
            return None
        playing = [s for s in range(state.players) if state.active(s)]
        # Places by score among those not kicked (ties share a place); kicked players after them.
        ranked = sorted(playing, key=lambda s: -state.scores[s])
        places = [0] * state.players
        for seat in ranked:
            places[seat] = 1 + sum(state.scores[other] > state.scores[seat] for other in playing)
        for index, seat in enumerate(reversed(state.removed)):
            places[seat] = len(playing) + 1 + index
        top = max((state.scores[s] for s in playing), default=None)
        winners = tuple(s for s in playing if state.scores[s] == top)
        return Outcome(
            places=tuple(places), winners=winners, scores=tuple(float(s) for s in state.scores), removed=state.removed
        )

    def view(self, state: FishState, seat: int | None) -> FishState:
        return state  # nothing is hidden

    # -- showing a state ---------------------------------------------------------------------

    def render(self, state: FishState) -> str:
        owner = {position: seat for seat, placed in enumerate(state.penguins) for position in placed}
        lines = [f"Fish · {state.options.rows}x{state.options.columns} · {state.phase} phase"]
        for r, row in enumerate(state.board):
            cells = []
            for c, fish in enumerate(row):
                if (r, c) in owner:
                    cells.append(f"{COLORS[owner[(r, c)]][0].upper()}{fish}")
                else:
                    cells.append(" ." if fish == 0 else f" {fish}")
            lines.append(f"  {r:>2} " + ("  " if r % 2 else "") + "  ".join(cells))
        for seat, name in enumerate(state.names):
            age = "" if state.ages and state.ages[seat] is None else f", age {state.ages[seat]}"
            kicked = " (kicked)" if seat in state.removed else ""
            lines.append(f"  {COLORS[seat]:<5} {name}: {state.scores[seat]} fish{age}{kicked}")
        turn = self.to_act(state)
        if turn is not None and turn.seat != CHANCE:
            lines.append(f"  waiting for {state.names[turn.seat]} ({COLORS[turn.seat]}) to {turn.decision}")
        return "\n".join(lines)

    def describe(self, before: FishState, event: Event, after: FishState) -> str:
        line = describe_lifecycle(before.names, event)
        if line is not None:
            return line
        match event:
            case BoardGenerated(tiles=tiles):
                holes = sum(fish == 0 for row in tiles for fish in row)
                return f"the referee lays out a {len(tiles)}x{len(tiles[0]) if tiles else 0} board ({holes} holes)"
            case AgeGiven(seat=seat, age=age):
                line = f"{before.names[seat]} ({COLORS[seat]}) is {age}"
                if after.order and not before.order:
                    line += "; play order: " + ", ".join(after.names[s] for s in after.order)
                return line
            case PenguinPlaced(seat=seat, position=position):
                return f"{before.names[seat]} places a penguin on {list(position)}"
            case PenguinMoved(seat=seat, source=source, target=target):
                fish = before.fish(source)
                line = (
                    f"{before.names[seat]} moves {list(source)} -> {list(target)}, +{fish} fish ({after.scores[seat]})"
                )
                if after.over:
                    line += "; nobody can move: the game is over"
                return line
        return event.tag


# -- transitions -----------------------------------------------------------------------------


def _put(values: tuple, index: int, value: object) -> tuple:
    return (*values[:index], value, *values[index + 1 :])


def _after_ages(state: FishState) -> FishState:
    if any(age is None for seat, age in enumerate(state.ages) if state.active(seat)):
        return state
    playing = [s for s in range(state.players) if state.active(s)]
    if len(playing) < 2:
        return msgspec.structs.replace(state, phase="over")
    # The youngest plays first; equal ages keep the seat (sign-up) order.
    order = tuple(sorted(playing, key=lambda s: (state.ages[s], s)))
    return msgspec.structs.replace(state, order=order, phase="place", next=0)


def _after_placement(state: FishState, *, advance: bool = True) -> FishState:
    """Hand the next placement to the next player in order who still has penguins to place."""
    playing = [s for s in state.order if state.active(s)]
    if len(playing) < 2:
        return msgspec.structs.replace(state, phase="over")
    if all(len(state.penguins[s]) >= state.penguins_each for s in playing):
        return _settle(msgspec.structs.replace(state, phase="move", next=0))
    count = len(state.order)
    start = (state.next + 1) % count if advance else state.next
    for step in range(count):
        index = (start + step) % count
        seat = state.order[index]
        if state.active(seat) and len(state.penguins[seat]) < state.penguins_each:
            return msgspec.structs.replace(state, next=index)
    return state  # pragma: no cover - somebody still had penguins to place


def _after_move(state: FishState, seat: int, source: Position, target: Position) -> FishState:
    row, column = source
    board = _put(state.board, row, _put(state.board[row], column, 0))  # the tile left behind sinks
    penguins = tuple(target if p == source else p for p in state.penguins[seat])
    moved = msgspec.structs.replace(
        state,
        board=board,
        penguins=_put(state.penguins, seat, penguins),
        scores=_put(state.scores, seat, state.scores[seat] + state.fish(source)),
        next=(state.order.index(seat) + 1) % len(state.order),
    )
    return _settle(moved)


def _settle(state: FishState) -> FishState:
    """In the move phase, point `next` at the player whose turn it is, skipping the kicked and those
    who cannot move; end the game when nobody can move (or fewer than two are left)."""
    if state.phase != "move":
        return state
    count = len(state.order)
    if sum(state.active(seat) for seat in state.order) >= 2:
        occupied = state.occupied()
        for step in range(count):
            index = (state.next + step) % count
            seat = state.order[index]
            if state.active(seat) and any(_can_move(state.board, p, occupied) for p in state.penguins[seat]):
                return state if index == state.next else msgspec.structs.replace(state, next=index)
    return msgspec.structs.replace(state, phase="over")


def _position(value: object) -> Position:
    if isinstance(value, tuple | list) and len(value) == 2 and all(_is_int(v) for v in value):
        return (value[0], value[1])  # type: ignore[return-value]
    raise IllegalAction(FishRule.MALFORMED, f"a position is [row, column], not {shown(value, 40)}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_board_options(options: FishOptions, players: int) -> None:
    tiles = options.rows * options.columns
    penguins = players * (6 - players)
    if not (options.rows >= 1 and options.columns >= 1 and tiles <= MAX_TILES):
        raise UsageError(
            f"a board of {options.rows}x{options.columns} is not one Fish can use (1 to {MAX_TILES} tiles)",
            code="usage.options",
        )
    if not options.random_board and not 1 <= options.fish <= MAX_FISH:
        raise UsageError(f"a tile holds 1 to {MAX_FISH} fish, not {options.fish}", code="usage.options")
    holes = options.holes if options.random_board else 0
    if holes < 0 or tiles - holes < penguins:
        raise UsageError(f"{tiles - holes} tiles cannot take {penguins} penguins", code="usage.options")
    if options.one_fish < 0 or options.one_fish > tiles - holes:
        raise UsageError(f"{options.one_fish} one-fish tiles do not fit on {tiles - holes} tiles", code="usage.options")


# -- the course's JSON -----------------------------------------------------------------------


class PlayerJSON(msgspec.Struct, forbid_unknown_fields=True):
    """One player in the course's State: its colour, its score and where its penguins stand."""

    color: Literal["red", "white", "brown", "black"]
    score: int
    places: list[tuple[int, int]]


class StateJSON(msgspec.Struct, forbid_unknown_fields=True):
    """The course's State: players in turn order, the one to act first, and the board row by row."""

    players: list[PlayerJSON]
    board: list[list[int]]


def state_to_json(state: FishState, first: int) -> dict[str, object]:
    """The course's State as `first` sees it when asked to act: the players still in, in turn order
    starting with `first`, and the board (0 for a hole)."""
    order = [seat for seat in state.order if state.active(seat)]
    start = order.index(first) if first in order else 0
    return {
        "players": [
            {"color": COLORS[seat], "score": state.scores[seat], "places": [list(p) for p in state.penguins[seat]]}
            for seat in order[start:] + order[:start]
        ],
        "board": [list(row) for row in state.board],
    }


def state_from_json(data: object, *, phase: str = "move") -> FishState:
    """A state from the course's State, in the `phase` ("place" or "move") the message was sent in.
    Seats follow the colours (red is seat 0); colours missing below the highest one are kicked
    players; missing cells at the end of short rows are holes.

    Raises:
        IllegalAction: the data is not a State, or breaks the game's invariants (fish.malformed).
    """
    try:
        parsed = msgspec.convert(data, StateJSON)
    except msgspec.ValidationError as error:
        raise IllegalAction(FishRule.MALFORMED, f"not a Fish state: {error}") from None
    if phase not in ("place", "move"):
        raise ValueError(f"a state is sent to place or to move, not to {phase!r}")
    seats = [COLORS.index(player.color) for player in parsed.players]
    width = max((len(row) for row in parsed.board), default=0)
    board = tuple(tuple(row) + (0,) * (width - len(row)) for row in parsed.board)
    problems = []
    if len(set(seats)) != len(seats) or not 1 <= len(seats) <= 4:
        problems.append("1 to 4 players of different colours")
    if any(not 0 <= fish <= MAX_FISH for row in board for fish in row):
        problems.append(f"0 to {MAX_FISH} fish a tile")
    places = [tuple(p) for player in parsed.players for p in player.places]
    if len(set(places)) != len(places) or any(not _on(board, p) or board[p[0]][p[1]] == 0 for p in places):
        problems.append("penguins on different tiles of the board, none on a hole")
    if any(player.score < 0 for player in parsed.players):
        problems.append("scores of 0 or more")
    if problems:
        raise IllegalAction(FishRule.MALFORMED, "a Fish state needs " + ", ".join(problems))
    count = max(seats) + 1
    penguins: list[tuple[Position, ...]] = [()] * count
    scores = [0] * count
    for seat, player in zip(seats, parsed.players, strict=True):
        penguins[seat] = tuple((r, c) for r, c in player.places)
        scores[seat] = player.score
    state = FishState(
        options=FishOptions(rows=len(board), columns=width),
        names=COLORS[:count],
        board=board,
        ages=tuple(0 if seat in seats else None for seat in range(count)),
        order=tuple(seats),
        penguins=tuple(penguins),
        scores=tuple(scores),
        removed=tuple(seat for seat in range(count) if seat not in seats),
        phase=phase,
    )
    return _settle(state)


def _from_position(text: str, options: FishOptions, names: tuple[str, ...]) -> FishState:
    """The state a `--position` text (the course's State JSON) describes, for a table of `names`.

    Raises:
        UsageError: (usage.position) not a State, or not one this table can play on from.
    """

    def refuse(message: str) -> UsageError:
        return UsageError(f"a Fish position: {message}", code="usage.position")

    try:
        data = msgspec.json.decode(text)
        parsed = msgspec.convert(data, StateJSON)
    except msgspec.ValidationError as error:
        raise refuse(f"not the course's State ({error})") from None
    except msgspec.DecodeError as error:
        raise refuse(f"not JSON ({error})") from None
    players = len(names)
    each = 6 - players
    counts = [len(player.places) for player in parsed.players]
    colours = [COLORS.index(player.color) for player in parsed.players]
    if not parsed.board or not 1 <= len(parsed.board) * max(map(len, parsed.board)) <= 400:
        raise refuse("the board has 1 to 400 tiles")
    if len(parsed.players) < 2 or max(colours) + 1 != players:
        raise refuse(
            f"the match has {players} seats, so the State has two players or more and its highest colour is "
            f"{COLORS[players - 1]} (seat {players - 1})"
        )
    if any(count > each for count in counts):
        raise refuse(f"with {players} players each has {each} penguins, not more")
    phase = "move" if all(count == each for count in counts) else "place"
    if phase == "place" and counts[0] == each:
        raise refuse("the player to act (the first in the State) has no penguin left to place")
    try:
        state = state_from_json(data, phase=phase)
    except IllegalAction as error:
        raise refuse(error.message) from None
    if state.over:
        raise refuse("nobody can move: the game is over")
    board_options = msgspec.structs.replace(options, rows=len(state.board), columns=len(state.board[0]))
    return msgspec.structs.replace(state, options=board_options, names=names)


ENGINE = Fish()
