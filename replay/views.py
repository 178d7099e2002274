"""What one seat saw: a match's events and states through that seat's eyes, for replays and exports
that must not contain anything the seat could not have seen at the time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO
from uuid import UUID

import msgspec

from matchlog.events import Event
from matchlog.store import Store

from .fold import timeline

__all__ = ["SeatLine", "export_seat_jsonl", "seat_lines"]


class SeatLine(msgspec.Struct, frozen=True):
    """One event of a match as one seat saw it. Not importable: a redacted event has no hash."""

    match_id: UUID
    seq: int
    at_us: int
    actor: int | None
    view_of: int | None  # the seat (None: a spectator)
    type: str
    event: Event
    text: str


def seat_lines(records: Sequence, seat: int | None) -> Iterator[SeatLine]:
    """The records of one match as `seat` saw them (seat None: a spectator)."""
    for step in timeline(records, seat, as_seat=True):
        record = step.record
        yield SeatLine(
            record.match_id, record.seq, record.at_us, record.actor, seat, step.event.tag, step.event, step.text
        )


_encoder = msgspec.json.Encoder()


def export_seat_jsonl(store: Store, out: IO[bytes], match_ids: Sequence[UUID], seat: int | None) -> int:
    """Write the given matches as `seat` saw them, one JSON line an event; returns the count."""
    count = 0
    for match_id in match_ids:
        records = store.read(match_id)
        for line in seat_lines(records, seat if seat is None or seat < len(records[0].event.seats) else None):  # type: ignore[attr-defined]
            out.write(_encoder.encode(line) + b"\n")
            count += 1
    return count
