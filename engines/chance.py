"""The referee's random source for provably fair chance: SHA-256 in counter mode over a secret seed.

The referee commits to `commitment(seed)` before the first draw and reveals the seed when the match
ends; anyone can then rebuild this source from the seed and re-derive every die, shuffle and board.
Without the seed the draws cannot be predicted (unlike the Mersenne Twister, whose state can be
recovered from its outputs). Every method engines use is implemented here, on integers drawn by
rejection sampling, so the stream does not depend on how a Python version implements `random`.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import MutableSequence, Sequence
from typing import Any, TypeVar

__all__ = ["ALGORITHM", "START", "ChanceSource", "commitment", "seed_for"]

#: The position of a fresh source, before its first draw (`ChanceSource.at`).
START = (0, 0, 0)
#: The name recorded with each commitment; a change to the stream gets a new one.
ALGORITHM = "sha256-ctr/1"
_DOMAIN = b"matchlog chance/1 "

T = TypeVar("T")


def commitment(seed: bytes) -> str:
    """The hex digest the referee records before any chance."""
    return hashlib.sha256(_DOMAIN + seed).hexdigest()


def seed_for(value: int | None) -> bytes:
    """A 32-byte seed: secret and fresh for None, else derived from `value` (reproducible runs)."""
    if value is None:
        return secrets.token_bytes(32)
    return hashlib.sha256(b"matchlog seed " + str(value).encode()).digest()


class ChanceSource(random.Random):
    """A `random.Random` whose draws come from SHA-256(domain, seed, block counter)."""

    def __init__(self, seed: bytes) -> None:
        self.secret = bytes(seed)
        self._counter = 0
        self._pool = 0
        self._pool_bits = 0
        super().__init__(0)

    def seed(self, a: Any = None, version: int = 2) -> None:  # the stream is fixed by the secret
        pass

    def copy(self) -> ChanceSource:
        """A source at the same point of the same stream: drawing from it leaves this one where it is."""
        return ChanceSource.at(self.secret, self.position)

    @classmethod
    def at(cls, seed: bytes, position: tuple[int, int, int]) -> ChanceSource:
        """The source of `seed` at `position` of its stream (a `position` it was at before)."""
        source = cls(seed)
        source._counter, source._pool, source._pool_bits = position
        return source

    @property
    def position(self) -> tuple[int, int, int]:
        """Where the source is in its stream: what `at` takes to start there again."""
        return self._counter, self._pool, self._pool_bits

    def getstate(self) -> Any:
        raise TypeError("a ChanceSource cannot be saved and restored; rebuild it from its seed")

    def setstate(self, state: Any) -> None:
        raise TypeError("a ChanceSource cannot be saved and restored; rebuild it from its seed")

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        while self._pool_bits < k:
            block = hashlib.sha256(_DOMAIN + self.secret + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._pool |= int.from_bytes(block, "big") << self._pool_bits
            self._pool_bits += 256
        value = self._pool & ((1 << k) - 1)
        self._pool >>= k
        self._pool_bits -= k
        return value

    def random(self) -> float:
        return self.getrandbits(53) / (1 << 53)

    def _below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection sampling."""
        if n <= 0:
            raise ValueError("empty range")
        bits = n.bit_length()
        while (value := self.getrandbits(bits)) >= n:
            pass
        return value

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        if stop is None:
            start, stop = 0, start
        count = len(range(start, stop, step))
        if count == 0:
            raise ValueError(f"empty range for randrange({start}, {stop}, {step})")
        return start + step * self._below(count)

    def randint(self, a: int, b: int) -> int:
        return self.randrange(a, b + 1)

    def choice(self, seq: Sequence[T]) -> T:
        if not seq:
            raise IndexError("cannot choose from an empty sequence")
        return seq[self._below(len(seq))]

    def shuffle(self, x: MutableSequence[Any]) -> None:  # type: ignore[override]
        for i in range(len(x) - 1, 0, -1):
            j = self._below(i + 1)
            x[i], x[j] = x[j], x[i]

    def sample(self, population: Sequence[T], k: int, *, counts: Any = None) -> list[T]:  # type: ignore[override]
        if counts is not None:
            raise TypeError("ChanceSource.sample does not take counts")
        pool = list(population)
        if not 0 <= k <= len(pool):
            raise ValueError("sample larger than population or is negative")
        for i in range(k):  # a partial Fisher-Yates from the front
            j = i + self._below(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]
