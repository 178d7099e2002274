"""The referee's committed random source: reproducible from its seed, bound by its commitment,
uniform, and recorded around every match with chance."""

from __future__ import annotations

import hashlib
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines.chance import ALGORITHM, ChanceSource, commitment, seed_for
from matchlog.events import ChanceCommitted, ChanceRevealed, MatchEnded
from matchlog.referee import MemoryRecorder, play_match, seats_from_specs
from matchlog.referee.players import make_player


@given(st.binary(min_size=1, max_size=64))
def test_the_same_seed_gives_the_same_draws_and_another_seed_others(seed: bytes):
    a, b = ChanceSource(seed), ChanceSource(seed)
    draws = [a.randint(1, 6) for _ in range(20)] + [a.random(), a.getrandbits(100)]
    assert draws == [b.randint(1, 6) for _ in range(20)] + [b.random(), b.getrandbits(100)]
    other = ChanceSource(hashlib.sha256(seed).digest())
    assert [other.getrandbits(64) for _ in range(4)] != [ChanceSource(seed).getrandbits(64) for _ in range(4)]


@given(st.lists(st.integers(), max_size=30), st.integers(0, 2**32))
def test_shuffle_and_sample_are_permutations_and_subsets(items: list[int], salt: int):
    source = ChanceSource(salt.to_bytes(8, "big"))
    shuffled = list(items)
    source.shuffle(shuffled)
    assert sorted(shuffled) == sorted(items)
    k = len(items) // 2
    picked = source.sample(list(enumerate(items)), k)
    assert len(picked) == k and len(set(picked)) == k


def test_draws_are_uniform_enough():
    source = ChanceSource(b"uniform")
    counts = Counter(source.randint(1, 6) for _ in range(60_000))
    chi2 = sum((counts[face] - 10_000) ** 2 / 10_000 for face in range(1, 7))
    assert chi2 < 20.5, f"chi-square {chi2:.1f} with 5 degrees of freedom (p < 0.001 above 20.5)"
    assert 0.49 < sum(source.random() for _ in range(20_000)) / 20_000 < 0.51


def test_commitments_bind_the_seed_and_seeds_are_secret_unless_given():
    assert commitment(b"a") != commitment(b"b") and len(commitment(b"a")) == 64
    assert seed_for(7) == seed_for(7) != seed_for(8) and seed_for(None) != seed_for(None)
    with pytest.raises(TypeError):
        ChanceSource(b"x").getstate()


@pytest.mark.parametrize(
    ("game", "specs"),
    [("backgammon", ["random", "random"]), ("fish", ["random", "random"]), ("davinci", ["random", "random"])],
)
def test_a_match_with_chance_commits_first_and_reveals_last(game: str, specs: list[str]):
    seats = seats_from_specs(game, specs)
    recorder = MemoryRecorder()
    play_match(game, seats, [make_player(game, s.player, random.Random(1)) for s in seats], recorder=recorder, seed=3)
    events = [d.event for d in recorder.drafts]
    committed, revealed = events[1], events[-2]
    assert isinstance(committed, ChanceCommitted) and committed.algorithm == ALGORITHM
    assert isinstance(revealed, ChanceRevealed) and isinstance(events[-1], MatchEnded)
    assert commitment(bytes.fromhex(revealed.seed)) == committed.commitment
    assert sum(isinstance(e, ChanceCommitted | ChanceRevealed) for e in events) == 2


def test_a_game_without_chance_commits_to_nothing():
    seats = seats_from_specs("porrinha", ["random", "random"])
    recorder = MemoryRecorder()
    play_match(
        "porrinha", seats, [make_player("porrinha", s.player, random.Random(1)) for s in seats], recorder=recorder
    )
    assert not any(isinstance(d.event, ChanceCommitted | ChanceRevealed) for d in recorder.drafts)
