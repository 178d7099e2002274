"""The writer checkpoints the file itself, between jobs, never inside an append: when the log is
idle, or its write-ahead log large; DuckDB's own checkpoints, which stall the commit that triggers
them, are off (issue 25, item 2)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from matchlog.events import GuessMade, HandChosen, MatchStarted, Seat, uuid7
from matchlog.store import Store
from matchlog.store import writer as writer_module

from .conftest import Served, wait_for

SEATS = (Seat("a", "p"), Seat("b", "p"))


def _turns(count: int) -> list[Any]:
    """`count` events a Porrinha match could hold after its start (the store judges no rules)."""
    return [HandChosen(seat=n % 2, hand=1) if n % 3 else GuessMade(seat=n % 2, guess=2) for n in range(count)]


def test_duckdb_never_checkpoints_on_its_own_in_a_log_open_for_writing(tmp_path: Path) -> None:
    with Store(tmp_path / "own.duckdb") as store:
        threshold = store.query("SELECT current_setting('checkpoint_threshold')")[0][0]
        assert threshold.endswith("GiB") and float(threshold.split()[0]) > 100, threshold


def test_an_idle_log_is_checkpointed_and_the_checkpoints_are_counted(tmp_path: Path) -> None:
    db = tmp_path / "idle.duckdb"
    with Store(db) as store:
        match_id = uuid7()
        store.append(match_id, [MatchStarted(game="porrinha", options={}, seats=SEATS), *_turns(50)], 0)
        done = wait_for(
            lambda: (c := store.wal_checkpoints) is not None and c.idle >= 1 and c.wal_bytes == 0 and c,
            "the writer to checkpoint the idle log",
        )
        assert done.forced == 0 and done.seconds > 0 and done.longest <= done.seconds
    assert not Path(f"{db}.wal").exists() or Path(f"{db}.wal").stat().st_size == 0
    with Store(db, read_only=True) as reopened:
        assert len(reopened.read(match_id)) == 51


def test_a_large_wal_is_checkpointed_between_groups_never_inside_one_and_every_append_is_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appenders that never let the log idle, a WAL limit small enough to be reached many times:
    every checkpoint runs while no transaction of the writer is open, and every append is
    acknowledged, stored once, and chained."""
    monkeypatch.setattr(writer_module, "WAL_LIMIT", 1 << 16)
    inside = threading.local()
    seen: list[bool] = []
    write, transaction, checkpoint = (
        writer_module.Writer._write,
        writer_module.Writer._transaction,
        writer_module.Writer._checkpoint,
    )

    def held(method: Any) -> Any:
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            inside.open = True
            try:
                return method(self, *args, **kwargs)
            finally:
                inside.open = False

        return run

    def watched(self: Any, *, forced: bool) -> None:
        seen.append(getattr(inside, "open", False))
        checkpoint(self, forced=forced)

    monkeypatch.setattr(writer_module.Writer, "_write", held(write))
    monkeypatch.setattr(writer_module.Writer, "_transaction", held(transaction))
    monkeypatch.setattr(writer_module.Writer, "_checkpoint", watched)
    db = tmp_path / "busy.duckdb"
    matches = [uuid7() for _ in range(8)]
    acknowledged: list[int] = [0] * len(matches)
    with Store(db) as store:
        start = threading.Barrier(len(matches))

        def appender(number: int) -> None:
            match_id = matches[number]
            start.wait()
            store.append(match_id, [MatchStarted(game="porrinha", options={}, seats=SEATS)], 0)
            for batch in range(40):
                appended = store.append(match_id, _turns(10), 1 + batch * 10)
                acknowledged[number] = appended.last_seq

        threads = [threading.Thread(target=appender, args=(n,)) for n in range(len(matches))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        counted = store.wal_checkpoints
        assert counted is not None and counted.forced >= 1, counted
        assert seen and not any(seen), "a checkpoint ran inside one of the writer's transactions"
        assert acknowledged == [400] * len(matches)
    with Store(db, read_only=True) as reopened:
        for match_id in matches:
            assert [r.seq for r in reopened.read(match_id)] == list(range(401))
        assert reopened.verify() == []


def test_the_service_reports_its_writer_s_checkpoints(served: Served) -> None:
    health = httpx.get(f"{served.url}/api/health", headers=served.headers()).json()
    assert set(health["wal_checkpoints"]) == {"idle", "forced", "refused", "seconds", "longest", "wal_bytes"}
    # Only to the admin: the WAL's size follows the bytes of hidden values.
    assert httpx.get(f"{served.url}/api/health").json()["wal_checkpoints"] is None


def test_checkpoints_made_under_load_leave_the_events_in_few_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each checkpoint appends a small row group of what it folds in, and DuckDB merges them as they
    add up. Turning the merging off (`max_vacuum_tasks` 0) would shorten the longest checkpoint, but
    the file would keep a row group per checkpoint for good: larger, slower to scan, and slower to
    checkpoint as it grows (bench/bench_stall.py). The writer leaves it on."""
    monkeypatch.setattr(writer_module, "WAL_LIMIT", 1 << 15)
    with Store(tmp_path / "merged.duckdb") as store:
        match_id = uuid7()
        store.append(match_id, [MatchStarted(game="porrinha", options={}, seats=SEATS)], 0)
        for batch in range(40):
            store.append(match_id, _turns(200), 1 + batch * 200)
        counted = store.wal_checkpoints
        assert counted is not None and counted.forced >= 30, counted
        groups = store.query("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('events')")[0][0]
        assert groups <= 3, f"{counted.forced} checkpoints left the events in {groups} row groups"
        assert [r.seq for r in store.read(match_id)] == list(range(8_001))
