"""The one writer: a thread that owns the log's write connection and commits in groups.

DuckDB charges about a millisecond per commit whatever it holds, so live appends are queued and the
writer commits everything waiting at once (up to GROUP_EVENTS events), then acknowledges each caller
after its group is durable. Bulk jobs (import, tournaments) get a transaction of their own and are
all-or-nothing. Every write goes through this thread, so checking `expected_seq` against the heads
it keeps in memory is race-free.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import duckdb
import msgspec
import pyarrow as pa

from matchlog.events import (
    ConcurrencyError,
    Draft,
    Event,
    ImportRejected,
    MatchStarted,
    StoreError,
    encode,
    now_us,
    uuid7,
)

from .catalogue import Appended, MatchInfo, SeatRow
from .chain import GENESIS, chain_hash

__all__ = ["GROUP_EVENTS", "Item", "Request", "Writer", "item"]

#: The most events one live group commit holds.
GROUP_EVENTS = 2_000
#: The largest seat number the log's SMALLINT columns hold.
_MAX_SEAT = 32_767
#: How many matches' heads (and event ids, for idempotency) the writer keeps in memory.
OPEN_MATCHES = 4_096

_EVENT_SCHEMA = pa.schema(
    [
        ("match_id", pa.string()),
        ("seq", pa.int64()),
        ("event_id", pa.string()),
        ("recorded_at", pa.timestamp("us")),
        ("actor", pa.int16()),
        ("game", pa.string()),
        ("type", pa.string()),
        ("version", pa.int16()),
        ("seat", pa.int16()),
        ("payload", pa.string()),
        ("hash", pa.binary()),
    ]
)
_MATCH_SCHEMA = pa.schema(
    [
        ("match_id", pa.string()),
        ("game", pa.string()),
        ("status", pa.string()),
        ("created_at", pa.timestamp("us")),
        ("ended_at", pa.timestamp("us")),
        ("players", pa.list_(pa.string())),
        ("strategies", pa.list_(pa.string())),
        ("options", pa.string()),
        ("last_seq", pa.int64()),
        ("head_hash", pa.binary()),
        ("ended_seq", pa.int64()),
        ("result", pa.string()),
        ("winners", pa.list_(pa.int16())),
        ("origin_match", pa.string()),
        ("origin_seq", pa.int64()),
        ("series_id", pa.string()),
        ("series_game", pa.int32()),
    ]
)
_SEAT_SCHEMA = pa.schema(
    [
        ("match_id", pa.string()),
        ("seat", pa.int16()),
        ("name", pa.string()),
        ("player", pa.string()),
        ("place", pa.int16()),
        ("score", pa.float64()),
        ("winner", pa.bool_()),
        ("removed", pa.bool_()),
    ]
)


class Item(msgspec.Struct, frozen=True):
    """One event ready for the log: its bytes, id and time, and (on import) the hash it claims."""

    event: Event
    event_id: UUID
    at_us: int
    version: int
    payload: str
    claimed_hash: bytes | None = None
    line: int | None = None


def item(event: Event | Draft) -> Item:
    """An Item for a live append."""
    if isinstance(event, Draft):
        return Item(event.event, event.event_id, event.at_us, event.event.version, encode(event.event).decode())
    if not isinstance(event, Event):
        raise StoreError(f"only events can be appended, not {type(event).__name__}", code="store.not_an_event")
    return Item(event, uuid7(), now_us(), event.version, encode(event).decode())


class Request(msgspec.Struct, frozen=True):
    """Append `items` to `match_id` at `expected_seq` (the number of events already stored)."""

    match_id: UUID
    items: tuple[Item, ...]
    expected_seq: int


@dataclass
class _Open:
    """What the writer keeps about a match it appends to."""

    info: MatchInfo | None  # None: nothing stored yet
    ids: dict[UUID, int] = field(default_factory=dict)  # event id -> seq, for idempotent re-sends


@dataclass
class _Group:
    """The rows one transaction will write."""

    events: list[list[Any]] = field(default_factory=lambda: [[] for _ in _EVENT_SCHEMA])
    matches: dict[UUID, MatchInfo] = field(default_factory=dict)
    seats: dict[tuple[UUID, int], SeatRow] = field(default_factory=dict)
    touched: dict[UUID, _Open] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.events[0])


_STOP = object()


class Writer:
    """Owns the write connection; every change to the log file goes through `submit_*`."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self._con = connection
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._open: OrderedDict[UUID, _Open] = OrderedDict()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="matchlog-writer", daemon=True)
        self._thread.start()

    # -- the callers' side -------------------------------------------------------------------

    def submit_append(self, request: Request) -> Future[Appended]:
        """Queue a live append; the future resolves once its group is committed."""
        return self._submit(("append", request))

    def submit_bulk(self, requests: Sequence[Request]) -> Future[list[Appended]]:
        """Queue appends that commit together in one transaction, or not at all."""
        return self._submit(("bulk", list(requests)))

    def submit_call(self, function: Callable[[duckdb.DuckDBPyConnection], Any]) -> Future[Any]:
        """Run `function(connection)` on the writer's connection, in a transaction of its own."""
        return self._submit(("call", function))

    def close(self) -> None:
        """Commit what is queued, then stop the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()

    def _submit(self, job: tuple[str, Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise StoreError("the log is closed", code="store.closed")
            self._queue.put((*job, future))
        return future

    # -- the writer thread -------------------------------------------------------------------

    def _run(self) -> None:
        held = None
        while True:
            job = held if held is not None else self._queue.get()
            held = None
            if job is _STOP:
                return
            kind, payload, future = job
            if kind == "append":
                group = [(payload, future)]
                events = len(payload.items)
                # Take whatever else is already waiting: that is the group commit.
                while events < GROUP_EVENTS:
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is _STOP or more[0] != "append":
                        held = more
                        break
                    group.append((more[1], more[2]))
                    events += len(more[1].items)
                self._commit_appends(group)
            elif kind == "bulk":
                self._commit_bulk(payload, future)
            else:
                self._commit_call(payload, future)

    def _commit_appends(self, jobs: list[tuple[Request, Future[Appended]]]) -> None:
        group = _Group()
        accepted: list[tuple[Future[Appended], Appended]] = []
        for request, future in jobs:
            if not future.set_running_or_notify_cancel():
                continue
            try:
                accepted.append((future, self._prepare(request, group)))
            except Exception as error:  # a refusal for this caller only
                future.set_exception(error)
        if not accepted:
            return
        try:
            self._write(group)
        except Exception as error:
            failure = _store_error(error)
            for future, _ in accepted:
                future.set_exception(failure)
            return
        for future, appended in accepted:
            future.set_result(appended)

    def _commit_bulk(self, requests: list[Request], future: Future[list[Appended]]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        group = _Group()
        try:
            results = [self._prepare(request, group) for request in requests]
        except Exception as error:
            self._forget(group)
            future.set_exception(error)
            return
        try:
            self._write(group)
        except Exception as error:
            future.set_exception(_store_error(error))
            return
        future.set_result(results)

    def _commit_call(self, function: Callable[[duckdb.DuckDBPyConnection], Any], future: Future[Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            self._con.begin()
            result = function(self._con)
            self._con.commit()
        except Exception as error:
            _rollback(self._con)
            future.set_exception(_store_error(error))
            return
        future.set_result(result)

    # -- one request -------------------------------------------------------------------------

    def _prepare(self, request: Request, group: _Group) -> Appended:
        """Check one request against the match's head and add its rows to `group`.

        Raises:
            ConcurrencyError: expected_seq is not the match's next seq (and this is not a re-send).
            StoreError: the events cannot start or continue this match.
            ImportRejected: an imported event's hash is not the one the chain gives it.
        """
        match_id, items, expected = request.match_id, request.items, request.expected_seq
        opened = group.touched.get(match_id) or self._load(match_id)
        info = opened.info
        next_seq = info.last_seq + 1 if info is not None else 0
        if not items:
            raise StoreError("nothing to append", code="store.empty_append")
        if len({entry.event_id for entry in items}) != len(items):
            raise StoreError("the same event id appears twice in one append", code="store.duplicate_id")

        # A re-send of events already stored at the seqs asked for is a no-op for those events.
        resent = 0
        for offset, entry in enumerate(items):
            stored_at = opened.ids.get(entry.event_id)
            if stored_at is None:
                break
            if stored_at != expected + offset:
                raise ConcurrencyError(match_id, expected, next_seq)
            resent += 1
        if resent == len(items):
            assert info is not None
            return Appended(match_id, expected, expected + resent - 1, info.head_hash, 0)
        if any(entry.event_id in opened.ids for entry in items[resent:]):
            raise ConcurrencyError(match_id, expected, next_seq)
        first = expected + resent
        if first != next_seq:
            raise ConcurrencyError(match_id, expected, next_seq)

        prev = info.head_hash if info is not None else GENESIS
        rows: list[tuple[Any, ...]] = []
        new_ids: dict[UUID, int] = {}
        for offset, entry in enumerate(items[resent:]):
            seq = first + offset
            event = entry.event
            if seq == 0:
                if not isinstance(event, MatchStarted):
                    raise StoreError(
                        f"match {match_id} must start with match.started, not {event.tag}",
                        code="store.bad_start",
                    )
                info = MatchInfo.started(match_id, event, entry.at_us)
            elif isinstance(event, MatchStarted):
                raise StoreError(
                    f"match {match_id} has already started (match.started at seq {seq})",
                    code="store.bad_start",
                )
            assert info is not None
            seat = getattr(event, "seat", None)
            seat = seat if isinstance(seat, int) else None
            actor = event.actor
            for what, value in (("seat", seat), ("actor", actor)):
                if value is not None and not 0 <= value <= _MAX_SEAT:
                    raise StoreError(f"{event.tag}: {what} {value} is not a seat number", code="store.bad_event")
            digest = chain_hash(
                prev,
                match_id,
                seq,
                entry.event_id,
                entry.at_us,
                actor,
                info.game,
                event.tag,
                entry.version,
                seat,
                entry.payload,
            )
            if entry.claimed_hash is not None and entry.claimed_hash != digest:
                where = f"line {entry.line}" if entry.line is not None else f"seq {seq}"
                raise ImportRejected(
                    f"match {match_id} seq {seq} ({where}): its hash does not follow from the chain "
                    f"(claimed {entry.claimed_hash.hex()[:16]}…, computed {digest.hex()[:16]}…)"
                )
            rows.append(
                (
                    str(match_id),
                    seq,
                    str(entry.event_id),
                    entry.at_us,
                    actor,
                    info.game,
                    event.tag,
                    entry.version,
                    seat,
                    entry.payload,
                    digest,
                )
            )
            new_ids[entry.event_id] = seq
            ended_before = info.ended_seq
            info = info.after(seq, event, entry.at_us, digest)
            if seq == 0 or info.ended_seq != ended_before:
                for row in info.seat_rows():
                    group.seats[(match_id, row.seat)] = row
            prev = digest

        # The request is good: fold it into the group.
        for row in rows:
            for column, value in zip(group.events, row, strict=True):
                column.append(value)
        opened = group.touched.setdefault(match_id, _Open(opened.info, dict(opened.ids)))
        opened.ids.update(new_ids)
        opened.info = info
        group.matches[match_id] = info
        return Appended(match_id, expected, first + len(rows) - 1, prev, len(rows))

    def _load(self, match_id: UUID) -> _Open:
        """The head of `match_id` from memory, or from the file."""
        opened = self._open.get(match_id)
        if opened is not None:
            self._open.move_to_end(match_id)
            return opened
        from .log import select_matches  # the one place that reads catalogue rows

        found = select_matches(self._con, "WHERE match_id = ?", [match_id])
        if found:
            ids = dict(self._con.execute("SELECT event_id, seq FROM events WHERE match_id = ?", [match_id]).fetchall())
            opened = _Open(found[0], ids)
        else:
            stray = self._con.execute("SELECT count(*) FROM events WHERE match_id = ?", [match_id]).fetchall()
            if stray[0][0]:
                raise StoreError(
                    f"match {match_id} has events but no catalogue row; run `matchlog verify`",
                    code="store.corrupt",
                )
            opened = _Open(None)
        return opened

    # -- one transaction ---------------------------------------------------------------------

    def _write(self, group: _Group) -> None:
        """Write the group's rows in one transaction; on failure nothing is kept, in memory either."""
        con = self._con
        try:
            con.begin()
            if group.size:
                _insert(con, "events", _EVENT_SCHEMA, group.events, _INSERT_EVENTS)
            if group.matches:
                rows = [info.row() for info in group.matches.values()]
                _insert(con, "matches", _MATCH_SCHEMA, _columns(rows, len(_MATCH_SCHEMA)), _UPSERT_MATCHES)
            if group.seats:
                seat_rows = [(str(row.match_id), *msgspec.structs.astuple(row)[1:]) for row in group.seats.values()]
                _insert(con, "seats", _SEAT_SCHEMA, _columns(seat_rows, len(_SEAT_SCHEMA)), _UPSERT_SEATS)
            con.commit()
        except Exception:
            _rollback(con)
            self._forget(group)
            raise
        for match_id, opened in group.touched.items():
            self._open[match_id] = opened
            self._open.move_to_end(match_id)
            if opened.info is not None and opened.info.status != "running":
                del self._open[match_id]  # ended matches are rarely appended to again
        while len(self._open) > OPEN_MATCHES:
            self._open.popitem(last=False)

    def _forget(self, group: _Group) -> None:
        """Drop what memory holds of the group's matches, so the next request reads the file."""
        for match_id in group.touched:
            self._open.pop(match_id, None)


_INSERT_EVENTS = """
    INSERT INTO events
    SELECT match_id::UUID, seq, event_id::UUID, recorded_at, actor, game, type, version, seat, payload, hash
    FROM {table}"""
_UPSERT_MATCHES = """
    INSERT OR REPLACE INTO matches
    SELECT match_id::UUID, game, status, created_at, ended_at, players, strategies, options, last_seq,
           head_hash, ended_seq, result, winners, origin_match::UUID, origin_seq, series_id, series_game
    FROM {table}"""
_UPSERT_SEATS = """
    INSERT OR REPLACE INTO seats
    SELECT match_id::UUID, seat, name, player, place, score, winner, removed FROM {table}"""


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    columns: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    return columns


def _insert(con: duckdb.DuckDBPyConnection, name: str, schema: pa.Schema, columns: list[list[Any]], sql: str) -> None:
    view = f"_matchlog_{name}_batch"
    batch = pa.Table.from_arrays(
        [pa.array(column, type=f.type) for column, f in zip(columns, schema, strict=True)], schema=schema
    )
    con.register(view, batch)
    try:
        con.execute(sql.format(table=view))
    finally:
        con.unregister(view)


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    with contextlib.suppress(duckdb.Error):  # no transaction was open
        con.rollback()


def _store_error(error: Exception) -> Exception:
    """Our own errors pass through; a driver error becomes a StoreError that says what failed."""
    if isinstance(error, StoreError):
        return error
    if isinstance(error, duckdb.Error):
        return StoreError(f"the log could not commit: {error}", code="store.write_failed")
    return error
