"""A duel's tags: the games of a duel are ordinary matches, each tagged with its duel, its pair
and its place in the pair, and with the test the duel runs, so that the duel's verdict can be
computed again from the log alone.

A pair (for a table of K seats, a set of K games) plays the same two players with the seats
rotated; in a duplicate duel every game of a pair draws its chance from one committed seed, so
each player meets the luck the other met. `audit` checks that they did (`replay/pairs.py`).

Both tags have bounds, checked wherever one is given or written (`Sprt.check`, `Duel.check`: the
command line, the judge of every match.started, so imports and the service too) and read back
(the duel's report): a pair is numbered from 1, a game's place is within its pair, a pair has a
game for each seat, and a test's Elo keeps the expected score away from 0 and 1, so its
log-likelihood ratio exists. A tag outside them is one no duel could have.
"""

from __future__ import annotations

import math

import msgspec

from .base import NAME_MAX, control_character
from .errors import UsageError

__all__ = ["ELO_MAX", "NELO_PER_T", "PAIRS_MAX", "Duel", "Sprt", "nelo_max"]

#: The largest logistic Elo (either sign) a test may name: an expected score of 0.999, the widest
#: a report shows (`replay.sprt.elo_of_score`); beyond it the score rounds towards 1 and no
#: distribution of scores has it.
ELO_MAX = 1200.0
#: Normalised Elo per unit of t-value (fishtest's `nelo_divided_by_nt`).
NELO_PER_T = 800 / math.log(10)
#: The most pairs a duel may plan, and so the highest pair a tag may name.
PAIRS_MAX = 1_000_000


def nelo_max(games: int) -> float:
    """The largest normalised Elo (either sign) a test of sets of `games` games may name: nine
    tenths of the t-value that the maximum-likelihood fit (`replay.sprt`, fishtest's, which starts
    from the uniform distribution of a set's scores) can reach from its first step."""
    grid = 2 * games * (games - 1)
    values = [i / grid for i in range(grid + 1)]
    variance = sum((v - 0.5) ** 2 for v in values) / len(values)
    reach = math.sqrt(variance) / (variance + 0.25)
    return 0.9 * reach * NELO_PER_T / math.sqrt(games)


def _finite(number: object) -> bool:
    """Whether `number` is a real number a float holds, not infinite and not NaN."""
    try:
        return isinstance(number, int | float) and math.isfinite(number)
    except OverflowError:  # an int past any float
        return False


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

    def check(self, games: int = 2) -> None:
        """Refuse a test that cannot decide over sets of `games` games (a duel's seats).

        Raises:
            UsageError: (usage.sprt) bounds or error rates that make no test: not finite numbers,
                elo0 not below elo1, an Elo whose expected score is 0 or 1 (beyond ELO_MAX, or
                `nelo_max(games)` for normalised Elo), α or β outside (0, 1) or adding up to 1 or
                more, or a model that is neither logistic nor normalized.
        """
        if not all(_finite(x) for x in (self.elo0, self.elo1, self.alpha, self.beta)):
            raise UsageError("--sprt: every number must be finite", code="usage.sprt")
        if self.model not in ("logistic", "normalized"):
            raise UsageError(f"--sprt: model is logistic or normalized, not {self.model!r}", code="usage.sprt")
        if self.elo0 >= self.elo1:
            raise UsageError(f"--sprt: elo0 ({self.elo0:g}) must be below elo1 ({self.elo1:g})", code="usage.sprt")
        widest = ELO_MAX if self.model == "logistic" else nelo_max(games)
        if max(abs(self.elo0), abs(self.elo1)) > widest:
            raise UsageError(
                f"--sprt: {self.model} Elo bounds lie within ±{widest:g}"
                + (f" for sets of {games} games" if self.model == "normalized" else "")
                + f" (beyond, the expected score is as good as 0 or 1 and no test decides), not {self.elo0:g} and "
                f"{self.elo1:g}",
                code="usage.sprt",
            )
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise UsageError(
                "--sprt: alpha and beta must lie between 0 and 1, and add up to less than 1", code="usage.sprt"
            )


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

    def check(self, seats: int) -> None:
        """Refuse a tag no duel at a table of `seats` seats could give its game.

        Raises:
            UsageError: (usage.duel) a field of the wrong type; an empty or overlong id, or one with
                a control character; a pair not within 1 to PAIRS_MAX; a pair whose games are not one
                for each seat; a game's place outside its pair; planned pairs outside 0 to PAIRS_MAX.
                (usage.sprt) a test that cannot decide (`Sprt.check`).
        """
        numbers = (self.pair, self.game, self.games, self.pairs)
        if (
            not isinstance(self.id, str)
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers)
            or not isinstance(self.duplicate, bool)
            or not isinstance(self.sprt, Sprt | None)
        ):
            raise UsageError("a duel's tag holds an id, whole numbers, a flag and a test", code="usage.duel")
        where = f"duel {self.id!r}" if len(self.id) <= NAME_MAX else "duel"
        if not self.id.strip() or len(self.id) > NAME_MAX or control_character(self.id) is not None:
            raise UsageError(
                f"{where}: a duel's id is 1 to {NAME_MAX} characters, none of them a control character",
                code="usage.duel",
            )
        if not 1 <= self.pair <= PAIRS_MAX:
            raise UsageError(f"{where}: pairs are numbered 1 to {PAIRS_MAX}, not {self.pair}", code="usage.duel")
        if not 0 <= self.pairs <= PAIRS_MAX:
            raise UsageError(f"{where}: a duel plans 0 to {PAIRS_MAX} pairs, not {self.pairs}", code="usage.duel")
        if self.games != seats or seats < 2:
            raise UsageError(
                f"{where}: a pair has one game for each seat of the table ({seats}), not {self.games}",
                code="usage.duel",
            )
        if not 0 <= self.game < self.games:
            raise UsageError(
                f"{where}: game {self.game} is not a place in a pair of {self.games} games (0 to {self.games - 1})",
                code="usage.duel",
            )
        if self.sprt is not None:
            self.sprt.check(self.games)
