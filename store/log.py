"""The Store: a match log in one DuckDB file (or in memory): opening it, appending to it, closing it.

One process owns a log file at a time (DuckDB locks it, read-only openers included); a second one
gets `StoreBusy` with the holder's pid. Within the process, every write goes through one writer
thread (see writer.py) and reads use a cursor per thread (handle.py).

What the Store does with the open file is in parts mixed into it, one job each: the catalogue's
reads (catalogue.py), reads of events and SQL (readers.py), verification and the Merkle tree
(checks.py), the snapshot cache (snapshots.py), exports and imports (transfer.py), annotations
(annotations.py).
"""

from __future__ import annotations

import atexit
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from pathlib import Path
from uuid import UUID

import duckdb

from matchlog.events import (
    DecodeError,
    Draft,
    Event,
    StoreBusy,
    StoreError,
    canonical,
    decode,
)

from .annotations import AnnotationStore, has_annotations
from .catalogue import Appended, Figures
from .checks import Checks
from .handle import _first_line
from .readers import EventReads
from .schema import DDL, SCHEMA_VERSION
from .snapshots import SnapshotCache
from .sql import ReadOnlyQuery
from .transfer import Transfers
from .tree import build_tree
from .writer import (
    NO_AUTOMATIC_CHECKPOINT,
    Batch,
    Item,
    Request,
    WalCheckpoints,
    Writer,
    insert_tree,
    items,
    replace_figures,
)

__all__ = ["Store", "is_interrupt"]

_CANONICAL_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
_LOCKED = re.compile(r"Conflicting lock is held in (?P<program>.*?) \(PID (?P<pid>\d+)\)")


def is_interrupt(error: BaseException) -> bool:
    """Whether a driver error is DuckDB's answer to a Ctrl-C during a statement (which it rolled
    back): an InterruptException in most of its API, a RuntimeError in some places."""
    return isinstance(error, duckdb.InterruptException) or (
        isinstance(error, RuntimeError) and str(error) == "Query interrupted"
    )


def _memory_limit() -> str:
    """DuckDB's memory limit for a log: $MATCHLOG_MEMORY_LIMIT (e.g. "4GB"), else a quarter of the
    machine's memory, so one runaway query cannot take the machine with it."""
    given = os.environ.get("MATCHLOG_MEMORY_LIMIT")
    if given:
        return given
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return "4GB"
    return f"{max(total // 4 // 2**20, 256)}MB"


#: Every log is opened sandboxed: SQL on its connection can read the log and nothing else (no
#: files, no extensions, no settings changed), which is what lets `sql` run on it.
_SANDBOX = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def _connect(path: str, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file, sandboxed, translating the driver's errors into ours.

    Raises:
        StoreBusy: another process holds the file.
        StoreError: the file is missing (read-only), not a DuckDB file, or unreadable.
    """
    if read_only and path != ":memory:" and not Path(path).exists():
        raise StoreError(f"there is no log at {path}", code="store.missing")
    config = {**_SANDBOX, "memory_limit": _memory_limit(), "lock_configuration": True}
    if not read_only:
        # DuckDB checkpoints inside the commit that takes its WAL past a threshold, stalling that
        # append and every one queued behind it; the writer checkpoints itself instead, between
        # groups, when the log is idle or its WAL large (store/writer.py, `WalCheckpoints`).
        config["checkpoint_threshold"] = NO_AUTOMATIC_CHECKPOINT
    try:
        return duckdb.connect(path, read_only=read_only, config=config)
    except duckdb.IOException as error:
        text = str(error)
        locked = _LOCKED.search(text)
        if locked:
            raise StoreBusy(
                f"the log {path} is in use by another process (pid {locked['pid']}); "
                "wait for it to finish, or use another --db"
            ) from None
        if "lock" in text.lower():
            raise StoreBusy(f"the log {path} is in use by another process; wait for it, or use another --db") from None
        if "permission" in text.lower() or "read-only" in text.lower():
            raise StoreError(f"cannot open the log {path}: {_first_line(text)}", code="store.permission") from None
        raise StoreError(f"cannot open the log {path}: {_first_line(text)}", code="store.unreadable") from None
    except duckdb.Error as error:
        if is_interrupt(error):
            raise KeyboardInterrupt from None
        raise StoreError(f"cannot open the log {path}: {_first_line(str(error))}", code="store.unreadable") from None


#: Files this process has open for writing: one writer per file keeps every seq unique.
_WRITING: set[str] = set()
_WRITING_LOCK = threading.Lock()


class Store(EventReads, Checks, SnapshotCache, Transfers, AnnotationStore):
    """A match log: append with optimistic concurrency, read back, verify, export and import (and
    the annotations beside it). This class opens, appends and closes; the rest is its parts'."""

    def __init__(self, path: str | Path = ":memory:", *, read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only
        self._key = None if read_only or self.path == ":memory:" else os.path.realpath(self.path)
        if self._key is not None:
            with _WRITING_LOCK:
                if self._key in _WRITING:
                    raise StoreBusy(
                        f"the log {self.path} is already open for writing in this process; "
                        "share that Store instead of opening another"
                    )
                _WRITING.add(self._key)
        #: Users' queries running now (`select`): closing stops them before letting go of the file.
        self._queries: set[ReadOnlyQuery] = set()
        self._queries_lock = threading.Lock()
        try:
            self._open()
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        if self._key is not None:
            with _WRITING_LOCK:
                _WRITING.discard(self._key)
            self._key = None

    def _open(self) -> None:
        read_only = self.read_only
        self._db = _connect(self.path, read_only=read_only)
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        self._games: dict[UUID, str] = {}
        try:
            version = self._check_is_log(create=not read_only)
            if not read_only:
                self._drop_old_snapshots()
                self._db.execute(DDL)
                if version == "1":
                    self._upgrade()
                elif version is not None:  # its label put back, were it lost
                    self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
            self.has_annotations = has_annotations(self._db)
            self._digests = self._has_snapshot_digests()
            #: Whether the log has its Merkle tree (a version 1 log opened read-only has none yet).
            self.has_tree = read_only is False or version != "1"
        except Exception as error:
            self._db.close()
            if is_interrupt(error):
                raise KeyboardInterrupt from None
            if not isinstance(error, duckdb.Error):
                raise
            raise StoreError(
                f"{self.path} is not a matchlog log: {_first_line(str(error))}", code="store.unreadable"
            ) from None
        try:
            self._writer = None if read_only else Writer(self._db.cursor(), wal=self._wal_path())
        except Exception as error:  # rolling the catalogue forward failed: say so, and let go of the file
            self._db.close()
            if is_interrupt(error):
                raise KeyboardInterrupt from None
            raise StoreError(
                f"{self.path}: could not bring the catalogue up to date: {error}", code="store.unreadable"
            ) from None
        self._closed = False
        # A store left open at exit is still closed in order (its queue committed, the file released).
        atexit.register(self.close)

    # -- lifecycle ---------------------------------------------------------------------------

    def _wal_path(self) -> Path | None:
        """Where DuckDB keeps the file's write-ahead log (None: the log is in memory)."""
        return None if self.path == ":memory:" else Path(f"{self.path}.wal")

    @property
    def wal_checkpoints(self) -> WalCheckpoints | None:
        """How often the writer has folded the write-ahead log into the file, and what it cost (None:
        the log is read-only). Not the tree's signed checkpoints (`checkpoints`)."""
        return None if self._writer is None else self._writer.wal_checkpoints()

    def _check_is_log(self, *, create: bool) -> str | None:
        """The schema version of the log (None: a new one); refuse a database that is not a matchlog
        log, or is one of a version this matchlog does not read."""
        tables = {name for (name,) in self._db.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if not tables and create:
            return None  # a new log
        if "meta" not in tables or "events" not in tables:
            raise StoreError(f"{self.path} is a database, but not a matchlog log", code="store.unreadable")
        found = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        said = found[0][0] if found else ""
        if said.isdigit() and int(said) > int(SCHEMA_VERSION):
            raise StoreError(
                f"{self.path} is a matchlog log of schema version {said}; this matchlog reads "
                f"versions 1 to {SCHEMA_VERSION}",
                code="store.version",
            )
        # Which it is, its tables say (1 has no leaves; 2 and 3 differ by the annotations table, which
        # the DDL makes): the row is a label for older matchlogs to refuse the log by, and a label
        # deleted or edited by hand must not make the log unreadable.
        leafed = self._db.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'events' AND column_name = 'leaf'"
        ).fetchall()[0][0]
        return SCHEMA_VERSION if leafed else "1"

    def _upgrade(self) -> None:
        """Bring a version 1 log to version 2: build its Merkle tree once, over its events in the order
        the file holds them (the order they were committed: nothing ever deleted or moved a row), in
        one transaction (3-4 s for a million events on 2 shared cores: bench/bench_proofs.py)."""
        con = self._db
        con.begin()
        try:
            build_tree(con, lambda kept: insert_tree(con, kept))
            con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [SCHEMA_VERSION])
            con.commit()
        except BaseException:
            con.rollback()
            raise

    def _drop_old_snapshots(self) -> None:
        """Drop a snapshot cache from before snapshots carried a digest (it is only a cache)."""
        tables = {name for (name,) in self._db.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "snapshots" in tables and not self._has_snapshot_digests():
            self._db.execute("DROP TABLE snapshots")

    def _has_snapshot_digests(self) -> bool:
        return bool(
            self._db.execute(
                "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'snapshots' AND column_name = 'digest'"
            ).fetchall()[0][0]
        )

    def close(self) -> None:
        """Stop the users' queries running, commit what is queued and release the file."""
        with self._queries_lock:
            if self._closed:
                return
            self._closed = True
            running = list(self._queries)
        for query in running:  # a connection closed under a running query aborts the process
            query.stop("closed")
        atexit.unregister(self.close)
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        with self._cursors_lock:
            for cursor in self._cursors:
                cursor.close()
            self._cursors.clear()
        self._db.close()
        self._release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- appending ---------------------------------------------------------------------------

    def append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> Appended:
        """Append `events` at `expected_seq` (the number already stored) in one transaction.

        Returns once the events are durable. Re-sending drafts already stored at those seqs is a no-op.

        Raises:
            ConcurrencyError: the match's next seq is not `expected_seq`; nothing was written.
            StoreError: the events cannot be appended (bad first event, closed log, write failure).
        """
        return self.append_async(match_id, events, expected_seq).result()

    def append_async(
        self,
        match_id: UUID,
        events: Sequence[Event | Draft],
        expected_seq: int,
        *,
        figures: Figures | None = None,
    ) -> Future[Appended]:
        """Like `append`, but returns a future at once; it resolves when the group is committed.

        `figures`, for events that end the match, are written after them, with the catalogue."""
        return self._write().submit_append(Request(match_id, items(events), expected_seq, figures))

    def append_bulk(self, batches: Iterable[tuple[UUID, Sequence[Event | Draft], int]]) -> list[Appended]:
        """Append many matches' events in one transaction: all of them or, on any error, none.

        Raises:
            ConcurrencyError, StoreError: as for `append`; nothing at all was written.
        """
        requests = [Request(match_id, items(events), expected) for match_id, events, expected in batches]
        return self._write().submit_bulk(requests).result()

    def append_bulk_encoded(
        self, batches: Iterable[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]
    ) -> list[Appended]:
        """Like `append_bulk`, for events already in canonical JSON: (event id, time in us, bytes) each,
        as another process of ours sends them. Each is decoded, so the log never holds bytes it cannot
        read, and must be the canonical encoding of what it decodes to, so every reader reads the same
        event from it (a repeated key is one value to msgspec and another to DuckDB's SQL; an export
        of bytes matchlog would not write is refused by its own import).

        Raises:
            StoreError: (store.bad_event) an event does not decode or is not canonical, or as for
                `append_bulk`; nothing at all was written.
        """
        requests = []
        for match_id, encoded, expected in batches:
            items = []
            for seq, (event_id, at_us, payload) in enumerate(encoded, start=expected):
                try:
                    event = decode(payload)
                except DecodeError as error:
                    raise StoreError(f"match {match_id} seq {seq}: {error.message}", code="store.bad_event") from None
                if not canonical(payload, event, event.version):
                    raise StoreError(
                        f"match {match_id} seq {seq}: the {event.tag} event is not written the one way matchlog "
                        "writes it (no spaces, fields in order, no field repeated or unknown, nothing escaped "
                        "that JSON does not need), so not every reader would read the same event from it",
                        code="store.bad_event",
                    )
                if not _CANONICAL_ID.match(event_id):
                    raise StoreError(
                        f"match {match_id} seq {seq}: {event_id!r} is not a canonical event id", code="store.bad_event"
                    )
                items.append(Item(event, event_id, at_us, event.version, payload.decode()))
            requests.append(Request(match_id, Batch.of(items), expected))
        return self._write().submit_bulk(requests).result()

    def on_commit(self, listener: Callable[[list[tuple[UUID, int]]], None]) -> None:
        """Call `listener([(match id, last seq), ...])` on the writer's thread after every commit
        that appended events (a follow stream's wake-up). It must be quick and must not raise."""
        self._write().listeners.append(listener)

    @property
    def writable(self) -> bool:
        """Whether this store can write (it was not opened read-only)."""
        return self._writer is not None

    def put_figures(self, sets: Sequence[Figures], *, wait: bool = True) -> Future[None] | None:
        """Record ended matches' figures (replacing what they had), in one transaction queued after
        every append made so far. Without `wait`, returns the future of that transaction.

        Raises:
            StoreError: the log is read-only or closed, or the write failed.
        """
        if self._writer is None:
            raise StoreError("the log is open read-only", code="store.read_only")
        future = self._writer.submit_call(lambda con: replace_figures(con, list(sets)))
        if not wait:
            return future
        future.result()
        return None
