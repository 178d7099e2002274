"""What the formats do with matches that are not plain, and with records that break the rules.

A backgammon match with undos, rejected answers and a player removed halfway through a turn
exports without them and round-trips; an illegal play, a roll out of turn, a wrong result, an
unreachable Fish move, a tampered text record are each refused with the format's code and the
line, state or rule; and the CLI imports all of a file or none of it.
"""

from __future__ import annotations

import functools
import json
import random
import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.engines.fish import reachable
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    DoubleDropped,
    DoubleOffered,
    PlayerRemoved,
    Record,
    Seat,
    UsageError,
)
from matchlog.formats import FormatError, export, read
from matchlog.referee.backgammon import HeuristicPlayer
from matchlog.referee.play import play_match
from matchlog.referee.players import make_player, seats_from_specs
from matchlog.replay import audit_records, fold


def _match(game: str, specs: list[str], seed: int, **options: object) -> list[Record]:
    seats = seats_from_specs(game, specs)
    players = [make_player(game, seat.player, random.Random(seed + i)) for i, seat in enumerate(seats)]
    result = play_match(game, seats, players, options=options, seed=seed)
    return result.recorder.records(result.match_id)


class Fickle(HeuristicPlayer):
    """Answers garbage once, takes back a move once, and leaves halfway through its tenth turn."""

    def __init__(self) -> None:
        super().__init__(random.Random(1))
        self.calls = 0
        self.turns = 0

    def move(self, board):  # type: ignore[no-untyped-def]
        self.calls += 1
        if board.dice_played == ():
            self.turns += 1
        if self.calls == 3:
            return "nonsense"
        if self.calls == 5 and board.dice_played:
            return "undo"
        if self.turns == 10 and board.dice_played:
            raise RuntimeError("gone")
        return super().move(board)


@pytest.fixture(scope="module")
def fickle_match() -> list[Record]:
    seats = [Seat("fickle", "fickle"), Seat("heuristic", "heuristic")]
    players = [Fickle(), make_player("backgammon", "heuristic", random.Random(2))]
    result = play_match("backgammon", seats, players, seed=5, timeout=5.0)
    return result.recorder.records(result.match_id)


@pytest.mark.parametrize("format", ["mat", "sgf"])
def test_undos_rejections_and_a_removal_mid_turn_export_and_round_trip(fickle_match: list[Record], format: str) -> None:
    kinds = {type(record.event) for record in fickle_match}
    assert {ActionsUndone, AnswerRejected, PlayerRemoved} <= kinds  # the match is as unplain as intended
    text = export(fickle_match, format)
    [imported] = read(text.encode(), format)
    assert export(imported.records(), format) == text
    assert fold(imported.records()).points == fold(fickle_match).points  # the half-played turn is kept
    outcome = imported.events[-1].outcome  # type: ignore[attr-defined]
    assert (outcome.result, outcome.winners) == ("forfeit", (1,))
    assert audit_records(imported.records()).passed


_OPENING = """ 1 point match

 Game 1
 alice : 0                      bob : 0
"""


@pytest.mark.parametrize(
    ("moves", "message"),
    [
        ("  1) 52: 24/19 13/11\n", r"line 5 \(game 1, move 1\): '52: 24/19 13/11' is not .*\[backgammon\.destination"),
        ("  1) 52: 13/8 13/11\n  2) 31: 8/5 6/5\n", r"line 6 \(game 1, move 2\): alice rolls, but it is bob's turn"),
        ("  1) 52: 13/8                   31: 8/5 6/5\n", r"line 5 \(game 1, move 1\): alice's play '52: 13/8' is"),
        ("  1) 55: 13/8 13/8 8/3 8/3\n", r"line 5 \(game 1, move 1\): the opening roll 5-5 is a double"),
        ("  1) 52: 13/8 13/11             3: 8/5\n", r"line 5 \(game 1, move 1\): cannot read '3: 8/5'"),
        ("  1) 52: 13/8 13/x\n", r"line 5 \(game 1, move 1\): 'x' is not a point"),
    ],
)
def test_a_mat_that_breaks_the_rules_is_refused_at_its_line(moves: str, message: str) -> None:
    with pytest.raises(FormatError, match=message) as refused:
        read((_OPENING + moves).encode(), "mat")
    assert refused.value.code == "import.mat"


def test_a_result_that_is_not_the_rules_one_is_refused() -> None:
    text = export(_match("backgammon", ["heuristic", "random"], 7), "mat")
    last = text.rstrip("\n").splitlines()[-1]
    assert "Wins" in last
    other_column = ("      " if last.startswith(" " * 34) else " " * 34) + last.strip()
    with pytest.raises(FormatError, match="the rules give the game to the other side"):
        read(text.replace(last, other_column).encode(), "mat")
    more = last.replace(last.split()[1], "9")
    with pytest.raises(FormatError, match=r"gives .* 9 points, but a \w+ at cube 1 is"):
        read(text.replace(last, more).encode(), "mat")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(;GM[1]PW[a]PB[b];W[31hefe])", r"line 1 \(game 1\): not a backgammon game \(GM\[6\]\)"),
        ("(;GM[6]PW[a]PB[b]\n;W[31hefe]\n;B[52Aaab])", r"line 3 \(game 1, node 2\): 'A' is not a point letter"),
        ("(;GM[6]PW[a]PB[b]AB[a][b];W[31hefe])", "a position set up by hand"),
        ("(;GM[6]PW[a]PB[b]\n;W[31hefe\n", r"line 2: a value is not closed"),
        ("(;GM[6]PW[a]PB[b]\n;W[31hefe]\n;W[52mrmh])", r"line 3 \(game 1, node 2\): a rolls, but it is b's turn"),
    ],
)
def test_an_sgf_that_breaks_the_rules_is_refused_at_its_line(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message) as refused:
        read(text.encode(), "sgf")
    assert refused.value.code == "import.sgf"


def test_fish_states_no_legal_action_explains_are_refused_naming_the_state() -> None:
    states = msgspec.json.decode(export(_match("fish", ["random", "random"], 3), "fish-state"))
    # The first move: the first State with fish scored. Send that penguin where it cannot go.
    at = next(i for i, state in enumerate(states) if any(player["score"] for player in state["players"]))
    [prefix] = read(json.dumps(states[:at]).encode(), "fish-state")
    before = fold(prefix.records())
    moved = next(
        after
        for after in states[at]["players"]
        for player in states[at - 1]["players"]
        if player["color"] == after["color"] and player["places"] != after["places"]
    )
    seat = ["red", "white", "brown", "black"].index(moved["color"])
    [source] = [p for p in before.penguins[seat] if list(p) not in moved["places"]]
    [target] = [p for p in moved["places"] if tuple(p) not in before.penguins[seat]]
    free = {(r, c) for r, row in enumerate(before.board) for c, fish in enumerate(row) if fish} - before.occupied()
    far = sorted(free - set(reachable(before, source)))[0]
    moved["places"][moved["places"].index(target)] = list(far)
    with pytest.raises(FormatError, match=rf"state {at + 1}: .* \[fish\.unreachable\]") as refused:
        read(json.dumps(states[: at + 1]).encode(), "fish-state")
    assert refused.value.code == "import.fish-state"
    swapped = [*states[: at - 1], states[at + 1], states[at]]
    with pytest.raises(FormatError, match=rf"state {at}: "):
        read(json.dumps(swapped).encode(), "fish-state")
    with pytest.raises(FormatError, match="not JSON"):
        read(b"[{", "fish-state")


def test_a_tampered_text_record_is_refused_at_its_line() -> None:
    text = export(_match("porrinha", ["random", "random"], 4, chopsticks=2), "text")
    lines = text.splitlines()
    hand = next(i for i, line in enumerate(lines) if line.startswith("0: hand "))
    tampered = "\n".join([*lines[:hand], "0: hand 7", *lines[hand + 1 :]])
    with pytest.raises(FormatError, match=rf"line {hand + 1}: .*\[porrinha\.hand_out_of_range\]"):
        read(tampered.encode(), "text")
    with pytest.raises(FormatError, match=rf"line {hand + 1}: 'wave' is not a line of this game"):
        read("\n".join([*lines[:hand], "0: wave", *lines[hand + 1 :]]).encode(), "text")
    with pytest.raises(FormatError, match="the Result tag"):
        read(text.replace('[Result "', '[Result "9-').encode(), "text")
    with pytest.raises(FormatError, match="byte 0: the file is not UTF-8"):
        read(b"\xff" + text.encode(), "text")


def test_exports_say_which_games_they_hold() -> None:
    porrinha = _match("porrinha", ["random", "random"], 1)
    with pytest.raises(UsageError, match="mat holds backgammon, not porrinha"):
        export(porrinha, "mat")
    with pytest.raises(UsageError, match="--at is for fish-state"):
        export(porrinha, "text", at=3)


def test_the_cli_imports_all_of_a_file_or_none_of_it(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "log.duckdb")
    good = export(_match("backgammon", ["heuristic", "random"], 8, move_by_turn_rolls=True), "mat")
    (tmp_path / "one.record").write_text(good)
    done = runner.invoke(app, ["import", str(tmp_path / "one.record"), "--format", "mat", "--db", db, "--json"])
    assert done.exit_code == 0, done.output
    [match_id] = json.loads(done.output)["match_ids"]
    # Two games, the second one's first play illegal: neither is recorded.
    two = good + "\n Game 2\n alice : 1                      bob : 0\n  1) 52: 24/19 13/11\n"
    (tmp_path / "two.mat").write_text(two)
    refused = runner.invoke(app, ["import", str(tmp_path / "two.mat"), "--db", db])
    assert refused.exit_code == 2
    line = len(two.splitlines())
    assert refused.output.startswith(f"error[import.mat]: line {line} (game 2, move 1): '52: 24/19 13/11' is not")
    listed = json.loads(runner.invoke(app, ["list", "--db", db, "--json"]).output)
    assert [match["match_id"] for match in listed] == [match_id]
    exported = runner.invoke(app, ["export", match_id, "--format", "mat", "--db", db])
    assert exported.output == good
    wrong = runner.invoke(app, ["export", match_id, "--format", "text", "--db", db])
    assert wrong.output.startswith("error[usage.export]: text holds porrinha and davinci, not backgammon")


def test_the_cli_exports_a_fish_state_at_a_seq(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "log.duckdb")
    played = runner.invoke(app, ["play", "fish", "-p", "random", "-p", "random", "--seed", "2", "--db", db])
    assert played.exit_code == 0, played.output
    [match] = json.loads(runner.invoke(app, ["list", "--db", db, "--json"]).output)
    at = runner.invoke(app, ["export", match["match_id"], "--format", "fish-state", "--at", "12", "--db", db])
    assert at.exit_code == 0, at.output
    state = json.loads(at.output)
    assert sum(len(player["places"]) for player in state["players"]) > 0
    early = runner.invoke(app, ["export", match["match_id"], "--format", "fish-state", "--at", "1", "--db", db])
    assert early.output.startswith("error[usage.seq]: at seq 1 the play order is not known yet")


@functools.cache
def _samples() -> dict[str, str]:
    """One valid record of each format."""
    return {
        "mat": export(_match("backgammon", ["heuristic", "random"], 1), "mat"),
        "sgf": export(_match("backgammon", ["heuristic", "random"], 2, move_by_turn_rolls=True), "sgf"),
        "fish-state": export(_match("fish", ["random", "random", "random"], 3), "fish-state"),
        "text": export(_match("davinci", ["random", "seed-ai"], 4, jokers=True), "text"),
    }


@settings(max_examples=60)
@given(
    format=st.sampled_from(["mat", "sgf", "fish-state", "text"]),
    cut=st.floats(min_value=0, max_value=1),
    length=st.integers(min_value=0, max_value=40),
    inserted=st.text(alphabet='0123456789:/[]();" abxyzWB\n-*{},', max_size=12),
)
def test_a_damaged_record_is_imported_whole_or_refused_with_a_format_error(
    format: str, cut: float, length: int, inserted: str
) -> None:
    text = _samples()[format]
    at = int(cut * len(text))
    damaged = text[:at] + inserted + text[at + length :]
    refusal: FormatError | None = None
    try:
        matches = read(damaged.encode(), format)
    except FormatError as error:
        refusal, matches = error, []
    if refusal is not None:
        assert refusal.code == f"import.{format}"
        assert re.match(r"(line|state|byte) \d+|state file|the record", refusal.message)  # it says where
    assert all(audit_records(match.records()).passed for match in matches)


def test_a_dropped_double_ends_the_game_at_the_cube_and_a_taken_one_plays_on() -> None:
    game = _OPENING + "  1) 52: 13/8 13/11              31: 8/5 6/5\n  2)  Doubles => 2                Drops\n"
    [dropped] = read((game + "      Wins 1 point\n").encode(), "mat")
    offered, answered, ended = dropped.events[-3:]
    assert (offered, answered) == (DoubleOffered(seat=0, cube=2), DoubleDropped(seat=1))
    assert (ended.outcome.result, ended.outcome.winners, ended.outcome.scores) == ("dropped", (0,), (1.0, 0.0))  # type: ignore[attr-defined]
    assert dropped.events[0].options["cube"] is True  # type: ignore[attr-defined]
    [taken] = read(game.replace("Drops", "Takes").encode(), "mat")
    assert [event.tag.split(".")[1] for event in taken.events[-7:]] == [
        "checker_moved",  # the opening roll, played
        "roll_chosen",  # bob may double: he decides to roll first
        "dice_rolled",
        "checker_moved",
        "checker_moved",
        "double_offered",
        "double_taken",
    ]
    assert fold(taken.records()).cube == 2
