"""A knockout tournament's own events: each game it played and who came out of it. The games
themselves are matches of their own in the same log; a game here names its match."""

from __future__ import annotations

from .base import Event

__all__ = ["EVENTS", "KnockoutGamePlayed"]


class KnockoutGamePlayed(Event, tag="knockout.game_played"):
    """The tournament played one game of the round: `match_id` is that match in the log; `seats`,
    `winners` and `removed` are tournament seats (sign-up order); `result` is the match's result
    ("normal", or "abandoned" when it never finished, which sends nobody on)."""

    match_id: str
    seats: tuple[int, ...]
    winners: tuple[int, ...]
    removed: tuple[int, ...] = ()
    result: str = "normal"


EVENTS: tuple[type[Event], ...] = (KnockoutGamePlayed,)
