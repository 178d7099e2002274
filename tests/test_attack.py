"""matchlog attacked as an adversary would (issue 18), one test per break, each failing on the code
before its fix: hidden values leaking to other seats, results printed before they were stored,
derived tables that lie, imports no referee could have recorded, Ctrl-C that lost a match, runaway
worker counts, and bad input that escaped as `error[internal]`.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.events import Seat
from matchlog.referee import play_match
from matchlog.referee.porrinha import RandomPlayer as PorrinhaRandom
from matchlog.store import Store

runner = CliRunner()


def cli(*args: object, code: int | None = 0) -> tuple[str, str]:
    """Run a matchlog command; check its exit status (None: any) and return (stdout, stderr)."""
    result = runner.invoke(app, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (args, result.exit_code, result.stdout[-800:], result.stderr[-800:])
    return result.stdout, result.stderr


def ids(db: Path, game: str) -> list[str]:
    return [m["match_id"] for m in json.loads(cli("list", "--game", game, "--db", db, "--json")[0])]


# -- 1. hidden values leaked to other seats ------------------------------------------------------


def test_a_seat_cannot_tell_that_another_seats_drawn_tile_is_a_joker(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    cli("play", "davinci", "-p", "random", "-p", "random", "--jokers", "--games", "8", "--seed", "5", "-q", "--db", db)
    after_joker, after_number = set(), set()
    for match_id in ids(db, "davinci"):
        full = json.loads(cli("replay", match_id, "--db", db, "--json")[0])
        mine = json.loads(cli("replay", match_id, "--as-seat", "0", "--db", db, "--json")[0])
        for seq, step in enumerate(full[:-1]):
            event = step["event"]
            if step["type"] != "davinci.tile_drawn" or event["seat"] != 1:
                continue
            joker = event["tile"] in (24, 25)
            (after_joker if joker else after_number).add(mine[seq + 1]["type"])
            # Seat 0 sees nothing that names a joker of seat 1's...
            assert "joker" not in mine[seq]["text"] + mine[seq + 1]["text"], mine[seq : seq + 2]
            # ...nor a decision only a joker asks for.
            shown = json.loads(cli("show", match_id, "--at", seq, "--as-seat", "0", "--db", db, "--json")[0])
            assert shown["to_act"] is None or shown["to_act"]["decision"] != "place_joker", shown["to_act"]
            assert "24" not in json.dumps(shown["state"]["pending"]) and "25" not in json.dumps(
                shown["state"]["pending"]
            )
    assert after_joker, "seat 1 drew no joker in these matches: the attack was not tried"
    # What follows a drawn joker is what follows any drawn tile: the steps do not tell them apart.
    assert after_joker <= after_number, (after_joker, after_number)


class FirstHand(PorrinhaRandom):
    """A Porrinha player whose first hand is `first` (99 is not a hand: lenient, it counts as 0)."""

    def __init__(self, first: int, rng: random.Random) -> None:
        super().__init__(rng)
        self.first: int | None = first

    def hand(self, table: Any) -> int:
        first, self.first = self.first, None
        return first if first is not None else super().hand(table)


def test_a_seat_cannot_tell_that_another_seats_hand_was_reset_to_0(tmp_path: Path):
    """Two worlds: seat 0 answers 99 (rejected, counted as 0) or a valid 0. Seat 1 must see the
    same until it has guessed."""
    db = tmp_path / "log.duckdb"
    with Store(db) as store:
        worlds = []
        for first in (99, 0):
            players = [
                FirstHand(first, random.Random(1)),
                PorrinhaRandom(random.Random(2)),
                PorrinhaRandom(random.Random(3)),
            ]
            seats = tuple(Seat(f"p{i}", "random") for i in range(3))
            worlds.append(play_match("porrinha", seats, players, store=store, seed=7).match_id)
    seen = []
    for match_id in worlds:
        lines = json.loads(cli("replay", match_id, "--as-seat", "1", "--db", db, "--json")[0])
        until = next(i for i, line in enumerate(lines) if line["type"] == "porrinha.guess_made" and line["actor"] == 1)
        seen.append([{k: v for k, v in line.items() if k != "at"} for line in lines[: until + 1]])
    full = json.loads(cli("replay", worlds[0], "--db", db, "--json")[0])
    assert any(step["type"] == "match.answer_rejected" for step in full), "the 99 was not rejected"
    assert seen[0] == seen[1]


# -- 2. results printed before they were stored; 5. Ctrl-C during play ----------------------------

MATCHLOG = [sys.executable, "-c", "from matchlog.cli import main; main()"]
UNBUFFERED = {**os.environ, "PYTHONUNBUFFERED": "1"}  # what a terminal shows: every line as it is printed


def play_command(game: str, db: Path) -> list[str]:
    players = ["-p", "random"] * (3 if game == "porrinha" else 2)
    return [*MATCHLOG, "play", game, *players, "--games", "1000000", "--seed", "3", "--db", str(db)]


def test_every_match_play_prints_is_in_the_log_whenever_it_is_killed(tmp_path: Path):
    rng = random.Random(18)
    for attempt in range(3):
        db = tmp_path / f"log{attempt}.duckdb"
        child = subprocess.Popen(
            play_command("porrinha", db), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=UNBUFFERED
        )
        try:
            first = child.stdout.readline()  # type: ignore[union-attr]
            assert first.startswith("match "), first
            time.sleep(rng.uniform(0.2, 1.2))
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        printed = [first, *child.stdout]  # type: ignore[union-attr]
        child.stdout.close()  # type: ignore[union-attr]
        with Store(db) as store:
            assert store.verify() == []
            for line in printed:
                info = store.match(line.split()[1])
                assert info.status == "finished", line
        assert len(printed) > 5


def test_ctrl_c_during_play_exits_130_and_ends_the_match_in_play_as_abandoned(tmp_path: Path):
    rng = random.Random(5)
    for attempt, game in enumerate(["backgammon", "porrinha", "davinci", "backgammon"]):
        db = tmp_path / f"log{attempt}.duckdb"
        child = subprocess.Popen(
            play_command(game, db), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=UNBUFFERED
        )
        first = child.stdout.readline()  # type: ignore[union-attr]
        time.sleep(rng.uniform(0.0, 0.6))
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        assert child.returncode == 130, (game, child.returncode, err[-500:])
        assert err.startswith("error[interrupted]") and "Traceback" not in err and "bad_start" not in err, err
        with Store(db) as store:
            assert store.verify() == []
            assert store.matches(status="running", limit=None) == [], "the match in play was left running"
            assert len(store.matches(status="abandoned", limit=None)) <= 1
            for line in [first, *out.splitlines()]:
                assert store.match(line.split()[1]).status == "finished", line


# -- 6. tournament --jobs 300 ---------------------------------------------------------------------


def test_tournament_jobs_beyond_the_cores_are_refused_unless_forced(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    _, err = cli("tournament", "porrinha", "-p", "random", "-p", "random", "--jobs", "300", "--db", db, code=2)
    assert err.startswith("error[usage.jobs]") and "--force-jobs" in err
    assert not db.exists() or Store(db).count() == 0


def children(pid: int) -> set[int]:
    """The live (not zombie) processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_every_tournament_worker_ends_when_the_tournament_is_interrupted(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    jobs = 5  # beyond the cores of the test machine, forced
    command = [*MATCHLOG, "tournament", "porrinha", "-p", "random", "-p", "reasoner", "--games", "1000000"]
    child = subprocess.Popen(
        [*command, "--jobs", str(jobs), "--force-jobs", "-q", "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while len(seen) < jobs and time.monotonic() < deadline and child.poll() is None:
        seen |= children(child.pid)
        time.sleep(0.1)
    assert len(seen) >= jobs, f"only {len(seen)} worker processes started"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=90)
    assert child.returncode == 130, err[-500:]
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in seen if alive(pid)] == [], "worker processes outlived the tournament"
    with Store(db) as store:
        assert store.verify() == [] and store.matches(status="running", limit=None) == []
