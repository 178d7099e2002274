"""Backgammon benchmark, side by side with pygammon in the same run.

    python bench/bench_backgammon.py               # 1,000 recorded self-play games
    python bench/bench_backgammon.py --games 200   # quicker

Prints: legal-play generation (every distinct whole play of 2,000 positions from random games, in
positions/s), matchlog's random self-play with every game recorded (games/s, then every game
verified and its final position checked) in one process and as a tournament in worker processes
(with the CPU each event costs the recording process and the workers), pygammon's own self-play
with a random client (games/s), and the same client through matchlog's pygammon-compatible run().
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import pygammon

from matchlog.engines import CHANCE
from matchlog.engines.backgammon import ENGINE as BACKGAMMON
from matchlog.engines.backgammon import _analysis, plays
from matchlog.events import MatchStarted, Seat
from matchlog.referee import backgammon as ours
from matchlog.referee import play_series
from matchlog.referee.tournament import run_tournament
from matchlog.replay import fold
from matchlog.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pygammon_clients import RandomClient


def sample_positions(count: int, seed: int) -> list:
    """States awaiting a move, from random games."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        state = BACKGAMMON.start(MatchStarted(game="backgammon", options={}, seats=(Seat("a", "r"), Seat("b", "r"))))
        while (turn := BACKGAMMON.to_act(state)) is not None and len(found) < count:
            if turn.seat == CHANCE:
                state = BACKGAMMON.apply(state, rng.choice(BACKGAMMON.chance_outcomes(state)))
                if state.dice and not state.played:
                    found.append(state)
            else:
                state = BACKGAMMON.apply(state, rng.choice(BACKGAMMON.legal(state, turn.seat)))
    return found


def final_position_is_legal(state) -> bool:
    """15 checkers a side, the winner's all borne off, no point held by both."""
    for side, sign in ((0, 1), (1, -1)):
        on_board = sum(v * sign for v in state.points if v * sign > 0)
        if on_board + state.bar[side] + state.off[side] != 15:
            return False
    return state.winner >= 0 and state.off[state.winner] == 15


def cpu_since(before: resource.struct_rusage, who: int) -> float:
    """User and system CPU seconds of `who` (RUSAGE_SELF or RUSAGE_CHILDREN) since `before`."""
    now = resource.getrusage(who)
    return now.ru_utime - before.ru_utime + now.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000, help="recorded self-play games (default 1000)")
    parser.add_argument("--pygammon-games", type=int, default=100, help="pygammon games (default 100)")
    parser.add_argument("--positions", type=int, default=2000, help="positions for play generation (default 2000)")
    parser.add_argument("--jobs", type=int, default=2, help="tournament worker processes (default 2)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")

    positions = sample_positions(args.positions, seed=1)
    _analysis.cache_clear()
    began, cpu = time.perf_counter(), time.process_time()
    total_plays = sum(len(plays(state)) for state in positions)
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    print(
        f"legal-play generation:         {len(positions) / elapsed:>9,.0f} positions/s"
        f"   ({total_plays / len(positions):.1f} distinct plays each, {len(positions):,} positions;"
        f" {len(positions) / cpu:,.0f} a CPU second)"
    )

    with tempfile.TemporaryDirectory() as scratch:
        with Store(Path(scratch) / "bench.duckdb") as store:
            began, cpu = time.perf_counter(), time.process_time()
            series = play_series("backgammon", ["random", "random"], games=args.games, seed=7, store=store)
            ours_rate = args.games / (time.perf_counter() - began)
            ours_cpu = (time.process_time() - cpu) / args.games  # the log's writer thread included
            findings = store.verify()
            legal = sum(final_position_is_legal(fold(store.read(result.match_id))) for result in series.matches)
            events = store.count()
        print(
            f"matchlog random self-play:     {ours_rate:>9,.1f} games/s   (recorded: {events:,} events;"
            f" verify: {len(findings)} findings; legal final positions: {legal}/{args.games};"
            f" {ours_cpu * 1e3:.1f} ms CPU a game)"
        )

    began, cpu = time.perf_counter(), time.process_time()
    for game in range(args.pygammon_games):
        client = RandomClient(game, pygammon, undo_rate=0.05)
        pygammon.run(client.receive_input, client.send_output)
    theirs = args.pygammon_games / (time.perf_counter() - began)
    theirs_cpu = (time.process_time() - cpu) / args.pygammon_games
    print(
        f"pygammon random self-play:     {theirs:>9,.1f} games/s   (its run() with a random client;"
        f" {theirs_cpu * 1e3:.1f} ms CPU a game)"
    )

    began = time.perf_counter()
    for game in range(args.pygammon_games):
        client = RandomClient(game, ours, undo_rate=0.05)
        ours.run(client.receive_input, client.send_output, record=False, seed=game)
    same_client = args.pygammon_games / (time.perf_counter() - began)
    print(f"the same client, matchlog run: {same_client:>9,.1f} games/s   (not recorded)")

    with tempfile.TemporaryDirectory() as scratch, Store(Path(scratch) / "tournament.duckdb") as store:
        own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        result = run_tournament(
            "backgammon", ["random", "random"], games=args.games, store=store, jobs=args.jobs, seed=7
        )
        own_cpu, workers_cpu = cpu_since(own, resource.RUSAGE_SELF), cpu_since(workers, resource.RUSAGE_CHILDREN)
        legal = sum(final_position_is_legal(fold(store.read(m.match_id))) for m in store.matches(limit=None))
    print(
        f"matchlog tournament, {args.jobs} jobs:  {result.rate:>9,.1f} games/s   (recorded: {result.events:,} events;"
        f" verify: {len(result.findings)} findings; legal final positions: {legal}/{result.finished})"
    )
    tournament_cpu = (own_cpu + workers_cpu) / result.finished
    print(
        f"  CPU an event: {own_cpu / result.events * 1e6:.1f} us recording (this process),"
        f" {workers_cpu / result.events * 1e6:.1f} us playing (the workers, their start included);"
        f" {tournament_cpu * 1e3:.1f} ms CPU a game"
    )
    print(
        f"ratios to pygammon's self-play: one process {ours_rate / theirs:.1f}x,"
        f" tournament with {args.jobs} workers {result.rate / theirs:.1f}x"
    )
    # On a busy machine the phases above see different loads; CPU time a game does not depend on it.
    print(
        f"CPU a game, pygammon's over matchlog's: one process {theirs_cpu / ours_cpu:.1f}x,"
        f" tournament {theirs_cpu / tournament_cpu:.1f}x (all its processes; {os.cpu_count()} cores to share)"
    )


if __name__ == "__main__":
    main()
