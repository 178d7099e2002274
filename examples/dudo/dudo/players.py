"""Dudo's built-in player beside matchlog's generic `random`: `counter`, who counts.

A player is any object with `act(decision) -> answer` (matchlog's generic protocol): `decision.view`
is the state as its seat sees it (its own dice, the others' cups down), `decision.legal` the answers
the rules allow: `[quantity, face]` bids and `"dudo"`.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["Counter"]


class Counter:
    """Expects a sixth of the dice it cannot see to show any face: doubts a bid above what it
    expects, else raises as little as it can on the face it holds most of."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def act(self, decision: Any) -> Any:
        view = decision.view
        mine = view["dice"][decision.seat]
        unseen = sum(len(cup) == 0 for cup in view["dice"]) * view["options"]["dice"]
        bid = view["bid"]
        if bid is not None and bid[1] > mine.count(bid[2]) + unseen / 6 + 0.5 and "dudo" in decision.legal:
            return "dudo"
        best = max(range(1, 7), key=lambda face: (mine.count(face), face))
        raises = [answer for answer in decision.legal if answer != "dudo" and answer[1] == best]
        return raises[0] if raises else "dudo"
