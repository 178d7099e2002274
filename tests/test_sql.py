"""`matchlog sql` (and `Log.sql`, `POST /api/sql`) reads and cannot write (issue 22, item 2): every way
SQL has to change a database is tried, through the command, through the service, and past the
statement filter, and the log must be exactly as it was; the result is bounded in time, in DuckDB's
memory and in the bytes fetched; Ctrl-C ends it cleanly, every time.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.events import SqlError, StoreError
from matchlog.store import Store

from .conftest import start_server

runner = CliRunner()

#: Every way SQL has to change a database, or the connection it runs on: data and schema changes in
#: and out of CTEs, transaction control (alone and around a write), several statements, CHECKPOINT
#: in its three spellings, settings, PRAGMAs, files, other databases, extensions, table functions
#: that act, prepared statements.
WRITES = [
    "WITH x AS (DELETE FROM events WHERE seq > 30 RETURNING 1) SELECT count(*) FROM x",
    "WITH x AS (UPDATE figures SET value = 0 RETURNING 1) SELECT count(*) FROM x",
    "WITH x AS (UPDATE matches SET status = 'abandoned' RETURNING 1) SELECT count(*) FROM x",
    "WITH x AS (INSERT INTO events SELECT * FROM events LIMIT 1 RETURNING 1) SELECT count(*) FROM x",
    "WITH x AS (DELETE FROM tree_nodes RETURNING 1) SELECT count(*) FROM x",
    "SELECT * FROM (WITH x AS (DELETE FROM seats RETURNING 1) SELECT count(*) FROM x)",
    "INSERT INTO events SELECT * FROM events",
    "UPDATE events SET seq = seq + 1",
    "DELETE FROM events",
    "TRUNCATE events",
    "DROP TABLE events",
    "DROP VIEW match_results",
    "ALTER TABLE events ADD COLUMN x INTEGER",
    "CREATE TABLE stolen AS SELECT * FROM events",
    "CREATE OR REPLACE VIEW match_results AS SELECT 1 AS x",
    "CREATE MACRO twice(a) AS a * 2",
    "CREATE SEQUENCE s",
    "CREATE TEMP TABLE t AS SELECT 1 AS x",
    "SELECT * FROM checkpoint()",
    "SELECT * FROM force_checkpoint()",
    "CHECKPOINT",
    "FORCE CHECKPOINT",
    "CALL checkpoint()",
    "VACUUM",
    "ANALYZE",
    "PRAGMA enable_profiling",
    "PRAGMA threads = 1",
    "SET threads = 1",
    "SET memory_limit = '100GB'",
    "RESET memory_limit",
    "SET enable_external_access = true",
    "SET GLOBAL search_path = 'temp'",
    "CALL enable_logging()",
    "CALL truncate_duckdb_logs()",
    "COPY events TO '/tmp/matchlog-stolen.csv'",
    "COPY events FROM '/etc/hostname'",
    "EXPORT DATABASE '/tmp/matchlog-stolen'",
    "ATTACH '/tmp/matchlog-other.duckdb' AS other",
    "ATTACH ':memory:' AS other",
    "DETACH DATABASE system",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM query('DELETE FROM events RETURNING 1')",
    "PREPARE wipe AS DELETE FROM events",
    "COMMIT",
    "ROLLBACK",
    "BEGIN",
    "ABORT",
    "SELECT 1; DELETE FROM events",
    "COMMIT; DELETE FROM events",
    "ROLLBACK; DELETE FROM events",
    "BEGIN; DELETE FROM events; COMMIT",
    "WITH x AS (DELETE FROM events RETURNING 1) SELECT count(*) FROM x; COMMIT",
]


def cli(*args: object, code: int | None = 0) -> tuple[str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (args, result.exit_code, result.stdout[-800:], result.stderr[-800:])
    return result.stdout, result.stderr


#: One line per table, view, macro and sequence with what it holds: equal digests, equal logs.
DIGEST = """
SELECT 'table ' || table_name || ' ' || estimated_size FROM duckdb_tables()
UNION ALL SELECT 'view ' || view_name || ' ' || md5(sql) FROM duckdb_views() WHERE NOT internal
UNION ALL SELECT 'macro ' || function_name FROM duckdb_functions() WHERE NOT internal
UNION ALL SELECT 'sequence ' || sequence_name FROM duckdb_sequences()
UNION ALL SELECT 'setting ' || name || '=' || value FROM duckdb_settings()
    WHERE name IN ('enable_external_access', 'memory_limit', 'threads', 'lock_configuration')
"""
TABLES = ("meta", "events", "matches", "seats", "figures", "projected", "tree_nodes", "checkpoints", "snapshots")


def contents(query: Callable[[str], list[Any]]) -> list[str]:
    """What the log holds, through `query(sql) -> rows`: its catalogue and every row of every table."""
    lines = sorted(str(row[0]) for row in query(DIGEST))
    for table in TABLES:
        rows = query(f"SELECT md5(string_agg(t::VARCHAR, chr(10) ORDER BY t::VARCHAR)) FROM {table} t")
        lines.append(f"{table}: {rows}")
    return lines


def file_contents(db: Path) -> list[str]:
    with Store(db, read_only=True) as store:
        return contents(lambda sql: store.select(sql, max_rows=None)[1])


@pytest.fixture
def db(filled_log: Path, tmp_path: Path) -> Path:
    """A copy of the log of every game, with a checkpoint signed (so the tree's tables hold rows)."""
    copy = tmp_path / "log.duckdb"
    shutil.copyfile(filled_log, copy)
    cli("checkpoint", "--db", copy, "-o", tmp_path / "before.checkpoint")
    return copy


@pytest.mark.parametrize("statement", WRITES)
def test_no_query_can_change_the_log_whatever_it_is(db: Path, statement: str):
    before = file_contents(db)
    _, err = cli("sql", statement, "--db", db, code=2)
    assert err.startswith(("error[sql.not_select]", "error[sql.error]")), err
    assert file_contents(db) == before


def test_the_read_only_transaction_holds_without_the_statement_filter(db: Path):
    """Past the filter (any one statement goes to DuckDB), the transaction alone still keeps the log
    whole: DuckDB refuses every change, and a CHECKPOINT, and settles nothing it ran."""
    with Store(db) as store:
        before = contents(lambda sql: store.select(sql, max_rows=None)[1])
        refused = {}
        for statement in WRITES:
            try:
                store.select(statement, only_select=False)
            except SqlError as error:
                refused[statement] = error.message
            assert contents(lambda sql: store.select(sql, max_rows=None)[1]) == before, statement
        for change in ("DELETE FROM events", "UPDATE events SET seq = seq + 1", "DROP TABLE events", WRITES[0]):
            assert "read-only" in refused[change], refused.get(change)
        for checkpoint in ("SELECT * FROM checkpoint()", "CHECKPOINT", "FORCE CHECKPOINT", "CALL checkpoint()"):
            assert "CHECKPOINT" in refused[checkpoint], refused.get(checkpoint)
        assert store.count() > 0 and store.verify() == []


def test_a_checkpoint_through_sql_leaves_the_write_ahead_log_as_it_was(db: Path):
    """A CHECKPOINT would move what the write-ahead log holds into the file: it is refused while a
    query runs, so the WAL keeps every byte (the log's own writer checkpoints when it chooses)."""
    wal = db.with_name(db.name + ".wal")
    with Store(db) as store:
        store.query("UPDATE meta SET value = value")  # (any commit leaves the WAL non-empty)
        held = wal.read_bytes()
        assert held
        for statement in ("SELECT * FROM checkpoint()", "CHECKPOINT"):
            with pytest.raises(SqlError):
                store.select(statement, only_select=False)
            assert wal.read_bytes() == held


def test_a_result_is_bounded_in_the_bytes_it_fetches():
    with Store() as store:
        with pytest.raises(SqlError) as caught:
            store.select("SELECT repeat('x', 1000) AS wide FROM range(100000)", max_rows=None, max_bytes=200_000)
        assert caught.value.code == "sql.too_large"
        assert "195 kB" in caught.value.message and "row " in caught.value.message
        _, rows, cut = store.select("SELECT repeat('x', 1000) FROM range(100)", max_bytes=200_000)
        assert len(rows) == 100 and not cut


#: Runs a command and prints, last on stderr, the most memory it held (its own peak, not this
#: process's other children's).
PEAK = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]);"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr); sys.exit(done.returncode)"
)
#: What DuckDB may hold of a result of 50 kB rows before any is fetched: a vector of 2,048 rows per
#: thread, and one more (it runs a thread per core).
IN_FLIGHT = ((os.cpu_count() or 1) + 1) * 2048 * 50_000


def test_a_wide_result_is_cut_with_a_clear_error_and_the_memory_stays_bounded(db: Path):
    """Rows of 50 kB, ten times what DuckDB holds in flight, all asked for: the command stops at
    64 MB fetched, saying so, and holds what DuckDB computes ahead and little more, never the
    result (it held all of it before: 3 GB on 2 cores)."""
    rows = 10 * IN_FLIGHT // 50_000
    query = f"SELECT repeat('x', 50000) AS wide FROM range({rows})"
    command = [sys.executable, "-m", "matchlog.cli", "sql", query, "--max-rows", "10000000", "--db", str(db)]
    process = subprocess.run(
        [sys.executable, "-c", PEAK, *command],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    said, peak = process.stderr.rsplit("\n", 2)[:2]
    assert process.returncode == 2, process.stderr
    assert said.startswith("error[sql.too_large]: ") and "64 MB" in said and "\n" not in said, process.stderr
    assert int(peak) < 500_000_000 + 2 * IN_FLIGHT < rows * 50_000, f"{int(peak):,} bytes"


def test_a_query_beyond_duckdbs_memory_limit_is_stopped_with_a_clear_error(db: Path):
    query = "SELECT list(repeat('x', 200)) FROM range(5000000)"
    process = subprocess.run(
        [sys.executable, "-m", "matchlog.cli", "sql", query, "--db", str(db)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MATCHLOG_MEMORY_LIMIT": "100MB"},
    )
    assert process.returncode == 2 and process.stderr.startswith("error[sql.memory]: "), process.stderr


LONG = "SELECT sum(a.range * b.range) FROM range(100000000) a, range(100000000) b"


def test_a_query_past_its_timeout_is_stopped(db: Path):
    _, err = cli("sql", LONG, "--timeout", "0.5", "--db", db, code=2)
    assert err.startswith("error[sql.timeout]: the query ran longer than 0.5 s")


def cpu_seconds(pid: int) -> float:
    """The CPU time process `pid` has used so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_during_a_query_exits_130_with_one_line_every_time(db: Path):
    """A real `matchlog sql` and a real SIGINT, sent once the query is running: once the process has
    used a second more CPU than a whole `sql "SELECT 1"` does, only the query can have used it."""
    command = [sys.executable, "-m", "matchlog.cli", "sql"]
    started = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*command, "SELECT 1", "--db", str(db)], check=True, capture_output=True, timeout=300)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    whole = (ended.ru_utime + ended.ru_stime) - (started.ru_utime + started.ru_stime)
    for attempt in range(5):
        process = subprocess.Popen(
            [*command, LONG, "--timeout", "3600", "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 300
        while process.poll() is None and cpu_seconds(process.pid) < whole + 1.0:
            assert time.monotonic() < deadline, "the query never started"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=300)
        assert process.returncode == 130, (attempt, process.returncode, err.decode()[-2000:])
        assert err.decode().startswith("error[interrupted]: ") and err.count(b"\n") == 1, err.decode()[-2000:]
        assert out == b""
    assert cli("verify", "--db", db)[0].startswith("ok:")


def test_closing_a_store_stops_the_queries_running_on_it_first(db: Path):
    """A server stopped while an admin's query runs: the query is stopped, then the file let go
    (closing it under the query aborted the process)."""
    store = Store(db)
    failures: list[BaseException] = []

    def query() -> None:
        try:
            store.select(LONG, timeout=3600)
        except BaseException as error:
            failures.append(error)

    thread = threading.Thread(target=query, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300
    while not store.running_queries():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    store.close()
    thread.join(300)
    assert not thread.is_alive()
    assert len(failures) == 1 and isinstance(failures[0], StoreError) and failures[0].code == "store.closed"
    with Store(db) as again:
        assert again.verify() == []


def test_sql_through_the_service_cannot_write_and_is_bounded(filled_log: Path, tmp_path: Path):
    db = tmp_path / "served.duckdb"
    shutil.copyfile(filled_log, db)
    server = start_server(db)
    try:
        with httpx.Client(base_url=server.url, headers=server.headers(), timeout=600) as client:

            def query(sql: str, **limits: float) -> httpx.Response:
                return client.post("/api/sql", json={"query": sql, **limits})

            def rows(sql: str) -> list[list[object]]:
                answer = query(sql, max_rows=100_000)
                assert answer.status_code == 200, answer.text
                return answer.json()["rows"]

            # (the server signs checkpoints of its own as it runs)
            before = [line for line in contents(rows) if "checkpoints" not in line]
            for statement in WRITES:
                answer = query(statement)
                assert answer.status_code == 400, (statement, answer.status_code, answer.text)
                assert answer.json()["code"] in ("sql.not_select", "sql.error"), answer.text
            assert [line for line in contents(rows) if "checkpoints" not in line] == before
            wide = query("SELECT repeat('x', 50000) FROM range(100000)", max_rows=100_000)
            assert wide.status_code == 400 and wide.json()["code"] == "sql.too_large", wide.text
            slow = query(LONG, timeout=0.5)
            assert slow.status_code == 400 and slow.json()["code"] == "sql.timeout", slow.text
            assert rows("SELECT count(*) FROM matches") == [[len(client.get("/api/matches").json())]]
            peak = next(
                int(line.split()[1]) * 1024
                for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines()
                if line.startswith("VmHWM:")
            )
            assert peak < 800_000_000 + 2 * IN_FLIGHT, f"{peak:,} bytes"  # (5 GB of rows asked for)
    finally:
        assert server.stop() == 0
    assert cli("verify", "--deep", "--db", db)[0].startswith("ok:")
