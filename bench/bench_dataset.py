"""Throughput of `matchlog dataset`: step rows written per second from a big log, every seat's
decisions as each saw them, with their hashes and leaves, into Parquet, end to end (choosing the
matches, signing the checkpoint, reading the events and leaves, folding, encoding, writing).

    python bench/bench_dataset.py /tmp/matchlog-1m.duckdb
    python bench/bench_dataset.py /tmp/matchlog-1m.duckdb --game porrinha --as-seat 0

The log must have its tree (made by this matchlog, e.g. bench/make_log.py); the benchmark signs a
checkpoint in it. It prints the events in the log, the rows and matches written, the seconds, and
the rows and events per second; `--profile` also says where the time went.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import tempfile
import time
from pathlib import Path

import matchlog
from matchlog.dataset import parse_split, write_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--game")
    parser.add_argument("--as-seat", type=int)
    parser.add_argument("--split", default="train=0.9,test=0.1")
    parser.add_argument("--profile", action="store_true", help="Also print where the time goes.")
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="bench-dataset-")) / "data"
    try:
        with matchlog.open(args.log, mode="write") as log:
            events = log.count()
            profile = cProfile.Profile() if args.profile else None
            began = time.perf_counter()
            if profile is not None:
                profile.enable()
            summary = write_dataset(
                log, out, game=args.game, as_seat=args.as_seat, split=parse_split(args.split), command="bench"
            )
            if profile is not None:
                profile.disable()
            seconds = time.perf_counter() - began
        rows = sum(summary.steps.values())
        matches = sum(summary.matches.values())
        size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
        print(f"log: {events:,} events; written: {rows:,} step rows of {matches:,} matches, {size / 2**20:.1f} MiB")
        print(f"{seconds:.1f} s: {rows / seconds:,.0f} rows/s, {events / seconds:,.0f} events/s")
        if profile is not None:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
