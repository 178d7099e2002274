"""A user's SQL (`matchlog sql`, `Log.sql`, `POST /api/sql`) run where it cannot change the log, and
within bounds.

Nothing here judges the text. What keeps the log unchanged is DuckDB's own, whatever the query is:

- the query runs on a cursor of its own, in a transaction DuckDB opens read-only (`BEGIN TRANSACTION
  READ ONLY`): DuckDB refuses any statement that would change a database, in a CTE or not, and the
  transaction is always rolled back and the cursor closed (what it set for itself goes with it);
- exactly one parsed statement is ever executed, so a COMMIT in the text ends only its own
  read-only transaction and nothing can follow it;
- the connection touches no file, loads no extension and changes no setting (its configuration is
  locked: `_SANDBOX` in log.py);
- a read-only transaction may still CHECKPOINT (write what the write-ahead log holds into the file),
  and DuckDB refuses that only while another transaction has declared a write: so while a query
  runs on a log open for writing, a second cursor holds a transaction that declares one and writes
  nothing (an UPDATE of no row), rolled back when the query ends. The log's own writer commits as
  usual meanwhile; it only skips the checkpoints it would have made.

`Store.select` refuses anything but one SELECT first, to say so plainly; the rest holds without it
(`tests/test_sql.py` runs every kind of write past it).

Bounds: a timeout; DuckDB's memory limit (the connection's); the rows returned; and the bytes
fetched into Python, counted as the rows arrive (a result that passes them is an error saying where
it was cut, never a process that swells). DuckDB computes rows 2,048 at a time per thread before any
are fetched: that much of a wide result is held whatever the bound.

Stopping: a timeout, Ctrl-C or the store closing interrupts the query and waits until its thread has
let go of its cursors, however long DuckDB takes to notice; a connection is never closed under a
running query, which is what aborted the process. (`Thread.join` is not used to wait: a Ctrl-C
during it marks a running thread as stopped.)
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import duckdb

from matchlog.events import SqlError, StoreError

__all__ = ["ReadOnlyQuery"]

#: The most rows fetched at once (DuckDB's vector): fewer while the rows are wide.
_BATCH = 2048
#: A transaction that declares a write to the log and makes none: DuckDB refuses a CHECKPOINT while
#: one is open. (An UPDATE declares its write as it is bound; a DELETE only once it finds a row.)
_HOLD_CHECKPOINTS = "UPDATE meta SET value = value WHERE false"
#: Starts the query's transaction on the log itself, so that DuckDB sees one open there (it then
#: refuses FORCE CHECKPOINT, which would otherwise wait for every other transaction to end).
_OPEN_ON_THE_LOG = "SELECT 1 FROM meta LIMIT 0"


class _Stopped(Exception):
    """The query was asked to stop while its rows were being fetched."""


class ReadOnlyQuery:
    """One statement run read-only on its own thread (see the module docstring): start it, then wait
    for its result, or stop it."""

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        statement: duckdb.Statement | str,
        *,
        max_rows: int | None,
        max_bytes: int,
        hold_checkpoints: bool,
    ) -> None:
        self._statement = statement
        self._max_rows = max_rows
        self._max_bytes = max_bytes
        self._cursor = connection.cursor()
        self._holder = connection.cursor() if hold_checkpoints else None
        self._outcome: tuple[list[str], list[tuple[Any, ...]], bool] | BaseException | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._executing = True
        self._stopping = False
        self.stopped_because: str | None = None  # "timeout", "interrupted" or "closed"
        self._thread = threading.Thread(target=self._run, name="matchlog-sql", daemon=True)

    def run(self, timeout: float | None) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """Run the query: (columns, rows, whether rows were cut at max_rows). It is stopped after
        `timeout` seconds, at Ctrl-C, or when `stop` is called from elsewhere (the store closing).

        Raises:
            SqlError, StoreError: as `result` says; `sql.timeout` when it ran out of time.
            KeyboardInterrupt: Ctrl-C stopped it.
        """
        self._thread.start()
        try:
            finished = self._done.wait(timeout)  # (a Ctrl-C interrupts the wait, not the query)
        except KeyboardInterrupt:
            self.stop("interrupted")
            raise
        if not finished:
            self.stop("timeout")
            raise SqlError(f"the query ran longer than {timeout:g} s and was stopped", code="sql.timeout")
        return self.result()

    def stop(self, because: str) -> None:
        """Interrupt the query and return once its thread has let go of its cursors. A Ctrl-C meanwhile
        is held back and raised once it has (it must not leave a connection in use behind it).

        Raises:
            KeyboardInterrupt: Ctrl-C was pressed while the query was being stopped.
        """
        if self.stopped_because is None:
            self.stopped_because = because
        self._stopping = True
        interrupted = False
        while True:
            with self._lock:  # never once the query's thread is rolling back and closing
                if self._executing:
                    with contextlib.suppress(duckdb.Error):
                        self._cursor.interrupt()
            try:
                # Again and again: an interrupt that lands between two statements is lost.
                if self._done.wait(0.05):
                    break
            except KeyboardInterrupt:
                interrupted = True
        if interrupted:
            raise KeyboardInterrupt

    def result(self) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """(columns, rows, whether rows were cut at max_rows) of a finished query.

        Raises:
            SqlError: refused or failed (`sql.error`), out of memory (`sql.memory`), out of time
                (`sql.timeout`), or a result larger than max_bytes (`sql.too_large`).
            StoreError: the log was closed while the query ran (`store.closed`).
            KeyboardInterrupt: Ctrl-C stopped it.
        """
        outcome = self._outcome
        if self.stopped_because == "closed":
            raise StoreError("the log was closed while the query ran", code="store.closed")
        if self.stopped_because == "interrupted":
            raise KeyboardInterrupt
        if isinstance(outcome, tuple):
            return outcome
        if isinstance(outcome, _Stopped | duckdb.InterruptException):
            raise KeyboardInterrupt  # (DuckDB noticed a Ctrl-C of its own)
        if isinstance(outcome, duckdb.OutOfMemoryException):
            raise SqlError(
                f"the query needs more memory than the log allows ($MATCHLOG_MEMORY_LIMIT): {_first_line(outcome)}",
                code="sql.memory",
            )
        if isinstance(outcome, duckdb.Error):
            raise SqlError(_first_line(outcome))
        assert outcome is not None
        raise outcome

    # -- the query's thread --------------------------------------------------------------------

    def _run(self) -> None:
        cursor, holder = self._cursor, self._holder
        try:
            if holder is not None:
                holder.execute("BEGIN TRANSACTION")
                holder.execute(_HOLD_CHECKPOINTS)
            cursor.execute("BEGIN TRANSACTION READ ONLY")
            cursor.execute(_OPEN_ON_THE_LOG)
            cursor.execute(self._statement)
            columns = [d[0] for d in cursor.description or []]
            rows, cut = self._fetch(cursor)
            self._outcome = (columns, rows, cut)
        except BaseException as error:  # handed to the caller's thread by result()
            self._outcome = error
        finally:
            with self._lock:
                self._executing = False
            for each in (cursor, holder):
                if each is not None:
                    with contextlib.suppress(duckdb.Error):  # none is open after a COMMIT in the text
                        each.execute("ROLLBACK")
                    with contextlib.suppress(duckdb.Error):
                        each.close()
            self._done.set()

    def _fetch(self, cursor: duckdb.DuckDBPyConnection) -> tuple[list[tuple[Any, ...]], bool]:
        """At most max_rows rows (and whether there were more), a few at a time while they are wide.

        Raises:
            SqlError: the rows passed max_bytes (`sql.too_large`).
        """
        wanted = None if self._max_rows is None else self._max_rows + 1
        rows: list[tuple[Any, ...]] = []
        size = 0
        batch = 1  # the first row says how wide they are
        while wanted is None or len(rows) < wanted:
            if self._stopping:
                raise _Stopped
            fetched = cursor.fetchmany(batch if wanted is None else min(batch, wanted - len(rows)))
            if not fetched:
                break
            for row in fetched:
                size += _bytes_of(row)
            rows += fetched
            if size > self._max_bytes:
                raise SqlError(
                    f"the result passed the {_size_text(self._max_bytes)} a query may fetch at row {len(rows):,}, "
                    "and was cut there: nothing is returned. Ask for fewer rows (LIMIT) or narrower ones "
                    "(fewer columns, left(payload, 200))",
                    code="sql.too_large",
                )
            room = (self._max_bytes - size) // 2
            batch = max(1, min(_BATCH, room * len(rows) // max(size, 1)))
        cut = wanted is not None and len(rows) == wanted
        return (rows[:-1] if cut else rows), cut


def _bytes_of(value: Any) -> int:
    """About how many bytes a fetched value holds (its text and bytes, and a word a value besides)."""
    total, pending = 0, [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str | bytes | bytearray | memoryview):
            total += len(item) + 16
        elif isinstance(item, list | tuple):
            total += 8 * len(item) + 16
            pending += item
        elif isinstance(item, dict):
            total += 16 * len(item) + 16
            pending += item.keys()
            pending += item.values()
        else:
            total += 16
    return total


def _size_text(count: int) -> str:
    return f"{count / 2**20:.3g} MB" if count >= 2**20 else f"{count / 2**10:.3g} kB"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
