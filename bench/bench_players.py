"""What the process boundary costs: the same user player in the referee's process (`--in-process`),
in an unconfined child process (`--unconfined`: process group, cgroups and limits only) and in a
confined one (the default: a bubblewrap sandbox too), per game, side by side in one run.

    python bench/bench_players.py              # the default counts below
    python bench/bench_players.py --scale 0.2  # quicker

The user player is each game's built-in random player, seeded, loaded as a user class from a file,
so both runs play exactly the same games (same seeds) and make the same calls; the difference in time
over the number of calls made to that seat ("per call") is what one call across the boundary costs (a JSON line
each way: the seat's view encoded, sent, decoded, the answer back). Also: what starting a child
costs (spawn, confinement, loading the class), unconfined and confined, and a line's round trip
through `cat`, the floor.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from matchlog.referee import ChildPlayer, Limits, play_series
from matchlog.referee.calls import PlayerCalls
from matchlog.referee.channel import ProcessChannel
from matchlog.referee.sandbox import Child, confinement

GAMES = [
    ("porrinha", "Porrinha", ["random", "random"], {}, 200),
    ("backgammon", "Backgammon", ["random"], {}, 40),
    ("davinci", "Davinci", ["random", "random"], {"jokers": True}, 200),
    ("fish", "Fish", ["random", "random"], {"random_board": True, "holes": 3}, 100),
]

#: The user players: each game's random player, seeded as a user class is (`seed=`).
PLAYERS = """
import random
from matchlog.referee import backgammon, davinci, fish, porrinha

class Porrinha(porrinha.RandomPlayer):
    def __init__(self, seed=None):
        super().__init__(random.Random(seed))

class Backgammon(backgammon.RandomPlayer):
    def __init__(self, seed=None):
        super().__init__(random.Random(seed))

class Davinci(davinci.RandomPlayer):
    def __init__(self, seed=None):
        super().__init__(random.Random(seed))

class Fish(fish.RandomPlayer):
    def __init__(self, seed=None):
        super().__init__(random.Random(seed))
"""

_calls = {"count": 0}


def _counted(call):
    def counting(self, method, *args, required=True):
        if not isinstance(self, PlayerCalls) or self.timeout is not None:  # the user's seat, not a built-in
            _calls["count"] += 1
        return call(self, method, *args, required=required)

    return counting


def _play(
    game: str, specs: list[str], options: dict, games: int, *, in_process: bool, unconfined: bool = False
) -> tuple[float, int]:
    _calls["count"] = 0
    limits = Limits(unconfined=unconfined)
    began = time.perf_counter()
    play_series(game, specs, games=games, options=options, seed=1, in_process=in_process, limits=limits)
    return time.perf_counter() - began, _calls["count"]


def _starts(times: int, limits: Limits) -> tuple[float, float]:
    """Milliseconds to start a Python child player (and end it), median; and a cmd: program."""
    python, program = [], []
    for _ in range(times):
        began = time.perf_counter()
        ChildPlayer("porrinha", "matchlog.referee.porrinha:RandomPlayer", seed=1, limits=limits).start().close()
        python.append(time.perf_counter() - began)
        began = time.perf_counter()
        child = Child({"exec": ["cat"]}, limits)
        child.exchange(b"null\n", None)
        child.close()
        program.append(time.perf_counter() - began)
    return statistics.median(python) * 1e3, statistics.median(program) * 1e3


def _round_trip(lines: int, limits: Limits) -> float:
    """Microseconds for one line to `cat` and back."""
    child = Child({"exec": ["cat"]}, limits)
    try:
        line = b'{"call":"hand","table":{"index":0}}\n'
        began = time.perf_counter()
        for _ in range(lines):
            child.exchange(line, None)
        return (time.perf_counter() - began) / lines * 1e6
    finally:
        child.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    PlayerCalls.call = _counted(PlayerCalls.call)  # type: ignore[method-assign]
    ProcessChannel.call = _counted(ProcessChannel.call)  # type: ignore[method-assign]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}")
    for line in confinement().lines():
        print(f"  {line}")
    print()
    print(
        f"{'game':11} {'games':>6} {'calls/game':>10} {'in process':>15} {'unconfined':>15} {'per call':>10}"
        f" {'confined':>15} {'per call':>10} {'ratio':>6}"
    )
    scratch = tempfile.mkdtemp()
    path = Path(scratch) / "bench_players_classes.py"
    path.write_text(PLAYERS)
    for game, name, opponents, options, count in GAMES:
        games = max(5, int(count * args.scale))
        specs = [f"{path}:{name}", *opponents]
        _play(game, specs, options, 1, in_process=False)  # warm up: imports, caches
        inside, calls = _play(game, specs, options, games, in_process=True)
        loose, loose_calls = _play(game, specs, options, games, in_process=False, unconfined=True)
        child, child_calls = _play(game, specs, options, games, in_process=False)
        assert calls == child_calls == loose_calls, f"{game}: {calls} calls in process, {child_calls} in a child"
        print(
            f"{game:11} {games:>6,} {calls / games:>10,.0f} {inside / games * 1e3:>10.1f} ms/game"
            f" {loose / games * 1e3:>10.1f} ms/game {(loose - inside) / calls * 1e6:>+7.0f} µs"
            f" {child / games * 1e3:>10.1f} ms/game {(child - inside) / calls * 1e6:>+7.0f} µs {child / inside:>5.1f}x"
        )
    shutil.rmtree(scratch)
    times, lines = max(3, int(20 * args.scale)), max(1000, int(20_000 * args.scale))
    print()
    for name, limits in (("unconfined", Limits(unconfined=True)), ("confined", Limits())):
        python, program = _starts(times, limits)
        floor = _round_trip(lines, limits)
        print(
            f"{name:>10}: starting and ending a child: a Python class {python:.0f} ms, a cmd: program"
            f" {program:.0f} ms (median); a line's round trip through cat (the floor): {floor:.1f} µs"
        )


if __name__ == "__main__":
    main()
