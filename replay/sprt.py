"""Which of two players is better, and how sure: Elo from paired games and the sequential test.

A duel plays games in sets (a pair with the seats swapped; for a table of K seats, K games with
the seats rotated), and scores each set as one sample: the mean of its games' scores. With two
seats that is the pentanomial model of engine testing (a pair scores 0, ¼, ½, ¾ or 1 of the two
games' points): the seat advantage and the shared chance cancel within a set, so the samples vary
less than single games do and fewer of them decide.

The formulas are fishtest's (`server/fishtest/stats/LLRcalc.py` and `stat_util.py`, after Michel
Van den Bergh's notes "Comparing the approximations for the generalized log likelihood ratio of a
multinomial distribution" and "Comments on normalized Elo"); the code is ours:

- the score and its 95% interval from the variance of the sets, in logistic Elo
  (`elo = -400 log10(1/score - 1)`) and in normalised Elo (the score's distance from ½ in
  standard deviations of one game, times 800 / ln 10);
- LOS, the chance that the first player is the stronger, `Phi((score - ½) / standard error)`;
- the generalised SPRT: the log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0), each
  the maximum-likelihood distribution of the observed counts with that expected score (or, for
  normalised Elo, that t-value), against Wald's bounds `ln(β / (1 - α))` and `ln((1 - β) / α)`.

Empty categories get a count of 1e-3 before anything is computed (fishtest's regularisation), so
a player that won every set still has a finite Elo and a test that can decide.

`llr` and `estimate` are total: whatever they are given, they return finite numbers or raise a
`UsageError` (counts that are no distribution, a hypothesis no distribution of scores has), never
a division by zero or a domain error. A duel's test is refused before it runs when its bounds
reach such a hypothesis (`events.Sprt.check`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from matchlog.events import Sprt, UsageError
from matchlog.events.duel import NELO_PER_T

__all__ = [
    "NELO_PER_T",
    "Estimate",
    "Sprt",
    "elo_of_score",
    "estimate",
    "llr",
    "score_of_elo",
]

#: The count an empty category gets, so that no probability is 0.
_REGULARISER = 1e-3
#: The standard normal quantile of 0.975: a two-sided 95% interval.
_Z95 = 1.959963984540054


def score_of_elo(elo: float) -> float:
    """The expected score of a player `elo` logistic Elo stronger than its opponent."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference that expects `score` (kept within 0.001 and 0.999, as fishtest does)."""
    score = min(max(score, 1e-3), 1 - 1e-3)
    return -400 * math.log10(1 / score - 1)


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _distribution(counts: Sequence[float]) -> tuple[float, list[float], list[float]]:
    """(samples, values, probabilities): `counts[i]` sets scored i / (len - 1), regularised."""
    if len(counts) < 2:
        raise UsageError("a score distribution needs at least two categories", code="usage.counts")
    try:
        numbers = [float(c) for c in counts]
    except (TypeError, ValueError, OverflowError):
        numbers = [math.nan]
    if not all(math.isfinite(c) and c >= 0 for c in numbers):
        raise UsageError("counts are finite numbers, none negative", code="usage.counts")
    regular = [c if c > 0 else _REGULARISER for c in numbers]
    total = sum(regular)
    if not math.isfinite(total):
        raise UsageError("counts that add up past any number a float holds", code="usage.counts")
    last = len(counts) - 1
    return total, [i / last for i in range(len(counts))], [c / total for c in regular]


def _mean_variance(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    mean = sum(p * v for v, p in zip(values, probs, strict=True))
    return mean, sum(p * (v - mean) ** 2 for v, p in zip(values, probs, strict=True))


def _secular(shifted: Sequence[float], probs: Sequence[float]) -> float:
    """The root x of sum p_i a_i / (1 + x a_i) = 0, for `shifted` values a_i on both sides of 0.

    The function falls strictly between its poles -1 / max(a) and -1 / min(a), so bisection
    finds the root to the last bit.

    Raises:
        UsageError: (usage.sprt) the values are not on both sides of 0: no distribution on them
            has the mean the hypothesis asks.
    """
    if not (min(shifted) < 0 < max(shifted)) or not all(math.isfinite(a) for a in shifted):
        raise UsageError(
            "the hypothesis asks a mean score no distribution of these scores has (an Elo bound too wide)",
            code="usage.sprt",
        )
    low, high = -1 / max(shifted), -1 / min(shifted)
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if sum(p * a / (1 + middle * a) for a, p in zip(shifted, probs, strict=True)) > 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _fitted(shifted: Sequence[float], probs: Sequence[float], x: float) -> list[float]:
    """The distribution p_i / (1 + x a_i) the root `x` of the secular equation gives.

    Raises:
        UsageError: (usage.sprt) the root lies on a pole, as close as floats hold: a hypothesis
            whose mean is as good as the lowest or highest score.
    """
    denominators = [1 + x * a for a in shifted]
    if min(denominators) <= 0:
        raise UsageError("the hypothesis asks a mean score as good as the lowest or the highest", code="usage.sprt")
    return [p / d for p, d in zip(probs, denominators, strict=True)]


def _most_likely_with_mean(values: Sequence[float], probs: Sequence[float], mean: float) -> list[float]:
    """The distribution on `values` closest in likelihood to `probs` whose expectation is `mean`."""
    shifted = [v - mean for v in values]
    return _fitted(shifted, probs, _secular(shifted, probs))


def _most_likely_with_t(values: Sequence[float], probs: Sequence[float], reference: float, t: float) -> list[float]:
    """The distribution on `values` closest in likelihood to `probs` whose (mean - reference) /
    standard deviation is `t` (fishtest's `MLE_t_value`: a fixed point, from the uniform one)."""
    fitted = [1 / len(values)] * len(values)
    for _ in range(100):
        mean, variance = _mean_variance(values, fitted)
        if not variance > 0:
            raise UsageError(f"no distribution of these scores has the t-value {t:g}", code="usage.sprt")
        sigma = math.sqrt(variance)
        shifted = [v - reference - t * sigma * (1 + ((mean - v) / sigma) ** 2) / 2 for v in values]
        previous, fitted = fitted, _fitted(shifted, probs, _secular(shifted, probs))
        if max(abs(a - b) for a, b in zip(previous, fitted, strict=True)) < 1e-12:
            break
    return fitted


def llr(
    counts: Sequence[float], elo0: float, elo1: float, *, model: str = "logistic", games_per_set: int | None = None
) -> float:
    """The generalised log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0) given
    `counts[i]`, the sets scored i / (len - 1) (pentanomial: the pairs scoring 0, ½, 1, 1½, 2).

    `model` "logistic" reads the bounds as logistic Elo; "normalized" as normalised Elo, which
    needs the games in a set (`games_per_set`: 2 for five categories, 1 for three, by default).

    Raises:
        UsageError: counts that are no distribution (usage.counts), an unknown model, or bounds no
            distribution of the scores has (not finite, an expected score of 0 or 1) (usage.sprt).
    """
    samples, values, probs = _distribution(counts)
    try:
        elo0, elo1 = float(elo0), float(elo1)
    except (TypeError, ValueError, OverflowError):
        elo0 = math.nan
    if not (math.isfinite(elo0) and math.isfinite(elo1)):
        raise UsageError("the SPRT's Elo bounds are finite numbers", code="usage.sprt")
    if model == "logistic":
        h0, h1 = (_most_likely_with_mean(values, probs, score_of_elo(e)) for e in (elo0, elo1))
    elif model == "normalized":
        games = games_per_set or max(1, (len(counts) - 1) // 2)
        t0, t1 = (e / NELO_PER_T * math.sqrt(games) for e in (elo0, elo1))
        h0, h1 = (_most_likely_with_t(values, probs, 0.5, t) for t in (t0, t1))
    else:
        raise UsageError(f"the SPRT's model is logistic or normalized, not {model!r}", code="usage.sprt")
    if min(*h0, *h1) <= 0:  # a probability lost below the smallest float: no ratio to take
        raise UsageError("these bounds give no finite log-likelihood ratio for these counts", code="usage.sprt")
    value = samples * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, h0, h1, strict=True))
    if not math.isfinite(value):
        raise UsageError("these bounds give no finite log-likelihood ratio for these counts", code="usage.sprt")
    return value


class Estimate(msgspec.Struct, frozen=True, kw_only=True):
    """What a duel's sets say of the first player: its score, its Elo with a 95% interval (and the
    same in normalised Elo), and LOS, the chance that it is the stronger of the two."""

    sets: int
    score: float
    elo: float
    elo_low: float
    elo_high: float
    elo_error: float  # half the interval's width, the "±" engine testers print
    nelo: float
    nelo_error: float
    los: float


def estimate(counts: Sequence[float], *, games_per_set: int | None = None) -> Estimate:
    """The score, Elo (± 95%), normalised Elo and LOS that `counts` (as for `llr`) give.

    Raises:
        UsageError: counts that are no distribution.
    """
    total, values, probs = _distribution(counts)
    sets = int(sum(counts))
    score, variance = _mean_variance(values, probs)
    error = math.sqrt(variance / total)
    if not error > 0:  # so many sets that the spread is lost below the smallest float
        raise UsageError("counts too large to give an interval", code="usage.counts")
    low, high = score - _Z95 * error, score + _Z95 * error
    elo_low, elo_high = elo_of_score(low), elo_of_score(high)
    games = games_per_set or max(1, (len(counts) - 1) // 2)
    per_game = math.sqrt(games * variance)  # the standard deviation of one game's score
    return Estimate(
        sets=sets,
        score=score,
        elo=elo_of_score(score),
        elo_low=elo_low,
        elo_high=elo_high,
        elo_error=(elo_high - elo_low) / 2,
        nelo=(score - 0.5) / per_game * NELO_PER_T,
        nelo_error=_Z95 * error / per_game * NELO_PER_T,
        los=_phi((score - 0.5) / error),
    )
