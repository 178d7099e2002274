"""Dudo for learners: a hand as one seat sees it, as a fixed-shape tensor, and its answers as
indices into a fixed action space (matchlog's `Encoding`), so `matchlog dataset` writes Dudo's
matches and a learner reads the same tensors in an environment.

The tensor is made from the seat's view (the engine's `view`): under a cup it has only its own
dice, so nothing in it tells another seat's dice until the doubt lifts every cup.
"""

from __future__ import annotations

from typing import Any

from matchlog.engines.encodings import NO_ACTION, place_reward
from matchlog.events import Event, Outcome, UsageError

from .engine import FACES, DudoState
from .events import BidMade, Doubted

__all__ = ["ENCODING", "DudoEncoding"]

#: Seats a table can have (a smaller table leaves its slots empty).
_SEATS = 4


def _one_hot(size: int, index: int | None) -> list[float]:
    hot = [0.0] * size
    if index is not None and 0 <= index < size:
        hot[index] = 1.0
    return hot


def _faces(dice: Any) -> list[float]:
    """How many of `dice` show each face 1..6."""
    return [float(sum(die == face for die in dice)) for face in range(1, FACES + 1)]


class DudoEncoding:
    """Dudo for up to four seats, each with `dice` dice (the match's option).

    Observation, 41 values (0 to all the dice on the table): the seat itself (one-hot, 4), the seats
    at the table (4), the seats removed (4), its own dice counted by face (6), the last bid (there is
    one, its bidder one-hot 4, its quantity, its face one-hot 6: 12), whose turn it is (one-hot, 4),
    whether the cups are lifted, and then every die on the table counted by face (1 + 6).

    Actions, 6 × (all the dice) + 1: a bid of `quantity` dice showing `face` is
    (quantity - 1) × 6 + (face - 1); a doubt ("dudo!") is the last index.
    """

    game = "dudo"

    def shape(self, start: DudoState) -> tuple[int, ...]:
        return (41,)

    def bounds(self, start: DudoState) -> tuple[float, float]:
        return 0.0, float(max(FACES, start.total))

    def observe(self, view: DudoState, seat: int) -> list[float]:
        bidder, quantity, face = view.bid if view.bid is not None else (None, 0, None)
        lifted = view.doubter is not None
        return [
            *_one_hot(_SEATS, seat),
            *(float(s < view.players) for s in range(_SEATS)),
            *(float(s in view.removed) for s in range(_SEATS)),
            *_faces(view.dice[seat]),
            float(view.bid is not None),
            *_one_hot(_SEATS, bidder),
            float(quantity),
            *_one_hot(FACES, None if face is None else face - 1),
            *_one_hot(_SEATS, None if view.over else view.turn),
            float(lifted),
            *(_faces([die for cup in view.dice for die in cup]) if lifted else [0.0] * FACES),
        ]

    def actions(self, start: DudoState) -> int:
        return FACES * start.total + 1

    def action_of(self, view: DudoState, event: Event) -> int:
        match event:
            case BidMade(quantity=quantity, face=face) if 1 <= quantity <= view.total and 1 <= face <= FACES:
                return (quantity - 1) * FACES + face - 1
            case Doubted():
                return FACES * view.total
        return NO_ACTION

    def event_of(self, view: DudoState, seat: int, index: int) -> Event:
        doubt = FACES * view.total
        if not 0 <= index <= doubt:
            raise UsageError(f"action {index} is not in the action space (0 to {doubt})", code="usage.action")
        if index == doubt:
            return Doubted(seat=seat)
        quantity, face = divmod(index, FACES)
        return BidMade(seat=seat, quantity=quantity + 1, face=face + 1)

    def reward(self, outcome: Outcome, seat: int) -> float:
        return place_reward(outcome, seat)


#: What `dudo.game.GAME` brings as its encoding.
ENCODING = DudoEncoding()
