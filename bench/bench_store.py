"""Benchmark of the log on this machine: bulk and live recording, one-match load, full replay.

    python bench/bench_store.py                 # 1M events in a temporary file
    python bench/bench_store.py --events 200000 # quicker

Prints one line per figure. The events are real Porrinha matches (5 random players), recorded
once in memory and then appended again under fresh match ids.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from uuid import UUID

from matchlog.events import Event, uuid7
from matchlog.referee import MemoryRecorder, make_player, play_match, seats_from_specs
from matchlog.replay import fold, state_at
from matchlog.store import Store


def sample_matches(count: int, seed: int) -> list[list[Event]]:
    """The events of `count` recorded Porrinha matches."""
    matches = []
    seats = seats_from_specs("porrinha", ["random"] * 5)
    for n in range(count):
        rng = random.Random(seed + n)
        players = [make_player("porrinha", s.player, random.Random(rng.random())) for s in seats]
        recorder = MemoryRecorder()
        play_match("porrinha", seats, players, recorder=recorder)
        matches.append([d.event for d in recorder.drafts])
    return matches


def bulk(store: Store, templates: list[list[Event]], events: int, batch_events: int) -> tuple[float, list[UUID]]:
    """Append copies of the templates until `events` are stored, `batch_events` per transaction."""
    ids: list[UUID] = []
    written = 0
    began = time.perf_counter()
    while written < events:
        batch = []
        size = 0
        while size < batch_events and written + size < events:
            template = templates[len(ids) % len(templates)]
            match_id = uuid7()
            ids.append(match_id)
            batch.append((match_id, template, 0))
            size += len(template)
        store.append_bulk(batch)
        written += size
    return written / (time.perf_counter() - began), ids


def live(store: Store, templates: list[list[Event]], matches: int, seconds: float) -> tuple[float, float, float]:
    """`matches` threads, each appending its own match one event at a time and waiting for each ack."""
    latencies: list[list[float]] = [[] for _ in range(matches)]
    stop = time.perf_counter() + seconds
    barrier = threading.Barrier(matches)

    def run(worker: int) -> None:
        barrier.wait()
        own = latencies[worker]
        while time.perf_counter() < stop:
            match_id = uuid7()
            for seq, event in enumerate(templates[worker % len(templates)]):
                began = time.perf_counter()
                store.append(match_id, [event], seq)
                own.append(time.perf_counter() - began)
                if began > stop:
                    return

    threads = [threading.Thread(target=run, args=(w,)) for w in range(matches)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    every = sorted(x for own in latencies for x in own)
    p50 = every[len(every) // 2] * 1000
    p99 = every[int(len(every) * 0.99)] * 1000
    return len(every) / elapsed, p50, p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the big log (default 1M)")
    parser.add_argument("--live-seconds", type=float, default=5.0, help="seconds per live measurement")
    parser.add_argument("--db", type=Path, help="log file to build (default: a temporary file)")
    args = parser.parse_args()

    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    templates = sample_matches(200, seed=1)
    mean = statistics.mean(len(t) for t in templates)
    print(f"sample: 200 Porrinha matches of 5 random players, {mean:.0f} events each on average")

    with tempfile.TemporaryDirectory() as scratch:
        path = args.db or Path(scratch) / "bench.duckdb"

        with Store(Path(scratch) / "live1.duckdb") as store:
            rate, p50, p99 = live(store, templates, 1, args.live_seconds)
            print(f"live append, 1 match:     {rate:>10,.0f} events/s   p50 {p50:.2f} ms   p99 {p99:.2f} ms")
        with Store(Path(scratch) / "live64.duckdb") as store:
            rate, p50, p99 = live(store, templates, 64, args.live_seconds)
            print(f"live append, 64 matches:  {rate:>10,.0f} events/s   p50 {p50:.2f} ms   p99 {p99:.2f} ms")

        with Store(path) as store:
            rate, ids = bulk(store, templates, args.events, batch_events=50_000)
            print(
                f"bulk append:              {rate:>10,.0f} events/s   ({store.count():,} events, {len(ids):,} matches)"
            )

        with Store(path, read_only=True) as store:
            rng = random.Random(7)
            picks = [rng.choice(ids) for _ in range(200)]
            began = time.perf_counter()
            for match_id in picks:
                store.read(match_id)
            load_ms = (time.perf_counter() - began) / len(picks) * 1000
            print(
                f"load one match:           {load_ms:>10.2f} ms          (mean of 200, from {store.count():,} events)"
            )

            began = time.perf_counter()
            for match_id in picks[:50]:
                state_at(store, match_id, 40)
            travel_ms = (time.perf_counter() - began) / 50 * 1000
            print(f"state at a seq:           {travel_ms:>10.2f} ms          (mean of 50)")

            began = time.perf_counter()
            by_match: dict[UUID, list] = defaultdict(list)
            count = 0
            for record in store.records():
                by_match[record.match_id].append(record)
                count += 1
            read_s = time.perf_counter() - began
            for records in by_match.values():
                fold(records)
            total_s = time.perf_counter() - began
            print(f"read all (decode):        {count / read_s:>10,.0f} events/s")
            print(f"full replay (read+fold):  {count / total_s:>10,.0f} events/s   ({len(by_match):,} matches)")

            began = time.perf_counter()
            findings = store.verify()
            verify_s = time.perf_counter() - began
            print(f"verify every chain:       {count / verify_s:>10,.0f} events/s   ({len(findings)} findings)")


if __name__ == "__main__":
    main()
