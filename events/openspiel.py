"""The events of OpenSpiel's games, recorded through matchlog's bridge (`engines.openspiel`).

Every game of the family shares them: a seat's action and chance's outcome, each OpenSpiel's own
action number, which the game's state reads back. In a game with imperfect information a seat
sees another's action and chance's outcomes only as stand-ins (`ActionHidden`, `ChanceHidden`,
view-only): what it learns of them is what OpenSpiel's own information state tells it.
"""

from __future__ import annotations

from .base import Event

__all__ = ["EVENTS", "ActionHidden", "ActionTaken", "ChanceDrawn", "ChanceHidden"]


class ActionTaken(Event, tag="openspiel.action_taken"):
    """`seat` took OpenSpiel's action number `action`."""

    seat: int
    action: int

    @property
    def actor(self) -> int | None:
        return self.seat


class ChanceDrawn(Event, tag="openspiel.chance_drawn"):
    """Chance's outcome `outcome` (OpenSpiel's action number at a chance node), drawn from the
    referee's committed seed."""

    outcome: int


class ActionHidden(Event, tag="openspiel.action_hidden"):
    """What another seat sees of `seat`'s action in a game with imperfect information: that it
    acted (only views hold this)."""

    view_only = True

    seat: int

    @property
    def actor(self) -> int | None:
        return self.seat


class ChanceHidden(Event, tag="openspiel.chance_hidden"):
    """What a seat sees of chance's outcome in a game with imperfect information: that chance
    acted (only views hold this)."""

    view_only = True


EVENTS: tuple[type[Event], ...] = (ActionTaken, ChanceDrawn, ActionHidden, ChanceHidden)
