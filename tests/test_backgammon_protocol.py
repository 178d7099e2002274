"""pygammon's protocol in front of matchlog: transcripts, failures, the log, and pygammon itself."""

from __future__ import annotations

import random
import threading
from itertools import pairwise
from pathlib import Path

import pygammon
import pygammon.core
import pytest

import matchlog.referee.backgammon as bg
from matchlog.engines.backgammon import FIRST, SECOND
from matchlog.events import ActionsUndone, AnswerRejected, CheckerMoved, DiceRolled, OpeningRolled, PlayerRemoved
from matchlog.referee.backgammon import InputType, InvalidMoveCode, OutputType, Side
from matchlog.replay import MatchAudit, audit_records, fold, state_at, timeline
from matchlog.store import Store

from .pygammon_clients import RandomClient, normalise


class StopGame(Exception):
    pass


class Scripted:
    """Answers from a list, then stops the game by raising; keeps every output."""

    def __init__(self, inputs: list[object]) -> None:
        self.inputs = list(inputs)
        self.outputs: list[tuple] = []

    def receive_input(self, side):
        if not self.inputs:
            raise StopGame("script over")
        return self.inputs.pop(0)

    def send_output(self, output_type, data, side=None):
        self.outputs.append(normalise(output_type, data, side))


def kinds(outputs: list[tuple]) -> list[str]:
    return [o[0] if o[0] != "INVALID_MOVE" else f"INVALID_MOVE:{o[1][1]}" for o in outputs]


def test_a_transcript_of_undo_and_every_kind_of_bad_input(tmp_path: Path):
    client = Scripted(
        [
            (InputType.UNDO, None),  # nothing to undo yet
            (InputType.MOVE, None),  # a move without data
            (InputType.UNDO, (0, 1)),  # an undo with data
            (8, None),  # not an input type
            "garbage",  # not even a pair
            (InputType.MOVE, (0, 7, 1)),  # a move of the wrong shape
            (InputType.MOVE, (-1, 7)),  # a negative die index (pygammon read it as the last die)
            (InputType.MOVE, (0, -1)),  # a negative point (pygammon read it as point 23)
            (InputType.MOVE, (0, 7)),  # 8-point -> 5 (pygammon's 7 -> 4) with the 3
            (InputType.UNDO, None),  # taken back
            (InputType.MOVE, (0, 7)),
            (InputType.MOVE, (1, 5)),  # 6-point -> 5 with the 1: the turn is complete
            (InputType.UNDO, None),  # SECOND: FIRST's completing move cannot be undone, and SECOND has none
        ]
    )
    with Store(tmp_path / "log.duckdb") as store:
        outcome = bg.run(client.receive_input, client.send_output, True, store=store, rolls=[(3, 1), (6, 5)])
        assert kinds(client.outputs) == [
            "GAME_STATE",
            "TURN_ROLLS",
            "INVALID_MOVE:NOTHING_TO_UNDO",
            "INVALID_MOVE:INVALID_MOVE_TYPE",
            "INVALID_MOVE:INVALID_MOVE_TYPE",
            "INVALID_MOVE:INVALID_INPUT_TYPE",
            "INVALID_MOVE:INVALID_INPUT_TYPE",
            "INVALID_MOVE:INVALID_MOVE_TYPE",
            "INVALID_MOVE:DIE_INDEX_INVALID",
            "INVALID_MOVE:SOURCE_INVALID",
            "GAME_STATE",
            "GAME_STATE",
            "GAME_STATE",
            "GAME_STATE",
            "MOVE_ROLLS",
            "INVALID_MOVE:NOTHING_TO_UNDO",
            "GAME_WON",  # SECOND's script ran out: it forfeits, and FIRST has won
        ]
        assert client.outputs[1] == ("TURN_ROLLS", (3, 1), None)
        assert all(o[2] == FIRST for o in client.outputs[2:10])  # invalid moves go to the side that made them
        after_undo = client.outputs[11][1][0]
        assert after_undo == client.outputs[0][1][0]  # undo restored the starting board
        final_board = client.outputs[13][1][0]
        assert final_board[4] == (FIRST, 2) and final_board[5] == (FIRST, 4) and final_board[7] == (FIRST, 2)
        assert client.outputs[14] == ("MOVE_ROLLS", (6, 5), None)
        assert client.outputs[15] == ("INVALID_MOVE", ("InvalidMoveCode", "NOTHING_TO_UNDO"), SECOND)
        assert client.outputs[-1] == ("GAME_WON", ("Side", "FIRST"), None)
        assert (outcome.winners, outcome.result) == ((FIRST,), "forfeit")

        match = store.matches()[0]
        records = store.read(match.match_id)
        assert store.verify() == []
        # Every input is in the log: the rejections, the moves, the undo (which took back its move).
        rejected = [r.event for r in records if isinstance(r.event, AnswerRejected)]
        assert [r.code.split(".")[1].upper() for r in rejected] == [
            o[1][1] for o in client.outputs if o[0] == "INVALID_MOVE"
        ]
        moved = [r for r in records if isinstance(r.event, CheckerMoved)]
        undone = [r.event for r in records if isinstance(r.event, ActionsUndone)]
        assert len(moved) == 3 and len(undone) == 1 and undone[0].by == FIRST
        assert moved[0].seq in undone[0].seqs
        assert isinstance(records[1].event, OpeningRolled) and isinstance(records[-4].event, DiceRolled)
        # The log replays to the final board, and to any move before it.
        assert fold(records).winner == FIRST
        assert state_at(store, match.match_id, moved[2].seq).state.points[4] == 2


def test_a_whole_game_ends_with_game_state_then_game_won(tmp_path: Path):
    client = RandomClient(7, bg)
    with Store(tmp_path / "log.duckdb") as store:
        outcome = bg.run(client.receive_input, client.send_output, store=store, seed=11)
        assert [o[0] for o in client.outputs[-2:]] == ["GAME_STATE", "GAME_WON"]
        winner = client.outputs[-1][1][1]
        assert outcome.winners == ((FIRST,) if winner == "FIRST" else (SECOND,))
        final = client.outputs[-2][1]
        assert (final[2] if winner == "FIRST" else final[4]) == 15
        match = store.matches()[0]
        assert match.status == "finished" and store.verify() == []
        records = store.read(match.match_id)
        assert fold(records).off == (final[2], final[4])
        # GAME_STATE after every valid move and every undo.
        moved = sum(isinstance(r.event, CheckerMoved) for r in records)
        undone = sum(isinstance(r.event, ActionsUndone) for r in records)
        assert sum(o[0] == "GAME_STATE" for o in client.outputs) == 1 + moved + undone


def test_no_input_is_asked_when_no_move_is_possible():
    asked = []

    class Watcher(RandomClient):
        def receive_input(self, side):
            asked.append(len(self.outputs))
            return super().receive_input(side)

    client = Watcher(3, bg)
    with Store() as store:
        bg.run(client.receive_input, client.send_output, store=store, seed=5)
        records = store.read(store.matches()[0].match_id)
    # Every roll after which the engine passed the turn is followed directly by the next roll.
    for index, output in enumerate(client.outputs[:-1]):
        if output[0] == "MOVE_ROLLS" and client.outputs[index + 1][0] == "MOVE_ROLLS":
            assert index + 1 not in asked
    assert any(isinstance(r.event, DiceRolled) and isinstance(n.event, DiceRolled) for r, n in pairwise(records)), (
        "seed 5 should include a roll with no legal move"
    )


def test_a_client_that_raises_forfeits_and_the_game_is_recorded():
    def receive_input(side):
        raise RuntimeError("my client crashed")

    outputs = []
    with Store() as store:
        outcome = bg.run(receive_input, lambda *a: outputs.append(a), store=store, seed=1)
        records = store.read(store.matches()[0].match_id)
    assert outcome.result == "forfeit" and len(outcome.removed) == 1
    removal = next(r.event for r in records if isinstance(r.event, PlayerRemoved))
    assert removal.code == "player.exception" and "RuntimeError: my client crashed" in removal.reason
    assert outputs[-1][0] is OutputType.GAME_WON


def test_a_client_that_hangs_forfeits_after_its_timeout():
    release = threading.Event()

    def receive_input(side):
        release.wait()  # until the test is over

    try:
        with Store() as store:
            outcome = bg.run(receive_input, lambda *a: None, store=store, seed=1, timeout=0.2)
            removal = next(
                r.event for r in store.read(store.matches()[0].match_id) if isinstance(r.event, PlayerRemoved)
            )
        assert not release.is_set(), "the game waited for the hung client"
    finally:
        release.set()
    assert outcome.result == "forfeit" and removal.code == "player.timeout"


def test_an_output_callable_that_fails_abandons_the_game():
    def send_output(output_type, data, side=None):
        if output_type is OutputType.TURN_ROLLS:
            raise ValueError("display broke")

    with Store() as store:
        outcome = bg.run(lambda side: (InputType.UNDO, None), send_output, store=store, seed=1)
        info = store.matches()[0]
        last = store.read(info.match_id)[-1].event
    assert outcome.result == "abandoned" and info.status == "abandoned"
    assert "send_output(TURN_ROLLS) failed" in last.reason and "display broke" in last.reason


def test_bad_rolls_and_rules_are_usage_errors():
    from matchlog.events import UsageError

    with pytest.raises(UsageError, match="not a possible roll"):
        bg.run(lambda s: None, lambda *a: None, record=False, rolls=[(3, 3)])
    with pytest.raises(UsageError, match="rules must be"):
        bg.run(lambda s: None, lambda *a: None, record=False, rules="chouette")


PYGAMMON_PROGRAM = """
import random
from pygammon import run, InputType, OutputType, Side

rng = random.Random(4)
state = {"board": None, "dice": (), "hit": [0, 0]}

def send_output(output_type, data, side=None):
    if output_type is OutputType.GAME_STATE:
        state["board"] = data.board
        state["hit"] = [data.first_hit, data.second_hit]
    elif output_type in (OutputType.TURN_ROLLS, OutputType.MOVE_ROLLS):
        state["dice"] = (data.first,) * 4 if data.first == data.second else (data.first, data.second)
    elif output_type is OutputType.GAME_WON:
        print("winner", Side(data).name)

def receive_input(side):
    index = rng.randrange(len(state["dice"]))
    if state["hit"][side]:
        return InputType.MOVE, (index, None)
    own = [i for i, point in enumerate(state["board"]) if point.side is side]
    return InputType.MOVE, (index, rng.choice(own))

run(receive_input, send_output)
"""


def test_a_program_written_for_pygammon_runs_by_changing_only_its_import(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("MATCHLOG_DB", str(tmp_path / "games.duckdb"))
    program = PYGAMMON_PROGRAM.replace("from pygammon import", "from matchlog.referee.backgammon import")
    assert program.count("pygammon") == 0
    exec(compile(program, "client.py", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.startswith("winner ")
    with Store(tmp_path / "games.duckdb") as store:
        match = store.matches()[0]
        assert (match.game, match.status) == ("backgammon", "finished")
        assert store.verify() == []
        records = store.read(match.match_id)
        for seq in random.Random(1).sample(range(len(records)), 20):
            assert state_at(store, match.match_id, seq).state == fold(records[: seq + 1])


# -- against pygammon itself ------------------------------------------------------------------


def dice_for(seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    first = rng.randint(1, 6)
    second = rng.choice([v for v in range(1, 7) if v != first])
    return [(first, second)] + [(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(3000)]


def play_pygammon(seed: int, move_by_turn_rolls: bool, monkeypatch) -> tuple[list[tuple], list[int]]:
    rolls = dice_for(seed)
    values = iter([rolls[0][0], rolls[0][1], *(v for pair in rolls[1:] for v in pair)])
    monkeypatch.setattr(pygammon.core, "choice", lambda options: next(values))
    monkeypatch.setattr(pygammon.core, "randint", lambda low, high: next(values))
    counts: list[int] = []
    original = pygammon.core.Game.get_max_move_count

    def counted(game):
        counts.append(original(game))
        return counts[-1]

    monkeypatch.setattr(pygammon.core.Game, "get_max_move_count", counted)
    client = RandomClient(seed + 1000, pygammon)
    pygammon.run(client.receive_input, client.send_output, move_by_turn_rolls)
    return client.outputs, counts


def play_ours(seed: int, move_by_turn_rolls: bool) -> tuple[list[tuple], list[int], MatchAudit]:
    """The same client and dice through matchlog's run() under rules="pygammon": its outputs, how
    many moves each turn asked for, and the audit of the recorded game."""
    client = RandomClient(seed + 1000, bg)
    with Store() as store:
        bg.run(
            client.receive_input,
            client.send_output,
            move_by_turn_rolls,
            store=store,
            rolls=dice_for(seed),
            rules="pygammon",
        )
        records = store.read(store.matches()[0].match_id)
    counts = [
        step.after.max_moves if step.after.dice else 0
        for step in timeline(records)
        if isinstance(step.event, DiceRolled) or (isinstance(step.event, OpeningRolled) and move_by_turn_rolls)
    ]
    return client.outputs, counts, audit_records(records)


#: Seeded games through both run()s. pygammon's greedy search counts short in about one game in
#: seven here (seeds 1, 8, 15, 20, 23, 37 and 42, each at a turn it counts one move where two can
#: be played), which is where matchlog's exact count used to ask for a move pygammon never did.
DIFFERENTIAL_GAMES = 44


@pytest.mark.parametrize("seed", range(DIFFERENTIAL_GAMES))
def test_a_pygammon_client_meets_exactly_pygammons_turns_under_its_rules(seed: int, monkeypatch):
    """Same dice, same client: under rules="pygammon" every turn asks for as many moves as pygammon
    counts (undercount included), so every output is the one pygammon sends; the audit agrees."""
    move_by_turn_rolls = seed % 2 == 1
    theirs, their_counts = play_pygammon(seed, move_by_turn_rolls, monkeypatch)
    ours, our_counts, report = play_ours(seed, move_by_turn_rolls)
    assert our_counts == their_counts
    assert ours == theirs
    assert report.findings == [] and report.checked["answers"] > 0


def test_pygammons_enums_are_ours_by_name_and_value():
    for ours, theirs in [
        (Side, pygammon.Side),
        (InputType, pygammon.InputType),
        (OutputType, pygammon.OutputType),
        (InvalidMoveCode, pygammon.InvalidMoveCode),
    ]:
        assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]
    from pygammon.structures import DieRolls, GameState

    assert bg.GameState._fields == GameState._fields and bg.DieRolls._fields == DieRolls._fields


def test_a_pygammon_clients_callables_play_as_a_player_against_a_built_in():
    from matchlog.events import Seat
    from matchlog.referee import play_match
    from matchlog.referee.backgammon import CallablePlayer, HeuristicPlayer

    client = RandomClient(5, bg)
    seats = (Seat("client", "pygammon-client"), Seat("heuristic", "heuristic"))
    with Store() as store:
        result = play_match(
            "backgammon",
            seats,
            [CallablePlayer(client.receive_input, client.send_output), HeuristicPlayer(random.Random(1))],
            store=store,
            seed=3,
        )
        assert store.verify() == []
        assert store.match(result.match_id).status == "finished"
    # The client heard every output meant for it, ending with the result.
    assert client.outputs[0][0] == "GAME_STATE" and client.outputs[1][0] == "TURN_ROLLS"
    assert client.outputs[-1][0] == "GAME_WON"


def test_heuristic_play_beats_random_play():
    from matchlog.referee import play_series

    first = play_series("backgammon", ["heuristic", "random"], games=20, seed=3)
    second = play_series("backgammon", ["random", "heuristic"], games=20, seed=4)
    wins = first.places["heuristic"].get(1, 0) + second.places["heuristic"].get(1, 0)
    assert wins >= 34, wins  # 85% or better over 40 games, sides alternating
