"""Porrinha's events: hidden hands, spoken guesses, and the referee's lenient rulings.

A round is every active player's `HandChosen` (hidden until the round settles), then every
`GuessMade` in turn; the engine settles the round when the last guess is in, so settlement is a
consequence of the log rather than a fact of its own.
"""

from __future__ import annotations

from .base import Event

__all__ = ["EVENTS", "GuessMade", "GuessVoided", "HandChosen", "HandHidden", "HandReset"]


class HandChosen(Event, tag="porrinha.hand_chosen"):
    """A player closed its hand on `hand` chopsticks (hidden from the others until the round settles)."""

    seat: int
    hand: int

    @property
    def actor(self) -> int | None:
        return self.seat


class HandReset(Event, tag="porrinha.hand_reset"):
    """Lenient ruling: the seat's invalid hand counts as 0 chopsticks.

    Recorded only in logs written before views denied by default (an earlier form of 0.1.0): the
    others could count it (a rejected hand took two events, a valid one one). Now the lenient
    policy is a consequence of the `AnswerRejected` itself, which the others see as one
    `HandHidden` like any hand; old logs still replay.
    """

    seat: int


class HandHidden(Event, tag="porrinha.hand_hidden"):
    """What another seat sees of a hand before the round settles. Only views contain it, never the log."""

    view_only = True

    seat: int

    @property
    def actor(self) -> int | None:
        return self.seat


class GuessMade(Event, tag="porrinha.guess_made"):
    """A player said its guess of the total."""

    seat: int
    guess: int

    @property
    def actor(self) -> int | None:
        return self.seat


class GuessVoided(Event, tag="porrinha.guess_voided"):
    """Lenient ruling: the seat's guess this round is INVALID_GUESS and cannot win."""

    seat: int


EVENTS: tuple[type[Event], ...] = (HandChosen, HandReset, HandHidden, GuessMade, GuessVoided)
