"""A large log for the benchmarks: real matches of every game, recorded once, then appended again
under fresh match ids (with their figures) until the log holds the events asked for.

    python bench/make_log.py /tmp/log10m.duckdb --events 10000000

The templates are a few hundred matches of each game played by the built-in players (backgammon
heuristic against random, Porrinha with five players, Da Vinci Code with jokers, Fish on random
boards), so every statistic has something to count. A copy keeps its template's events, times
shifted by a day per round of copies so `--since` has something to cut. Copies are appended in
bulk transactions (the writer recomputes each copy's hash chain) and their figures are copied too.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from matchlog.events import Draft, uuid7
from matchlog.referee import MemoryRecorder, make_player, play_match, seats_from_specs
from matchlog.store import Figures, Store

TABLES = [
    ("backgammon", ["heuristic", "random"], {}, 200),
    ("porrinha", ["random", "reasoner", "random", "reasoner", "random"], {}, 200),
    ("davinci", ["seed-ai", "random", "seed-ai"], {"jokers": True}, 200),
    ("fish", ["maximin:1", "random", "maximin:1"], {"random_board": True, "holes": 3}, 200),
]
DAY_US = 86_400_000_000


def templates(seed: int) -> list[tuple[list[Draft], Figures]]:
    """The recorded matches every copy is made from."""
    found = []
    for game, specs, options, count in TABLES:
        seats = seats_from_specs(game, specs)
        for n in range(count):
            rng = random.Random(seed * 1_000_003 + n)
            players = [make_player(game, s.player, random.Random(rng.random())) for s in seats]
            recorder = MemoryRecorder()
            play_match(game, seats, players, options=options, recorder=recorder, seed=rng.randrange(2**63))
            last = len(recorder.drafts) - 1
            found.append((recorder.drafts, Figures(uuid7(), last, 1, tuple(recorder.figures))))
    return found


def build(path: Path, events: int, seed: int = 1, batch_events: int = 200_000) -> tuple[int, int, float]:
    """Fill a new log at `path` with about `events` events; returns (events, matches, seconds)."""
    if path.exists():
        raise SystemExit(f"{path} exists: give a new path")
    models = templates(seed)
    began = time.perf_counter()
    written = matches = 0
    with Store(path) as store:
        while written < events:
            batch, figures, size = [], [], 0
            while size < batch_events and written + size < events:
                drafts, figured = models[matches % len(models)]
                shift = (matches // len(models)) % 365 * DAY_US
                match_id = uuid7()
                batch.append((match_id, [Draft(d.event, uuid7(), d.at_us - 365 * DAY_US + shift) for d in drafts], 0))
                figures.append(Figures(match_id, figured.last_seq, figured.version, figured.rows))
                size += len(drafts)
                matches += 1
            store.append_bulk(batch)
            store.put_figures(figures)
            written += size
            print(f"\r{written:,} events, {matches:,} matches", end="", file=sys.stderr)
        print(file=sys.stderr)
    return written, matches, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    events, matches, seconds = build(args.path, args.events, args.seed)
    print(
        f"{events:,} events in {matches:,} matches written to {args.path} "
        f"in {seconds:.0f} s ({events / seconds:,.0f}/s)"
    )


if __name__ == "__main__":
    main()
