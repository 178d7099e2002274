"""Exports and imports of a log: JSON Lines (the envelope and the event, chain kept, checked line by
line and chain by chain on the way in, all or nothing) and Parquet for other tools."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO
from uuid import UUID

import msgspec

from matchlog.events import (
    DecodeError,
    Event,
    ImportRejected,
    MatchStarted,
    StoreError,
    canonical,
    decode,
    seat_problem,
)

from .catalogue import Appended, CatalogueReads, select_matches
from .handle import _first_line, _match_filter
from .writer import Batch, Item, Request

__all__ = ["MatchCheck", "Transfers"]

#: The times a log can hold: from 1970 to the end of year 9999 (microseconds since the epoch).
_LAST_US = 253_402_300_799_999_999


#: A check of one imported match (its events from seq 0, each with its line), by the rules: it
#: raises ImportRejected naming the line. See `matchlog.replay.imports`.
MatchCheck = Callable[[UUID, list[tuple[int, Event]]], None]


class _Line(msgspec.Struct, frozen=True):
    """One line of a JSON Lines export: an envelope with its event."""

    match_id: UUID
    seq: int
    event_id: UUID
    at_us: int
    actor: int | None
    game: str
    type: str
    version: int
    seat: int | None
    hash: str
    event: msgspec.Raw


_line_decoder = msgspec.json.Decoder(_Line)
_line_encoder = msgspec.json.Encoder()


class Transfers(CatalogueReads):
    """The exports and imports of a `Store` (mixed into it)."""

    def export_jsonl(self, out: IO[bytes], match_ids: Sequence[UUID] | None = None) -> int:
        """Write events as JSON Lines (one envelope a line, hash chain kept); returns the count."""
        count = 0
        where, params = _match_filter(match_ids)
        query = f"""SELECT match_id::VARCHAR, seq, event_id::VARCHAR, epoch_us(recorded_at), actor, game, type,
                           version, seat, lower(hex(hash)), payload
                    FROM events {where} ORDER BY match_id, seq"""
        for columns in self._stream(query, params, 50_000):
            for mid, seq, eid, at_us, actor, game, type_, version, seat, digest, payload in zip(
                *columns.values(), strict=True
            ):
                line = _Line(
                    UUID(mid),
                    seq,
                    UUID(eid),
                    at_us,
                    actor,
                    game,
                    type_,
                    version,
                    seat,
                    digest,
                    msgspec.Raw(payload.encode()),
                )
                out.write(_line_encoder.encode(line) + b"\n")
                count += 1
        return count

    def export_parquet(self, target: str | Path | IO[bytes], match_ids: Sequence[UUID] | None = None) -> int:
        """Write events to Parquet (a path or a binary file object) for other tools; returns the count.
        The log itself touches no file: the rows stream out through Arrow."""
        import pyarrow.parquet as pq

        where, params = _match_filter(match_ids)
        query = f"""SELECT match_id::VARCHAR AS match_id, seq, event_id::VARCHAR AS event_id, recorded_at, actor,
                           game, type, version, seat, payload, lower(hex(hash)) AS hash
                    FROM events {where} ORDER BY match_id, seq"""
        cursor = self._db.cursor()
        count = 0
        try:
            reader = cursor.sql(query, params=params).to_arrow_reader(100_000)
            with pq.ParquetWriter(target, reader.schema) as writer:
                for batch in reader:
                    writer.write_batch(batch)
                    count += batch.num_rows
        finally:
            cursor.close()
        return count

    def import_jsonl(self, lines: Iterable[bytes], *, check: MatchCheck | None = None) -> list[Appended]:
        """Import a JSON Lines export: every chain is checked, and either all of it lands or none.

        Each line must hold an envelope and an event exactly as matchlog writes them (their
        canonical JSON: nothing added, repeated or reordered), of a type the log records (not one only views show), at a
        time between 1970 and 9999, and a match's seats must be named without control characters.
        `check`, given each match's events, judges them by the rules (the store knows none).
        Matches already in the log are skipped when identical, and extended when the log holds a
        prefix of them.

        Raises:
            ImportRejected: a line is malformed, a chain does not verify, or a match conflicts with
                the log, each naming the line; nothing was written.
        """
        by_match: dict[UUID, list[Item]] = {}
        seqs: dict[UUID, list[int]] = {}
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                line = _line_decoder.decode(raw)
                payload = bytes(line.event).decode()
                event = decode(line.event, tag=line.type, version=line.version)
                claimed = bytes.fromhex(line.hash)
            except (msgspec.DecodeError, DecodeError, UnicodeDecodeError, ValueError) as error:
                raise ImportRejected(f"line {number}: {_first_line(str(error))}") from None
            except RecursionError:
                raise ImportRejected(f"line {number}: its JSON is nested too deeply") from None
            if event.tag != line.type:
                raise ImportRejected(f"line {number}: type {line.type!r} does not match the event's {event.tag!r}")
            if _line_encoder.encode(line) != raw.rstrip(b"\r\n"):
                raise ImportRejected(
                    f"line {number}: its envelope is not written the one way matchlog writes it (no spaces, "
                    "fields in order, no field repeated or unknown): it was changed, or not exported by matchlog"
                )
            _check_line(number, line, event, bytes(line.event))
            by_match.setdefault(line.match_id, []).append(
                Item(event, str(line.event_id), line.at_us, line.version, payload, claimed, number)
            )
            seqs.setdefault(line.match_id, []).append(line.seq)
        requests = []
        for match_id, lines_of_match in by_match.items():
            items = lines_of_match
            numbers = seqs[match_id]
            if numbers != list(range(len(numbers))):
                raise ImportRejected(f"match {match_id}: its lines are not seqs 0, 1, 2, ... in order")
            if check is not None:
                check(match_id, [(item.line or 0, item.event) for item in items])
            known = select_matches(self._read(), "WHERE match_id = ?", [match_id])
            if known:
                stored = known[0]
                if stored.last_seq >= len(items) or items[stored.last_seq].claimed_hash != stored.head_hash:
                    raise ImportRejected(
                        f"match {match_id} is already in the log with different events; nothing was imported"
                    )
                items = items[stored.last_seq + 1 :]
                if not items:
                    continue
                requests.append(Request(match_id, Batch.of(items), stored.last_seq + 1))
            else:
                requests.append(Request(match_id, Batch.of(items), 0))
        if not requests:
            return []
        try:
            return self._write().submit_bulk(requests).result()
        except ImportRejected:
            raise
        except StoreError as error:
            raise ImportRejected(f"{error.message}; nothing was imported") from None


def _check_line(number: int, line: _Line, event: Event, payload: bytes) -> None:
    """Refuse an imported line that no referee of matchlog could have written.

    Raises:
        ImportRejected: naming the line and what is wrong with it.
    """
    if type(event).view_only:
        raise ImportRejected(f"line {number}: {event.tag} is what a view shows a seat, never a recorded event")
    if not canonical(payload, event, line.version):
        raise ImportRejected(
            f"line {number}: the {event.tag} event is not written the one way matchlog writes it (no spaces, "
            "fields in order, no field repeated or unknown): it was changed, or not exported by matchlog"
        )
    if not 0 <= line.at_us <= _LAST_US:
        raise ImportRejected(f"line {number}: at_us {line.at_us} is not a time from 1970 to 9999")
    if isinstance(event, MatchStarted):
        for seat, sitting in enumerate(event.seats):
            problem = seat_problem(sitting)
            if problem is not None:
                raise ImportRejected(f"line {number}: seat {seat}: {problem}")
