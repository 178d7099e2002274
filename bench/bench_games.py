"""Self-play of every game with every game recorded: in one process, and as a tournament of
worker processes with one writer (`matchlog tournament`).

    python bench/bench_games.py              # the default counts below
    python bench/bench_games.py --scale 0.2  # quicker

Prints games/s and events/s for random players of each game (and, for the one process, the CPU
time an event costs, which a busy machine disturbs less than the wall clock), and checks every
game verifies.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from matchlog.referee import play_series
from matchlog.referee.tournament import run_tournament
from matchlog.store import Store

GAMES = [
    ("porrinha", ["random"] * 3, {}, 2_000),
    ("backgammon", ["random"] * 2, {}, 500),
    ("davinci", ["random"] * 3, {"jokers": True}, 1_000),
    ("fish", ["random"] * 3, {"random_board": True, "holes": 3}, 1_000),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}\n")
    print(f"{'game':12} {'games':>7} {'one process':>26} {'cpu':>12} {f'tournament, {args.jobs} workers':>30}  verify")
    with tempfile.TemporaryDirectory() as scratch:
        for game, specs, options, count in GAMES:
            games = max(10, int(count * args.scale))
            with Store(Path(scratch) / f"{game}-one.duckdb") as store:
                began, cpu = time.perf_counter(), time.process_time()
                series = play_series(game, specs, games=games, options=options, seed=1, store=store)
                one, cpu = time.perf_counter() - began, time.process_time() - cpu
                events = store.count()
                findings = store.verify([m.match_id for m in series.matches])
            with Store(Path(scratch) / f"{game}-many.duckdb") as store:
                result = run_tournament(
                    game, specs, games=games, store=store, jobs=args.jobs, seats=len(specs), options=options, seed=1
                )
            bad = len(findings) + len(result.findings)
            print(
                f"{game:12} {games:>7,} {games / one:>9,.1f} games/s {events / one:>7,.0f} ev/s"
                f" {cpu / events * 1e6:>6.1f} us/ev"
                f" {result.rate:>12,.1f} games/s {result.events / result.seconds:>7,.0f} ev/s"
                f"  {'all verify' if not bad else f'{bad} findings!'}"
            )


if __name__ == "__main__":
    main()
