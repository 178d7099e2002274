"""Dudo passes matchlog's contract kit, with its own twins (`dudo.twins`): another seat's dice
changed while its cup is down."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from dudo.events import Doubted
from dudo.twins import twins

from matchlog.events import Record
from matchlog.testing import Contract, Twin, playout


class TestDudo(Contract):
    game = "dudo"
    tables = (2, 3, 4)

    def twins(self, records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[Twin]:
        return twins(records, seat, rng)


def test_a_doubt_lifts_the_cups_and_the_bid_decides_who_loses():
    for seed in range(20):
        played = playout("dudo", 2, seed)
        doubt = next((r for r in played.records if isinstance(r.event, Doubted)), None)
        if doubt is None:
            continue
        state = played.state
        bidder, quantity, face = state.bid
        shown = sum(die == face for cup in state.dice for die in cup)
        loser = doubt.event.seat if shown >= quantity else bidder
        outcome = played.records[-1].event.outcome
        assert outcome.places[loser] == 2
        assert outcome.winners == (1 - loser,)
