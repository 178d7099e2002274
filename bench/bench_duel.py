"""Pairs a duel needs to decide, with duplicate chance (one committed seed a pair) against fresh
chance for every game, on the same seeds (`matchlog duel --sprt`).

    python bench/bench_duel.py            # 10 duels of each kind and scenario
    python bench/bench_duel.py --runs 3   # quicker

Three scenarios: (a) backgammon `heuristic` against `random` (a large difference, SPRT 0 against
100 Elo), (b) two settings of a built-in player: Fish `maximin:2` against `maximin:1` on random
boards (SPRT 0 against 50 Elo), and (c) the closest pair there is, backgammon `heuristic` against
itself (SPRT -50 against +50 Elo). Each duel stops when the test decides; the figure is
the mean number of pairs (and games) it played, and the ratio fresh / duplicate.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import matchlog
from matchlog.events import Sprt
from matchlog.referee.duel import run_duel

SCENARIOS = [
    ("(a) backgammon heuristic vs random", "backgammon", "heuristic", "random", {}, Sprt(elo0=0.0, elo1=100.0)),
    (
        "(b) fish maximin:2 vs maximin:1",
        "fish",
        "maximin:2",
        "maximin:1",
        {"random_board": True},
        Sprt(elo0=0.0, elo1=50.0),
    ),
    ("(c) backgammon heuristic vs itself", "backgammon", "heuristic", "heuristic", {}, Sprt(elo0=-50.0, elo1=50.0)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="duels of each kind per scenario (seeds 1..N)")
    parser.add_argument("--cap", type=int, default=3_000, help="the most pairs one duel may play")
    parser.add_argument("--scenario", action="append", help="only these scenarios: a, b or c (default all)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}\n")
    with tempfile.TemporaryDirectory() as scratch:
        for title, game, first, second, options, sprt in SCENARIOS:
            if args.scenario and title[1] not in args.scenario:
                continue
            needed: dict[bool, list[int]] = {True: [], False: []}
            verdicts: dict[bool, list[str]] = {True: [], False: []}
            began = time.monotonic()
            for duplicate in (True, False):
                for seed in range(1, args.runs + 1):
                    db = Path(scratch) / f"{game}-{duplicate}-{seed}.duckdb"
                    with matchlog.open(db, write=True, mode="create") as log:
                        run = run_duel(
                            game,
                            first,
                            second,
                            store=log,
                            sprt=sprt,
                            options=options,
                            seed=seed,
                            duplicate=duplicate,
                            pairs=args.cap,
                        )
                    report = run.report
                    needed[duplicate].append(report.decided_at or report.pairs)
                    verdicts[duplicate].append(report.verdict if report.decided_at else "undecided")
            print(f"{title}: SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g}, {args.runs} seeds each")
            for duplicate in (True, False):
                pairs = needed[duplicate]
                kind = "duplicate" if duplicate else "fresh    "
                counts = {v: verdicts[duplicate].count(v) for v in sorted(set(verdicts[duplicate]))}
                print(
                    f"  {kind}: mean {statistics.mean(pairs):7.1f} pairs ({2 * statistics.mean(pairs):7.1f} games), "
                    f"median {statistics.median(pairs):6.1f}, min {min(pairs)}, max {max(pairs)}; verdicts {counts}"
                )
            ratio = statistics.mean(needed[False]) / statistics.mean(needed[True])
            print(f"  fresh / duplicate: {ratio:.2f}x the games ({time.monotonic() - began:.0f} s)\n")


if __name__ == "__main__":
    main()
