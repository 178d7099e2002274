"""Dudo's events: dice rolled behind each player's cup, bids said aloud, and the doubt that ends it.

`DiceRolled` is chance's, and only its own seat sees the dice (the others see `DiceHidden`, a
view-only stand-in); bids and the doubt are public. Every tag is under the game's name.
"""

from __future__ import annotations

from matchlog.events import Event

__all__ = ["EVENTS", "BidMade", "DiceHidden", "DiceRolled", "Doubted"]


class DiceRolled(Event, tag="dudo.dice_rolled"):
    """Chance rolled `seat`'s dice under its cup."""

    seat: int
    dice: tuple[int, ...]


class DiceHidden(Event, tag="dudo.dice_hidden"):
    """What the other seats see of `seat`'s roll: that it rolled (only views hold this)."""

    view_only = True

    seat: int


class BidMade(Event, tag="dudo.bid_made"):
    """`seat` said there are at least `quantity` dice showing `face` under all the cups."""

    seat: int
    quantity: int
    face: int

    @property
    def actor(self) -> int | None:
        return self.seat


class Doubted(Event, tag="dudo.doubted"):
    """`seat` said "dudo!" (I doubt it) to the last bid: the cups are lifted and the hand is over."""

    seat: int

    @property
    def actor(self) -> int | None:
        return self.seat


EVENTS: tuple[type[Event], ...] = (DiceRolled, DiceHidden, BidMade, Doubted)
