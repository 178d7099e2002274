"""Drawing models: what the viewer needs to draw a board, taken from a state as one reader sees it.

The viewer draws, it does not judge. For every seq it gets a small model of the board from here
(points and checkers, hexes and penguins, hands and guesses, rows of tiles) and one small script
per game turns that model into SVG. Each model is a pure function of a state that has already
been through the game's `view`: it copies what the view kept and works out nothing the view did
not show (a hidden tile stays a colour, another seat's hand stays None), so a reader's board can
never hold more than `--as-seat` shows. The models are tagged by the game's name (`game`), and go
to the browser as JSON.

Each game brings its own (`Game.board`, with its `board_type`); ours are here. A game that brings
none is drawn as a `TextBoard`: its state as text (the engine's `render` of the reader's view),
which the viewer shows beside the event list.
"""

from __future__ import annotations

import threading
from typing import Any, Union

import msgspec

from matchlog.events import plugins

from . import backgammon, backgammon_notation, davinci, fish, knockout, porrinha

__all__ = [
    "AnyBoard",
    "BackgammonBoard",
    "Board",
    "DavinciBoard",
    "DavinciGuess",
    "DavinciTile",
    "FishBoard",
    "KnockoutBoard",
    "PorrinhaBoard",
    "PorrinhaGuess",
    "PorrinhaRound",
    "TextBoard",
    "backgammon_board",
    "board",
    "davinci_board",
    "fish_board",
    "knockout_board",
    "porrinha_board",
]


class BackgammonBoard(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="backgammon"):
    """Points in pygammon's indexing (+n: n of seat 0's checkers, -n: seat 1's), the number each
    seat reads on each of them (`labels[seat][index]`, 1..24 from its home, the words `replay` uses),
    the bar, the borne-off checkers and pip counts by seat, the dice of the turn with those played,
    and match play: the cube (its value and holder, -1 the middle; `cube_in_play` when the match
    has one), a double offered and not yet answered, a resignation offered (seat, value)."""

    names: tuple[str, ...]
    points: tuple[int, ...]
    labels: tuple[tuple[int, ...], tuple[int, ...]]
    bar: tuple[int, int]
    off: tuple[int, int]
    pips: tuple[int, int]
    side: int  # the seat on turn; -1 before the opening roll
    dice: tuple[int, ...]
    played: tuple[int, ...]  # indices into `dice`
    opening: tuple[int, int] | None
    turns: int
    winner: int
    removed: tuple[int, ...]
    cube: int = 1
    cube_owner: int = -1
    cube_in_play: bool = False
    doubled: bool = False
    resigning: tuple[int, int] | None = None


class FishBoard(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="fish"):
    """The tiles by (row, column) with their fish (0: a hole), where each seat's penguins stand,
    each seat's colour and score, the play order, and the phase."""

    names: tuple[str, ...]
    colours: tuple[str, ...]
    tiles: tuple[tuple[int, ...], ...]
    penguins: tuple[tuple[tuple[int, int], ...], ...]
    scores: tuple[int, ...]
    ages: tuple[int | None, ...]
    order: tuple[int, ...]
    removed: tuple[int, ...]
    phase: str


class PorrinhaGuess(msgspec.Struct, frozen=True):
    """A guess made this round: the seat and its number (None: an invalid guess, void)."""

    seat: int
    guess: int | None


class PorrinhaRound(msgspec.Struct, frozen=True, kw_only=True):
    """The last settled round, hands shown: per seat its hand and guess (None: did not play, or
    an invalid guess), the total and who guessed it (-1: nobody)."""

    hands: tuple[int | None, ...]
    guesses: tuple[int | None, ...]
    total: int
    winner: int


class PorrinhaBoard(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="porrinha"):
    """Chopsticks per seat, the hands this reader may see (None: closed or not chosen), this
    round's guesses in the order they were made, the guessing order, and the last round shown."""

    names: tuple[str, ...]
    chopsticks: tuple[int, ...]
    hands: tuple[int | None, ...]
    guesses: tuple[PorrinhaGuess, ...]
    order: tuple[int, ...]
    round: int
    first_guesser: int
    out: tuple[int, ...]
    removed: tuple[int, ...]
    last: PorrinhaRound | None


class DavinciTile(msgspec.Struct, frozen=True, kw_only=True):
    """One tile as this reader sees it: its colour (0 black, 1 white) always; its number or that it
    is a joker only when `known`; `revealed` when it is turned up for everyone."""

    colour: int
    number: int | None = None
    joker: bool = False
    revealed: bool = False
    known: bool = False


class DavinciGuess(msgspec.Struct, frozen=True, kw_only=True):
    """The last guess: who guessed which seat's tile at which position, the number said (None: a
    joker), and whether it was right."""

    seat: int
    target: int
    position: int
    number: int | None
    right: bool


class DavinciBoard(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="davinci"):
    """Each seat's row of tiles in its order, the pile (top first), jokers drawn and not yet placed,
    the seat on turn and where the tile it drew sits, the phase, and the last guess."""

    names: tuple[str, ...]
    rows: tuple[tuple[DavinciTile, ...], ...]
    pile: tuple[DavinciTile, ...]
    pending: tuple[tuple[int, DavinciTile], ...]
    turn: int
    drawn: int
    phase: str
    out: tuple[int, ...]
    removed: tuple[int, ...]
    last: DavinciGuess | None
    jokers: bool


class KnockoutBoard(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="knockout"):
    """A knockout: the game it `plays`, the round, its tables (seats), how many of them have played,
    who is still in, the round each seat went out after (0: still in), the games so far (match
    ids), and the winners once it is over."""

    names: tuple[str, ...]
    plays: str
    round: int
    tables: tuple[tuple[int, ...], ...]
    played: int
    active: tuple[int, ...]
    out_after: tuple[int, ...]
    removed: tuple[int, ...]
    games: tuple[str, ...]
    phase: str
    winners: tuple[int, ...]


class TextBoard(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="text"):
    """The board of a game that brings no drawing of its own: its name, and its state as text
    (the engine's `render` of the state as the reader sees it)."""

    name: str
    text: str


#: Our games' drawing models (a game's own `board_type` joins them in `AnyBoard`).
Board = BackgammonBoard | FishBoard | PorrinhaBoard | DavinciBoard | KnockoutBoard | TextBoard


def board(game: Any, state: Any) -> msgspec.Struct:
    """The drawing model of `state` (as one reader sees it) of `game` (a `Game`): its own, or its
    state as text."""
    if game.board is not None:
        return game.board(state)
    return TextBoard(name=game.name, text=game.engine.render(state))


#: Every drawing model of the games loaded (what a frame's `board` decodes to), built at first use.
AnyBoard: Any
_union: Any = None
_building = threading.Lock()


def _forget() -> None:
    global _union
    _union = None


plugins.on_reload(_forget)


def __getattr__(name: str) -> Any:
    # AnyBoard is every drawing model of the games loaded (what a frame's `board` decodes to):
    # computed when first asked for, as the codec's vocabulary is.
    global _union
    if name != "AnyBoard":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _union is None:
        with _building:
            kinds = {TextBoard}
            kinds.update(
                found.board_type for found in plugins.load().games.values() if getattr(found, "board_type", None)
            )
            _union = Union[tuple(sorted(kinds, key=lambda kind: kind.__name__))]  # noqa: UP007
    return _union


def backgammon_board(state: backgammon.BackgammonState) -> BackgammonBoard:
    return BackgammonBoard(
        names=state.names,
        points=state.points,
        labels=(backgammon_notation.labels(backgammon.FIRST), backgammon_notation.labels(backgammon.SECOND)),
        bar=state.bar,
        off=state.off,
        pips=(backgammon.pips(state, backgammon.FIRST), backgammon.pips(state, backgammon.SECOND)),
        side=state.side,
        dice=state.dice,
        played=state.played,
        opening=state.opening,
        turns=state.turns,
        winner=state.winner,
        removed=state.removed,
        cube=state.cube,
        cube_owner=state.owner,
        cube_in_play=state.options.cube or state.cube > 1,
        doubled=state.doubled,
        resigning=state.resigning,
    )


def fish_board(state: fish.FishState) -> FishBoard:
    players = len(state.names)
    return FishBoard(
        names=state.names,
        colours=fish.COLORS[:players],
        tiles=state.board,
        penguins=state.penguins or ((),) * players,
        scores=state.scores or (0,) * players,
        ages=state.ages or (None,) * players,
        order=state.order,
        removed=state.removed,
        phase=state.phase,
    )


def porrinha_board(state: porrinha.PorrinhaState) -> PorrinhaBoard:
    # This round's guesses in the order they are made: around the table from the first guesser.
    made = tuple(
        PorrinhaGuess(seat, None if guess == porrinha.INVALID_GUESS else guess)
        for seat in state.order()
        if (guess := state.guesses[seat]) not in (porrinha.PENDING_GUESS, porrinha.NOT_PLAYING)
    )
    last = None
    if state.last_hands:
        last = PorrinhaRound(
            hands=tuple(None if hand == porrinha.NO_HAND else hand for hand in state.last_hands),
            guesses=tuple(guess if guess >= 0 else None for guess in state.last_guesses),
            total=state.last_total,
            winner=state.last_winner,
        )
    return PorrinhaBoard(
        names=state.names,
        chopsticks=state.chopsticks,
        hands=tuple(None if hand is None or hand == porrinha.CLOSED_HAND else hand for hand in state.hands),
        guesses=made,
        order=() if state.over else state.order(),
        round=state.round,
        first_guesser=state.first_guesser,
        out=state.out,
        removed=state.removed,
        last=last,
    )


def _tile(tile: int, *, revealed: bool = False) -> DavinciTile:
    """A tile code as the view left it: a HIDDEN marker (negative) keeps only its colour."""
    if tile < 0:
        return DavinciTile(colour=davinci.colour(tile), revealed=revealed)
    return DavinciTile(
        colour=davinci.colour(tile),
        number=davinci.number(tile),
        joker=tile in davinci.JOKERS,
        revealed=revealed,
        known=True,
    )


def davinci_board(state: davinci.DavinciState) -> DavinciBoard:
    last = None
    if state.last is not None:
        seat, target, position, guessed, right = state.last
        last = DavinciGuess(seat=seat, target=target, position=position, number=guessed, right=right)
    return DavinciBoard(
        names=state.names,
        rows=tuple(
            tuple(_tile(tile, revealed=shown) for tile, shown in zip(row, state.revealed[seat], strict=True))
            for seat, row in enumerate(state.rows)
        ),
        pile=tuple(_tile(tile) for tile in state.pile),
        pending=tuple((seat, _tile(tile)) for seat, tile in state.pending),
        turn=state.turn,
        drawn=state.drawn,
        phase=state.phase,
        out=state.out,
        removed=state.removed,
        last=last,
        jokers=state.options.jokers,
    )


def knockout_board(state: knockout.KnockoutState) -> KnockoutBoard:
    return KnockoutBoard(
        names=state.names,
        plays=state.options.game,
        round=state.round,
        tables=state.groups,
        played=state.played,
        active=state.active,
        out_after=state.out_after,
        removed=state.removed,
        games=state.games,
        phase=state.phase,
        winners=state.winners,
    )
