"""Benchmark of how long appends wait for the writer's checkpoints of the file (issue 25, item 3).

    python bench/bench_stall.py                        # 100k and 1M events already in the log
    python bench/bench_stall.py --base 100000 --seconds 5 --limits 16 1
    python bench/bench_stall.py --skip-load            # only the checkpoint cost curves

Two parts. The load: `--threads` appenders, each the referee of its own matches, append batches of
10 events with `Store.append` (waiting for each acknowledgement) for `--seconds`, into a log that
already holds `--base` events, once for each WAL limit (`--limits`, MB; 0: no checkpoint at all
while the load runs). Every append's wait is timed, and every checkpoint's span (the writer's
`_checkpoint` is wrapped for the run); an append whose wait overlaps a checkpoint is counted as
stalled by it. Figures: events/s, p50/p99/max of every append's wait, the longest wait of an
append that overlapped a checkpoint and of one that did not, and the checkpoints' count, median
and longest (as `wal_checkpoints` reports them).

The cost curves: a checkpoint on its own (no load), DuckDB straight on a file with the log's
tables, median of `--reps`: by the WAL's size at the checkpoint, by how many events the file
holds, by how full the events table's last row group (DuckDB's ROW_GROUP rows) is, and by what
the WAL holds (only event inserts; with new matches' catalogue rows, which have primary keys;
with updates of existing catalogue rows, as the writer's catalogue flush makes); then checkpoints
one after another, 2,000 events each, as the log has them, with DuckDB's row-group merging off
(`max_vacuum_tasks` 0) and with row groups of 16,384 rows, naming the slow ones; and what 1,000
checkpoints leave in the file with the merging on and off. `--no-vacuum` also runs the load with
the merging off. Each copy of a log is flushed to the disk before it is timed: otherwise the first
checkpoint's fsync writes the whole copy.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import duckdb

from matchlog.events import GuessMade, HandChosen, MatchStarted, Seat, uuid7
from matchlog.store import Store
from matchlog.store import log as log_module
from matchlog.store import writer as writer_module
from matchlog.store.schema import DDL

SEATS = (Seat("a", "p"), Seat("b", "p"))
#: Events in one of DuckDB's row groups (its default `row_group_size`).
ROW_GROUP = 122_880
#: A log's event as the cost curves write it: about the size of a Porrinha event's row.
_EVENT_SQL = (
    "INSERT INTO events SELECT uuid(), range, uuid(), now()::TIMESTAMP, range % 5, 'porrinha', "
    '\'match.hand_chosen\', 1, range % 5, \'{{"type":"match.hand_chosen","seat":\' || (range % 5) || '
    "',\"hand\":' || (range % 3) || '}}', sha256(range::VARCHAR)::BLOB, range + {first} FROM range({count})"
)
_MATCH_SQL = (
    "INSERT INTO matches SELECT uuid(), 'porrinha', 'running', now()::TIMESTAMP, NULL, ['a', 'b'], ['p', 'p'], "
    "'{{}}', 0, sha256(range::VARCHAR)::BLOB, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM range({count})"
)


def copy(source: Path, target: Path) -> None:
    """`source` copied to `target` and flushed to the disk: otherwise the first checkpoint's fsync
    writes the whole copy, and the figures measure the copy."""
    shutil.copy(source, target)
    with open(target, "rb+") as copied:
        os.fsync(copied.fileno())


def turns(first: int, count: int) -> list[Any]:
    """`count` events a Porrinha match could hold from seq `first` (the store judges no rules)."""
    return [
        HandChosen(seat=n % 2, hand=1) if n % 3 else GuessMade(seat=n % 2, guess=2) for n in range(first, first + count)
    ]


def fill(path: Path, events: int) -> None:
    """A log holding `events` events in matches of ~128, recorded in bulk, then checkpointed."""
    with Store(path) as store:
        written = 0
        while written < events:
            batch = []
            while len(batch) * 128 < 50_000 and written < events:
                batch.append((uuid7(), [MatchStarted(game="porrinha", options={}, seats=SEATS), *turns(1, 127)], 0))
                written += 128
            store.append_bulk(batch)


# -- the load ----------------------------------------------------------------------------------


def load(
    base: Path, limit_mb: float, threads: int, seconds: float, *, flush: bool = True, vacuum: bool = True
) -> dict[str, Any]:
    """Appends from `threads` threads for `seconds` into a copy of `base`, WAL limit `limit_mb`
    (`flush` False: the catalogue is not written while the load runs, so the WAL holds only inserts;
    `vacuum` False: the file opened with DuckDB's `max_vacuum_tasks` 0, so no checkpoint merges row groups)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "load.duckdb"
        copy(base, path)
        spans: list[tuple[float, float]] = []
        checkpoint = writer_module.Writer._checkpoint

        def timed(self: Any, *, forced: bool) -> None:
            began = time.perf_counter()
            checkpoint(self, forced=forced)
            spans.append((began, time.perf_counter()))

        saved = (
            writer_module.WAL_LIMIT,
            writer_module.CHECKPOINT_IDLE_SECONDS,
            writer_module.Writer._checkpoint,
            writer_module.FLUSH_SECONDS,
        )
        writer_module.FLUSH_SECONDS = writer_module.FLUSH_SECONDS if flush else 3600.0
        if not vacuum:
            log_module._SANDBOX["max_vacuum_tasks"] = 0  # (the file's config, as the Store opens it)
        writer_module.WAL_LIMIT = int(limit_mb * (1 << 20)) if limit_mb else 1 << 50
        writer_module.CHECKPOINT_IDLE_SECONDS = 3600.0  # the load never idles: only the WAL limit counts
        writer_module.Writer._checkpoint = timed  # type: ignore[method-assign]
        try:
            with Store(path) as store:
                waits: list[list[tuple[float, float]]] = [[] for _ in range(threads)]
                start = threading.Barrier(threads + 1)
                stop = [0.0]

                def run(number: int) -> None:
                    own = waits[number]
                    start.wait()
                    while True:
                        match_id = uuid7()
                        began = time.perf_counter()
                        start_events = [MatchStarted(game="porrinha", options={}, seats=SEATS), *turns(1, 9)]
                        store.append(match_id, start_events, 0)
                        own.append((began, time.perf_counter()))
                        for first in range(10, 200, 10):
                            began = time.perf_counter()
                            if began > stop[0]:
                                return
                            store.append(match_id, turns(first, 10), first)
                            own.append((began, time.perf_counter()))

                workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
                for worker in workers:
                    worker.start()
                stop[0] = time.perf_counter() + seconds
                began = time.perf_counter()
                start.wait()
                for worker in workers:
                    worker.join()
                elapsed = time.perf_counter() - began
                counted = store.wal_checkpoints
        finally:
            (
                writer_module.WAL_LIMIT,
                writer_module.CHECKPOINT_IDLE_SECONDS,
                writer_module.Writer._checkpoint,
                writer_module.FLUSH_SECONDS,
            ) = saved
            log_module._SANDBOX.pop("max_vacuum_tasks", None)
    every = [span for own in waits for span in own]
    lengths = sorted(end - start for start, end in every)
    stalled = [end - start for start, end in every if any(s < end and start < e for s, e in spans)]
    clear = [end - start for start, end in every if not any(s < end and start < e for s, e in spans)]
    took = sorted(e - s for s, e in spans)
    return {
        "events/s": len(every) * 10 / elapsed,
        "p50": lengths[len(lengths) // 2],
        "p99": lengths[int(len(lengths) * 0.99)],
        "max": lengths[-1],
        "stalled": max(stalled, default=0.0),
        "clear": max(clear, default=0.0),
        "checkpoints": len(took),
        "median": statistics.median(took) if took else 0.0,
        "longest": took[-1] if took else 0.0,
        "counted": counted,
    }


# -- the cost curves ---------------------------------------------------------------------------


def raw_log(path: Path, events: int) -> None:
    """A file with the log's tables holding `events` events (one match row per 128), checkpointed."""
    con = duckdb.connect(str(path), config={"checkpoint_threshold": writer_module.NO_AUTOMATIC_CHECKPOINT})
    con.execute(DDL)
    for first in range(0, events, 1_000_000):
        con.execute(_EVENT_SQL.format(first=first, count=min(1_000_000, events - first)))
    con.execute(_MATCH_SQL.format(count=events // 128))
    con.execute("CHECKPOINT")
    con.close()


def checkpoint_cost(base: Path, wal_events: int, kind: str, reps: int) -> tuple[int, float]:
    """(WAL bytes, median seconds) of a checkpoint after `wal_events` events in commits of 100."""
    took = []
    wal = 0
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "cost.duckdb"
            copy(base, path)
            con = duckdb.connect(str(path), config={"checkpoint_threshold": writer_module.NO_AUTOMATIC_CHECKPOINT})
            first = con.execute("SELECT count(*) FROM events").fetchone()[0]  # type: ignore[index]
            for done in range(0, wal_events, 100):
                con.begin()
                con.execute(_EVENT_SQL.format(first=first + done, count=100))
                if kind == "new matches" and done % 1_000 == 0:
                    con.execute(_MATCH_SQL.format(count=8))
                con.commit()
            if kind == "catalogue updates":
                con.execute(
                    "UPDATE matches SET last_seq = last_seq + 1 "
                    "WHERE match_id IN (SELECT match_id FROM matches LIMIT 64)"
                )
            wal = os.stat(f"{path}.wal").st_size
            began = time.perf_counter()
            con.execute("CHECKPOINT")
            took.append(time.perf_counter() - began)
            con.close()
    return wal, statistics.median(took)


def merge_spikes(scratch: Path, name: str, config: dict[str, Any], row_group: int) -> str:
    """Checkpoints of 2,000 events each (commits of 100) until a row group has filled once, after
    983,040 events: their median, p90 and longest, and where the slow ones fell."""
    path = scratch / f"spikes-{row_group}-{len(config)}.duckdb"
    con = duckdb.connect(config={"checkpoint_threshold": writer_module.NO_AUTOMATIC_CHECKPOINT, **config})
    con.execute(f"ATTACH '{path}' AS log (ROW_GROUP_SIZE {row_group})")
    con.execute("USE log")
    con.execute(DDL)
    first = 8 * ROW_GROUP
    con.execute(_EVENT_SQL.format(first=0, count=first))
    con.execute("CHECKPOINT log")
    took, slow = [], []
    for _ in range(ROW_GROUP // 2_000 + 2):
        for _ in range(20):
            con.execute(_EVENT_SQL.format(first=first, count=100))
            first += 100
        began = time.perf_counter()
        con.execute("CHECKPOINT log")
        took.append(time.perf_counter() - began)
        if took[-1] > 0.05:
            slow.append(f"{took[-1] * 1000:.0f} ms at {first - 8 * ROW_GROUP:,}")
    con.close()
    took.sort()
    return (
        f"    {name:<32} {len(took)} checkpoints: median {took[len(took) // 2] * 1000:5.1f} ms, p90 "
        f"{took[int(len(took) * 0.9)] * 1000:5.1f}, longest {took[-1] * 1000:6.1f} ms; over 50 ms: "
        + (", ".join(slow) or "none")
    )


def fragmentation(scratch: Path, vacuum_tasks: int, checkpoints: int = 1_000) -> str:
    """What `checkpoints` checkpoints of 1,000 events each leave after 983,040 events, with DuckDB's
    `max_vacuum_tasks` at `vacuum_tasks`: row groups, file size, the checkpoints' cost early and
    late, and a full scan."""
    path = scratch / f"fragments-{vacuum_tasks}.duckdb"
    con = duckdb.connect(
        str(path),
        config={"checkpoint_threshold": writer_module.NO_AUTOMATIC_CHECKPOINT, "max_vacuum_tasks": vacuum_tasks},
    )
    con.execute(DDL)
    first = 8 * ROW_GROUP
    con.execute(_EVENT_SQL.format(first=0, count=first))
    con.execute("CHECKPOINT")
    took = []
    for _ in range(checkpoints):
        con.execute(_EVENT_SQL.format(first=first, count=1_000))
        first += 1_000
        began = time.perf_counter()
        con.execute("CHECKPOINT")
        took.append(time.perf_counter() - began)
    groups = con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('events')").fetchone()[0]  # type: ignore[index]
    scans = []
    for _ in range(5):
        began = time.perf_counter()
        con.execute("SELECT count(*), sum(length(payload)) FROM events").fetchall()
        scans.append(time.perf_counter() - began)
    con.close()
    return (
        f"    max_vacuum_tasks {vacuum_tasks:<3} {groups:>5,} row groups, file {path.stat().st_size >> 20} MB; "
        f"checkpoints: the first 50 median {statistics.median(took[:50]) * 1000:.1f} ms, the last 50 "
        f"{statistics.median(took[-50:]) * 1000:.1f} ms; a full scan {statistics.median(scans) * 1000:.0f} ms"
    )


def curves(scratch: Path, reps: int) -> None:
    print("\ncheckpoint cost, no load (DuckDB straight, the log's tables), median of", reps)
    bases: dict[int, Path] = {}
    for events in (ROW_GROUP, 100_000, 8 * ROW_GROUP, 1_000_000, 80 * ROW_GROUP):
        bases[events] = scratch / f"raw-{events}.duckdb"
        raw_log(bases[events], events)
    print("  by the WAL's size (the file holding 8 full row groups, 983,040 events; event inserts only):")
    for wal_events in (100, 1_000, 3_000, 10_000, 30_000, 55_000):
        wal, took = checkpoint_cost(bases[8 * ROW_GROUP], wal_events, "events", reps)
        print(f"    WAL {wal / (1 << 20):6.2f} MB ({wal_events:>6,} events): {took * 1000:7.1f} ms")
    print("  by the events already in the file (WAL of 1,000 events):")
    for events, path in bases.items():
        wal, took = checkpoint_cost(path, 1_000, "events", reps)
        partial = events % ROW_GROUP
        print(f"    {events:>10,} events (last row group {partial:>7,} of {ROW_GROUP:,} rows): {took * 1000:7.1f} ms")
    print("  by what the WAL holds (the file holding 983,040 events; WAL of 3,000 events):")
    for kind in ("events", "new matches", "catalogue updates"):
        wal, took = checkpoint_cost(bases[8 * ROW_GROUP], 3_000, kind, reps)
        print(f"    {kind:<18} (WAL {wal / (1 << 20):.2f} MB): {took * 1000:7.1f} ms")
    print("  one after another, 2,000 events each (new events since 983,040 given for the slow ones):")
    print(merge_spikes(scratch, "as the log has it", {}, ROW_GROUP))
    print(merge_spikes(scratch, "max_vacuum_tasks 0 (no merging)", {"max_vacuum_tasks": 0}, ROW_GROUP))
    print(merge_spikes(scratch, "ROW_GROUP_SIZE 16384", {}, 16_384))
    print("  1,000 checkpoints of 1,000 events each, after 983,040 events, with and without the merging:")
    print(fragmentation(scratch, 100))
    print(fragmentation(scratch, 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=int, nargs="+", default=[100_000, 1_000_000], help="events in the log first")
    parser.add_argument("--limits", type=float, nargs="+", help="WAL limits in MB to load with (0: none)")
    parser.add_argument("--threads", type=int, default=32, help="appenders (default 32)")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of load per limit (default 8)")
    parser.add_argument("--reps", type=int, default=5, help="checkpoints per point of the cost curves")
    parser.add_argument("--no-flush", action="store_true", help="also load with the catalogue held in memory")
    parser.add_argument("--no-vacuum", action="store_true", help="also load with max_vacuum_tasks 0 (no merging)")
    parser.add_argument("--skip-load", action="store_true", help="only the cost curves")
    parser.add_argument("--skip-curves", action="store_true", help="only the load")
    args = parser.parse_args()
    limits = args.limits or [0, 16, writer_module.WAL_LIMIT / (1 << 20)]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"duckdb {duckdb.__version__}; the writer's WAL_LIMIT {writer_module.WAL_LIMIT / (1 << 20):g} MB")
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        if not args.skip_load:
            for events in args.base:
                base = scratch / f"base-{events}.duckdb"
                fill(base, events)
                print(f"\n{args.threads} appenders, batches of 10, {args.seconds:g} s each, {events:,} events first")
                each = [limit for limit in dict.fromkeys(sorted(limits, reverse=True))]
                runs = [(limit, True, True) for limit in each]
                runs += [(limit, False, True) for limit in each if limit and args.no_flush]
                runs += [(limit, True, False) for limit in each if limit and args.no_vacuum]
                for limit, flush, vacuum in runs:
                    r = load(base, limit, args.threads, args.seconds, flush=flush, vacuum=vacuum)
                    name = f"WAL limit {limit:g} MB" if limit else "no checkpoint"
                    name += ("" if flush else ", no flush") + ("" if vacuum else ", no vacuum")
                    print(
                        f"  {name:<28} {r['events/s']:>7,.0f} events/s  wait p50 {r['p50'] * 1e3:5.1f} "
                        f"p99 {r['p99'] * 1e3:6.1f} max {r['max'] * 1e3:6.1f} ms | longest wait overlapping a "
                        f"checkpoint {r['stalled'] * 1e3:6.1f} ms, not {r['clear'] * 1e3:6.1f} ms | "
                        f"{r['checkpoints']} checkpoints, median {r['median'] * 1e3:.1f} ms, "
                        f"longest {r['longest'] * 1e3:.1f} ms",
                        flush=True,
                    )
        if not args.skip_curves:
            curves(scratch, args.reps)


if __name__ == "__main__":
    main()
