"""A duel's tags: the games of a duel are ordinary matches, each tagged with its duel, its pair
and its place in the pair, and with the test the duel runs, so that the duel's verdict can be
computed again from the log alone.

A pair (for a table of K seats, a set of K games) plays the same two players with the seats
rotated; in a duplicate duel every game of a pair draws its chance from one committed seed, so
each player meets the luck the other met. `audit` checks that they did (`replay/pairs.py`).
"""

from __future__ import annotations

import math

import msgspec

from .errors import UsageError

__all__ = ["Duel", "Sprt"]


class Sprt(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential test: H0 (Elo = elo0) against H1 (Elo = elo1), with error rates α and β."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"

    @property
    def lower(self) -> float:
        """At or below this LLR the test accepts H0."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """At or above this LLR the test accepts H1."""
        return math.log((1 - self.beta) / self.alpha)

    def verdict(self, value: float) -> str | None:
        """ "H1", "H0", or None while the LLR `value` is between the bounds."""
        return "H1" if value >= self.upper else "H0" if value <= self.lower else None

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """The test `elo0=0,elo1=5,alpha=0.05,beta=0.05[,model=normalized]` describes.

        Raises:
            UsageError: a missing bound, an unknown key, or bounds that make no test.
        """
        given: dict[str, str] = {}
        for part in text.split(","):
            key, equals, value = part.partition("=")
            key = key.strip()
            if not equals or key not in ("elo0", "elo1", "alpha", "beta", "model") or key in given:
                raise UsageError(
                    f"--sprt takes elo0=E0,elo1=E1[,alpha=A][,beta=B][,model=logistic|normalized], not {text!r}",
                    code="usage.sprt",
                )
            given[key] = value.strip()
        if "elo0" not in given or "elo1" not in given:
            raise UsageError(f"--sprt needs both elo0 and elo1: {text!r}", code="usage.sprt")
        try:
            numbers = {k: float(v) for k, v in given.items() if k != "model"}
        except ValueError:
            raise UsageError(f"--sprt: not a number in {text!r}", code="usage.sprt") from None
        sprt = cls(model=given.get("model", "logistic"), **numbers)
        sprt.check()
        return sprt

    def check(self) -> None:
        """Refuse a test that cannot decide.

        Raises:
            UsageError: bounds or error rates that make no test.
        """
        if not all(math.isfinite(x) for x in (self.elo0, self.elo1, self.alpha, self.beta)):
            raise UsageError("--sprt: every number must be finite", code="usage.sprt")
        if self.elo0 >= self.elo1:
            raise UsageError(f"--sprt: elo0 ({self.elo0:g}) must be below elo1 ({self.elo1:g})", code="usage.sprt")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise UsageError(
                "--sprt: alpha and beta must lie between 0 and 1, and add up to less than 1", code="usage.sprt"
            )
        if self.model not in ("logistic", "normalized"):
            raise UsageError(f"--sprt: model is logistic or normalized, not {self.model!r}", code="usage.sprt")


class Duel(msgspec.Struct, frozen=True, kw_only=True):
    """A match's place in duel `id`: game `game` (0-based: the seats rotated that many places) of
    pair `pair` (1-based), whose `games` games rotate the seats through every place. `duplicate`
    when every game of the pair draws its chance from one committed seed; `sprt`, the test the
    duel runs (None for a fixed number of pairs, `pairs`)."""

    id: str
    pair: int
    game: int
    games: int
    duplicate: bool = True
    sprt: Sprt | None = None
    pairs: int = 0
