"""The one writer: a thread that owns the log's write connection and commits in groups.

DuckDB charges about a millisecond per commit whatever it holds, so live appends are queued and the
writer commits everything waiting at once (up to GROUP_EVENTS events), then acknowledges each caller
after its group is durable. Bulk jobs (import, tournaments) get a transaction of their own and are
all-or-nothing. Every write goes through this thread, so checking `expected_seq` against the heads
it keeps in memory is race-free.

The Merkle tree over the log grows in the same transaction as the events: each event's row carries
its leaf (the next one, in the order the group commits), the writer keeps the tree's frontier in
memory (`tree`, replaced only once a commit succeeds), and a commit that completes subtrees to keep
writes them too (store/tree.py), so no event is ever without its leaf.

The catalogue (`matches`, `seats`) is derived from the events. A new match's rows are inserted in
the transaction of its first events; later changes (its head, its ending) are kept in memory and
written when the writer pauses (IDLE_SECONDS), at least every FLUSH_SECONDS, and on close, because an UPDATE per
group would cost more than the events themselves. Readers in this process see the fresh rows
through `fresh()`; after a crash, opening the log for writing rolls any lagging row forward from
the events (`recover`), which are the truth.

DuckDB would checkpoint (fold its write-ahead log into the file) inside whichever commit takes the
WAL past a threshold, so that append, and every one queued behind it, would wait 100 ms or more.
The writer's connection has that off (`NO_AUTOMATIC_CHECKPOINT`, set as the file is opened) and
the writer checkpoints itself, only ever between jobs, never inside one: when the log has been idle
for CHECKPOINT_IDLE_SECONDS, and, should it never be, once the WAL holds WAL_LIMIT bytes. It counts and times
them (`wal_checkpoints`). A checkpoint changes nothing a reader or a crash sees: the WAL is durable
already, and after a kill DuckDB replays whatever the file does not hold yet.

What a checkpoint costs, and why an append still waits for one (bench/bench_stall.py, BENCHMARKS.md):
DuckDB 2.0 holds every commit, of any table and any connection, until a checkpoint ends. Most cost
5-40 ms, a few ms more for each MB of WAL, whatever the file holds; but each checkpoint appends a
small row group to every table it writes, and the one that finds enough of them to fill a row group
(122,880 rows, so once per ~123k events) merges them, rewriting them whole: 100-600 ms, whatever the
WAL holds. A smaller WAL_LIMIT makes the common checkpoint shorter but not that one, and costs
throughput; DuckDB's `max_vacuum_tasks` 0 removes it, but the row groups then stay small for good,
because the configuration is locked for users' SQL (store/sql.py) and the merging cannot be let
run only while the log is idle.

A damaged log (rows deleted, copied or edited by hand) still opens, and the writer appends only
where it stays truthful: nothing at all while the Merkle tree could not be extended truthfully
(`damage`: the tree's right edge cannot be computed, events have no leaf, or the newest leaves may
be gone, which a catalogue row ahead of its events, the kept subtrees or the log's own checkpoints
show), and nothing to a match whose events are not whole (a seq missing or held twice, a head that
is not the catalogue's). The rest (the catalogue, figures, snapshots) is written as ever; rolling
the catalogue forward stops, for a match, where its events stop being whole.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any
from uuid import UUID

import duckdb
import msgspec
import pyarrow as pa

from matchlog.events import (
    ActionsUndone,
    ConcurrencyError,
    DecodeError,
    Draft,
    Event,
    EventConflict,
    ImportRejected,
    MatchEnded,
    MatchStarted,
    StoreError,
    decode,
    encode,
    encode_texts,
    now_us,
    uuid7_texts,
)
from matchlog.proofs.tree import Frontier

from .catalogue import Appended, Figures, MatchInfo, SeatRow, select_matches
from .chain import GENESIS, chain_hashes
from .schema import EVENT_ROWS, FIGURE_ROWS, MATCH_ROWS, SEAT_ROWS, TREE_NODE_ROWS
from .tree import committed_tree

__all__ = [
    "AT_US_MAX",
    "AT_US_MIN",
    "GROUP_EVENTS",
    "NO_AUTOMATIC_CHECKPOINT",
    "WAL_LIMIT",
    "Batch",
    "Item",
    "Request",
    "WalCheckpoints",
    "Writer",
    "insert_tree",
    "items",
]

#: The most events one live group commit holds.
GROUP_EVENTS = 2_000
#: How long a group waits for the callers of the last one to send again.
LINGER_SECONDS = 0.001
#: From this many rows, inserts go through Arrow instead of the appender.
ARROW_ROWS = 2_000
#: The longest the catalogue may lag the events while the writer is busy...
FLUSH_SECONDS = 0.5
#: ... and how long a pause lets it catch up.
IDLE_SECONDS = 0.05
#: How long the log must have been idle before the writer checkpoints it: a checkpoint costs 5-40 ms,
#: 100-600 ms when it merges row groups (on 2 shared cores), and a caller who comes meanwhile waits.
CHECKPOINT_IDLE_SECONDS = 1.0
#: DuckDB's `checkpoint_threshold` on a log open for writing: never, in effect (the writer decides).
NO_AUTOMATIC_CHECKPOINT = "1TB"
#: The WAL at which the writer checkpoints between two groups even though callers are waiting
#: (DuckDB's own default threshold, so a log that is never idle checkpoints no more often than before).
WAL_LIMIT = 16 << 20
#: How many matches' heads (and event ids, for idempotency) the writer keeps in memory.
OPEN_MATCHES = 4_096
#: The largest seat number the log's SMALLINT columns hold.
_MAX_SEAT = 32_767
_EPOCH = datetime(1970, 1, 1)
#: The times an event may have (us since 1970): years 1 to 9999, as a timestamp column and Python hold them.
AT_US_MIN = -62_135_596_800_000_000
AT_US_MAX = 253_402_300_800_000_000


class Item(msgspec.Struct, frozen=True, gc=False):
    """One event ready for the log, as a row: its bytes, id and time, and (on import) the hash it
    claims and the line it came from. Gathered into a `Batch` for the writer.

    Not tracked by the cyclic garbage collector (`gc=False`): it holds an event and values, so it is
    never part of a cycle, and an import makes one per event."""

    event: Event
    event_id: str  # canonical text, as the log hashes and stores it
    at_us: int
    version: int
    payload: str
    claimed_hash: bytes | None = None
    line: int | None = None


class Batch(msgspec.Struct, frozen=True):
    """The events of one request ready for the log, a column at a time (entry k of each list is
    event k's): what a bulk append writes is built and checked by column, with no object per event.

    `claimed` and `lines` are an import's (the hash each line claims, the line it came from); None
    where nothing is claimed."""

    events: list[Event]
    event_ids: list[str]  # canonical text, as the log hashes and stores them
    at_us: list[int]
    versions: list[int]
    payloads: list[str]
    claimed: list[bytes | None] | None = None
    lines: list[int | None] | None = None

    def __len__(self) -> int:
        return len(self.events)

    @classmethod
    def of(cls, rows: Sequence[Item]) -> Batch:
        """The batch of `rows`, in order."""
        claimed = [row.claimed_hash for row in rows]
        return cls(
            [row.event for row in rows],
            [row.event_id for row in rows],
            [row.at_us for row in rows],
            [row.version for row in rows],
            [row.payload for row in rows],
            claimed if any(hash is not None for hash in claimed) else None,
            [row.line for row in rows] if any(row.line is not None for row in rows) else None,
        )

    def after(self, count: int) -> Batch:
        """The batch without its first `count` events (those a re-send found stored already)."""
        return Batch(
            self.events[count:],
            self.event_ids[count:],
            self.at_us[count:],
            self.versions[count:],
            self.payloads[count:],
            None if self.claimed is None else self.claimed[count:],
            None if self.lines is None else self.lines[count:],
        )


def items(events: Sequence[Event | Draft]) -> Batch:
    """The batch of an append: drafts keep their ids and times; bare events get fresh ids and the time now.

    Raises:
        StoreError: something in `events` is not an event.
    """
    at_us = now_us()
    events = list(events)
    kinds = list(map(type, events))
    if all(issubclass(kind, Event) for kind in set(kinds)):  # the usual bulk: bare events
        count = len(events)
        return Batch(events, uuid7_texts(count), [at_us] * count, _by_kind(kinds, _VERSION), encode_texts(events))
    fresh = iter(uuid7_texts(sum(not isinstance(e, Draft) for e in events)))
    made = []
    for event in events:
        if isinstance(event, Draft):
            inner = event.event
            made.append(Item(inner, str(event.event_id), event.at_us, inner.version, encode(inner).decode()))
        elif isinstance(event, Event):
            made.append(Item(event, next(fresh), at_us, event.version, encode(event).decode()))
        else:
            raise StoreError(f"only events can be appended, not {type(event).__name__}", code="store.not_an_event")
    return Batch.of(made)


def _by_kind(kinds: list[type], value: Callable[[type], Any]) -> list[Any]:
    """`value(kind)` for each of `kinds`, asked once a kind (an append holds a few kinds of event,
    so a column of what their class says costs a lookup an event, not an attribute's code)."""
    known = {kind: value(kind) for kind in set(kinds)}
    return list(map(known.__getitem__, kinds))


def _tag(kind: type) -> str:
    return kind.__struct_config__.tag  # type: ignore[attr-defined]


_VERSION = attrgetter("version")


class Request(msgspec.Struct, frozen=True):
    """Append `items` to `match_id` at `expected_seq` (the number of events already stored)."""

    match_id: UUID
    items: Batch
    expected_seq: int
    figures: Figures | None = None  # the match's figures, once these items end it


class WalCheckpoints(msgspec.Struct, frozen=True):
    """The writer's checkpoints of the file so far: how many (`idle`: while nothing waited;
    `forced`: because the WAL had reached WAL_LIMIT; `refused`: DuckDB declined, a user's query
    holding them off), the seconds they took in all and the longest, and the WAL's size now."""

    idle: int = 0
    forced: int = 0
    refused: int = 0
    seconds: float = 0.0
    longest: float = 0.0
    wal_bytes: int = 0


@dataclass
class _Open:
    """What the writer keeps about a match it appends to."""

    info: MatchInfo | None  # None: nothing stored yet
    ids: dict[str, int] = field(default_factory=dict)  # event id -> seq, for idempotent re-sends
    damage: str | None = None  # why its events are not whole: nothing is appended to it


@dataclass
class _Pending:
    """One match's changes within a group, on top of what is committed (`base`)."""

    base: _Open
    info: MatchInfo | None
    ids: dict[str, int] = field(default_factory=dict)

    def stored_at(self, event_id: str) -> int | None:
        seq = self.ids.get(event_id)
        return seq if seq is not None else self.base.ids.get(event_id)


class _EventRows:
    """The event rows one transaction will write, a list per column (in leaf order): built by
    extending each column with a request's, and handed to Arrow as they are, never as rows."""

    __slots__ = COLUMNS = (
        "match_id", "seq", "event_id", "at_us", "actor", "game", "type", "version", "seat", "payload", "hash", "leaf"
    )  # fmt: skip

    def __init__(self) -> None:
        for name in self.COLUMNS:
            setattr(self, name, [])

    def __len__(self) -> int:
        return len(self.seq)

    def add(
        self,
        match_text: str,
        first: int,
        event_ids: list[str],
        at_us: list[int],
        actors: list[int | None],
        game: str,
        types: list[str],
        versions: list[int],
        seats: list[int | None],
        payloads: list[str],
        hashes: list[bytes],
        leaf: int,
    ) -> None:
        """Add one request's rows: seqs from `first`, leaves from `leaf`."""
        count = len(event_ids)
        self.match_id.extend([match_text] * count)
        self.seq.extend(range(first, first + count))
        self.event_id.extend(event_ids)
        self.at_us.extend(at_us)
        self.actor.extend(actors)
        self.game.extend([game] * count)
        self.type.extend(types)
        self.version.extend(versions)
        self.seat.extend(seats)
        self.payload.extend(payloads)
        self.hash.extend(hashes)
        self.leaf.extend(range(leaf, leaf + count))

    def columns(self) -> list[list[Any]]:
        return [getattr(self, name) for name in self.COLUMNS]

    def payload_at(self, match_text: str, seq: int) -> str | None:
        """The payload of a row of this group, the latest first (None: the group holds none there)."""
        for k in range(len(self.seq) - 1, -1, -1):
            if self.seq[k] == seq and self.match_id[k] == match_text:
                return self.payload[k]
        return None


@dataclass
class _Group:
    """The rows one transaction will write."""

    rows: _EventRows = field(default_factory=_EventRows)  # in leaf order
    touched: dict[UUID, _Pending] = field(default_factory=dict)
    created: set[UUID] = field(default_factory=set)  # matches whose first events are in this group
    seats: dict[tuple[UUID, int], SeatRow] = field(default_factory=dict)
    figures: list[Figures] = field(default_factory=list)


_STOP = object()
#: Events after seq 0 that change a match's catalogue row beyond its head.
_CATALOGUED_TAGS = (MatchEnded.__struct_config__.tag, ActionsUndone.__struct_config__.tag)
_STARTED = MatchStarted.__struct_config__.tag


class Writer:
    """Owns the write connection; every change to the log file goes through `submit_*`."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, *, wal: Path | None = None) -> None:
        self._con = connection
        self._wal = wal  # the file's write-ahead log (None: in memory, nothing to checkpoint)
        self._checkpoints = WalCheckpoints()
        self._tried_at = -1  # the WAL's size when a checkpoint was last tried and refused
        self._worked_at = time.monotonic()  # when the writer last took a job
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._open: OrderedDict[UUID, _Open] = OrderedDict()
        # Catalogue rows committed in the events but not yet written to their tables.
        self._dirty: dict[UUID, MatchInfo] = {}
        self._dirty_seats: dict[tuple[UUID, int], SeatRow] = {}
        self._dirty_figures: list[Figures] = []  # written with the catalogue, like it
        self._flushed_at = time.monotonic()
        self._last_group = 1
        self._closed = False
        self._lock = threading.Lock()
        #: Called after each commit that appended events, with (match id, last seq) of each match.
        self.listeners: list[Callable[[list[tuple[UUID, int]]], None]] = []
        newest = self._con.execute("SELECT max(match_id) FROM matches").fetchall()[0][0]
        self._newest = newest.int if newest is not None else -1  # the greatest match id in the log
        #: The tree as committed: its frontier (store/tree.py; None: it cannot be computed). Replaced,
        #: never changed, so other threads may read its size and root at any time.
        self.tree: Frontier | None
        #: Why nothing can be appended to this log (None: it can), found as it was opened.
        self.damage: str | None
        self.tree, self.damage = committed_tree(self._con)
        self.recovered = self._recover()
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

    def submit_leaves(
        self,
        function: Callable[[duckdb.DuckDBPyConnection, int], tuple[Any, list[bytes]]],
        matches: Sequence[UUID] = (),
    ) -> Future[Any]:
        """Run `function(connection, first_leaf)` in a transaction of its own: it inserts rows about
        `matches` that take leaves first_leaf, first_leaf + 1, ... and returns (its result, their chain
        hashes in leaf order); the tree grows by them in the same transaction. The future gets its
        result, or `store.damaged` where nothing may be appended (as for events)."""
        return self._submit(("leaves", (function, tuple(matches))))

    def sync(self) -> None:
        """Return once the catalogue tables hold every committed change."""
        if self._dirty or self._dirty_seats or self._dirty_figures:
            self._submit(("sync", None)).result()

    def fresh(self, match_id: UUID) -> MatchInfo | None:
        """The catalogue row of `match_id` if it is newer in memory than in its table."""
        return self._dirty.get(match_id)

    def close(self) -> None:
        """Commit what is queued, write the catalogue, then stop the thread."""
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
            if held is not None:
                job, held = held, None
            else:
                job = self._next_job()
            if job is None:  # a pause: the catalogue catches up, then (after a longer one) the file
                self._try_flush()
                if self._queue.empty() and time.monotonic() - self._worked_at >= CHECKPOINT_IDLE_SECONDS:
                    self._checkpoint(forced=False)
                continue
            self._worked_at = time.monotonic()
            if job is _STOP:
                self._flush_catalogue()
                return
            kind, payload, future = job
            group = [(payload, future)]
            try:
                if kind == "append":
                    group, held = self._gather((payload, future))
                    self._commit_appends(group)
                elif kind == "bulk":
                    self._commit_bulk(payload, future)
                elif kind == "sync":
                    self._settle(future, self._flush_catalogue)
                elif kind == "leaves":
                    self._settle(future, partial(self._add_leaves, payload))
                else:
                    self._settle(future, partial(self._transaction, partial(payload, self._con)))
            except Exception as error:  # never leave a caller waiting, and keep serving the others
                failure = _store_error(error)
                for _, waiting in group:
                    if not waiting.done():
                        waiting.set_exception(failure)
            if time.monotonic() - self._flushed_at > FLUSH_SECONDS:
                self._try_flush()
            if self._wal_bytes() >= WAL_LIMIT:  # never idle: checkpoint between two groups anyway
                self._checkpoint(forced=True)

    def _gather(self, first: tuple[Request, Future[Appended]]) -> tuple[list[tuple[Request, Future[Appended]]], Any]:
        """A group: the first append, whatever else waits, and (briefly) as many callers as last time.

        Callers acknowledged by the last commit are about to send again; waiting LINGER_SECONDS for
        them makes groups as large as the concurrency, which is what keeps commits per event low.
        """
        group = [first]
        events = len(first[0].items)
        deadline = time.monotonic() + LINGER_SECONDS
        held = None
        while events < GROUP_EVENTS:
            try:
                if len(group) < self._last_group:
                    more = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                else:
                    more = self._queue.get_nowait()
            except queue.Empty:
                break
            if more is _STOP or more[0] != "append":
                held = more
                break
            group.append((more[1], more[2]))
            events += len(more[1].items)
        self._last_group = len(group)
        return group, held

    def _next_job(self) -> Any:
        """The next job; None after IDLE_SECONDS without one while the catalogue lags, or once
        the log has been idle for CHECKPOINT_IDLE_SECONDS while the WAL holds what the file does not."""
        if self._dirty or self._dirty_seats or self._dirty_figures:
            wait = IDLE_SECONDS
        elif self._unsettled():
            wait = max(0.0, self._worked_at + CHECKPOINT_IDLE_SECONDS - time.monotonic())
        else:
            return self._queue.get()
        try:
            return self._queue.get(timeout=wait)
        except queue.Empty:
            return None

    def _wal_bytes(self) -> int:
        if self._wal is None:
            return 0
        try:
            return os.stat(self._wal).st_size
        except FileNotFoundError:  # (DuckDB removes it at a checkpoint)
            return 0

    def _unsettled(self) -> bool:
        """Whether the WAL holds what the file does not, and a checkpoint could fold it in (one
        refused is tried again only once more has been written)."""
        size = self._wal_bytes()
        return size > 0 and size != self._tried_at

    def _checkpoint(self, *, forced: bool) -> None:
        """Fold the WAL into the file, between jobs (never inside one), timed and counted."""
        if not self._unsettled():
            return
        began = time.perf_counter()
        try:
            self._con.execute("CHECKPOINT")
        except duckdb.Error:  # a user's query holds checkpoints off (store/sql.py): later, then
            self._tried_at = self._wal_bytes()
            self._checkpoints = msgspec.structs.replace(self._checkpoints, refused=self._checkpoints.refused + 1)
            return
        took = time.perf_counter() - began
        done = self._checkpoints
        self._tried_at = -1
        self._checkpoints = msgspec.structs.replace(
            done,
            idle=done.idle + (not forced),
            forced=done.forced + forced,
            seconds=done.seconds + took,
            longest=max(done.longest, took),
        )

    def wal_checkpoints(self) -> WalCheckpoints:
        """The checkpoints so far, and the WAL's size now."""
        return msgspec.structs.replace(self._checkpoints, wal_bytes=self._wal_bytes())

    def _try_flush(self) -> None:
        with contextlib.suppress(Exception):  # the rows stay in memory and are tried again later
            self._flush_catalogue()

    def _settle(self, future: Future[Any], work: Callable[[], Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = work()
        except Exception as error:
            future.set_exception(_store_error(error))
        else:
            future.set_result(result)

    def _transaction(self, work: Callable[[], Any]) -> Any:
        con = self._con
        try:
            con.begin()
            result = work()
            con.commit()
        except Exception:
            _rollback(con)
            raise
        return result

    def _add_leaves(
        self, job: tuple[Callable[[duckdb.DuckDBPyConnection, int], tuple[Any, list[bytes]]], tuple[UUID, ...]]
    ) -> Any:
        """Rows beside the events that are leaves of the tree (annotations), in one transaction.

        Raises:
            StoreError: the tree could not be extended truthfully, or a match's events are not whole
                (`store.damaged`): leaves are refused where events are.
        """
        function, matches = job
        if self.damage is not None:
            raise StoreError(f"the log takes no new leaves: {self.damage}", code="store.damaged")
        for match_id in matches:
            damage = self._load(match_id).damage
            if damage is not None:
                raise StoreError(f"match {match_id} takes no annotations: {damage}", code="store.damaged")
        assert self.tree is not None  # (a log whose tree cannot be extended is damaged: refused above)
        tree = self.tree.copy()
        result, _ = self._transaction(lambda: _grown(self._con, tree, function))
        self.tree = tree  # only once committed
        return result

    def _commit_appends(self, jobs: list[tuple[Request, Future[Appended]]]) -> None:
        self._prefetch([request.match_id for request, _ in jobs])
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
            self._write(group, bulk=False)
        except Exception as error:
            failure = _store_error(error)
            for future, _ in accepted:
                future.set_exception(failure)
            return
        for future, appended in accepted:
            future.set_result(appended)

    def _commit_bulk(self, requests: list[Request], future: Future[list[Appended]]) -> None:
        def work() -> list[Appended]:
            self._prefetch([request.match_id for request in requests])
            group = _Group()
            results = [self._prepare(request, group) for request in requests]
            self._write(group, bulk=True)
            return results

        self._settle(future, work)

    # -- one request -------------------------------------------------------------------------

    def _prepare(self, request: Request, group: _Group) -> Appended:
        """Check one request against the match's head and add its rows to `group`.

        Raises:
            ConcurrencyError: expected_seq is not the match's next seq (and this is not a re-send).
            EventConflict: an event id already stored is sent with another event, or for another seq.
            StoreError: the events cannot start or continue this match.
            ImportRejected: an imported event's hash is not the one the chain gives it.
        """
        match_id, batch, expected = request.match_id, request.items, request.expected_seq
        if self.damage is not None:
            raise StoreError(f"the log takes no new events: {self.damage}", code="store.damaged")
        pending = group.touched.get(match_id)
        if pending is None:
            base = self._load(match_id)
            pending = _Pending(base, base.info)
        if pending.base.damage is not None:
            raise StoreError(f"match {match_id} takes no new events: {pending.base.damage}", code="store.damaged")
        info = pending.info
        next_seq = info.last_seq + 1 if info is not None else 0
        if not batch:
            raise StoreError("nothing to append", code="store.empty_append")
        if len(set(batch.event_ids)) != len(batch):
            raise StoreError("the same event id appears twice in one append", code="store.duplicate_id")

        # A re-send of events already stored at the seqs asked for is a no-op for those events; an
        # id names one event of its match, so one sent again with another event, or at another
        # seq, is a conflict (never a silent no-op, never a stale seq).
        resent = 0
        if pending.ids or pending.base.ids:  # (a match new to the log has nothing to re-send)
            for offset, event_id in enumerate(batch.event_ids):
                stored_at = pending.stored_at(event_id)
                if stored_at is None:
                    break
                if stored_at != expected + offset:
                    raise _moved(match_id, event_id, stored_at, expected + offset)
                if self._stored_payload(match_id, stored_at, group) != batch.payloads[offset]:
                    raise EventConflict(
                        f"match {match_id}: event id {event_id} is stored at seq {stored_at} with a different "
                        f"event than the {batch.events[offset].tag} sent again with it; nothing was written"
                    )
                resent += 1
            if resent == len(batch):
                assert info is not None
                return Appended(match_id, expected, expected + resent - 1, info.head_hash, 0)
            for offset, event_id in enumerate(batch.event_ids[resent:], start=expected + resent):
                stored_at = pending.stored_at(event_id)
                if stored_at is not None:
                    raise _moved(match_id, event_id, stored_at, offset)
        first = expected + resent
        if first != next_seq:
            raise ConcurrencyError(match_id, expected, next_seq)

        prev = info.head_hash if info is not None else GENESIS
        match_text = str(match_id)
        assert self.tree is not None  # (a log whose tree cannot be extended is damaged: refused above)
        leaf = self.tree.size + len(group.rows)  # the leaves follow the group's events so far
        todo = batch.after(resent) if resent else batch
        count = len(todo)
        # The rows are built a column at a time (the batch's, and each other a comprehension): the
        # per-event Python is the checks' one pass over each column and the chain's hash.
        events, event_ids, at_us, payloads = todo.events, todo.event_ids, todo.at_us, todo.payloads
        versions = todo.versions
        types = _by_kind(list(map(type, events)), _tag)
        seats_column = [getattr(event, "seat", None) for event in events]
        actors = [event.actor for event in events]
        _check_columns(match_id, first, events, types, seats_column, actors, at_us)
        seats: list[SeatRow] = []
        game = info.game if info is not None else ""
        if first == 0:
            started = events[0]
            assert isinstance(started, MatchStarted)  # (_check_columns)
            info = MatchInfo.started(match_id, started, at_us[0])
            game = info.game
            seats = info.seat_rows()
        hashes = chain_hashes(
            prev, match_text, first, event_ids, at_us, actors, game, types, versions, seats_column, payloads
        )
        if todo.claimed is not None:
            for offset, claimed in enumerate(todo.claimed):
                if claimed is not None and claimed != hashes[offset]:
                    seq = first + offset
                    line = todo.lines[offset] if todo.lines is not None else None
                    where = f"line {line}" if line is not None else f"seq {seq}"
                    raise ImportRejected(
                        f"match {match_id} seq {seq} ({where}): its hash does not follow from the chain "
                        f"(claimed {claimed.hex()[:16]}…, computed {hashes[offset].hex()[:16]}…)"
                    )
        for offset in _catalogued(types):  # an ending or an undo changes the catalogue row beyond its head
            assert info is not None
            ended_before = info.ended_seq
            info = info.after(first + offset, events[offset], at_us[offset], hashes[offset])
            if info.ended_seq != ended_before:
                seats = info.seat_rows()
        seq = first + count - 1
        prev = hashes[-1]
        assert info is not None
        info = msgspec.structs.replace(info, last_seq=seq, head_hash=prev)

        # The request is good: fold it into the group.
        group.rows.add(
            match_text, first, event_ids, at_us, actors, game, types, versions, seats_column, payloads, hashes, leaf
        )
        if first == 0:
            group.created.add(match_id)
        for row in seats:
            group.seats[(match_id, row.seat)] = row
        pending.ids.update(zip(event_ids, range(first, first + count), strict=True))
        pending.info = info
        group.touched[match_id] = pending
        if request.figures is not None:
            group.figures.append(request.figures)
        return Appended(match_id, expected, seq, prev, count)

    def _stored_payload(self, match_id: UUID, seq: int, group: _Group) -> str | None:
        """The payload stored (or about to be, in `group`) at `seq` of a match (re-sends are rare:
        one query each)."""
        payload = group.rows.payload_at(str(match_id), seq)
        if payload is not None:
            return payload
        found = self._con.execute(
            "SELECT payload FROM events WHERE match_id = ? AND seq = ?", [match_id, seq]
        ).fetchall()
        return found[0][0] if found else None

    def _load(self, match_id: UUID) -> _Open:
        """The head of `match_id` from memory, or from the file."""
        opened = self._open.get(match_id)
        if opened is None:
            self._prefetch([match_id])
            opened = self._open[match_id]
        self._open.move_to_end(match_id)
        return opened

    def _prefetch(self, match_ids: Sequence[UUID]) -> None:
        """Read the heads (and event ids) of the matches memory does not hold, in two queries.

        A time-ordered id newer than every match the log holds needs no query: it is a new match.
        """
        missing = []
        for match_id in dict.fromkeys(m for m in match_ids if m not in self._open):
            if match_id.int > self._newest and match_id not in self._dirty:
                self._open[match_id] = _Open(None)
            else:
                missing.append(match_id)
        if not missing:
            return
        texts = [str(m) for m in missing]
        found = {
            info.match_id: info
            for info in select_matches(self._con, "WHERE match_id IN (SELECT unnest(?::UUID[]))", [texts])
        }
        found.update((m, self._dirty[m]) for m in missing if m in self._dirty)
        ids: dict[UUID, dict[str, int]] = {m: {} for m in missing}
        seqs: dict[UUID, list[int]] = {m: [] for m in missing}
        heads: dict[UUID, bytes] = {}
        rows = self._con.execute(
            "SELECT match_id, event_id::VARCHAR, seq, hash FROM events WHERE match_id IN (SELECT unnest(?::UUID[]))",
            [texts],
        ).fetchall()
        for match_id, event_id, seq, digest in rows:
            ids[match_id][event_id] = seq
            seqs[match_id].append(seq)
            info = found.get(match_id)
            if info is not None and seq == info.last_seq:
                heads[match_id] = bytes(digest)
        for match_id in missing:
            info = found.get(match_id)
            damage = _not_whole(info, sorted(seqs[match_id]), heads.get(match_id))
            self._open[match_id] = _Open(info, ids[match_id] if info is not None else {}, damage)
        while len(self._open) > OPEN_MATCHES + len(missing):
            self._open.popitem(last=False)

    # -- one transaction ---------------------------------------------------------------------

    def _write(self, group: _Group, *, bulk: bool) -> None:
        """Write the group's events (and new matches) in one transaction; on failure nothing is kept."""
        con = self._con
        created = [group.touched[m].info for m in group.created]
        changed = {m: o.info for m, o in group.touched.items() if m not in group.created}
        new_seats = [row for key, row in group.seats.items() if key[0] in group.created]
        other_seats = {key: row for key, row in group.seats.items() if key[0] not in group.created}
        assert self.tree is not None
        tree = self.tree.copy()
        kept = tree.extend(group.rows.hash)
        try:
            con.begin()
            _insert_events(con, group.rows)
            insert_tree(con, kept)
            if created:
                _insert(con, "matches", [info.row() for info in created], MATCH_ROWS, upsert=False)  # type: ignore[union-attr]
            if new_seats:
                _insert(con, "seats", [_seat_row(row) for row in new_seats], SEAT_ROWS, upsert=False)
            if bulk:
                replace_figures(con, group.figures)
            if bulk and changed:
                # Bulk jobs are rare and all-or-nothing: their catalogue changes go in the same transaction.
                _insert(con, "matches", [info.row() for info in changed.values()], MATCH_ROWS, upsert=True)  # type: ignore[union-attr]
                if other_seats:
                    _insert(con, "seats", [_seat_row(row) for row in other_seats.values()], SEAT_ROWS, upsert=True)
            con.commit()
        except Exception:
            _rollback(con)  # memory still holds only what is committed
            raise
        self.tree = tree
        if not bulk:
            self._dirty.update(changed)  # type: ignore[arg-type]
            self._dirty_seats.update(other_seats)
            self._dirty_figures.extend(group.figures)
        for match_id in group.created:
            self._newest = max(self._newest, match_id.int)
        for match_id, pending in group.touched.items():
            opened = pending.base
            opened.info = pending.info
            opened.ids.update(pending.ids)
            if opened.info is not None and opened.info.status != "running":
                self._open.pop(match_id, None)  # ended matches are rarely appended to again
                continue
            self._open[match_id] = opened
            self._open.move_to_end(match_id)
        while len(self._open) > OPEN_MATCHES:
            self._open.popitem(last=False)
        if self.listeners and group.rows:
            heads = [(m, p.info.last_seq) for m, p in group.touched.items() if p.info is not None]
            for listener in self.listeners:
                with contextlib.suppress(Exception):  # a listener never fails a commit
                    listener(heads)

    def _flush_catalogue(self) -> None:
        """Write the catalogue rows that only memory holds."""
        if not self._dirty and not self._dirty_seats and not self._dirty_figures:
            return
        matches, seats, figures = dict(self._dirty), dict(self._dirty_seats), list(self._dirty_figures)

        def work() -> None:
            if matches:
                _insert(self._con, "matches", [info.row() for info in matches.values()], MATCH_ROWS, upsert=True)
            if seats:
                _insert(self._con, "seats", [_seat_row(row) for row in seats.values()], SEAT_ROWS, upsert=True)
            replace_figures(self._con, figures)

        self._transaction(work)
        del self._dirty_figures[: len(figures)]
        for match_id, info in matches.items():
            if self._dirty.get(match_id) is info:
                del self._dirty[match_id]
        for key, row in seats.items():
            if self._dirty_seats.get(key) is row:
                del self._dirty_seats[key]
        self._flushed_at = time.monotonic()

    def _recover(self) -> int:
        """Roll catalogue rows that lag their events forward (after a crash); returns how many.

        A row rolls forward only as far as its match's events are whole (each next seq, decoding).
        A row ahead of its events (events were removed, maybe the newest leaves of the tree) is left
        as it is, and the log takes no new events (`damage`)."""
        rows = self._con.execute(
            """SELECT m.match_id, m.last_seq, e.last FROM matches m
               LEFT JOIN (SELECT match_id, max(seq) AS last FROM events GROUP BY match_id) e USING (match_id)
               WHERE e.last IS DISTINCT FROM m.last_seq ORDER BY m.match_id"""
        ).fetchall()
        rolled = 0
        for match_id, last_seq, last in rows:
            if last is None or last < last_seq:
                if self.damage is None:
                    stored = "it has no events" if last is None else f"its events stop at seq {last}"
                    self.damage = (
                        f"match {match_id}'s catalogue row goes on to seq {last_seq} but {stored}: events were "
                        "removed, perhaps the newest leaves of the Merkle tree (run `matchlog verify`)"
                    )
                continue
            info = _select_one(self._con, match_id)
            assert info is not None
            later = self._con.execute(
                "SELECT seq, epoch_us(recorded_at), type, version, payload, hash FROM events"
                " WHERE match_id = ? AND seq > ? ORDER BY seq",
                [match_id, info.last_seq],
            ).fetchall()
            for seq, at_us, type_, version, payload, digest in later:
                if seq != info.last_seq + 1:
                    break  # a seq missing or stored twice: verify names it
                try:
                    event = decode(payload, tag=type_, version=version)
                except DecodeError:
                    break
                info = info.after(seq, event, at_us, bytes(digest))
            if info.last_seq == last_seq:
                continue
            self._dirty[match_id] = info
            for row in info.seat_rows():
                self._dirty_seats[(match_id, row.seat)] = row
            rolled += 1
        self._flush_catalogue()
        return rolled


def _not_whole(info: MatchInfo | None, seqs: list[int], head: bytes | None) -> str | None:
    """Why a match's stored events are not whole, given its catalogue row, its stored seqs in order
    and the hash stored at the catalogue's head (None: they are whole, or there are none yet)."""
    if info is None:
        return "events are stored under its id, but it has no catalogue row (run `matchlog verify`)" if seqs else None
    for k, seq in enumerate(seqs):
        if seq != k:
            said = f"seq {seq} is stored twice" if seq < k else f"seq {k} is missing"
            return f"its {said} (run `matchlog verify`)"
    if len(seqs) != info.last_seq + 1:
        said = "missing" if len(seqs) <= info.last_seq else "stored, but not in its catalogue row"
        return f"its seq {min(len(seqs), info.last_seq + 1)} is {said} (run `matchlog verify`)"
    if head != info.head_hash:
        return f"its event at seq {info.last_seq} is not the head its catalogue row names (run `matchlog verify`)"
    return None


def _check_columns(
    match_id: UUID,
    first: int,
    events: list[Event],
    types: list[str],
    seats: list[int | None],
    actors: list[int | None],
    at_us: list[int],
) -> None:
    """Check what the log needs of a request's events (from seq `first`) a column at a time; where
    something is wrong, find the first event that is, in seq order, and say what.

    Raises:
        StoreError: the events cannot start or continue this match, or a seat, actor or time
            cannot be stored.
    """
    later = types[1:] if first == 0 else types
    if (first == 0 and not (isinstance(events[0], MatchStarted) and events[0].seats)) or _STARTED in later:
        _check_each(match_id, first, events, seats, actors, at_us)
    for column in (seats, actors):
        given = [value for value in column if value is not None]
        if given and (set(map(type, given)) != {int} or min(given) < 0 or max(given) > _MAX_SEAT):
            _check_each(match_id, first, events, seats, actors, at_us)
    if set(map(type, at_us)) != {int} or min(at_us) < AT_US_MIN or max(at_us) >= AT_US_MAX:
        _check_each(match_id, first, events, seats, actors, at_us)


def _check_each(
    match_id: UUID,
    first: int,
    events: list[Event],
    seats: list[int | None],
    actors: list[int | None],
    at_us: list[int],
) -> None:
    """`_check_columns` event by event, raising for the first event found wrong.

    Raises:
        StoreError: as `_check_columns`.
    """
    for offset, (event, seat, actor, at) in enumerate(zip(events, seats, actors, at_us, strict=True)):
        seq, tag = first + offset, event.tag
        if seq == 0:
            if not isinstance(event, MatchStarted):
                raise StoreError(f"match {match_id} must start with match.started, not {tag}", code="store.bad_start")
            if not event.seats:  # every reader of a match needs a seat to show it to
                raise StoreError(f"match {match_id} starts with no seats", code="store.bad_start")
        elif isinstance(event, MatchStarted):
            raise StoreError(
                f"match {match_id} has already started (match.started at seq {seq})", code="store.bad_start"
            )
        if seat is not None and (type(seat) is not int or not 0 <= seat <= _MAX_SEAT):
            raise StoreError(f"{tag}: seat {seat} is not a seat number", code="store.bad_event")
        if actor is not None and (type(actor) is not int or not 0 <= actor <= _MAX_SEAT):
            raise StoreError(f"{tag}: actor {actor} is not a seat number", code="store.bad_event")
        if type(at) is not int or not AT_US_MIN <= at < AT_US_MAX:
            raise StoreError(f"{tag}: {at} us since 1970 is not a time the log can hold", code="store.bad_event")


def _catalogued(types: list[str]) -> list[int]:
    """The offsets, in order, of the events among `types` that change a catalogue row beyond its
    head (found with list.index: most requests hold none)."""
    found = []
    for tag in _CATALOGUED_TAGS:
        start = 0
        while True:
            try:
                start = types.index(tag, start)
            except ValueError:
                break
            found.append(start)
            start += 1
    return sorted(found)


def _moved(match_id: UUID, event_id: str, stored_at: int, seq: int) -> EventConflict:
    """The conflict of an event id sent again for another seq than the one that holds it."""
    return EventConflict(
        f"match {match_id}: event id {event_id} is already stored at seq {stored_at}, and this append "
        f"would put it at seq {seq}: an event id names one event; nothing was written"
    )


def _grown(
    con: duckdb.DuckDBPyConnection,
    tree: Any,
    function: Callable[[duckdb.DuckDBPyConnection, int], tuple[Any, list[bytes]]],
) -> tuple[Any, list[bytes]]:
    """Run `function` at the tree's next leaf and grow `tree` (a copy) by the leaves it wrote."""
    result, hashes = function(con, tree.size)
    insert_tree(con, tree.extend(hashes))
    return result, hashes


def _select_one(con: duckdb.DuckDBPyConnection, match_id: UUID) -> MatchInfo | None:
    found = select_matches(con, "WHERE match_id = ?", [match_id])
    return found[0] if found else None


def _seat_row(row: SeatRow) -> tuple[Any, ...]:
    return (str(row.match_id), *msgspec.structs.astuple(row)[1:])


def _timestamp(at_us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=at_us)


def _insert_events(con: duckdb.DuckDBPyConnection, rows: _EventRows) -> None:
    """Insert event rows (times in us since the epoch): a few through the appender, as rows; many
    through Arrow, a column at a time."""
    if not rows:
        return
    columns = rows.columns()
    if len(rows) < ARROW_ROWS:
        columns[3] = [_timestamp(at) for at in columns[3]]
        _insert_rows(con, "events", list(zip(*columns, strict=True)), EVENT_ROWS, _INSERT_EVENTS)
        return
    table = pa.Table.from_arrays(
        [pa.array(values, type=column.type) for values, column in zip(columns, EVENT_ROWS, strict=True)],
        schema=EVENT_ROWS,
    )
    _insert_table(con, "events", table, _INSERT_EVENTS)


def insert_tree(con: duckdb.DuckDBPyConnection, kept: list[tuple[int, int, bytes]]) -> None:
    """Insert the complete subtrees to keep (one in 256 leaves: most commits have none)."""
    if kept:
        _insert_rows(con, "tree_nodes", kept, TREE_NODE_ROWS, _INSERT_NODES)  # type: ignore[arg-type]


def _insert(
    con: duckdb.DuckDBPyConnection, name: str, rows: list[tuple[Any, ...]], schema: pa.Schema, *, upsert: bool
) -> None:
    sql = _UPSERT_MATCHES if name == "matches" else _UPSERT_SEATS
    _insert_rows(con, name, rows, schema, sql if upsert else sql.replace("INSERT OR REPLACE", "INSERT"))


def _insert_rows(
    con: duckdb.DuckDBPyConnection, name: str, rows: list[tuple[Any, ...]], schema: pa.Schema, sql: str
) -> None:
    """Small plain inserts go through the appender, the rest through Arrow (each is faster at its size)."""
    if len(rows) < ARROW_ROWS and sql.lstrip().startswith("INSERT INTO"):
        appender = con.appender(name)
        appender.append_rows(rows)
        appender.flush()
        return
    arrays = [
        pa.array(values, type=column.type) for values, column in zip(zip(*rows, strict=True), schema, strict=True)
    ]
    _insert_table(con, name, pa.Table.from_arrays(arrays, schema=schema), sql)


def _insert_table(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table, sql: str) -> None:
    """Insert an Arrow table's rows with `sql` (which reads them from `{table}`).

    DuckDB reads them as one stream of batches, not as a table it may scan in parallel: on two
    cores its parallel insert took about half as long again, and its commit and the next
    checkpoint more (each thread appends row groups of its own)."""
    view = f"_matchlog_{name}_batch"
    con.register(view, table.to_reader())
    try:
        con.execute(sql.format(table=view))
    finally:
        con.unregister(view)


_INSERT_EVENTS = """
    INSERT INTO events
    SELECT match_id::UUID, seq, event_id::UUID, recorded_at, actor, game, type, version, seat, payload, hash, leaf
    FROM {table}"""
_INSERT_NODES = """
    INSERT INTO tree_nodes SELECT level, idx, hash FROM {table}"""
_UPSERT_MATCHES = """
    INSERT OR REPLACE INTO matches
    SELECT match_id::UUID, game, status, created_at, ended_at, players, strategies, options, last_seq,
           head_hash, ended_seq, result, winners, origin_match::UUID, origin_seq, series_id, series_game
    FROM {table}"""
_UPSERT_SEATS = """
    INSERT OR REPLACE INTO seats
    SELECT match_id::UUID, seat, name, player, place, score, winner, removed FROM {table}"""


def replace_figures(con: duckdb.DuckDBPyConnection, sets: list[Figures]) -> None:
    """Put each match's figures in place of any it had (inside the caller's transaction); of two
    sets for one match (it ended, was undone and ended again before a flush) the later counts."""
    if not sets:
        return
    sets = list({s.match_id: s for s in sets}.values())
    ids = [str(s.match_id) for s in sets]
    con.execute("DELETE FROM figures WHERE match_id IN (SELECT unnest(?::UUID[]))", [ids])
    rows = [(str(s.match_id), seat, figure, value) for s in sets for seat, figure, value in s.rows]
    if rows:
        _insert_rows(con, "figures", rows, FIGURE_ROWS, _INSERT_FIGURES)
    con.execute(
        "INSERT OR REPLACE INTO projected SELECT unnest(?::UUID[]), unnest(?::BIGINT[]), unnest(?::INTEGER[])",
        [ids, [s.last_seq for s in sets], [s.version for s in sets]],
    )


_INSERT_FIGURES = """
    INSERT INTO figures SELECT match_id::UUID, seat, figure, value FROM {table}"""


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
