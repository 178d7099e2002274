"""Pairs a duel needs to decide, with duplicate chance (one committed seed a pair) against fresh
chance for every game, on the same seeds (`matchlog duel --sprt`), and the variance of one pair's
score both ways, which is where any saving comes from.

    python bench/bench_duel.py truth --pairs 1000         # the true difference, and the variance a pair
    python bench/bench_duel.py sprt --elo1 60 --runs 15   # pairs to decide, 15 seeds each way

`truth` plays one fixed duel of each kind (`--pairs` pairs, seed `--seed`) and prints the Elo
difference with its 95% interval, the pairs by points (the pentanomial counts), the variance of a
pair's score and the share of pairs split 1-1. `sprt` then plays `--runs` duels of each kind,
seeds 1..N, each stopping when the SPRT of elo0 = 0 against `--elo1` decides (choose elo1 at or
below the true difference, so that the test has something to find), and prints the mean, spread
and range of the pairs each needed. Both default to backgammon `heuristic` against
`heuristic:0.1` (the same evaluation, playing a random legal play at a tenth of its turns); give
`--first`, `--second` and `--game` for others. Each duel is a fresh log in a scratch directory,
played by one worker unless `--jobs` says otherwise.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import matchlog
from matchlog.events import Sprt, encode
from matchlog.referee.duel import run_duel

KINDS = ((True, "duplicate"), (False, "fresh"))


def kinds(args: argparse.Namespace) -> list[tuple[bool, str]]:
    """The kinds of chance to measure: both, or the one `--kind` names (to run each in a process)."""
    return [(duplicate, kind) for duplicate, kind in KINDS if args.kind in (kind, "both")]


def pair_variance(counts: tuple[int, ...]) -> tuple[float, float]:
    """The mean and the variance of a pair's score (0, ¼, ½, ¾ or 1) from the pentanomial counts."""
    total = sum(counts)
    values = [i / (len(counts) - 1) for i in range(len(counts))]
    mean = sum(c * v for c, v in zip(counts, values, strict=True)) / total
    return mean, sum(c * (v - mean) ** 2 for c, v in zip(counts, values, strict=True)) / total


def parallel(log: Any, report: Any) -> list[float]:
    """For each pair, the share of its first game's plays made before its two games parted (the
    first event, after the commitment, that differs): while they run in parallel, each seat meets
    the same dice in the same position, and only there is the luck the same."""
    shares = []
    for pair in report.pair_list:
        first, second = ([encode(r.event) for r in log.read(m)[2:]] for m in pair.matches)
        parted = next((i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), len(first))
        plays = [i for i, e in enumerate(first) if e.startswith(b'{"type":"backgammon.checker_moved"')]
        shares.append(sum(1 for i in plays if i < parted) / max(1, len(plays)))
    return shares


def duel(args: argparse.Namespace, scratch: str, name: str, **how: Any) -> tuple[Any, list[float]]:
    with matchlog.open(Path(scratch) / f"{name}.duckdb", write=True, mode="create") as log:
        report = run_duel(args.game, args.first, args.second, store=log, jobs=args.jobs, **how).report
        return report, parallel(log, report) if args.game == "backgammon" else []


def truth(args: argparse.Namespace, scratch: str) -> None:
    print(f"{args.game}: {args.first} against {args.second}, {args.pairs} pairs each way, seed {args.seed}")
    variances = {}
    for duplicate, kind in kinds(args):
        began = time.monotonic()
        report, shares = duel(args, scratch, f"truth-{kind}", pairs=args.pairs, seed=args.seed, duplicate=duplicate)
        e = report.estimate
        mean, variance = pair_variance(report.counts)
        variances[kind] = variance
        independent = mean * (1 - mean) / 2  # a pair of two independent games scoring `mean` each
        split = report.counts[len(report.counts) // 2] / report.pairs
        print(
            f"  {kind:9}: Elo {e.elo:+6.1f} ({e.elo_low:+.1f} to {e.elo_high:+.1f}), score {mean:.4f}, "
            f"pairs by points {list(report.counts)}, variance a pair {variance:.4f} "
            f"(independent games: {independent:.4f}), split 1-1 {split:.1%} ({time.monotonic() - began:.0f} s)"
        )
        # var = independent (1 + r), r the correlation of the first player's two results in a pair
        print(
            f"             correlation of the first player's two results in a pair: {variance / independent - 1:+.3f}"
        )
        if shares:
            print(
                f"             plays made before a pair's games parted: median {statistics.median(shares):.0%}, "
                f"mean {statistics.mean(shares):.0%}, whole game in parallel {sum(s == 1 for s in shares)} pairs"
            )
    if len(variances) == 2 and variances["duplicate"]:
        print(f"  variance a pair, fresh / duplicate: {variances['fresh'] / variances['duplicate']:.2f}")


def sprt(args: argparse.Namespace, scratch: str) -> None:
    test = Sprt(elo0=0.0, elo1=args.elo1)
    print(
        f"{args.game}: {args.first} against {args.second}, SPRT elo0=0 elo1={args.elo1:g} (alpha = beta = 0.05), "
        f"seeds 1..{args.runs} each way, at most {args.cap} pairs a duel"
    )
    means = {}
    for duplicate, kind in kinds(args):
        began = time.monotonic()
        needed, verdicts, variances = [], [], []
        for seed in range(1, args.runs + 1):
            report, _ = duel(
                args, scratch, f"sprt-{kind}-{seed}", sprt=test, seed=seed, duplicate=duplicate, pairs=args.cap
            )
            needed.append(report.decided_at or report.pairs)
            verdicts.append(report.verdict if report.decided_at else "undecided")
            variances.append(pair_variance(report.counts)[1])
        means[kind] = statistics.mean(needed)
        tally = {v: verdicts.count(v) for v in sorted(set(verdicts))}
        print(
            f"  {kind:9}: pairs to decide mean {means[kind]:6.1f} (sd {statistics.stdev(needed):5.1f}, "
            f"standard error {statistics.stdev(needed) / math.sqrt(len(needed)):4.1f}), median "
            f"{statistics.median(needed):5.1f}, min {min(needed)}, max {max(needed)}; verdicts {tally}; "
            f"variance a pair (mean over runs) {statistics.mean(variances):.4f} ({time.monotonic() - began:.0f} s)"
        )
        print(f"             pairs needed, seed by seed: {needed}")
    if len(means) == 2:
        print(f"  pairs needed, fresh / duplicate: {means['fresh'] / means['duplicate']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", choices=("truth", "sprt"))
    parser.add_argument("--game", default="backgammon")
    parser.add_argument("--first", default="heuristic")
    parser.add_argument("--second", default="heuristic:0.1")
    parser.add_argument("--pairs", type=int, default=1000, help="truth: the pairs of each fixed duel")
    parser.add_argument("--seed", type=int, default=1000, help="truth: the seed of both fixed duels")
    parser.add_argument("--elo1", type=float, default=60.0, help="sprt: H1's Elo difference (H0 is 0)")
    parser.add_argument("--runs", type=int, default=15, help="sprt: duels of each kind (seeds 1..N)")
    parser.add_argument("--cap", type=int, default=5_000, help="sprt: the most pairs one duel may play")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--kind", choices=("both", "duplicate", "fresh"), default="both")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}")
    with tempfile.TemporaryDirectory() as scratch:
        (truth if args.phase == "truth" else sprt)(args, scratch)


if __name__ == "__main__":
    main()
