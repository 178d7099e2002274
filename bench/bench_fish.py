"""Fish benchmark: the house player's search, side by side with the brute-force maximin, and whole
recorded games and knockouts.

    python bench/bench_fish.py                 # 200 positions, 100 games
    python bench/bench_fish.py --games 20      # quicker

Prints: for depths 1 to 3, maximin's time per move (p50, p99, max) on positions from 4-player
games on 5x5 random boards with holes, and at depths 1 and 2 the brute-force search the course's
words describe (tests/fish_oracle.py) on the same positions, with the ratio (both agree on every
move, or the script says so); then 4 house players (depth 2) playing recorded games per second
with every chain verified; then a 16-player knockout.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from matchlog.engines import GameTree
from matchlog.engines.fish import ENGINE, FishState
from matchlog.events import MatchStarted, PenguinPlaced, Seat
from matchlog.referee import play_series, run_knockout
from matchlog.referee.fish import HousePlayer, RandomPlayer, maximin, zigzag
from matchlog.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fish_oracle import oracle_move

OPTIONS = {"rows": 5, "columns": 5, "random_board": True, "holes": 3, "one_fish": 2}


def positions(count: int, seed: int) -> list[FishState]:
    """Move-phase states from 4-player games where everyone moves at random."""
    rng = random.Random(seed)
    found: list[FishState] = []
    while len(found) < count:
        seats = tuple(Seat(f"s{i}", "x") for i in range(4))
        state = ENGINE.start(MatchStarted(game="fish", options=OPTIONS, seats=seats))
        state = ENGINE.apply(state, ENGINE.chance(state, rng))
        while (turn := ENGINE.to_act(state)) is not None and len(found) < count:
            if turn.decision == "place":
                state = ENGINE.apply(state, PenguinPlaced(seat=turn.seat, position=zigzag(state)))
            elif turn.decision == "move":
                found.append(state)
                state = ENGINE.apply(state, rng.choice(ENGINE.legal(state, turn.seat)))
            else:
                state = ENGINE.apply(state, ENGINE.legal(state, turn.seat)[0])
    return found


def timed(search, states: list[FishState]) -> tuple[list[float], list[object]]:
    times, moves = [], []
    for state in states:
        began = time.perf_counter()
        moves.append(search(GameTree(ENGINE, state)))
        times.append(time.perf_counter() - began)
    return times, moves


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered) * 1e3:8.2f} ms  p99 {p99 * 1e3:8.2f} ms  max {ordered[-1] * 1e3:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}, {args.positions} positions, {args.games} games")

    states = positions(args.positions, args.seed)
    print("\nmaximin per move (4 players, 5x5 random board, 3 holes)")
    for depth in (1, 2, 3):
        ours, chosen = timed(lambda tree, d=depth: maximin(tree, d), states)
        line = f"  depth {depth}: {summary(ours)}"
        if depth <= 2:
            brute, expected = timed(lambda tree, d=depth: oracle_move(tree, d), states)
            agree = "agree on every move" if chosen == expected else "DISAGREE"
            line += f"   brute force {summary(brute)}   {sum(brute) / sum(ours):6.0f}x faster, {agree}"
        print(line)

    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "fish.duckdb") as store:
        began = time.perf_counter()
        series = play_series("fish", ["maximin"] * 4, games=args.games, options=OPTIONS, seed=args.seed, store=store)
        seconds = time.perf_counter() - began
        findings = store.verify([m.match_id for m in series.matches])
        events = sum(info.last_seq + 1 for info in store.matches(game="fish", limit=args.games))
        print(
            f"\n4 x maximin:2, recorded: {args.games / seconds:.1f} games/s ({events / seconds:,.0f} events/s), "
            f"{len(series.matches) - len({f.match_id for f in findings})}/{len(series.matches)} verify"
        )

        rng = random.Random(args.seed)
        entrants = [Seat(f"p{i}", "maximin" if i % 2 else "random") for i in range(16)]
        players = [HousePlayer(None, 2) if i % 2 else RandomPlayer(random.Random(rng.random())) for i in range(16)]
        began = time.perf_counter()
        result = run_knockout("fish", entrants, players, options=OPTIONS, store=store, seed=args.seed)
        seconds = time.perf_counter() - began
        findings = store.verify([result.tournament_id, *(g.match_id for g in result.games)])
        print(
            f"16-player knockout: {len(result.games)} games in {seconds:.2f} s, champions {', '.join(result.winners)}; "
            f"{'every chain verifies' if not findings else f'{len(findings)} findings!'}"
        )


if __name__ == "__main__":
    main()
