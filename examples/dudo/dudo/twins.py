"""Dudo's twin maker for matchlog's view test (`matchlog.testing.Contract.twins`): matches that
differ from a given one only in what one reader may not know, another seat's dice under its cup."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import msgspec

from matchlog.events import Record

from .events import DiceRolled, Doubted

__all__ = ["twins"]


def twins(records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[tuple[list[Record], int]]:
    """For a reader that is `seat` (None: a spectator): the match with another seat's dice rolled
    otherwise, comparable up to the doubt that lifts the cups."""
    lifted = next((r.seq for r in records if isinstance(r.event, Doubted)), len(records))
    for record in records[:lifted]:
        event = record.event
        if isinstance(event, DiceRolled) and event.seat != seat:
            dice = tuple(rng.randint(1, 6) for _ in event.dice)
            if dice == event.dice:
                continue
            other = DiceRolled(seat=event.seat, dice=dice)
            twin = [msgspec.structs.replace(r, event=other) if r.seq == record.seq else r for r in records[:lifted]]
            yield twin, lifted
