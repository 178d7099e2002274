"""The envelope: what the store adds around an event (match, seq, id, time, actor, version, hash).

A `Draft` is an event on its way to the log with the id that makes re-sending it idempotent; a
`Record` is an event as the log holds it. Reducers see the event, never the envelope.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime, timedelta
from uuid import UUID, SafeUUID

import msgspec

from .base import Event

__all__ = [
    "Draft",
    "Record",
    "draft",
    "drafts",
    "now_us",
    "us_to_datetime",
    "uuid7",
    "uuid7_text",
    "uuid7_texts",
    "uuid_from_int",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_uuid7_lock = threading.Lock()
_uuid7_last = (0, 0)  # (unix ms, counter) of the last id made in this process


def uuid7() -> UUID:
    """A new UUIDv7: time-ordered (ms), so one match's rows sit together in the log; monotonic here."""
    return uuid_from_int(_uuid7_int())


def uuid7_text() -> str:
    """A new UUIDv7 as canonical text (what the log stores for event ids), without a UUID object."""
    return _text(_uuid7_int())


def uuid7_texts(count: int) -> list[str]:
    """`count` new UUIDv7s as text, in order, for one lock and one read of the random source.

    The ids `_uuid7_ints` makes, written with no Python per id: the 16 bytes of every id are laid
    out in one buffer a column of bytes at a time (strided slices), each column's hex digits
    written into the text the same way, and the text split once."""
    if count <= 0:
        return []
    entropy, ms, counter = _uuid7_start(count)
    raw = bytearray(16 * count)
    for k in range(8):  # bytes 8-15: the variant's two bits, then 62 random bits
        raw[8 + k :: 16] = entropy[k : 8 * count : 8]
    raw[8::16] = raw[8::16].translate(_VARIANT_BITS)
    done = 0
    while done < count:  # bytes 0-7: the ms (48 bits), then version 7 and the counter (12 bits)
        run = min(_COUNTS - counter, count - done)
        stamp = (ms << 16 | 0x7000 | counter).to_bytes(8, "big")
        for k in range(6):
            raw[16 * done + k : 16 * (done + run) : 16] = stamp[k : k + 1] * run
        number, end = counter, counter + run
        while number < end:  # the counter's high and low byte, 256 ids at a time at most
            upto = min(end, (number | 0xFF) + 1)
            first, last = done + number - counter, done + upto - counter
            raw[16 * first + 6 : 16 * last : 16] = bytes([0x70 | number >> 8]) * (upto - number)
            raw[16 * first + 7 : 16 * last : 16] = bytes(range(number & 0xFF, (upto - 1 & 0xFF) + 1))
            number = upto
        done += run
        ms, counter = ms + 1, 0
    text = bytearray(b"-" * (37 * count))  # 36 characters an id, then a separator
    text[36::37] = b"," * count
    for k, at in enumerate(_HEX_AT):
        column = raw[k::16]
        text[at::37] = column.translate(_HIGH_DIGIT)
        text[at + 1 :: 37] = column.translate(_LOW_DIGIT)
    return text[:-1].decode("ascii").split(",")


#: Ids a millisecond holds (12 bits of counter) before the next ones take the next millisecond.
_COUNTS = 0x1000
#: Each byte with its two highest bits made the variant's (0b10).
_VARIANT_BITS = bytes(0x80 | b & 0x3F for b in range(256))
#: Each byte's first and second hex digit, as ASCII.
_HIGH_DIGIT = bytes(b"0123456789abcdef"[b >> 4] for b in range(256))
_LOW_DIGIT = bytes(b"0123456789abcdef"[b & 15] for b in range(256))
#: Where each of an id's 16 bytes is written in its text (8-4-4-4-12 digits, dashes between).
_HEX_AT = (0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34)


def _uuid7_start(count: int) -> tuple[bytes, int, int]:
    """Random bytes (8 an id, and one more) and the (unix ms, counter) of the first of `count` new
    ids; the k-th has the counter after it, moving on to the next ms past 0xFFF (counter 0)."""
    global _uuid7_last
    size = 8 * count + 1
    entropy = _random_bytes(size) if size <= 256 else os.urandom(size)
    with _uuid7_lock:
        ms = time.time_ns() // 1_000_000
        last_ms, counter = _uuid7_last
        if ms <= last_ms:
            ms, counter = last_ms, counter + 1
        else:
            counter = entropy[-1] << 2 & 0x3FF  # room to count up within the ms
        ms, counter = ms + counter // _COUNTS, counter % _COUNTS
        last = counter + count - 1
        _uuid7_last = (ms + last // _COUNTS, last % _COUNTS)
    return entropy, ms, counter


def _uuid7_ints(count: int) -> list[int]:
    """`count` new UUIDv7s (as ints) in order: one lock, one read of the random source."""
    if count <= 0:
        return []
    entropy, ms, counter = _uuid7_start(count)
    mask = (1 << 62) - 1
    made = []
    for i in range(count):
        at, number = ms + (counter + i) // _COUNTS, (counter + i) % _COUNTS
        rand = int.from_bytes(entropy[8 * i : 8 * i + 8], "big") & mask
        made.append((at & ((1 << 48) - 1)) << 80 | 0x7 << 76 | number << 64 | 0b10 << 62 | rand)
    return made


def _text(value: int) -> str:
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _uuid7_int() -> int:
    global _uuid7_last
    with _uuid7_lock:
        ms = time.time_ns() // 1_000_000
        last_ms, counter = _uuid7_last
        entropy = _random_bytes(10)
        if ms <= last_ms:
            ms, counter = last_ms, counter + 1
            if counter > 0xFFF:
                ms, counter = ms + 1, 0
        else:
            counter = int.from_bytes(entropy[:2], "big") & 0x3FF  # room to count up within the ms
        _uuid7_last = (ms, counter)
    rand_b = int.from_bytes(entropy[2:], "big") & ((1 << 62) - 1)
    return (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62 | rand_b


def uuid_from_int(value: int) -> UUID:
    """A UUID of a 128-bit int, without uuid.UUID's (pure Python) argument checks."""
    made = object.__new__(UUID)
    object.__setattr__(made, "int", value)
    object.__setattr__(made, "is_safe", SafeUUID.unknown)
    return made


_ENTROPY_BLOCK = 4096
_entropy = {"block": b"", "at": 0}


def _random_bytes(count: int) -> bytes:
    """Bytes from the OS's random source, read in blocks (one system call per ~400 ids)."""
    at = _entropy["at"]
    block = _entropy["block"]
    if at + count > len(block):
        block, at = os.urandom(_ENTROPY_BLOCK), 0
        _entropy["block"] = block
    _entropy["at"] = at + count
    return block[at : at + count]


def _forget_entropy() -> None:
    _entropy["block"], _entropy["at"] = b"", 0


# A forked child must not hand out the same ids as its parent.
os.register_at_fork(after_in_child=_forget_entropy)


def now_us() -> int:
    """The current UTC time in microseconds since the epoch."""
    return time.time_ns() // 1_000


def us_to_datetime(at_us: int) -> datetime:
    """A UTC datetime from microseconds since the epoch (exact)."""
    return _EPOCH + timedelta(microseconds=at_us)


class Draft(msgspec.Struct, frozen=True):
    """An event on its way to the log; sending the same draft twice stores it once."""

    event: Event
    event_id: UUID
    at_us: int


def draft(event: Event, *, event_id: UUID | None = None, at_us: int | None = None) -> Draft:
    """Wrap `event` for appending, with a fresh id and the current time unless given."""
    return Draft(event, event_id if event_id is not None else uuid7(), at_us if at_us is not None else now_us())


def drafts(events: list[Event]) -> list[Draft]:
    """Wrap events recorded together, with fresh ids (made in one go) and the current time."""
    at_us = now_us()
    return [
        Draft(event, uuid_from_int(value), at_us) for event, value in zip(events, _uuid7_ints(len(events)), strict=True)
    ]


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """An event as the log holds it."""

    match_id: UUID
    seq: int
    event_id: UUID
    at_us: int
    actor: int | None
    version: int
    event: Event
    hash: bytes

    @property
    def at(self) -> datetime:
        """When the event happened (UTC)."""
        return us_to_datetime(self.at_us)
