"""GNU Backgammon itself reads our .mat and .sgf exports, and we read its own.

One module-scoped fixture runs gnubg once (`gnubg -t -q -r -p script.py`, its embedded Python):
it plays itself a short match and exports it as .mat and .sgf, then imports our exports of two
matchlog games; for every game it reads it prints, turn by turn, the position GNU Backgammon holds
before the move (decoded by gnubg's own `positionfromid`), the dice and the player, and the result.
The tests compare those positions with matchlog's engine states.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.engines.backgammon import ENGINE, BackgammonState
from matchlog.events import DiceRolled, Event, MatchEnded, MatchStarted, OpeningRolled
from matchlog.formats import export_mat, export_sgf, read_mat, read_sgf
from matchlog.referee.play import play_match
from matchlog.referee.players import make_player, seats_from_specs
from matchlog.replay import audit_records

GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"

_SCRIPT = r"""
import json, os
import gnubg

job = json.load(open(os.environ["MATCHLOG_GNUBG_JOB"]))

def games():
    found = []
    for game in gnubg.match(analysis=0, boards=1, statistics=0, verbose=0)["games"]:
        turns = [
            {"player": "XO".index(r["player"]), "dice": list(r["dice"]),
             "board": [list(side) for side in gnubg.positionfromid(r["board"])]}
            for r in game["game"] if r["action"] == "move"
        ]
        found.append({"info": game["info"], "turns": turns})
    return found

for command in [
    "set rng mersenne", "set seed %d" % job["seed"], "set player 0 gnubg", "set player 1 gnubg",
    "set player 0 chequerplay evaluation plies 0", "set player 1 chequerplay evaluation plies 0",
    "set cube use off", "set display off", "new match %d" % job["length"],
    "export match mat " + job["mat"], "save match " + job["sgf"],
]:
    gnubg.command(command)
out = {"selfplay": games()}
for path in job["ours"]:
    gnubg.command(("import mat " if path.endswith(".mat") else "load match ") + path)
    out[path] = games()
json.dump(out, open(job["out"], "w"))
"""


def _board(state: BackgammonState, side: int) -> list[int]:
    """GNU Backgammon's array of one side: checkers on its own points 1..24, then its bar."""
    found = [0] * 25
    for point, count in enumerate(state.points):
        if side == 0 and count > 0:
            found[point] = count
        elif side == 1 and count < 0:
            found[23 - point] = -count
    found[24] = state.bar[side]
    return found


def _turns(events: list[Event]) -> list[dict[str, Any]]:
    """Each roll of a match as GNU Backgammon lists its turns: the player, the dice, and the
    position before the move (the opponent's array, then the mover's)."""
    started = events[0]
    assert isinstance(started, MatchStarted)
    state = ENGINE.start(started)
    turns = []
    for event in events[1:]:
        before, state = state, ENGINE.apply(state, event)
        rolled = isinstance(event, DiceRolled) or (
            isinstance(event, OpeningRolled) and before.options.move_by_turn_rolls
        )
        if rolled:
            side = event.seat if isinstance(event, DiceRolled) else state.side
            # The opening roll is written the starter's (higher) die first.
            dice = list(event.dice) if isinstance(event, DiceRolled) else sorted([event.first, event.second])[::-1]
            turns.append({"player": side, "dice": dice, "board": [_board(state, 1 - side), _board(state, side)]})
    return turns


def _play(seed: int, **options: object) -> list:
    seats = seats_from_specs("backgammon", ["heuristic", "random"])
    players = [make_player("backgammon", seat.player, random.Random(seed + i)) for i, seat in enumerate(seats)]
    result = play_match("backgammon", seats, players, options=options, seed=seed)
    return result.recorder.records(result.match_id)


@pytest.fixture(scope="module")
def gnubg(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """gnubg's self-play match (its .mat and .sgf), and what it read from our exports."""
    folder = tmp_path_factory.mktemp("gnubg")
    ours = {"default": _play(3), "opening played": _play(4, move_by_turn_rolls=True)}
    paths = []
    for name, records in ours.items():
        stem = folder / name.replace(" ", "_")
        stem.with_suffix(".mat").write_text(export_mat(records))
        stem.with_suffix(".sgf").write_text(export_sgf(records))
        paths += [str(stem.with_suffix(".mat")), str(stem.with_suffix(".sgf"))]
    job = {
        "seed": 12,
        "length": 3,
        "mat": str(folder / "gnubg.mat"),
        "sgf": str(folder / "gnubg.sgf"),
        "ours": paths,
        "out": str(folder / "out.json"),
    }
    (folder / "job.json").write_text(json.dumps(job))
    (folder / "script.py").write_text(_SCRIPT)
    env = {**os.environ, "HOME": str(folder), "MATCHLOG_GNUBG_JOB": str(folder / "job.json")}
    done = subprocess.run(
        [GNUBG, "-t", "-q", "-r", "-p", str(folder / "script.py")],
        env=env,
        cwd=folder,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert (folder / "out.json").exists(), done.stdout.decode()[-2000:] + done.stderr.decode()[-2000:]
    return {"folder": folder, "ours": ours, "read": json.loads((folder / "out.json").read_text())}


@pytest.mark.parametrize("name", ["default", "opening played"])
@pytest.mark.parametrize("suffix", [".mat", ".sgf"])
def test_gnubg_reads_our_export_to_the_same_positions_and_score(gnubg: dict[str, Any], name: str, suffix: str) -> None:
    records = gnubg["ours"][name]
    events = [record.event for record in records]
    [game] = gnubg["read"][str(gnubg["folder"] / name.replace(" ", "_")) + suffix]
    assert game["turns"] == _turns(events)
    outcome = next(event.outcome for event in reversed(events) if isinstance(event, MatchEnded))
    info = game["info"]
    assert "XO".index(info["winner"]) == outcome.winners[0]
    assert info["points-won"] == int(outcome.scores[outcome.winners[0]])
    assert not info["resigned"]


@pytest.mark.parametrize("suffix", [".mat", ".sgf"])
def test_gnubgs_own_match_imports_and_replays_to_its_positions(gnubg: dict[str, Any], suffix: str) -> None:
    text = (gnubg["folder"] / f"gnubg{suffix}").read_text()
    matches = (read_mat if suffix == ".mat" else read_sgf)(text)
    played = gnubg["read"]["selfplay"]
    assert len(matches) == len(played) >= 2  # a 3-point match: several games, one series
    assert len({match.events[0].series.id for match in matches}) == 1  # type: ignore[attr-defined]
    for number, (match, game) in enumerate(zip(matches, played, strict=True), start=1):
        assert match.events[0].series.game == number  # type: ignore[attr-defined]
        assert _turns(match.events) == game["turns"]
        outcome = match.events[-1].outcome  # type: ignore[attr-defined]
        assert outcome.winners == ("XO".index(game["info"]["winner"]),)
        if game["info"]["resigned"]:
            assert outcome.result == "forfeit"
        else:
            assert int(outcome.scores[outcome.winners[0]]) == game["info"]["points-won"]
        report = audit_records(match.records())
        assert report.passed, report.findings
        assert "no chance commitment recorded: chance is checked for possibility only" in report.notes


def test_importing_gnubgs_match_records_a_series_that_audits_and_counts(gnubg: dict[str, Any], tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "log.duckdb")
    mat = str(gnubg["folder"] / "gnubg.mat")
    games = len(gnubg["read"]["selfplay"])
    first = runner.invoke(app, ["import", mat, "--db", db, "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["matches"] == games
    again = runner.invoke(app, ["import", mat, "--db", db, "--json"])
    assert json.loads(again.output)["events"] == 0  # the same dated file twice is stored once
    audit = runner.invoke(app, ["audit", "--all", "--db", db])
    assert audit.exit_code == 0, audit.output
    stats = runner.invoke(app, ["stats", "backgammon", "--db", db, "--json"])
    assert stats.exit_code == 0, stats.output
    [counted] = json.loads(stats.output)["games"]
    assert (counted["matches"], counted["finished"]) == (games, games)
