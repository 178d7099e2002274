"""The Store: a match log in one DuckDB file (or in memory), and everything read back from it.

One process owns a log file at a time (DuckDB locks it, read-only openers included); a second one
gets `StoreBusy` with the holder's pid. Within the process, every write goes through one writer
thread (see writer.py) and reads use a cursor per thread.
"""

from __future__ import annotations

import atexit
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from typing import IO, Any
from uuid import UUID

import duckdb
import msgspec

from matchlog.events import (
    DecodeError,
    Draft,
    Event,
    ImportRejected,
    MatchStarted,
    ProofError,
    Record,
    SqlError,
    StoreBusy,
    StoreError,
    UnknownMatch,
    canonical,
    control_character,
    decode,
    now_us,
    uuid_from_int,
)

from .annotations import AnnotationStore, has_annotations
from .catalogue import Appended, Figures, Finding, MatchInfo, chain_findings, select_matches
from .chain import SQL_EXPECTED_HASH, snapshot_digest
from .limits import DEFAULT_SQL_BYTES, DEFAULT_SQL_ROWS, DEFAULT_SQL_TIMEOUT
from .schema import DDL, SCHEMA_VERSION
from .sql import ReadOnlyQuery
from .tree import TreeReader, build_tree, leaves, tree_hashes
from .writer import NO_AUTOMATIC_CHECKPOINT, Item, Request, WalCheckpoints, Writer, insert_tree, items, replace_figures

__all__ = ["Store", "is_interrupt"]

# Event ids come as text: DuckDB's own UUID objects cost ~15 µs a row, text and `_uuid` about 1.
_RECORD_COLUMNS = "seq, event_id::VARCHAR, epoch_us(recorded_at), actor, type, version, payload, hash"
#: The largest LIMIT or OFFSET DuckDB takes.
_MAX_ROWS = 2**62
_CANONICAL_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
_LOCKED = re.compile(r"Conflicting lock is held in (?P<program>.*?) \(PID (?P<pid>\d+)\)")
#: The times a log can hold: from 1970 to the end of year 9999 (microseconds since the epoch).
_LAST_US = 253_402_300_799_999_999

#: A check of one imported match (its events from seq 0, each with its line), by the rules: it
#: raises ImportRejected naming the line. See `matchlog.replay.imports`.
MatchCheck = Callable[[UUID, list[tuple[int, Event]]], None]


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


_VERIFY = f"""
WITH chained AS (
    SELECT match_id, seq, type, hash,
           row_number() OVER w - 1 AS position,
           {SQL_EXPECTED_HASH} AS expected
    FROM events {{events_where}}
    WINDOW w AS (PARTITION BY match_id ORDER BY seq)
), per_match AS (
    SELECT match_id,
           min(position) FILTER (WHERE seq <> position) AS gap_at,
           min(seq) FILTER (WHERE seq <> position) AS gap_found,
           min(seq) FILTER (WHERE hash <> expected) AS bad_hash_at,
           bool_or(position = 0 AND type <> 'match.started') AS bad_start,
           max(seq) AS last_seq
    FROM chained GROUP BY match_id
), catalogue AS (
    SELECT match_id, last_seq, head_hash FROM matches {{matches_where}}
), head_in_log AS (
    SELECT e.match_id, e.hash FROM events e JOIN catalogue c ON e.match_id = c.match_id AND e.seq = c.last_seq
)
SELECT coalesce(p.match_id, c.match_id), p.gap_at, p.gap_found, p.bad_hash_at, p.bad_start, p.last_seq,
       c.last_seq, c.head_hash, h.hash,
       CASE WHEN c.match_id IS NULL THEN 'no catalogue' WHEN p.match_id IS NULL THEN 'no events' END
FROM per_match p
FULL OUTER JOIN catalogue c ON p.match_id = c.match_id
LEFT JOIN head_in_log h ON h.match_id = c.match_id
WHERE p.gap_at IS NOT NULL OR p.bad_hash_at IS NOT NULL OR p.bad_start
   OR c.match_id IS NULL OR p.match_id IS NULL
   OR c.last_seq > p.last_seq OR h.hash IS DISTINCT FROM c.head_hash
ORDER BY 1
"""


#: The tree's leaves against the events (the first few of each kind of disagreement).
_VERIFY_TREE = """
WITH no_leaf AS (
    SELECT 'tree.no_leaf' AS code, match_id, seq, NULL::BIGINT AS leaf
    FROM events WHERE leaf IS NULL ORDER BY match_id, seq LIMIT 10
), gaps AS (
    SELECT 'tree.leaf_gap' AS code, match_id, seq, leaf
    FROM (SELECT match_id, seq, leaf, lag(leaf) OVER (ORDER BY leaf) AS before FROM {leaves})
    WHERE leaf <> coalesce(before::HUGEINT + 1, 0)  -- (a leaf edited to the largest BIGINT has no next)
    ORDER BY leaf LIMIT 10
)
SELECT * FROM no_leaf UNION ALL SELECT * FROM gaps
"""

_LATEST_CHECKPOINT = "SELECT size, root, note, epoch_us(signed_at) FROM checkpoints ORDER BY signed_at DESC, size DESC"


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


#: Files this process has open for writing: one writer per file keeps every seq unique.
_WRITING: set[str] = set()
_WRITING_LOCK = threading.Lock()


class Store(AnnotationStore):
    """A match log: append with optimistic concurrency, read back, verify, export and import (and
    the annotations beside it: store/annotations.py)."""

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

    def _read(self) -> duckdb.DuckDBPyConnection:
        """This thread's read cursor."""
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            cursor = self._db.cursor()
            self._local.cursor = cursor
            with self._cursors_lock:
                self._cursors.append(cursor)
        return cursor

    def _write(self) -> Writer:
        if self._writer is None:
            raise StoreError(f"the log {self.path} is open read-only", code="store.read_only")
        return self._writer

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
        as another process of ours sends them. Each is decoded, so the log never holds bytes it cannot read.

        Raises:
            StoreError: an event does not decode, or as for `append_bulk`; nothing at all was written.
        """
        requests = []
        for match_id, encoded, expected in batches:
            items = []
            for event_id, at_us, payload in encoded:
                try:
                    event = decode(payload)
                except DecodeError as error:
                    raise StoreError(f"match {match_id}: {error.message}", code="store.bad_event") from None
                if not _CANONICAL_ID.match(event_id):
                    raise StoreError(
                        f"match {match_id}: {event_id!r} is not a canonical event id", code="store.bad_event"
                    )
                items.append(Item(event, event_id, at_us, event.version, payload.decode()))
            requests.append(Request(match_id, tuple(items), expected))
        return self._write().submit_bulk(requests).result()

    # -- reading -----------------------------------------------------------------------------

    def match(self, match_id: UUID | str) -> MatchInfo:
        """The catalogue row of one match (a unique id prefix will do).

        Raises:
            UnknownMatch: no such match.
        """
        resolved = match_id if isinstance(match_id, UUID) else self.resolve(match_id)
        # The writer may write the row to its table (and forget it) between our query and our look
        # in its memory: what memory held before the query is as fresh as anything acknowledged then.
        earlier = self._writer.fresh(resolved) if self._writer is not None else None
        found = self._fresh(select_matches(self._read(), "WHERE match_id = ?", [resolved]))
        if not found:
            if earlier is not None:
                return earlier
            raise UnknownMatch(f"no match {resolved} in {self.path}")
        if earlier is not None and earlier.last_seq > found[0].last_seq:
            return earlier
        return found[0]

    def info(self, match_id: UUID | str) -> MatchInfo:
        """`match` under the name the `Log` interface gives it (code that records or reads through
        either, such as the referee, calls this one).

        Raises:
            UnknownMatch: no such match.
        """
        return self.match(match_id)

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

    def _fresh(self, infos: list[MatchInfo]) -> list[MatchInfo]:
        """Catalogue rows as this process knows them (its writer may hold newer ones in memory)."""
        if self._writer is None:
            return infos
        return [self._writer.fresh(info.match_id) or info for info in infos]

    def sync(self) -> None:
        """Make the catalogue tables hold every committed change (for SQL over them)."""
        if self._writer is not None:
            self._writer.sync()

    def matches(
        self,
        *,
        game: str | None = None,
        status: str | None = None,
        player: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MatchInfo]:
        """Catalogue rows, newest first: of one game, status, player (a seat's name or strategy), or
        started at or after `since` (UTC); `limit` and `offset` page through them."""
        self.sync()  # the filters read the table, which may lag what this process has committed
        clauses: list[str] = []
        params: list[Any] = []
        if game is not None:
            clauses.append("game = ?")
            params.append(game)
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if player is not None:
            clauses.append("(list_contains(players, ?) OR list_contains(strategies, ?))")
            params += [player, player]
        if since is not None:
            clauses.append("created_at >= ?")
            params.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        # A limit beyond what the log could hold is no limit (DuckDB takes at most a BIGINT).
        tail = f" LIMIT {int(limit)}" if limit is not None and limit < _MAX_ROWS else ""
        if offset:
            tail += f" OFFSET {min(int(offset), _MAX_ROWS)}"
        return self._fresh(
            select_matches(self._read(), f"{where} ORDER BY created_at DESC, match_id DESC{tail}", params)
        )

    def resolve(self, match_id: UUID | str) -> UUID:
        """The full id of a match given its id or a unique prefix of it.

        Raises:
            UnknownMatch: no match, or more than one, has that prefix.
        """
        if isinstance(match_id, UUID):
            found = self._read().execute("SELECT match_id FROM matches WHERE match_id = ?", [match_id]).fetchall()
            if not found:
                raise UnknownMatch(f"no match {match_id} in {self.path}")
            return match_id
        text = str(match_id).strip().lower()
        if not re.fullmatch(r"[0-9a-f-]{1,36}", text):
            raise UnknownMatch(f"{match_id!r} is not a match id (hex digits and dashes)")
        found = (
            self._read()
            .execute(
                "SELECT match_id FROM matches WHERE match_id::VARCHAR LIKE ? ORDER BY match_id LIMIT 2",
                [text + "%"],
            )
            .fetchall()
        )
        if not found:
            raise UnknownMatch(f"no match {text} in {self.path}")
        if len(found) > 1:
            raise UnknownMatch(f"{text} is the start of more than one match id; give more of it")
        return found[0][0]

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

    def _stream(self, query: str, params: list[Any], batch_rows: int) -> Iterator[dict[str, list[Any]]]:
        """Batches of a query's columns, on a cursor of their own (a streaming result holds its cursor)."""
        cursor = self._db.cursor()
        try:
            for batch in cursor.sql(query, params=params).to_arrow_reader(batch_rows):
                yield batch.to_pydict()
        finally:
            cursor.close()

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

    # -- verify ------------------------------------------------------------------------------

    def verify(self, matches: UUID | str | Sequence[UUID] | None = None) -> list[Finding]:
        """Check the hash chains of one match, some, or all, and their catalogue heads; [] when all is well.

        The catalogue may lag the events (a writer that stopped before writing its last heads);
        that is not a finding as long as the chain holds the head the catalogue names.

        Raises:
            UnknownMatch: a single match was asked for and there is no such match.
        """
        self.sync()
        params: list[Any] = []
        events_where = matches_where = ""
        if matches is not None:
            ids = [self.resolve(matches)] if isinstance(matches, UUID | str) else list(matches)
            events_where = matches_where = "WHERE match_id IN (SELECT unnest(?::UUID[]))"
            params = [[str(m) for m in ids]] * 2
        rows = self._read().execute(_VERIFY.format(events_where=events_where, matches_where=matches_where), params)
        return chain_findings(rows.fetchall())

    # -- the Merkle tree ---------------------------------------------------------------------

    def tree(self) -> TreeReader:
        """A reader of the committed Merkle tree (store/tree.py), for one question: a proof, a root.

        Raises:
            ProofError: the log has no tree yet (a version 1 log opened read-only).
        """
        if not self.has_tree:
            raise ProofError(
                f"{self.path} has no Merkle tree yet (a log of schema version 1): open it once for "
                "writing (any matchlog command its owner runs) to build it",
                code="proof.no_tree",
            )
        return TreeReader(self._read(), annotations=self.has_annotations)

    @property
    def committed(self) -> int:
        """How many events this process has seen committed to the log (the tree's size): it grows
        with every commit, so an answer about the whole log can be kept by it (0 when the log is
        open read-only, which nothing changes while it is open; -1 when its tree is damaged, which
        takes no events)."""
        if self._writer is None:
            return 0
        frontier = self._writer.tree
        return -1 if frontier is None else frontier.size

    def tree_head(self) -> tuple[int, bytes]:
        """The committed tree's size and root.

        Raises:
            ProofError: the log has no tree yet, or its right edge cannot be computed (`proof.broken_tree`).
        """
        if self._writer is not None:
            frontier = self._writer.tree  # replaced whole after each commit: read it once
            if frontier is None:
                raise ProofError(f"{self.path}: {self._writer.damage}", code="proof.broken_tree")
            return frontier.size, frontier.root()
        tree = self.tree()
        size = tree.size()
        return size, tree.frontier(size).root()

    def checkpoint(
        self, sign: Callable[[int, bytes], str], reuse: Callable[[str], bool] = lambda note: True
    ) -> tuple[int, bytes, str, int]:
        """Sign the committed tree's size and root (`sign(size, root)` gives the note) and keep the
        checkpoint in the log; the latest one instead when the tree has not changed since it and
        `reuse(note)` (it is signed by the same key). Returns (size, root, note, signed at in us).

        Raises:
            StoreError: the log is read-only or closed, or damaged where its tree is (`store.damaged`:
                a signature would vouch for a tree that may not be the one the log grew).
        """
        writer = self._write()
        if writer.damage is not None:
            raise StoreError(f"no checkpoint is signed: {writer.damage}", code="store.damaged")

        def work(con: duckdb.DuckDBPyConnection) -> tuple[int, bytes, str, int]:
            frontier = writer.tree  # on the writer's thread: exactly what is committed
            assert frontier is not None  # (a tree that cannot be computed is damage: refused above)
            size, root = frontier.size, frontier.root()
            latest = con.execute(_LATEST_CHECKPOINT + " LIMIT 1").fetchall()
            if latest and latest[0][0] == size and bytes(latest[0][1]) == root and reuse(latest[0][2]):
                return size, root, latest[0][2], latest[0][3]
            note, signed_us = sign(size, root), now_us()
            con.execute(
                "INSERT INTO checkpoints VALUES (?, ?, make_timestamp(?::BIGINT), ?)", [size, root, signed_us, note]
            )
            return size, root, note, signed_us

        return writer.submit_call(work).result()

    def rows(self, match_id: UUID) -> list[tuple[int, str, int, int | None, str, str, int, int | None, str, bytes]]:
        """The stored rows of one match exactly as the chain hashes them, in seq order: (seq, event id,
        time in us, actor, game, type, version, seat, payload, hash). What a proof shows of an event."""
        rows = (
            self._read()
            .execute(
                "SELECT seq, event_id::VARCHAR, epoch_us(recorded_at), actor, game, type, version, seat, payload, hash"
                " FROM events WHERE match_id = ? ORDER BY seq",
                [match_id],
            )
            .fetchall()
        )
        return [(*row[:9], bytes(row[9])) for row in rows]  # type: ignore[misc]

    def tree_leaves(self, batch_rows: int = 200_000) -> Iterator[tuple[list[int], list[str], list[int], list[bytes]]]:
        """Every leaf of the tree in order, in batches of columns: leaf index, match id, seq, and its
        event's chain hash.

        Raises:
            ProofError: the log has no tree yet.
        """
        self.tree()
        return tree_hashes(self._db, batch_rows, annotations=self.has_annotations)

    def tree_nodes(self) -> dict[tuple[int, int], bytes]:
        """The kept complete subtrees: (level, index) -> hash.

        Raises:
            ProofError: the log has no tree yet.
        """
        self.tree()
        rows = self._read().execute("SELECT level, idx, hash FROM tree_nodes").fetchall()
        return {(level, idx): bytes(digest) for level, idx, digest in rows}

    def verify_tree(self) -> list[Finding]:
        """Check that every event has its leaf, and the leaves (events' and annotations') are numbered
        0, 1, 2, ... with no gap or repeat (an entry removed leaves a gap, one copied in a repeat). []
        when all is well (or there is no tree)."""
        if not self.has_tree:
            return []
        self.sync()
        findings = []
        rows = self._read().execute(_VERIFY_TREE.format(leaves=leaves(self.has_annotations))).fetchall()
        for code, match_id, seq, leaf in rows:
            message = {
                "tree.no_leaf": "the event has no leaf in the tree: it was added without the log",
                "tree.leaf_gap": f"the tree's leaves jump to {leaf}: an event or annotation was removed, or leaves "
                "renumbered",
            }[code]
            findings.append(Finding(match_id, seq, code, message))
        return findings

    def checkpoints(self, *, limit: int | None = None) -> list[tuple[int, bytes, str, int]]:
        """The checkpoints the log keeps, newest first: (size, root, note, signed at in us).

        Raises:
            ProofError: the log has no tree yet.
        """
        self.tree()
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        rows = self._read().execute(_LATEST_CHECKPOINT + tail).fetchall()
        return [(size, bytes(root), note, at) for size, root, note, at in rows]

    # -- snapshots ---------------------------------------------------------------------------

    def snapshot(self, match_id: UUID, upto: int, engine: str) -> tuple[int, bytes] | None:
        """The latest cached state of `match_id` at a seq <= `upto`, for the engine key given, whose
        digest matches the log as it is now; one that does not is dropped, never returned."""
        if not self._digests:
            return None
        while upto >= 0:  # the nearest first; only a bad one (dropped) sends it further back
            row = (
                self._read()
                .execute(
                    "SELECT s.seq, s.state, s.digest, e.hash FROM snapshots s"
                    " LEFT JOIN events e ON e.match_id = s.match_id AND e.seq = s.seq"
                    " WHERE s.match_id = ? AND s.seq <= ? AND s.engine = ? ORDER BY s.seq DESC LIMIT 1",
                    [match_id, upto, engine],
                )
                .fetchone()
            )
            if row is None:
                return None
            seq, state, digest, head = row
            if head is not None and snapshot_digest(bytes(head), engine, bytes(state)) == bytes(digest):
                return seq, bytes(state)
            self.drop_snapshot(match_id, seq, engine)
            upto = seq - 1
        return None

    def snapshot_keys(self) -> list[tuple[UUID, int, str]]:
        """Every cached state's (match id, seq, engine key)."""
        if not self._digests:
            return []
        return [tuple(row) for row in self._read().execute("SELECT match_id, seq, engine FROM snapshots").fetchall()]  # type: ignore[misc]

    def snapshot_at(self, match_id: UUID, seq: int, engine: str) -> tuple[bytes, bool] | None:
        """The cached state at exactly `seq`, and whether its digest matches the log (not dropped)."""
        rows = (
            self._read()
            .execute(
                "SELECT s.state, s.digest, e.hash FROM snapshots s"
                " LEFT JOIN events e ON e.match_id = s.match_id AND e.seq = s.seq"
                " WHERE s.match_id = ? AND s.seq = ? AND s.engine = ?",
                [match_id, seq, engine],
            )
            .fetchall()
        )
        if not rows:
            return None
        state, digest, head = rows[0]
        matches = head is not None and snapshot_digest(bytes(head), engine, bytes(state)) == bytes(digest)
        return bytes(state), matches

    def drop_snapshot(self, match_id: UUID, seq: int, engine: str) -> None:
        """Drop one cached state (a read-only log keeps its cache as it is)."""
        if self._writer is None:
            return
        self._writer.submit_call(
            lambda con: con.execute(
                "DELETE FROM snapshots WHERE match_id = ? AND seq = ? AND engine = ?", [match_id, seq, engine]
            )
        ).result()

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

    def put_snapshot(self, match_id: UUID, seq: int, engine: str, state: bytes, *, wait: bool = True) -> None:
        """Cache a state folded to `seq`, with its digest (a read-only log silently keeps no cache);
        without `wait`, return once it is queued (a reader need not wait for a cache, and a lost
        entry costs only a fold)."""
        if self._writer is None:
            return
        found = self._read().execute("SELECT hash FROM events WHERE match_id = ? AND seq = ?", [match_id, seq])
        heads = found.fetchall()
        if len(heads) != 1:
            return  # no single event there to tie it to
        digest = snapshot_digest(bytes(heads[0][0]), engine, state)
        done = self._writer.submit_call(
            lambda con: con.execute(
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?)", [match_id, seq, engine, state, digest]
            )
        )
        if wait:
            done.result()

    def put_snapshots(self, match_id: UUID, engine: str, states: Sequence[tuple[int, bytes]]) -> None:
        """Cache several states of one match folded to their seqs, as `put_snapshot` without `wait`
        does one, with one read of their heads and one transaction for all (a long fold caches
        hundreds: one commit each kept the writer busy long after the fold had returned)."""
        if self._writer is None or not states:
            return
        heads = dict(
            self._read()
            .execute(
                "SELECT seq, hash FROM events WHERE match_id = ? AND seq BETWEEN ? AND ? AND list_contains(?, seq)",
                [match_id, min(s for s, _ in states), max(s for s, _ in states), [s for s, _ in states]],
            )
            .fetchall()
        )
        kept = [(seq, state) for seq, state in states if seq in heads]
        if not kept:
            return
        import pyarrow as pa

        table = pa.table(  # one insert of all (executemany runs a statement a row)
            {
                "match_id": pa.array([str(match_id)] * len(kept)),
                "seq": pa.array([seq for seq, _ in kept], pa.int64()),
                "engine": pa.array([engine] * len(kept)),
                "state": pa.array([state for _, state in kept], pa.binary()),
                "digest": pa.array(
                    [snapshot_digest(bytes(heads[seq]), engine, state) for seq, state in kept], pa.binary()
                ),
            }
        )

        def insert(con: duckdb.DuckDBPyConnection) -> None:
            con.register("new_snapshots", table)
            try:
                con.execute(
                    "INSERT OR REPLACE INTO snapshots"
                    " SELECT match_id::UUID, seq, engine, state, digest FROM new_snapshots"
                )
            finally:
                con.unregister("new_snapshots")

        self._writer.submit_call(insert)

    def drop_snapshots(self) -> int:
        """Empty the snapshot cache; returns how many states it held."""
        return self._write().submit_call(lambda con: con.execute("DELETE FROM snapshots").fetchall()[0][0]).result()

    # -- export / import ---------------------------------------------------------------------

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
                requests.append(Request(match_id, tuple(items), stored.last_seq + 1))
            else:
                requests.append(Request(match_id, tuple(items), 0))
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
            for what, text in (("name", sitting.name), ("player", sitting.player)):
                found = control_character(text)
                if found is not None:
                    raise ImportRejected(f"line {number}: seat {seat}'s {what} holds a control character ({found})")


def _match_filter(match_ids: Sequence[UUID] | None) -> tuple[str, list[Any]]:
    if match_ids is None:
        return "", []
    if not match_ids:
        return "WHERE false", []
    return f"WHERE match_id IN ({', '.join('?' for _ in match_ids)})", [str(m) for m in match_ids]


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


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
