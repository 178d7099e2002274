"""The duel statistics against published worked examples (replay/sprt.py).

The formulas are fishtest's (official-stockfish/fishtest, server/fishtest/stats/LLRcalc.py and
stat_util.py). The numbers are the worked examples that fastchess publishes as its tests of the
same formulas (Disservin/fastchess, app/tests/sprt_test.cpp and app/tests/elo_test.cpp: each
within 1%), and the ones fishtest's and the `pentanomial` project's (vdbergh/pentanomial,
LLRcalc.py) code gives for fishtest's own example in stat_util.py (computed with that code).
Their counts are (LL, LD, WL, DD, WD, WW) pairs; ours are pairs scoring 0, ½, 1, 1½, 2 points.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchlog.events import UsageError
from matchlog.replay.sprt import Sprt, elo_of_score, estimate, llr, score_of_elo


def pairs(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> list[int]:
    """fastchess's pentanomial Stats(ll, ld, wl, dd, wd, ww) as counts by pair score."""
    return [ll, ld, wl + dd, wd, ww]


def games(wins: int, losses: int, draws: int) -> list[int]:
    """fastchess's trinomial Stats(wins, losses, draws) as counts by game score."""
    return [losses, draws, wins]


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "model", "expected"),
    [
        (games(36433, 36027, 68692), 0, 2, "normalized", 0.92),
        (games(10871, 10650, 20431), -1.75, 0.25, "normalized", 2.30),
        (games(4250, 0, 0), 0, 10, "normalized", 120.56),
        (games(21404, 21184, 40708), 0.5, 2.5, "logistic", -1.57),
        (games(57433, 57030, 106593), 0, 2, "logistic", -2.59),
        (pairs(365, 16618, 36029, 200, 16974, 390), 0, 2, "normalized", 2.25),
        (pairs(127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
        (pairs(0, 0, 0, 0, 0, 5550), 0, 5, "normalized", 111.82),
        (pairs(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
        (pairs(871, 26175, 55003, 980, 26678, 821), 0, 2, "logistic", -4.98),
    ],
)
def test_the_llr_is_the_published_one(counts: list[int], elo0: float, elo1: float, model: str, expected: float) -> None:
    assert llr(counts, elo0, elo1, model=model) == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize(
    ("counts", "games_per_set", "score", "elo", "elo_error", "nelo", "nelo_error", "los"),
    [
        (pairs(34, 54, 31, 32, 64, 75), 2, 0.579, 55.58, 27.65, 57.94, 28.28, 1.0000),
        (pairs(332, 433, 457, 41, 333, 334), 2, 0.488, -8.64, 10.33, -9.17, 10.96, 0.0505),
        (pairs(7895, 8757, 5485, 200, 568, 9999), 2, 0.470, -21.04, 2.95, -19.01, 2.65, 0.0000),
        (games(136, 96, 111), 1, 0.558, 40.70, 30.43, 49.77, 36.77, 0.9960),
        (games(76, 89, 123), 1, 0.477, None, None, -20.76, 40.13, 0.1553),
    ],
)
def test_elo_its_interval_and_los_are_the_published_ones(
    counts: list[int],
    games_per_set: int,
    score: float,
    elo: float | None,
    elo_error: float | None,
    nelo: float,
    nelo_error: float,
    los: float,
) -> None:
    found = estimate(counts, games_per_set=games_per_set)
    assert found.score == pytest.approx(score, abs=0.0005)
    if elo is not None:
        assert found.elo == pytest.approx(elo, rel=0.01)
        assert found.elo_error == pytest.approx(elo_error, rel=0.01)
    assert found.nelo == pytest.approx(nelo, rel=0.01)
    assert found.nelo_error == pytest.approx(nelo_error, rel=0.01)
    assert found.los == pytest.approx(los, abs=0.00005)  # fastchess prints LOS to 0.01%
    assert found.elo_low < found.elo < found.elo_high


def test_fishtests_own_example_and_the_pentanomial_projects_code_agree() -> None:
    # stat_util.py's example run: pentanomial [10789, 19328, 33806, 19402, 10543], SPRT(-3, 1), logistic.
    counts = [10789, 19328, 33806, 19402, 10543]
    value = llr(counts, -3, 1)
    # Computed with fishtest's LLRcalc.LLR_logistic and the pentanomial project's LLRcalc.LLR_logistic
    # (both scipy's brentq on the same secular equation, at fishtest b8eecff2 and pentanomial d046e74a).
    assert value == pytest.approx(2.13107, abs=1e-4)
    # Its approximation from the variance alone (LLR_alt2 in both) is close, as the notes say.
    n = sum(counts)
    values = [i / 4 for i in range(5)]
    mean = sum(c * v for c, v in zip(counts, values, strict=True)) / n
    variance = sum(c * (v - mean) ** 2 for c, v in zip(counts, values, strict=True)) / n
    s0, s1 = score_of_elo(-3), score_of_elo(1)
    assert value == pytest.approx(n * (s1 - s0) * (2 * mean - s0 - s1) / variance / 2, rel=0.01)


def test_wald_bounds_are_2_94_for_five_percent_errors() -> None:
    sprt = Sprt.parse("elo0=0,elo1=5,alpha=0.05,beta=0.05")
    assert (round(sprt.lower, 2), round(sprt.upper, 2)) == (-2.94, 2.94)
    assert sprt.verdict(2.95) == "H1" and sprt.verdict(-2.95) == "H0" and sprt.verdict(0.0) is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "elo0=0",
        "elo1=5",
        "elo0=5,elo1=0",
        "elo0=0,elo1=5,alpha=0",
        "elo0=0,elo1=5,alpha=0.6,beta=0.5",
        "elo0=0,elo1=5,gamma=1",
        "elo0=x,elo1=5",
        "elo0=0,elo1=nan",
        "elo0=0,elo1=5,model=bayes",
        "elo0=0,elo0=1,elo1=5",
    ],
)
def test_a_test_that_makes_no_sense_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as error:
        Sprt.parse(text)
    assert error.value.code == "usage.sprt"


def test_a_player_that_won_every_pair_has_a_finite_elo_and_a_decided_test() -> None:
    found = estimate([0, 0, 0, 0, 12])
    assert math.isfinite(found.elo) and found.elo_low > 0
    value = llr([0, 0, 0, 0, 12], 0, 100)
    assert value == pytest.approx(2.96395, abs=1e-4)  # fishtest's LLR_logistic(0, 100, [0, 0, 0, 0, 12])
    assert Sprt(elo0=0, elo1=100).verdict(value) == "H1"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=500), min_size=5, max_size=5).filter(lambda c: sum(c) > 0))
def test_the_llr_is_antisymmetric_and_the_estimate_mirrors(counts: list[int]) -> None:
    # Swapping the players mirrors the counts: the Elo changes sign, the LLR of the mirrored test too.
    mirrored = counts[::-1]
    assert llr(counts, -5, 5) == pytest.approx(-llr(mirrored, -5, 5), abs=1e-6)
    a, b = estimate(counts), estimate(mirrored)
    assert a.elo == pytest.approx(-b.elo, abs=1e-6) and a.los == pytest.approx(1 - b.los, abs=1e-9)
    assert elo_of_score(score_of_elo(a.elo)) == pytest.approx(a.elo, abs=1e-6)
