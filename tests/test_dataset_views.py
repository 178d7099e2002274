"""A dataset's rows hold nothing their seat may not know: the twin-match property over step rows.

The machinery is test_views.py's (random matches of every game, and twin matches that differ only
in what one seat may not know then: another seat's hand, a rejected hand counted as 0, one hidden
tile for another, a joker for a numbered tile), imported from there. Every step row a seat gets
before the seq at which it could tell the twins apart must be the same in both. Twins keep the
original's hashes (only events change), so that comparison cannot see a hash; the rule for hashes
is held on its own: a row carries its event's hash and leaf only where its seat sees the event whole.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchlog.engines import GAMES
from matchlog.engines.porrinha import ENGINE as PORRINHA
from matchlog.engines.views import declare, secret
from matchlog.events import HandChosen, HandHidden, Record
from matchlog.replay.steps import decisions
from matchlog.replay.views import seen_whole

from .twins import Twin, davinci_twins, played, porrinha_twins

# What a row says before the match's end: the reward and `terminal` come with the outcome, which
# every seat is shown at the end, and a twin is cut before it.
_UNTIL_THE_END = ("reward", "terminal")


def rows(records: list[Record], seat: int, until: int) -> list[dict[str, Any]]:
    """The step rows `seat` gets of `records` before seq `until`, as plain data (every leaf known)."""
    leaves = {record.seq: 1000 + record.seq for record in records}
    found = []
    for row in decisions(records, seat=seat, leaves=leaves):
        if row.seq < until:
            plain = msgspec.to_builtins(row)
            for name in _UNTIL_THE_END:
                plain.pop(name)
            found.append(plain)
    return found


@pytest.mark.parametrize("game", ["porrinha", "davinci"])
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_no_dataset_row_a_seat_gets_depends_on_what_it_may_not_know(game: str, seed: int):
    records = played(game, seed)
    players = len(records[0].event.seats)  # type: ignore[attr-defined]
    rng = random.Random(seed)
    compared = 0
    for seat in range(players):
        makers: dict[str, Callable[[], Iterator[Twin]]] = {
            "porrinha": lambda: porrinha_twins(records, seat),  # noqa: B023
            "davinci": lambda: davinci_twins(records, seat, rng),  # noqa: B023
        }
        for twin, until in makers[game]():
            assert rows(twin, seat, until) == rows(records, seat, until), f"seat {seat} before seq {until}"
            compared += 1
    assert compared > 0, "no twin was found: the property was not tested"


@pytest.mark.parametrize("game", sorted(set(GAMES) - {"knockout"}))
def test_a_row_carries_its_events_hash_and_leaf_only_where_its_seat_sees_the_event_whole(game: str):
    records = [msgspec.structs.replace(r, hash=bytes([r.seq % 256]) * 32) for r in played(game, 11)]
    leaves = {record.seq: record.seq for record in records}
    players = len(records[0].event.seats)  # type: ignore[attr-defined]
    for seat in range(players):
        whole = seen_whole(records, seat)
        found = decisions(records, seat=seat, leaves=leaves)
        assert found, f"seat {seat} made no decision"
        for row in found:
            assert row.seat == seat
            if row.seq in whole:
                assert (row.hash, row.leaf) == (records[row.seq].hash, row.seq)
            else:
                assert (row.hash, row.leaf) == (None, None)


def test_a_decision_its_own_seat_does_not_see_whole_carries_no_hash_leaf_or_event(monkeypatch: pytest.MonkeyPatch):
    """Were a game to hide a seat's own answer from it, its row would hold the stand-in and no
    provenance: the rule is the views', not an assumption that answers are their seat's."""
    hidden = declare(dict(PORRINHA.views), {HandChosen: secret(lambda event: HandHidden(seat=event.seat))})
    monkeypatch.setattr(PORRINHA, "views", hidden)
    records = [msgspec.structs.replace(r, hash=b"\x01" * 32) for r in played("porrinha", 5)]
    hands = [row for row in decisions(records, leaves={r.seq: r.seq for r in records}) if row.decision == "hand"]
    chosen = [row for row in hands if isinstance(records[row.seq].event, HandChosen)]
    assert chosen
    for row in chosen:
        assert row.event == HandHidden(seat=row.seat)
        assert (row.hash, row.leaf) == (None, None)
