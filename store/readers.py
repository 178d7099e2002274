"""Reads of a log's events: one match's records or events (checked whole), every event in
batches, the events table through Arrow, the log's own SQL and a user's (`select`, sandboxed in
store/sql.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any
from uuid import UUID

import duckdb

from matchlog.events import (
    DecodeError,
    Event,
    MatchStarted,
    Record,
    SqlError,
    StoreError,
    UnknownMatch,
    decode,
    uuid_from_int,
)

from .catalogue import CatalogueReads
from .handle import _first_line, _match_filter
from .limits import DEFAULT_SQL_BYTES, DEFAULT_SQL_ROWS, DEFAULT_SQL_TIMEOUT
from .sql import ReadOnlyQuery

__all__ = ["EventReads"]

# Event ids come as text: DuckDB's own UUID objects cost ~15 µs a row, text and `_uuid` about 1.
_RECORD_COLUMNS = "seq, event_id::VARCHAR, epoch_us(recorded_at), actor, type, version, payload, hash"


class EventReads(CatalogueReads):
    """The reads of a `Store` (mixed into it): events, records, Arrow tables and SQL."""

    def game_of(self, match_id: UUID) -> str:
        """The game of a match, as its first event says (the catalogue's row is only derived from it,
        and may have been edited): it never changes, so once read it is kept (one query saved per
        time-travel step).

        Raises:
            UnknownMatch: no such match.
            DecodeError: its first event is missing or does not decode.
        """
        game = self._games.get(match_id)
        if game is None:
            first = self.read_events(match_id, start=0, stop=0)
            started = first[0][1] if first else None
            game = started.game if isinstance(started, MatchStarted) else self.match(match_id).game
            if len(self._games) > 65_536:
                self._games.clear()
            self._games[match_id] = game
        return game

    def read(self, match_id: UUID | str, *, start: int = 0, stop: int | None = None) -> list[Record]:
        """The events of one match from seq `start` up to and including `stop`, in order.

        Raises:
            UnknownMatch: no such match.
            DecodeError: a stored event does not decode, or the match's events are not whole: a seq
                missing or stored twice (`store.damaged`; `matchlog verify` names what happened).
        """
        resolved = match_id if isinstance(match_id, UUID) else self.resolve(match_id)

        def rows() -> list[tuple[Any, ...]]:
            return (
                self._read()
                .execute(
                    f"SELECT {_RECORD_COLUMNS} FROM events WHERE match_id = ? AND seq >= ? AND seq <= ? ORDER BY seq",
                    [resolved, start, stop if stop is not None else 2**62],
                )
                .fetchall()
            )

        found = rows()
        if not found:
            self.resolve(resolved)  # raises UnknownMatch when there is no such match
        return [_record(resolved, row) for row in self._whole(resolved, found, rows, start, stop)]

    def read_events(self, match_id: UUID, *, start: int = 0, stop: int | None = None) -> list[tuple[int, Event]]:
        """(seq, event) of one match from `start` to `stop` (inclusive): `read` without the envelope,
        for folding (time travel folds from a snapshot this way).

        Raises:
            DecodeError: a stored event does not decode, or the match's events are not whole
                (`store.damaged`).
        """

        def rows() -> list[tuple[Any, ...]]:
            return (
                self._read()
                .execute(
                    "SELECT seq, type, version, payload FROM events WHERE match_id = ? AND seq >= ? AND seq <= ?"
                    " ORDER BY seq",
                    [match_id, start, stop if stop is not None else 2**62],
                )
                .fetchall()
            )

        found = self._whole(match_id, rows(), rows, start, stop, tail=stop is not None)
        try:
            return [(seq, decode(payload, tag=tag, version=version)) for seq, tag, version, payload in found]
        except DecodeError as error:
            raise DecodeError(f"match {match_id}: {error.message}") from None

    def _whole(
        self,
        match_id: UUID,
        rows: list[tuple[Any, ...]],
        again: Callable[[], list[tuple[Any, ...]]],
        start: int,
        stop: int | None,
        *,
        tail: bool = True,
    ) -> list[tuple[Any, ...]]:
        """`rows` (seq first, in order, read by `again()`) if they are every event of the match from
        `start` on, up to `stop` or, without it, to its catalogue's head (`tail`: check that end).
        Rows that stop short are read once more before that is called damage, since the catalogue is
        read after them: an append in between shows in the second reading.

        Raises:
            DecodeError: a seq is missing or stored twice (`store.damaged`).
        """
        _check_seqs(match_id, start, [row[0] for row in rows])
        have = rows[-1][0] if rows else start - 1
        if not tail or (stop is not None and have >= stop):
            return rows
        try:
            last = self.match(match_id).last_seq
        except UnknownMatch:
            return rows  # events with no catalogue row: verify names them
        wanted = last if stop is None else min(stop, last)
        if have >= wanted:
            return rows
        rows = again()
        _check_seqs(match_id, start, [row[0] for row in rows])
        have = rows[-1][0] if rows else start - 1
        if have < wanted:
            raise DecodeError(
                f"match {match_id} is damaged: its seq {have + 1} is missing (its catalogue row goes on to seq "
                f"{last}; `matchlog verify` names what happened)",
                code="store.damaged",
            )
        return rows

    def records(self, match_ids: Sequence[UUID] | None = None, *, batch_rows: int = 100_000) -> Iterator[Record]:
        """Every event of the given matches (default: all), ordered by match and seq, read through Arrow.

        Raises:
            DecodeError: a stored event does not decode, or a match's seqs are not 0, 1, 2, ... (one
                missing or stored twice: `store.damaged`).
        """
        where, params = _match_filter(match_ids)
        query = f"SELECT match_id::VARCHAR, {_RECORD_COLUMNS} FROM events {where} ORDER BY match_id, seq"
        match_text, match_id, expected = "", None, 0
        for columns in self._stream(query, params, batch_rows):
            for row in zip(*columns.values(), strict=True):
                if row[0] != match_text:  # rows come grouped by match: one UUID object per match
                    match_text, match_id, expected = row[0], _uuid(row[0]), 0
                if row[1] != expected:
                    _check_seqs(match_id, expected, [row[1]])  # type: ignore[arg-type]
                expected += 1
                yield _record(match_id, row[1:])  # type: ignore[arg-type]

    def event_columns(
        self, match_ids: Sequence[UUID] | None = None, *, batch_rows: int = 100_000
    ) -> Iterator[tuple[list[str], list[int], list[str], list[int], list[str]]]:
        """The log in batches of columns (match id text, seq, type, version, payload), ordered by
        match and seq: what a bulk reader needs to decode and fold, without building Records."""
        where, params = _match_filter(match_ids)
        query = f"SELECT match_id::VARCHAR AS m, seq, type, version, payload FROM events {where} ORDER BY match_id, seq"
        for columns in self._stream(query, params, batch_rows):
            yield columns["m"], columns["seq"], columns["type"], columns["version"], columns["payload"]

    def event_lines(self, match_ids: Sequence[UUID] | None = None, *, batch_rows: int = 100_000) -> Iterator[Any]:
        """The log as Arrow record batches of (m: match id text, type, version, line: the payload and
        a newline), ordered by match and seq: a batch's lines lie end to end in one buffer, which a
        bulk reader decodes in one call (`replay.fold_all`)."""
        where, params = _match_filter(match_ids)
        query = (
            "SELECT match_id::VARCHAR AS m, type, version, payload || chr(10) AS line"
            f" FROM events {where} ORDER BY match_id, seq"
        )
        cursor = self._db.cursor()
        try:
            yield from cursor.sql(query, params=params).to_arrow_reader(batch_rows)
        finally:
            cursor.close()

    def events_arrow(self, match_ids: Sequence[UUID] | None = None, columns: str = "*"):
        """The events table (or some of its columns) as an Arrow table, for bulk work."""
        where, params = _match_filter(match_ids)
        return (
            self._read()
            .sql(f"SELECT {columns} FROM events {where} ORDER BY match_id, seq", params=params)
            .to_arrow_table()
        )

    def arrow(self, query: str, params: Sequence[Any] = ()) -> Any:
        """A query matchlog itself makes, as an Arrow table (a user's SQL goes through `select`)."""
        self.sync()
        return self._read().sql(query, params=list(params)).to_arrow_table()

    def count(self) -> int:
        """How many events the log holds."""
        return int(self._read().execute("SELECT count(*) FROM events").fetchall()[0][0])

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run SQL on this process's own connection: matchlog only reads with it (tests also tamper)."""
        self.sync()
        return self._read().execute(sql, list(params)).fetchall()

    def select(
        self,
        query: str,
        *,
        timeout: float | None = DEFAULT_SQL_TIMEOUT,
        max_rows: int | None = DEFAULT_SQL_ROWS,
        max_bytes: int = DEFAULT_SQL_BYTES,
        only_select: bool = True,
    ) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """Run a user's query where it cannot change the log (store/sql.py): (columns, rows, whether
        rows were cut at `max_rows`). It is stopped after `timeout` seconds, at Ctrl-C, or when the
        log closes, and refused once its rows pass `max_bytes`. Anything but one SELECT is refused
        first, to say so plainly; `only_select=False` lets any one statement reach DuckDB, where the
        read-only transaction still refuses every change (what tests prove).

        Raises:
            SqlError: not exactly one SELECT (`sql.not_select`), refused or failed (`sql.error`),
                out of memory (`sql.memory`), out of time (`sql.timeout`), or a result larger than
                `max_bytes` (`sql.too_large`).
            StoreError: the log is closed, or was closed while the query ran (`store.closed`).
            KeyboardInterrupt: Ctrl-C stopped the query.
        """
        try:
            statements = duckdb.extract_statements(query)
        except duckdb.Error as error:
            raise SqlError(_first_line(str(error))) from None
        if len(statements) != 1 or (only_select and statements[0].type != duckdb.StatementType.SELECT):
            raise SqlError("only a single SELECT can be run: the log is read-only here", code="sql.not_select")
        self.sync()
        with self._queries_lock:
            if self._closed:
                raise StoreError("the log is closed", code="store.closed")
            running = ReadOnlyQuery(
                self._db,
                statements[0],
                max_rows=max_rows,
                max_bytes=max_bytes,
                hold_checkpoints=self._writer is not None,  # (a file opened read-only is never written)
            )
            self._queries.add(running)
        try:
            return running.run(timeout)
        finally:
            with self._queries_lock:
                self._queries.discard(running)

    def running_queries(self) -> int:
        """How many users' queries (`select`) are running on the log now."""
        with self._queries_lock:
            return len(self._queries)


def _record(match_id: UUID, row: Sequence[Any]) -> Record:
    seq, event_id, at_us, _actor, type_, version, payload, digest = row
    try:
        event = decode(payload, tag=type_, version=version)
    except DecodeError as error:
        raise DecodeError(f"match {match_id} seq {seq}: {error.message}") from None
    if not isinstance(event_id, UUID):
        event_id = _uuid(event_id)
    return Record(
        match_id=match_id,
        seq=seq,
        event_id=event_id,
        at_us=at_us,
        actor=event.actor,  # (the column is derived from the event when written, and may have been edited)
        version=version,
        event=event,
        hash=bytes(digest),
    )


def _check_seqs(match_id: UUID, start: int, seqs: Sequence[int]) -> None:
    """Refuse a match's stored seqs that are not `start`, `start` + 1, ... (a row deleted or copied).

    Raises:
        DecodeError: naming the seq missing or stored twice (`store.damaged`).
    """
    for expected, seq in enumerate(seqs, start):
        if seq != expected:
            said = f"seq {seq} is stored twice" if seq < expected else f"seq {expected} is missing"
            raise DecodeError(
                f"match {match_id} is damaged: its {said} (`matchlog verify` names what happened)",
                code="store.damaged",
            )


def _uuid(text: str) -> UUID:
    """A UUID from the text DuckDB gives (always canonical), without uuid.UUID's slow parsing."""
    return uuid_from_int(int(text.replace("-", ""), 16))
