"""What every part of a `Store` shares: the file's connection, a read cursor per thread, and the
one writer (store/writer.py) that every change goes through.

`Store` (store/log.py) opens the file and owns this state; the parts mixed into it each do one
job with it: the catalogue's reads and upkeep (catalogue.py), reads of events (readers.py),
verification and the Merkle tree (checks.py), the snapshot cache (snapshots.py), exports and
imports (transfer.py), annotations (annotations.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

import duckdb

from matchlog.events import StoreError

if TYPE_CHECKING:
    from .sql import ReadOnlyQuery
    from .writer import Writer

__all__ = ["LogHandle"]


class LogHandle:
    """The state a `Store` keeps while its file is open, and the cursors every part reads with."""

    #: The log's file (":memory:" for one in memory).
    path: str
    _db: duckdb.DuckDBPyConnection
    #: The one writer (None: the log is open read-only).
    _writer: Writer | None
    _local: threading.local
    _cursors: list[duckdb.DuckDBPyConnection]
    _cursors_lock: threading.Lock
    #: Users' queries running now (`select`): closing stops them before letting go of the file.
    _queries: set[ReadOnlyQuery]
    _queries_lock: threading.Lock
    _closed: bool
    #: Whether the snapshot cache has its digests (a log read-only from before them has none).
    _digests: bool
    #: Each match's game, once read (a match's game never changes).
    _games: dict[UUID, str]
    #: Whether the log has its Merkle tree (a version 1 log opened read-only has none yet).
    has_tree: bool

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

    def sync(self) -> None:
        """Make the catalogue tables hold every committed change (for SQL over them)."""
        if self._writer is not None:
            self._writer.sync()

    def _stream(self, query: str, params: list[Any], batch_rows: int) -> Iterator[dict[str, list[Any]]]:
        """Batches of a query's columns, on a cursor of their own (a streaming result holds its cursor)."""
        cursor = self._db.cursor()
        try:
            for batch in cursor.sql(query, params=params).to_arrow_reader(batch_rows):
                yield batch.to_pydict()
        finally:
            cursor.close()


def _match_filter(match_ids: Sequence[UUID] | None) -> tuple[str, list[Any]]:
    if match_ids is None:
        return "", []
    if not match_ids:
        return "WHERE false", []
    return f"WHERE match_id IN ({', '.join('?' for _ in match_ids)})", [str(m) for m in match_ids]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
