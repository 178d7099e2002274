"""Analyses per second, per game: each game's analyser over matches recorded here, in one process and
on every core (`matchlog analyse --all --jobs N`), and what writing the annotations costs.

    python bench/bench_analysis.py               # the default counts below
    python bench/bench_analysis.py --scale 0.2   # quicker

Backgammon is analysed by GNU Backgammon at its default evaluation (Debian's gnubg, as a process)
and, to show what the evaluation costs, at 0 plies; Porrinha by the reasoner, Da Vinci Code by the
seed's vectors, Fish by maximin at its default depth (2). Each line: matches, decisions judged,
matches/s and decisions/s in one process, matches/s on every core, and that every match verifies
with its annotations. Then `--all` over 1,000 Porrinha matches on every core, stopped halfway and
resumed.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import matchlog
from matchlog.analysis.run import analyse_matches
from matchlog.referee import play_series
from matchlog.referee.tournament import cores

#: (game, analyser, players, options, matches)
GAMES = [
    ("backgammon", "gnubg", ["heuristic", "random"], {}, 6),
    ("backgammon", "gnubg:0", ["heuristic", "random"], {}, 40),
    ("porrinha", "reasoner", ["reasoner", "random", "random"], {}, 400),
    ("davinci", "seed-ai", ["seed-ai", "random", "random"], {"jokers": True}, 400),
    ("fish", "maximin", ["maximin:1", "random", "random"], {"random_board": True, "holes": 3}, 60),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--jobs", type=int, default=cores())
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}\n")
    jobs = f"{args.jobs} jobs"
    print(f"{'game':11} {'analyser':9} {'matches':>7} {'decisions':>9} {'one process':>30} {jobs:>14}  verify")
    with tempfile.TemporaryDirectory() as scratch:
        for game, analyser, players, options, count in GAMES:
            matches = max(2, int(count * args.scale))
            db = Path(scratch) / f"{game}-{analyser.replace(':', '')}.duckdb"
            with matchlog.open(db, mode="create") as log:
                play_series(game, players, games=matches, options=options, seed=1, store=log.store)
                infos = list(reversed(log.matches()))
                began = time.perf_counter()
                one = analyse_matches(log, infos, analyser)
                alone = time.perf_counter() - began
                decisions = log.store.query("SELECT count(*) FROM annotations WHERE type = 'analysis.decision'")[0][0]
                began = time.perf_counter()
                many = analyse_matches(log, infos, analyser, jobs=args.jobs, again=True)
                spread = time.perf_counter() - began
                verified = log.verify()
            failed = sum(o.error is not None for o in [*one, *many])
            print(
                f"{game:11} {analyser:9} {matches:>7,} {decisions:>9,} {matches / alone:>9,.2f} matches/s "
                f"{decisions / alone:>8,.0f} dec/s {matches / spread:>8,.2f} matches/s"
                f"  {'ok' if verified.ok and not failed else f'{len(verified.findings)} findings, {failed} failed'}"
            )
        resumed(Path(scratch) / "resume.duckdb", max(20, int(1_000 * args.scale)), args.jobs)


def resumed(db: Path, matches: int, jobs: int) -> None:
    """`--all` over `matches` Porrinha matches on `jobs` processes, stopped halfway, then resumed:
    the second run analyses only the rest."""
    with matchlog.open(db, mode="create") as log:
        play_series("porrinha", ["reasoner", "random", "random"], games=matches, seed=2, store=log.store)
        infos = list(reversed(log.matches()))
        began = time.perf_counter()
        first = analyse_matches(log, infos[: matches // 2], jobs=jobs)
        second = analyse_matches(log, infos, jobs=jobs)
        took = time.perf_counter() - began
        done = sum(1 for o in [*first, *second] if o.written)
        skipped = sum(1 for o in second if o.skipped == "analysed")
    print(
        f"\n--all over {matches:,} porrinha matches on {jobs} jobs, stopped halfway and resumed: "
        f"{done:,} analysed once each ({skipped:,} skipped on resuming), {matches / took:,.1f} matches/s"
    )


if __name__ == "__main__":
    main()
