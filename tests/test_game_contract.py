"""Our games pass the contract kit (`matchlog.testing`), the same one a game from another package
runs in its own suite: random playouts audit clean, every event type round-trips through the
codec, folding is deterministic, every event type declares its views, bad answers get rulings, and
the twin-match view test with each game's own twins."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

from matchlog.events import Record
from matchlog.testing import Contract, Twin

from .twins import played, twins

SAMPLES = Path(__file__).parent / "fixtures" / "events"


class OurGame(Contract):
    """Our games as the kit plays them, with the twins `twins.py` makes (shared with every test
    that compares what a reader gets) and the event samples matchlog keeps."""

    samples = SAMPLES

    def played(self, seed: int) -> list[Record]:
        return played(self.game, seed)

    def twins(self, records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[Twin]:
        return twins(records, seat, rng)


class TestPorrinha(OurGame):
    game = "porrinha"
    tables = (2, 3, 5)


class TestBackgammon(OurGame):
    game = "backgammon"
    seeds = range(3)


class TestDavinci(OurGame):
    game = "davinci"
    tables = (2, 4)


class TestFish(OurGame):
    game = "fish"
    tables = (2, 4)
    seeds = range(4)
