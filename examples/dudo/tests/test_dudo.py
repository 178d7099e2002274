"""Dudo passes matchlog's contract kit, with its own twins: another seat's dice changed while its
cup is down."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import msgspec
from dudo.events import DiceRolled, Doubted

from matchlog.events import Record
from matchlog.testing import Contract, Twin, playout


def dudo_twins(records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[Twin]:
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


class TestDudo(Contract):
    game = "dudo"
    tables = (2, 3, 4)

    def twins(self, records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[Twin]:
        return dudo_twins(records, seat, rng)


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
