"""matchlog side by side with what people would use instead: the `eventsourcing` library on SQLite,
and plain `sqlite3` (WAL, synchronous=FULL, a primary key on match and seq), storing the same events.

    pip install -e '.[bench]'
    python bench/bench_compare.py                          # 1M events, 5 s per live figure
    python bench/bench_compare.py --big /tmp/log10m.duckdb # also: load one match among 10M events

The events are real Porrinha matches (5 random players), recorded once and copied under fresh ids.
Every figure is measured in the same run, each side on its own fresh file:

- bulk recording: matchlog `append_bulk` (50k events a transaction), eventsourcing `save` of
  aggregates holding 50k events in all, sqlite3 `executemany` in transactions of 50k;
- live recording: each event appended and committed before the next, by 1 and by 64 threads
  (each its own match), events/s with p50 and p99 latency;
- load one match (mean of 200 random matches just after opening the file, then of 200 others:
  the first reads pay for bringing the file's pages in) and fold every match: matchlog reads and
  folds with the game's rules; eventsourcing `repository.get` rebuilds each aggregate; sqlite3
  selects and decodes;
- with --big: load one match from the 10M-event log (bench/make_log.py) against eventsourcing and
  sqlite3 holding the same events.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from matchlog.engines import get as get_engine
from matchlog.events import Event, MatchStarted, Seat, encode, uuid7
from matchlog.replay import fold, fold_all, state_at
from matchlog.replay.fold import by_match
from matchlog.store import Store
from matchlog.store.writer import ARROW_ROWS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import sample_matches

BATCH = 50_000
#: Matches loaded in each pass of the one-match load.
LOAD_PICKS = 200


class MatchRecord(Aggregate):
    """A match as an eventsourcing aggregate: its events, each a type and a JSON payload."""

    @event("Started")
    def __init__(self, game: str, payload: str) -> None:
        self.game = game
        self.events = 1

    @event("Happened")
    def happened(self, kind: str, payload: str) -> None:
        self.events += 1


def es_app(path: Path) -> Application:
    return Application(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)})


def es_aggregate(events: Sequence[Event]) -> MatchRecord:
    first = encode(events[0]).decode()
    match = MatchRecord("porrinha", first)
    for one in events[1:]:
        match.happened(one.tag, encode(one).decode())
    return match


def sqlite_db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS events (match_id TEXT, seq INTEGER, type TEXT, payload TEXT,"
        " PRIMARY KEY (match_id, seq))"
    )
    return db


def copies(templates: list[list[Event]], events: int) -> list[list[Event]]:
    """Templates repeated until they hold `events` events."""
    found, total = [], 0
    while total < events:
        match = templates[len(found) % len(templates)]
        found.append(match)
        total += len(match)
    return found


# -- recording -------------------------------------------------------------------------------


def bulk_matchlog(path: Path, matches: list[list[Event]]) -> tuple[float, list[UUID]]:
    ids = [uuid7() for _ in matches]
    with Store(path) as store:
        began = time.perf_counter()
        for batch in _batches(list(zip(ids, matches, strict=True))):
            store.append_bulk([(match_id, events, 0) for match_id, events in batch])
        seconds = time.perf_counter() - began
    return sum(map(len, matches)) / seconds, ids


def bulk_es(path: Path, matches: list[list[Event]]) -> tuple[float, list[UUID]]:
    app = es_app(path)
    ids = []
    began = time.perf_counter()
    for batch in _batches(matches):
        aggregates = [es_aggregate(events) for events in batch]
        app.save(*aggregates)
        ids.extend(a.id for a in aggregates)
    seconds = time.perf_counter() - began
    app.close()
    return sum(map(len, matches)) / seconds, ids


def bulk_sqlite(path: Path, matches: list[list[Event]]) -> tuple[float, list[str]]:
    db = sqlite_db(path)
    ids = []
    began = time.perf_counter()
    for batch in _batches(matches):
        rows = []
        for events in batch:
            match_id = str(uuid4())
            ids.append(match_id)
            rows.extend((match_id, seq, one.tag, encode(one).decode()) for seq, one in enumerate(events))
        db.execute("BEGIN")
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?)", rows)
        db.execute("COMMIT")
    seconds = time.perf_counter() - began
    db.close()
    return sum(map(len, matches)) / seconds, ids


def warm_up(folder: Path, templates: list[list[Event]]) -> None:
    """A batch of ARROW_ROWS events recorded by each side into a scratch file before any clock
    starts: what a process pays once (pyarrow imports pandas at its first array, 0.3-0.8 s here;
    eventsourcing and sqlite3 set up their own) is not a rate of recording. The batch is as large as
    a bulk append that goes through Arrow: a smaller one goes through DuckDB's appender, builds no
    array, and left that import to the first batch measured."""
    batch = copies(templates, ARROW_ROWS)
    bulk_matchlog(folder / "warm.duckdb", batch)
    bulk_es(folder / "warm-es.sqlite", batch)
    bulk_sqlite(folder / "warm.sqlite", batch)


def _batches(items: list[Any]) -> list[list[Any]]:
    batches, current, size = [], [], 0
    for one in items:
        current.append(one)
        size += len(one[1]) if isinstance(one, tuple) else len(one)
        if size >= BATCH:
            batches.append(current)
            current, size = [], 0
    return [*batches, current] if current else batches


def live(
    threads: int, seconds: float, templates: list[list[Event]], append: Callable[[int, int, Event], None]
) -> tuple[float, float, float]:
    """`threads` threads, each appending its own matches one event at a time; events/s, p50, p99 (ms)."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    stop = time.perf_counter() + seconds
    barrier = threading.Barrier(threads)

    def run(worker: int) -> None:
        barrier.wait()
        own = latencies[worker]
        number = 0
        while time.perf_counter() < stop:
            number += 1
            for seq, one in enumerate(templates[(worker + number) % len(templates)]):
                began = time.perf_counter()
                append(worker * 1_000_000 + number, seq, one)
                own.append(time.perf_counter() - began)
                if began > stop:
                    return

    pool = [threading.Thread(target=run, args=(w,)) for w in range(threads)]
    began = time.perf_counter()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    elapsed = time.perf_counter() - began
    every = sorted(x for own in latencies for x in own)
    return len(every) / elapsed, every[len(every) // 2] * 1000, every[int(len(every) * 0.99)] * 1000


def live_matchlog(path: Path, threads: int, seconds: float, templates: list[list[Event]]) -> tuple[float, float, float]:
    ids: dict[int, UUID] = {}
    with Store(path) as store:

        def append(match: int, seq: int, one: Event) -> None:
            if seq == 0:
                ids[match] = uuid7()
            store.append(ids[match], [one], seq)

        return live(threads, seconds, templates, append)


def live_es(path: Path, threads: int, seconds: float, templates: list[list[Event]]) -> tuple[float, float, float]:
    app = es_app(path)
    aggregates: dict[int, MatchRecord] = {}

    def append(match: int, seq: int, one: Event) -> None:
        if seq == 0:
            aggregates[match] = MatchRecord("porrinha", encode(one).decode())
        else:
            aggregates[match].happened(one.tag, encode(one).decode())
        app.save(aggregates[match])

    try:
        return live(threads, seconds, templates, append)
    finally:
        app.close()


def live_sqlite(path: Path, threads: int, seconds: float, templates: list[list[Event]]) -> tuple[float, float, float]:
    local = threading.local()
    sqlite_db(path).close()

    def append(match: int, seq: int, one: Event) -> None:
        db = getattr(local, "db", None)
        if db is None:
            db = local.db = sqlite_db(path)
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (str(match), seq, one.tag, encode(one).decode()))
        db.execute("COMMIT")

    return live(threads, seconds, templates, append)


# -- reading ---------------------------------------------------------------------------------


def _two_passes(load: Callable[[Any], object], chosen: Sequence[Any]) -> tuple[float, float]:
    """Mean ms per load over the first half of `chosen` (the first reads after opening the file),
    then over the other half (other matches, with what the first half brought into memory)."""
    half = len(chosen) // 2
    means = []
    for picks in (chosen[:half], chosen[half:]):
        began = time.perf_counter()
        for pick in picks:
            load(pick)
        means.append((time.perf_counter() - began) / len(picks) * 1000)
    return means[0], means[1]


def load_matchlog(path: Path, chosen: Sequence[UUID]) -> tuple[float, float]:
    with Store(path, read_only=True) as store:
        return _two_passes(store.read, chosen)


def load_es(path: Path, chosen: Sequence[UUID]) -> tuple[float, float]:
    app = es_app(path)
    try:
        return _two_passes(app.repository.get, chosen)
    finally:
        app.close()


def load_sqlite(path: Path, chosen: Sequence[str]) -> tuple[float, float]:
    db = sqlite_db(path)

    def load(match_id: str) -> None:
        rows = db.execute(
            "SELECT seq, type, payload FROM events WHERE match_id = ? ORDER BY seq", (match_id,)
        ).fetchall()
        [json.loads(payload) for _, _, payload in rows]

    try:
        return _two_passes(load, chosen)
    finally:
        db.close()


def load_line(label: str, ours: tuple[float, float], es: tuple[float, float], plain: tuple[float, float]) -> None:
    line(
        label,
        f"{ours[0]:.2f} / {ours[1]:.2f}",
        f"{es[0]:.2f} / {es[1]:.2f}",
        f"{plain[0]:.2f} / {plain[1]:.2f}",
        f"{es[0] / ours[0]:.1f}x / {es[1] / ours[1]:.1f}x",
    )


def fold_all_matchlog(path: Path) -> tuple[float, float]:
    """Events/s folding every match: with `fold_all`, and with `fold` match by match over Records."""
    with Store(path, read_only=True) as store:
        count = store.count()
        began = time.perf_counter()
        for _ in fold_all(store):
            pass
        bulk = count / (time.perf_counter() - began)
        began = time.perf_counter()
        for records in by_match(store.records()):
            fold(records)
        return bulk, count / (time.perf_counter() - began)


def fold_all_es(path: Path, ids: Sequence[UUID]) -> float:
    app = es_app(path)
    began = time.perf_counter()
    count = sum(app.repository.get(match_id).events for match_id in ids)
    seconds = time.perf_counter() - began
    app.close()
    return count / seconds


def fold_all_sqlite(path: Path) -> float:
    db = sqlite_db(path)
    began = time.perf_counter()
    count = 0
    for _, _, payload in db.execute("SELECT match_id, seq, payload FROM events ORDER BY match_id, seq"):
        json.loads(payload)
        count += 1
    seconds = time.perf_counter() - began
    db.close()
    return count / seconds


# -- the run ---------------------------------------------------------------------------------


def line(label: str, ours: str, es: str, plain: str, ratio: str) -> None:
    print(f"{label:34} {ours:>22} {es:>22} {plain:>22} {ratio:>12}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--live-seconds", type=float, default=5.0)
    parser.add_argument("--big", type=Path, help="a log made by bench/make_log.py (load one match among its events)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}")
    templates = sample_matches(200, seed=1)
    matches = copies(templates, args.events)
    total = sum(map(len, matches))
    print(f"events: {total:,} in {len(matches):,} Porrinha matches\n")
    line("", "matchlog (DuckDB)", "eventsourcing/SQLite", "sqlite3 (WAL, FULL)", "ratio to ES")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        warm_up(folder, templates)
        ours, our_ids = bulk_matchlog(folder / "bulk.duckdb", matches)
        es, es_ids = bulk_es(folder / "bulk-es.sqlite", matches)
        plain, plain_ids = bulk_sqlite(folder / "bulk.sqlite", matches)
        line("bulk recording (events/s)", f"{ours:,.0f}", f"{es:,.0f}", f"{plain:,.0f}", f"{ours / es:.1f}x")
        for threads in (1, 64):
            results = [
                run(folder / f"live{threads}-{name}", threads, args.live_seconds, templates)
                for name, run in (("m.duckdb", live_matchlog), ("es.sqlite", live_es), ("s.sqlite", live_sqlite))
            ]
            shown = [f"{rate:,.0f} ({p50:.2f}/{p99:.2f})" for rate, p50, p99 in results]
            line(
                f"live, {threads} match{'es' if threads > 1 else ''}: ev/s (p50/p99 ms)",
                *shown,
                f"{results[0][0] / results[1][0]:.1f}x",
            )
        picks = random.Random(7).sample(range(len(matches)), min(2 * LOAD_PICKS, len(matches)))
        load_line(
            f"load one match of {round(total / 1e6, 1):g}M events (ms)",
            load_matchlog(folder / "bulk.duckdb", [our_ids[i] for i in picks]),
            load_es(folder / "bulk-es.sqlite", [es_ids[i] for i in picks]),
            load_sqlite(folder / "bulk.sqlite", [plain_ids[i] for i in picks]),
        )
        print("  (mean of 200 matches just after opening / of 200 others after those)")
        (ours, records_path), es, plain = (
            fold_all_matchlog(folder / "bulk.duckdb"),
            fold_all_es(folder / "bulk-es.sqlite", es_ids),
            fold_all_sqlite(folder / "bulk.sqlite"),
        )
        line("fold every match (events/s)", f"{ours:,.0f}", f"{es:,.0f}", f"{plain:,.0f}", f"{ours / es:.1f}x")
        line("  ... match by match over Records", f"{records_path:,.0f}", "", "", f"{records_path / es:.1f}x")
        print("  (sqlite3 only reads and decodes: it has no rules to fold with; eventsourcing applies each event)")
        travel = time_travel(folder / "travel.duckdb")
        print(
            f"\nstate at a random seq of a {travel[0]:,}-event match: p50 {travel[3]:.2f} ms, p99 {travel[4]:.2f} ms"
            f" over 200 random seqs (the first look, at its end, folds it all and caches snapshots: {travel[1]:.0f} ms;"
            f" the second reads it into the time-travel cache: {travel[2]:.0f} ms)"
        )
        if args.big:
            big_load(args.big, folder)


def time_travel(path: Path, events: int = 100_000) -> tuple[int, float, float, float, float]:
    """A Porrinha match of `events` events (3 players with 1,000 chopsticks each, random legal
    answers), then `state_at` at random seqs: the first call, the second (which holds the match in
    memory), then p50 and p99 of 200 more (ms)."""
    engine = get_engine("porrinha")
    rng = random.Random(5)
    seats = tuple(Seat(f"p{i}", "random") for i in range(3))
    started = MatchStarted(game="porrinha", options={"chopsticks": 1_000}, seats=seats)
    state = engine.start(started)
    log: list[Event] = [started]
    while len(log) < events:
        turn = engine.to_act(state)
        assert turn is not None
        action = rng.choice(engine.legal(state, turn.seat))
        state = engine.apply(state, action)
        log.append(action)
    with Store(path) as store:
        match_id = uuid7()
        store.append_bulk([(match_id, log, 0)])
        picks = [rng.randrange(len(log)) for _ in range(200)]
        began = time.perf_counter()
        state_at(store, match_id)  # the first look at the end folds it all, caching snapshots on the way
        first = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        state_at(store, match_id, 0)  # the second look holds the match in memory (replay.steps_cache)
        second = (time.perf_counter() - began) * 1000
        times = []
        for seq in picks:
            began = time.perf_counter()
            state_at(store, match_id, seq)
            times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return len(log), first, second, times[len(times) // 2], times[int(len(times) * 0.99)]


def big_load(path: Path, folder: Path) -> None:
    """Load one match among the big log's events, against the other two holding the same events."""
    with Store(path, read_only=True) as store:
        ids = [row[0] for row in store.query("SELECT match_id FROM matches")]
        total = store.count()
        chosen = random.Random(7).sample(ids, min(2 * LOAD_PICKS, len(ids)))
        sample = set(chosen)
        app = es_app(folder / "big-es.sqlite")
        db = sqlite_db(folder / "big.sqlite")
        es_of: dict[UUID, UUID] = {}
        current: list[Any] = []
        began = time.perf_counter()

        def flush(batch: list[list[Any]]) -> None:
            aggregates = []
            rows = []
            for records in batch:
                aggregate = es_aggregate([r.event for r in records])
                aggregates.append(aggregate)
                match_id = str(records[0].match_id)
                rows.extend((match_id, r.seq, r.event.tag, encode(r.event).decode()) for r in records)
                if records[0].match_id in sample:
                    es_of[records[0].match_id] = aggregate.id
            app.save(*aggregates)
            db.execute("BEGIN")
            db.executemany("INSERT INTO events VALUES (?, ?, ?, ?)", rows)
            db.execute("COMMIT")

        batch: list[list[Any]] = []
        size = 0
        for record in store.records():
            if current and record.match_id != current[0].match_id:
                batch.append(current)
                size += len(current)
                current = []
                if size >= BATCH:
                    flush(batch)
                    batch, size = [], 0
            current.append(record)
        flush([*batch, current])
        print(f"\n(copied {total:,} events into eventsourcing and sqlite3 in {time.perf_counter() - began:.0f} s)")
        app.close()
        db.close()
    # Each file was just read or written whole, so each is in the OS's page cache; each process's own
    # cache starts empty.
    load_line(
        f"load one match of {round(total / 1e6, 1):g}M events (ms)",
        load_matchlog(path, chosen),
        load_es(folder / "big-es.sqlite", [es_of[m] for m in chosen]),
        load_sqlite(folder / "big.sqlite", [str(m) for m in chosen]),
    )


if __name__ == "__main__":
    main()
