"""matchlog attacked as an adversary would (issue 18), one test per break, each failing on the code
before its fix: hidden values leaking to other seats, results printed before they were stored,
derived tables that lie, imports no referee could have recorded, Ctrl-C that lost a match, runaway
worker counts, and bad input that escaped as `error[internal]`.
"""

from __future__ import annotations

import json
import random
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
