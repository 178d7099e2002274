"""Every format round-trips: export a random match, import the text, export again: the same text.

Matches are played by the built-in players from hypothesis's seeds; each imported match is judged
by the engine and audited on the way in, and ends in the state the original ended in.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from matchlog.engines import get as get_engine
from matchlog.events import Record
from matchlog.formats import export, read
from matchlog.referee.play import play_match
from matchlog.referee.players import make_player, seats_from_specs
from matchlog.replay import audit_records, fold

seeds = st.integers(min_value=0, max_value=2**32)


def _match(game: str, specs: list[str], seed: int, options: dict[str, Any] | None = None) -> list[Record]:
    seats = seats_from_specs(game, specs)
    rng = random.Random(seed)
    players = [make_player(game, seat.player, random.Random(rng.randrange(2**32))) for seat in seats]
    result = play_match(game, seats, players, options=options, seed=seed)
    return result.recorder.records(result.match_id)


def _round_trip(records: list[Record], format: str) -> list[Record]:
    """Export, import and export again; returns the imported match's records."""
    text = export(records, format)
    [imported] = read(text.encode(), format)
    again = imported.records()
    assert export(again, format) == text
    assert audit_records(again).passed
    return again


@settings(max_examples=12)
@given(
    seed=seeds,
    players=st.lists(st.sampled_from(["heuristic", "random"]), min_size=2, max_size=2),
    opening_played=st.booleans(),
    rules=st.sampled_from(["standard", "pygammon"]),
)
def test_backgammon_round_trips_through_mat_and_sgf(
    seed: int, players: list[str], opening_played: bool, rules: str
) -> None:
    records = _match("backgammon", players, seed, {"move_by_turn_rolls": opening_played, "rules": rules})
    engine = get_engine("backgammon")
    for format in ("mat", "sgf"):
        again = _round_trip(records, format)
        assert engine.render(fold(again)) == engine.render(fold(records))
        assert audit_records(again).checked["chance_rederived"] > 0  # the seed travels with the record


@given(
    seed=seeds,
    count=st.integers(min_value=2, max_value=4),
    board=st.sampled_from([{}, {"rows": 3, "columns": 4, "fish": 2}, {"random_board": True, "holes": 3}]),
)
def test_fish_round_trips_through_the_courses_states(seed: int, count: int, board: dict[str, Any]) -> None:
    players = [random.Random(seed + i).choice(["random", "maximin:1"]) for i in range(count)]
    records = _match("fish", players, seed, board)
    again = _round_trip(records, "fish-state")
    original = fold(records)
    imported = fold(again)
    assert (imported.board, imported.penguins, imported.scores) == (original.board, original.penguins, original.scores)
    assert again[-1].event == records[-1].event  # the same outcome


@given(seed=seeds, count=st.integers(min_value=2, max_value=5), policy=st.sampled_from(["lenient", "strict"]))
def test_porrinha_round_trips_through_text_to_the_same_events(seed: int, count: int, policy: str) -> None:
    players = [random.Random(seed + i).choice(["random", "reasoner"]) for i in range(count)]
    records = _match("porrinha", players, seed, {"policy": policy, "chopsticks": 1 + seed % 3})
    again = _round_trip(records, "text")
    assert [r.event for r in again] == [r.event for r in records]


@given(seed=seeds, count=st.integers(min_value=2, max_value=4), jokers=st.booleans())
def test_davinci_round_trips_through_text_to_the_same_events(seed: int, count: int, jokers: bool) -> None:
    players = [random.Random(seed + i).choice(["random", "seed-ai"]) for i in range(count)]
    records = _match("davinci", players, seed, {"jokers": jokers})
    again = _round_trip(records, "text")
    assert [r.event for r in again] == [r.event for r in records]
    assert again[0].at_us == records[0].at_us  # the Date tag keeps the time to the microsecond
