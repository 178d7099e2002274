"""Statistics on a large log: each question of `matchlog stats` timed on its own, then the whole
command's work, and the audit's rate.

    python bench/make_log.py /tmp/log10m.duckdb --events 10000000   # once (about 4 minutes)
    python bench/bench_stats.py /tmp/log10m.duckdb

For every question: the median of 5 runs (after one warm-up), for all games and for one game with
a --since cut, in milliseconds. Then `statistics()` as a whole (with its check for stale
projections), and `audit` over a sample of matches (matches/s and events/s).
"""

from __future__ import annotations

import argparse
import statistics as stat
import time
from datetime import datetime
from pathlib import Path

from matchlog.replay import audit, statistics
from matchlog.replay.stats import QUESTIONS
from matchlog.store import Store


def timed(work, runs: int = 5) -> float:
    work()  # warm-up: the first run pays for loading columns
    seconds = []
    for _ in range(runs):
        began = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - began)
    return stat.median(seconds) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--audit-matches", type=int, default=2000)
    args = parser.parse_args()
    with Store(args.path) as store:
        events, matches = store.query("SELECT sum(last_seq + 1), count(*) FROM matches")[0]
        print(f"{args.path}: {events:,} events in {matches:,} matches")
        cut = store.query("SELECT quantile_cont(epoch_us(created_at), 0.5) FROM matches")[0][0]
        since = datetime.utcfromtimestamp(cut / 1e6)
        print(f"\n{'question':48} {'all games':>12} {'backgammon, --since':>22}")
        for name, question in QUESTIONS.items():
            everything = timed(lambda q=question: q(store, None, None))
            one = timed(lambda q=question: q(store, "backgammon", since))
            print(f"{name:48} {everything:9.1f} ms {one:19.1f} ms")
        whole = timed(lambda: statistics(store))
        print(f"\nstatistics() as `matchlog stats` runs it, all games: {whole:.0f} ms")
        sample = [row[0] for row in store.query(f"SELECT match_id FROM matches USING SAMPLE {args.audit_matches} ROWS")]
        began = time.perf_counter()
        reports = list(audit(store, sample))
        seconds = time.perf_counter() - began
        audited = sum(r.events for r in reports)
        findings = sum(len(r.findings) for r in reports)
        print(
            f"audit of {len(reports):,} sampled matches: {len(reports) / seconds:,.0f} matches/s, "
            f"{audited / seconds:,.0f} events/s, {findings} findings"
        )


if __name__ == "__main__":
    main()
