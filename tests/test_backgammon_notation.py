"""Backgammon in the numbering people read: points 1 to 24 from the side to move, the bar and off,
a turn's play as one line in GNU Backgammon's words; and the opening roll the starter plays."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchlog.engines import CHANCE, Turn
from matchlog.engines.backgammon import ENGINE, FIRST, SECOND, BackgammonState
from matchlog.engines.backgammon_notation import BAR, OFF, Step, index_of, labels, number, play_text
from matchlog.events import (
    CheckerMoved,
    DiceRolled,
    IllegalAction,
    MatchStarted,
    OpeningRolled,
    Seat,
    decode,
    draft,
    uuid7,
)
from matchlog.formats import FormatError, export, read
from matchlog.referee import MemoryRecorder
from matchlog.referee.play import play_match
from matchlog.referee.players import make_player, seats_from_specs
from matchlog.replay import audit_records, timeline

from .test_backgammon_engine import play, position

# -- the numbering -----------------------------------------------------------------------------


@given(st.integers(0, 1), st.integers(0, 23))
def test_a_point_has_one_number_from_each_side_that_adds_to_25(side: int, index: int):
    point = number(side, index)
    assert 1 <= point <= 24 and index_of(side, point) == index
    assert number(side, index) + number(1 - side, index) == 25
    assert labels(side)[index] == point


def test_the_bar_is_25_and_each_side_counts_from_its_own_home():
    assert number(FIRST, None) == number(SECOND, None) == BAR and index_of(FIRST, BAR) is None
    assert number(FIRST, 0) == 1 and number(SECOND, 23) == 1  # each side's 1-point: the last before off
    assert labels(FIRST)[23] == 24 and labels(SECOND)[0] == 24


@pytest.mark.parametrize(
    ("steps", "text"),
    [
        ([Step(13, 8), Step(6, 5)], "13/8 6/5"),
        ([Step(6, 5), Step(13, 8)], "13/8 6/5"),  # the highest point first, whatever the order played
        ([Step(24, 18), Step(18, 13)], "24/13"),  # one checker's two dice, joined
        ([Step(24, 18, hit=True), Step(18, 13)], "24/18*/13"),  # ... keeping the point where it hit
        ([Step(6, 4), Step(6, 4), Step(4, 2), Step(4, 2)], "6/2(2)"),
        ([Step(13, 7), Step(13, 7), Step(13, 7), Step(24, 18)], "24/18 13/7(3)"),
        ([Step(BAR, 22), Step(6, OFF)], "bar/22 6/off"),
        ([Step(BAR, 21), Step(21, 18, hit=True)], "bar/18*"),
        ([Step(8, 7, hit=True), Step(13, 7)], "13/7* 8/7"),  # a hit is marked once, where it shows first
        ([], ""),
    ],
)
def test_a_play_reads_as_gnu_backgammon_writes_it(steps: list[Step], text: str):
    assert play_text(steps) == text


# -- the engine's words -----------------------------------------------------------------------


def test_a_turn_reads_as_one_line_that_grows_with_each_checker():
    # X (seat 0) on its 13-point (index 12) and 6-point (index 5), 6-5 to play; O has a blot on X's 8.
    state = position({12: 2, 5: 13}, {7: 1, 0: 14}, side=FIRST, dice=(5, 1))
    first = CheckerMoved(seat=FIRST, die_index=0, source=12)
    middle = ENGINE.apply(state, first)
    assert ENGINE.describe(state, first, middle) == "x plays 13/8*"
    second = CheckerMoved(seat=FIRST, die_index=1, source=5)
    after = ENGINE.apply(middle, second)
    assert ENGINE.describe(middle, second, after) == "x plays 13/8* 6/5"


def test_the_text_board_is_labelled_from_the_side_to_move():
    state = position({12: 2, 5: 13}, {11: 2, 0: 13}, side=FIRST, dice=(5, 1))
    rows = ENGINE.render(state).splitlines()
    assert _numbers(rows[1]) == list(range(13, 25)) and _numbers(rows[5]) == list(range(12, 0, -1))
    # The same board with O to move: the checkers stay where they are, the numbers turn round.
    theirs = position({12: 2, 5: 13}, {11: 2, 0: 13}, side=SECOND, dice=(5, 1))
    rows = ENGINE.render(theirs).splitlines()
    assert _numbers(rows[1]) == list(range(12, 0, -1)) and _numbers(rows[5]) == list(range(13, 25))
    assert ENGINE.render(state).splitlines()[2] == ENGINE.render(theirs).splitlines()[2]


def _numbers(row: str) -> list[int]:
    return [int(word) for word in re.findall(r"\d+", row)]


def test_an_error_names_the_point_as_the_mover_reads_it():
    # O (seat 1) tries its 13-point, pygammon's 11, which holds none of its checkers.
    state = position({12: 2, 5: 13}, {0: 15}, side=SECOND, dice=(5, 1))
    with pytest.raises(IllegalAction) as refused:
        play(state, (0, 11))
    assert "13-point" in str(refused.value) and "point 11" not in str(refused.value)


def test_an_illegal_mat_play_is_refused_in_the_words_it_was_written():
    # Alice makes her 7-point with 61; bob's back checker cannot leave his 24-point with 65 (his 18
    # is her 7, his 19 her 6). The refusal says so in bob's numbers, never in pygammon's indices.
    text = """ 1 point match

 Game 1
 alice : 0                      bob : 0
  1) 61: 13/7 8/7                65: 24/13
"""
    with pytest.raises(FormatError) as refused:
        read(text.encode(), "mat")
    message = str(refused.value)
    assert "'65: 24/13' is not a legal play for bob" in message
    assert re.search(r"24/(18|19): the \1-point is held by the other side", message), message
    assert not re.search(r"from \d+ to \d+|point \d+ is", message), message


# -- the opening roll --------------------------------------------------------------------------


def _started(**options: object) -> BackgammonState:
    return ENGINE.start(MatchStarted(game="backgammon", options=options, seats=(Seat("x", "r"), Seat("o", "r"))))


def test_under_standard_rules_the_starter_plays_the_opening_roll():
    state = ENGINE.apply(_started(), OpeningRolled(first=5, second=1))
    assert state.options.move_by_turn_rolls is True
    assert (state.side, state.dice, ENGINE.to_act(state)) == (FIRST, (5, 1), Turn(FIRST, "move"))


def test_pygammon_rules_roll_again_for_the_first_turn_as_pygammon_does():
    state = ENGINE.apply(_started(rules="pygammon"), OpeningRolled(first=5, second=1))
    assert state.options.move_by_turn_rolls is False
    assert (state.side, state.dice, ENGINE.to_act(state)) == (FIRST, (), Turn(CHANCE, "roll"))


def test_either_way_can_be_asked_for_and_a_match_records_which():
    assert ENGINE.apply(_started(move_by_turn_rolls=False), OpeningRolled(first=5, second=1)).dice == ()
    assert ENGINE.apply(_started(rules="pygammon", move_by_turn_rolls=True), OpeningRolled(first=5, second=1)).dice
    seats = seats_from_specs("backgammon", ["random", "random"])
    players = [make_player("backgammon", seat.player, random.Random(i)) for i, seat in enumerate(seats)]
    result = play_match("backgammon", seats, players, seed=3)
    records = result.recorder.records(result.match_id)
    assert records[0].event.options["move_by_turn_rolls"] is True  # type: ignore[attr-defined]
    opening, following = records[2].event, records[3].event
    assert isinstance(opening, OpeningRolled) and not isinstance(following, DiceRolled)


def test_a_match_recorded_before_the_opening_roll_was_played_replays_and_audits_as_it_was():
    """The golden playthrough as matchlog recorded it before (the starter rolled again, the options
    of the time): its events, read back by today's engine, give the same lines and the same final
    board, and audit clean."""
    recorded = Path(__file__).parent / "fixtures" / "recorded" / "backgammon-before-the-opening-roll-was-played.txt"
    lines, texts, rendered = recorded.read_text().split("\n\n", 2)
    recorder = MemoryRecorder()
    recorder.drafts = [draft(decode(line), at_us=0) for line in lines.splitlines()]
    records = recorder.records(uuid7(), at_us=0)
    assert records[0].event.options == {"move_by_turn_rolls": False, "rules": "standard"}  # type: ignore[attr-defined]
    assert isinstance(records[2].event, OpeningRolled) and isinstance(records[3].event, DiceRolled)
    steps = list(timeline(records))
    assert steps[2].after.dice == () and steps[3].after.dice
    assert [step.text for step in steps] == texts.splitlines()
    assert ENGINE.render(steps[-1].after) + "\n" == rendered
    assert audit_records(records).findings == []


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**31))
def test_a_played_opening_exports_and_imports_as_the_same_match(seed: int):
    seats = seats_from_specs("backgammon", ["heuristic", "random"])
    players = [make_player("backgammon", seat.player, random.Random(seed + i)) for i, seat in enumerate(seats)]
    result = play_match("backgammon", seats, players, seed=seed)
    records = result.recorder.records(result.match_id)
    for format in ("mat", "sgf"):
        [again] = read(export(records, format).encode(), format)
        assert export(again.records(), format) == export(records, format)
        assert again.events[0].options == records[0].event.options  # type: ignore[attr-defined]


# -- a turn as one line, and the board's labels ---------------------------------------------------


def _cells(text: str) -> dict[str, tuple[int, int]]:
    """The text board's cells by label: label -> (row, column) of the cell under or over it."""
    rows = text.splitlines()
    found = {}
    for label_row, cell_row in ((1, 2), (5, 4)):
        for column, label in enumerate(_fields(rows[label_row])):
            found[label.strip()] = (cell_row, column)
    return found


def _fields(row: str) -> list[str]:
    """The twelve three-character fields of a board row (two halves of six around the bar)."""
    halves = row[2:].split("   |   ")
    return [half[4 * k : 4 * k + 3] for half in halves for k in range(6)]


def _checkers(text: str, at: tuple[int, int], symbol: str) -> int:
    cell = _fields(text.splitlines()[at[0]])[at[1]].strip()
    return int(cell[1:]) if cell.startswith(symbol) else 0


def test_replay_shows_a_turn_as_one_line_whose_points_are_the_text_boards_labels(tmp_path):
    from typer.testing import CliRunner

    import matchlog
    from matchlog.cli import app

    db = str(tmp_path / "log.duckdb")
    runner = CliRunner()
    done = runner.invoke(app, ["play", "backgammon", "-p", "heuristic", "-p", "random", "--seed", "4", "--db", db])
    assert done.exit_code == 0, done.output
    with matchlog.open(db) as log:
        match_id = log.matches()[0].match_id
    replayed = runner.invoke(app, ["replay", str(match_id), "--db", db]).output.splitlines()
    with matchlog.open(db) as log:
        info = log.info(match_id)
        lines = log.lines(info.match_id)
        # One line a turn: each run of a turn's checkers is one replay line, seqs joined.
        moves = [line for line in lines if line.type == "backgammon.checker_moved"]
        runs = [line for line in moves if not line.joins]
        assert len(replayed) == len(lines) - (len(moves) - len(runs))
        checked = 0
        for first, last in _runs(lines):
            play = last.text.split(" plays ", 1)[1].split(" and wins")[0]
            assert f"{first.seq}-{last.seq}" in "\n".join(replayed) or first is last
            before = log.state(info.match_id, first.seq - 1).text  # the mover to move: its numbers
            after = log.state(info.match_id, last.seq).text
            cells = _cells(before)
            symbol = "XO"[last.actor]  # type: ignore[index]
            for start, end in re.findall(r"(?:^| )(\d+)/(\d+)\*?(?= |$)", play):
                assert _checkers(after, cells[start], symbol) < _checkers(before, cells[start], symbol), play
                assert _checkers(after, cells[end], symbol) > _checkers(before, cells[end], symbol), play
                checked += 1
        assert checked > 20


def _runs(lines: list[Any]) -> list[tuple[Any, Any]]:
    """Each turn's checker lines as (first, last)."""
    found: list[tuple[Any, Any]] = []
    for line in lines:
        if line.joins:
            found[-1] = (found[-1][0], line)
        elif line.type == "backgammon.checker_moved":
            found.append((line, line))
    return found
