"""Every benchmark, one after the other, each printing its figures (what BENCHMARKS.md reports).

    pip install -e '.[bench]'
    python bench/run_all.py                       # builds /tmp/matchlog-10m.duckdb (and -1m) first if needed
    python bench/run_all.py --quick               # ... /tmp/matchlog-1m.duckdb, each benchmark smaller
    python bench/run_all.py --log /data/10m.duckdb --quick

--quick runs each at a fraction of its size (a few minutes in all, for a smoke run); the full run
takes about 35 minutes on 2 cores, most of it building the 10M-event log and copying it into
eventsourcing and sqlite3 for the one-match load.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, *args: str) -> None:
    print(f"\n$ python bench/{script} {' '.join(args)}".rstrip(), flush=True)
    began = time.monotonic()
    subprocess.run([sys.executable, str(HERE / script), *args], check=True)
    print(f"({time.monotonic() - began:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, help="the big log (default /tmp/matchlog-10m.duckdb, -1m with --quick)")
    parser.add_argument("--quick", action="store_true", help="each benchmark at a fraction of its size")
    args = parser.parse_args()
    events = "1000000" if args.quick else "10000000"
    if args.log is None:
        args.log = Path(f"/tmp/matchlog-{'1m' if args.quick else '10m'}.duckdb")
    if not args.log.exists():
        run("make_log.py", str(args.log), "--events", events)
    # The proofs are measured in a log of 1M events and (the full run) of 10M.
    small = Path("/tmp/matchlog-1m.duckdb") if not args.quick else args.log
    if not small.exists():
        run("make_log.py", str(small), "--events", "1000000")
    if args.quick:
        run("bench_compare.py", "--events", "200000", "--live-seconds", "2")
        run("bench_stats.py", str(args.log), "--audit-matches", "300")
        run("bench_games.py", "--scale", "0.2")
        run("bench_backgammon.py", "--games", "200", "--pygammon-games", "20")
        run("bench_fish.py", "--positions", "50", "--games", "20")
        run("bench_players.py", "--scale", "0.2")
        run("bench_scale.py", str(args.log), "--scale", "0.1")
    else:
        run("bench_compare.py", "--big", str(args.log))
        run("bench_stats.py", str(args.log))
        run("bench_games.py")
        run("bench_backgammon.py", "--games", "1000", "--pygammon-games", "60")
        run("bench_fish.py")
        run("bench_players.py")
        run("bench_scale.py", str(args.log))
    run("bench_store.py", "--events", "200000" if args.quick else "1000000")
    if args.quick:
        run("bench_proofs.py", "--events", "200000", "--rounds", "3", "--live-seconds", "2", "--logs", str(args.log))
    else:
        run("bench_proofs.py", "--logs", str(small), str(args.log))
    run("bench_service.py", "--seconds", "2" if args.quick else "5")
    if args.quick:
        run("bench_stall.py", "--base", "100000", "--seconds", "2", "--limits", "0", "16", "--reps", "2")
    else:
        run("bench_stall.py", "--no-vacuum")


if __name__ == "__main__":
    main()
