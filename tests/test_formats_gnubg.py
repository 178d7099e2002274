"""GNU Backgammon itself reads our .mat and .sgf exports, we read its own, and a match goes through
it and comes back as the same match.

One module-scoped fixture runs the real gnubg once (`tests/gnubg_roundtrip.py`): it plays itself a
short match with the cube in play and exports it as .mat and .sgf, then reads our exports of a few
matchlog games, loads each as .sgf and imports it as .mat, and saves what it read as .sgf again
(and the .mat as .mat). For every game it reads it reports, turn by turn, the position it holds
before the move (decoded by gnubg's own `positionfromid`), the dice, the player, the move in its
own words, the cube actions and the result. The tests compare all of that with matchlog's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.engines.backgammon import ENGINE, BackgammonState
from matchlog.engines.backgammon_notation import play_text
from matchlog.events import DiceRolled, Event, MatchEnded, MatchStarted, OpeningRolled, Record
from matchlog.formats import read_mat, read_sgf
from matchlog.formats.gnubg import Cube, Roll, game_of
from matchlog.replay import audit_records

from .gnubg_roundtrip import match_play, played, round_trip, run_gnubg, same_match

#: gnubg plays itself a 7-point match with the cube in play, quickly (0-ply), from a fixed seed.
_SELFPLAY = [
    "set rng mersenne",
    "set seed 5",
    "set player 0 gnubg",
    "set player 1 gnubg",
    "set player 0 chequerplay evaluation plies 0",
    "set player 1 chequerplay evaluation plies 0",
    "set player 0 cubedecision evaluation plies 0",
    "set player 1 cubedecision evaluation plies 0",
    "set display off",
    "new match 7",
]


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
    """Each roll of a match as GNU Backgammon lists its moves: the player, the dice, and the
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


def _moves(seen: dict[str, Any]) -> list[dict[str, Any]]:
    """gnubg's move turns, as `_turns` lists ours."""
    return [{k: turn[k] for k in ("player", "dice", "board")} for turn in seen["turns"] if turn["action"] == "move"]


def _result(records: list[Record]) -> tuple[int, int, bool]:
    """A match's winner, points and whether the loser resigned, as gnubg's info says them."""
    outcome = next(r.event.outcome for r in reversed(records) if isinstance(r.event, MatchEnded))
    winner = outcome.winners[0]
    return winner, int(outcome.scores[winner]), outcome.result == "resigned"


def _info(seen: dict[str, Any]) -> tuple[int, int, bool]:
    info = seen["info"]
    return "XO".index(info["winner"]), info["points-won"], info["resigned"]


@pytest.fixture(scope="module")
def gnubg(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """gnubg's self-play match (its .mat and .sgf), and a few of ours sent through gnubg and back."""
    folder = tmp_path_factory.mktemp("gnubg")
    selfplay = run_gnubg(
        folder,
        [
            {
                "name": "selfplay",
                "load": None,
                "then": [f"export match mat {folder / 'gnubg.mat'}", f"save match {folder / 'gnubg.sgf'}"],
            }
        ],
        setup=_SELFPLAY,
    )["selfplay"]
    # Its first game with a cube action, as matchlog imports it: match play from gnubg goes back too.
    from_gnubg = next(
        (
            match
            for match in read_mat((folder / "gnubg.mat").read_text())
            if any("double" in e.tag for e in match.events)
        ),
        None,
    )
    assert from_gnubg is not None, "seed 5 should play a double in a 7-point match"
    ours = {
        "opening_played": played(3),
        "opening_rolled_again": played(4, {"move_by_turn_rolls": False}),
        "pygammon_rules": played(5, {"rules": "pygammon"}),
        "match_play": match_play(6),
        "from_gnubg": from_gnubg.records(),
    }
    trip = round_trip(ours, folder)
    return {"folder": folder, "selfplay": selfplay, "ours": ours, **trip}


NAMES = ["opening_played", "opening_rolled_again", "pygammon_rules", "match_play", "from_gnubg"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("suffix", [".mat", ".sgf"])
def test_gnubg_reads_our_export_to_the_same_positions_moves_and_score(gnubg: dict[str, Any], name: str, suffix: str):
    records = gnubg["ours"][name]
    [seen] = gnubg["seen"][name + suffix]
    assert _moves(seen) == _turns([record.event for record in records])
    assert _info(seen) == _result(records)
    # Each turn reads in our words as gnubg words it (13/8 6/5, 24/18*/13, 6/2(2), bar/22, 6/off).
    ours = [play_text(action.steps) for action in game_of(records).actions if isinstance(action, Roll)]
    assert [turn["text"] for turn in seen["turns"] if turn["action"] == "move"] == ours
    cube = [(turn["player"], turn["action"]) for turn in seen["turns"] if turn["action"] != "move"]
    assert cube == [(a.player, a.action) for a in game_of(records).actions if isinstance(a, Cube)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("way", [".sgf", ".mat", ".mat.mat"])
def test_a_match_through_gnubg_comes_back_as_the_same_match(gnubg: dict[str, Any], name: str, way: str):
    """.sgf -> gnubg -> .sgf, .mat -> gnubg -> .sgf and .mat -> gnubg -> .mat: gnubg drops the
    properties it does not know, and keeps the game comment, where our tags are: the opening
    roll, the rules, match play, the chance commitment and its seed all come back."""
    assert gnubg["differences"][name + way] is None


def test_what_came_back_audits_with_its_chance_drawn_from_the_revealed_seed(gnubg: dict[str, Any]):
    folder = gnubg["folder"]
    for name in ("opening_rolled_again", "match_play"):
        [back] = read_sgf((folder / f"{name}.mat.gnubg.sgf").read_text())
        report = audit_records(back.records())
        assert report.passed, report.findings
        assert report.checked["chance_rederived"] == report.checked["chance"] > 0


@pytest.mark.parametrize("suffix", [".mat", ".sgf"])
def test_gnubgs_own_match_imports_and_scores_as_gnubg_scored_it(gnubg: dict[str, Any], suffix: str):
    """Cube actions and resignations are events: a resigned game is worth what gnubg gave it (its
    value times the cube), a doubled game twice its points, a dropped double the cube."""
    text = (gnubg["folder"] / f"gnubg{suffix}").read_text()
    matches = (read_mat if suffix == ".mat" else read_sgf)(text)
    played_games = gnubg["selfplay"]
    assert len(matches) == len(played_games) >= 2  # a 7-point match: several games, one series
    assert len({match.events[0].series.id for match in matches}) == 1  # type: ignore[attr-defined]
    results = set()
    for number, (match, game) in enumerate(zip(matches, played_games, strict=True), start=1):
        assert match.events[0].series.game == number  # type: ignore[attr-defined]
        assert _turns(match.events) == _moves(game)
        assert _result(match.records()) == _info(game)
        results.add(match.events[-1].outcome.result)  # type: ignore[attr-defined]
        report = audit_records(match.records())
        assert report.passed, report.findings
        assert "no chance commitment recorded: chance is checked for possibility only" in report.notes
    assert {"resigned", "dropped"} <= results, "seed 5's match has a resignation and a dropped double"


def test_importing_gnubgs_match_records_a_series_that_audits_and_counts(gnubg: dict[str, Any], tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "log.duckdb")
    mat = str(gnubg["folder"] / "gnubg.mat")
    games = len(gnubg["selfplay"])
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


def test_same_match_sees_a_changed_roll(gnubg: dict[str, Any]):
    """The comparison the round trips rest on can fail: a match is not the same as another."""
    assert same_match(gnubg["ours"]["opening_played"], gnubg["ours"]["opening_played"]) is None
    assert same_match(gnubg["ours"]["opening_played"], gnubg["ours"]["pygammon_rules"]) is not None
