"""Da Vinci Code's events. Tiles are numbered by sequence: tile t shows number t // 2, black when
t is even and white when odd (black 0, white 0, black 1, ...); 24 and 25 are the black and white
jokers. The log holds every tile; what a seat may see of these events is decided by the engine's
view, which turns the hidden ones into `TilesShuffledHidden`, `TileDrawnHidden` and
`TilePlacedHidden`.

With jokers, every drawn tile waits to be placed: a joker by its owner (`JokerPlaced`), a numbered
tile by the referee at its place in order (`TileSorted`). Both look the same to the other seats,
so the number of events never tells them that a tile is a joker.
"""

from __future__ import annotations

from .base import Event

__all__ = [
    "EVENTS",
    "GuessStopped",
    "JokerPlaced",
    "TileDrawn",
    "TileDrawnHidden",
    "TileGuessed",
    "TilePlacedHidden",
    "TileRevealed",
    "TileSorted",
    "TilesShuffled",
    "TilesShuffledHidden",
]


class TilesShuffled(Event, tag="davinci.tiles_shuffled"):
    """The referee shuffled the tiles face down; `order` is the pile, top first. Nobody sees it."""

    order: tuple[int, ...]


class TilesShuffledHidden(Event, tag="davinci.tiles_shuffled_hidden"):
    """What a seat sees of the shuffle: how many tiles. Only views contain it."""

    view_only = True

    count: int


class TileDrawn(Event, tag="davinci.tile_drawn"):
    """`seat` took the top tile of the pile (when dealt, or at the start of its turn)."""

    seat: int
    tile: int


class TileDrawnHidden(Event, tag="davinci.tile_drawn_hidden"):
    """What the others see of a draw: the tile's colour (0 black, 1 white). Only views contain it."""

    view_only = True

    seat: int
    colour: int


class JokerPlaced(Event, tag="davinci.joker_placed"):
    """`seat` put the joker it drew at `position` in its row."""

    seat: int
    position: int

    @property
    def actor(self) -> int | None:
        return self.seat


class TileSorted(Event, tag="davinci.tile_sorted"):
    """With jokers: the numbered tile `seat` drew went to `position`, its place in order (the
    referee's step, as certain as a deal; the owner places only jokers)."""

    seat: int
    position: int


class TilePlacedHidden(Event, tag="davinci.tile_placed_hidden"):
    """What the others see of a drawn tile going into `seat`'s row at `position` (a joker its owner
    placed, or a numbered tile sorted into place: they cannot tell which). Only views contain it."""

    view_only = True

    seat: int
    position: int

    @property
    def actor(self) -> int | None:
        return self.seat


class TileGuessed(Event, tag="davinci.tile_guessed"):
    """`seat` said that `target`'s tile at `position` is `number` (None: a joker)."""

    seat: int
    target: int
    position: int
    number: int | None

    @property
    def actor(self) -> int | None:
        return self.seat


class GuessStopped(Event, tag="davinci.guess_stopped"):
    """After a right guess, `seat` stopped guessing; the tile it drew stays hidden."""

    seat: int

    @property
    def actor(self) -> int | None:
        return self.seat


class TileRevealed(Event, tag="davinci.tile_revealed"):
    """After a wrong guess with no tile drawn (the pile was empty), `seat` turned up its tile at `position`."""

    seat: int
    position: int

    @property
    def actor(self) -> int | None:
        return self.seat


EVENTS: tuple[type[Event], ...] = (
    TilesShuffled,
    TilesShuffledHidden,
    TileDrawn,
    TileDrawnHidden,
    JokerPlaced,
    TileGuessed,
    GuessStopped,
    TileRevealed,
    TileSorted,
    TilePlacedHidden,
)
