"""Audit: a busy log of every game (misbehaving players, undo, kicks, a knockout) passes; each kind
of fault, planted in a copy of that log, is found at the right match, seq and rule; and the dispute
report holds the evidence."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
import pytest
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.events import (
    AnswerRejected,
    ChanceRevealed,
    DiceRolled,
    Event,
    GuessMade,
    HandChosen,
    HandReset,
    MatchEnded,
    PenguinMoved,
    PlayerRemoved,
    Seat,
    TilesShuffled,
    draft,
    uuid7,
)
from matchlog.referee import backgammon as bg
from matchlog.referee import play_series, run_knockout
from matchlog.referee.fish import HousePlayer
from matchlog.replay import audit, dispute
from matchlog.store import Store

runner = CliRunner()


class Chaos:
    """A Porrinha player that answers garbage a third of the time."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def _answer(self, valid: int) -> object:
        return self.rng.choice([valid, valid, valid, -1, 99, "two", None, 2.5, True, [1]])

    def hand(self, table: Any) -> object:
        return self._answer(self.rng.randint(0, table.chopsticks(table.index)))

    def guess(self, table: Any) -> object:
        return self._answer(self.rng.randint(0, table.chopstick_count))


class Clumsy:
    """A backgammon player whose first try each turn is nonsense."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.tried = False

    def move(self, board: Any) -> object:
        self.tried = not self.tried
        return (9, 99) if self.tried else self.rng.choice(board.legal_moves())


class Cheat(HousePlayer):
    def get_move(self, game: Any) -> Any:
        me = game.turn.seat
        source = game.state.penguins[me][0]
        return [list(source), list(source)]


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of every game, with rejections, removals, undos, kicks and a knockout in it."""
    path = tmp_path_factory.mktemp("audit") / "busy.duckdb"
    with Store(path) as store:
        play_series("porrinha", ["random", "reasoner", "random"], games=20, seed=1, store=store)
        for policy in ("lenient", "strict"):
            seats = [Seat("chaos", "tests:Chaos"), Seat("r", "reasoner"), Seat("q", "random")]
            from matchlog.referee import play_match
            from matchlog.referee.players import make_player

            for game in range(6):
                players = [
                    Chaos(game),
                    make_player("porrinha", "reasoner", random.Random(game)),
                    make_player("porrinha", "random", random.Random(game)),
                ]
                play_match("porrinha", seats, players, options={"policy": policy}, store=store, seed=game)
            for game in range(4):
                play_match(
                    "backgammon",
                    [Seat("clumsy", "tests:Clumsy"), Seat("h", "heuristic")],
                    [Clumsy(game), make_player("backgammon", "heuristic", random.Random(game))],
                    store=store,
                    seed=game,
                )
            play_match(
                "fish",
                [Seat("cheat", "tests:Cheat"), Seat("a", "maximin"), Seat("b", "random")],
                [Cheat(), HousePlayer(None, 1), make_player("fish", "random", random.Random(3))],
                store=store,
                seed=policy == "strict",
            )
        play_series("backgammon", ["heuristic", "random"], games=10, seed=2, store=store)
        play_series(
            "davinci", ["seed-ai", "random", "seed-ai"], games=10, seed=3, options={"jokers": True}, store=store
        )
        play_series("fish", ["maximin", "random", "maximin:1", "random"], games=6, seed=4, store=store)
        run_knockout(
            "fish",
            [Seat(f"k{i}", "maximin") for i in range(6)],
            [HousePlayer(None, 1) for _ in range(6)],
            options={"random_board": True, "holes": 2},
            store=store,
            seed=5,
        )
        # pygammon's protocol with undo and bad input (rolls given by the caller: nothing committed).
        script = iter(
            [("UNDO", None), ("MOVE", (0, 99)), ("MOVE", (0, 7)), ("UNDO", None), ("MOVE", (0, 7)), ("MOVE", (1, 5))]
        )

        def receive_input(side: Any) -> Any:
            kind, data = next(script)
            return getattr(bg.InputType, kind), data

        bg.run(receive_input, lambda *a: None, True, store=store, rolls=[(3, 1), (6, 5)])
    return path


def test_a_busy_log_of_every_game_passes_its_audit(busy: Path):
    with Store(busy) as store:
        reports = list(audit(store))
        matches = len(store.matches(limit=None))
    assert len(reports) == matches and {r.game for r in reports} == {
        "porrinha",
        "backgammon",
        "davinci",
        "fish",
        "knockout",
    }
    found = [f for r in reports for f in r.findings]
    assert found == [], found[:3]
    checked = {key: sum(r.checked.get(key, 0) for r in reports) for key in reports[0].checked}
    assert checked["rejections"] > 30 and checked["rejections_not_rechecked"] == 0, "every rejection re-judged"
    assert checked["removals"] >= 4 and checked["undos"] >= 1 and checked["answers"] > 1000
    uncommitted = [r for r in reports if any("no chance commitment" in note for note in r.notes)]
    assert len(uncommitted) == 1 and uncommitted[0].checked["chance_rederived"] == 0, "pygammon's run with given rolls"
    for report in reports:
        if report.game in ("backgammon", "davinci", "fish") and report not in uncommitted:
            assert report.checked["chance_rederived"] == report.checked["chance"] > 0, "every draw re-derived"


def copy_of(busy: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy.duckdb"
    shutil.copy(busy, copy)
    return copy


def plant(store: Store, game: str, change: Callable[[list[Event]], tuple[list[Event], int]]) -> tuple[UUID, int]:
    """Copy the first finished match of `game` as a new match, with `change` applied to its events;
    returns the new match and the seq the change made."""
    source = store.matches(game=game, status="finished", limit=1000)[-1]
    events, seq = change([r.event for r in store.read(source.match_id)])
    match_id = uuid7()
    store.append(match_id, [draft(e) for e in events], 0)
    return match_id, seq


def first(events: list[Event], kind: type, where: Callable[[Any], bool] = lambda e: True) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, kind) and where(e))


def replaced(events: list[Event], index: int, *new: Event) -> list[Event]:
    return [*events[:index], *new, *events[index + 1 :]]


def illegal_move(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, PenguinMoved)
    moved = events[i]
    return replaced(events, i, msgspec.structs.replace(moved, target=moved.source)), i  # type: ignore[arg-type]


def legal_hand_rejected(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, HandChosen, lambda e: e.hand == 1)
    seat = events[i].seat  # type: ignore[attr-defined]
    rejected = AnswerRejected(seat=seat, decision="hand", answer="1", code="porrinha.hand_out_of_range", message="no")
    return replaced(events, i, rejected, HandReset(seat=seat)), i


def other_dice(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, DiceRolled, lambda e: e.dice != (6, 6))
    return replaced(events, i, msgspec.structs.replace(events[i], dice=(6, 6))), i  # type: ignore[arg-type]


def impossible_dice(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, DiceRolled)
    return replaced(events, i, msgspec.structs.replace(events[i], dice=(7, 1))), i  # type: ignore[arg-type]


def tile_twice(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, TilesShuffled)
    order = list(events[i].order)  # type: ignore[attr-defined]
    order[1] = order[0]
    return replaced(events, i, TilesShuffled(order=tuple(order))), i


def other_seed(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, ChanceRevealed)
    return replaced(events, i, ChanceRevealed(seed="00" * 32)), i


def wrong_winner(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, MatchEnded)
    outcome = events[i].outcome  # type: ignore[attr-defined]
    losers = [s for s in range(len(outcome.places)) if s not in outcome.winners]
    swapped = msgspec.structs.replace(outcome, winners=(losers[0],))
    return replaced(events, i, MatchEnded(outcome=swapped)), i


def removal_without_cause(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, PenguinMoved)
    return [*events[:i], PlayerRemoved(seat=events[i].seat, code="fish.unreachable", reason="said so"), *events[i:]], i  # type: ignore[attr-defined]


def out_of_turn(events: list[Event]) -> tuple[list[Event], int]:
    i = first(events, GuessMade)
    guess = events[i]
    return replaced(events, i, msgspec.structs.replace(guess, seat=(guess.seat + 1) % 3)), i  # type: ignore[attr-defined]


PLANTED = [
    ("fish", illegal_move, "fish.unreachable"),
    ("porrinha", legal_hand_rejected, "audit.legal_rejected"),
    ("backgammon", other_dice, "chance.not_from_seed"),
    ("backgammon", impossible_dice, "chance.impossible"),
    ("davinci", tile_twice, "chance.impossible"),
    ("fish", other_seed, "chance.reveal_mismatch"),
    ("davinci", wrong_winner, "audit.wrong_outcome"),
    ("fish", removal_without_cause, "audit.unexplained_removal"),
    ("porrinha", out_of_turn, "match.not_your_turn"),
]


@pytest.mark.parametrize(("game", "change", "rule"), PLANTED, ids=[p[2] + "-" + p[1].__name__ for p in PLANTED])
def test_a_planted_fault_is_found_at_its_match_seq_and_rule(busy: Path, tmp_path: Path, game: str, change, rule: str):
    with Store(copy_of(busy, tmp_path)) as store:
        planted, seq = plant(store, game, change)
        reports = list(audit(store))
    flagged = {r.match_id for r in reports if r.findings}
    assert flagged == {str(planted)}, "only the planted match is flagged"
    findings = next(r for r in reports if r.match_id == str(planted)).findings
    assert (seq, rule) in [(f.seq, f.rule) for f in findings], findings[:4]
    assert min(f.seq for f in findings if f.seq is not None) == seq, "nothing is flagged before the fault"


def test_an_edit_made_with_sql_is_found_by_the_chain(busy: Path, tmp_path: Path):
    with Store(copy_of(busy, tmp_path)) as store:
        victim = store.matches(game="fish", status="finished", limit=1)[0].match_id
        store.query(
            "UPDATE events SET payload = replace(payload, '\"age\":', '\"age\": ') WHERE match_id = ? AND seq = 3",
            [str(victim)],
        )
        reports = list(audit(store, [victim]))
    assert [(f.seq, f.rule) for f in reports[0].findings][:1] == [(3, "chain.hash_mismatch")]


def test_the_dispute_report_of_a_rejected_answer_has_the_evidence(busy: Path):
    with Store(busy) as store:
        match = next(
            m
            for m in store.matches(game="porrinha", limit=None)
            if any(isinstance(r.event, AnswerRejected) and r.event.decision == "guess" for r in store.read(m.match_id))
        )
        records = store.read(match.match_id)
        seq = first([r.event for r in records], AnswerRejected, lambda e: e.decision == "guess")
        report = dispute(store, match.match_id, seq)
    event = records[seq].event
    assert report.ruling == "rejected" and report.rule == event.code and report.seat == event.seat  # type: ignore[attr-defined]
    assert report.decision == event.decision and report.alternatives_total == len(report.alternatives) > 0  # type: ignore[attr-defined]
    assert report.hash == records[seq].hash.hex() and report.previous_hash == records[seq - 1].hash.hex()
    assert report.head_seq == records[-1].seq and report.chain_verified and report.findings == []
    assert report.before_as_seat is not None and report.before_as_seat != report.before, (
        "Porrinha hides the hands of the others"
    )


def test_the_dispute_report_of_an_accepted_move_lists_every_legal_alternative(busy: Path):
    with Store(busy) as store:
        match = store.matches(game="fish", status="finished", limit=1)[0]
        records = store.read(match.match_id)
        seq = first([r.event for r in records], PenguinMoved)
        report = dispute(store, match.match_id, seq)
    assert report.ruling == "accepted" and report.rule is None and "legal" in (report.rule_says or "")
    assert report.alternatives_total >= 1 and report.before_as_seat is None, "Fish hides nothing"
    assert any(report.said == line for line in report.alternatives), "what was played is among the legal answers"


def test_the_audit_command_passes_a_clean_log_and_fails_a_planted_one(busy: Path, tmp_path: Path):
    result = runner.invoke(app, ["audit", "--all", "--db", str(busy)])
    assert result.exit_code == 0 and "no findings" in result.stdout, result.stdout
    copy = copy_of(busy, tmp_path)
    with Store(copy) as store:
        planted, seq = plant(store, "fish", illegal_move)
    result = runner.invoke(app, ["audit", "--all", "--db", str(copy), "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and not report["ok"]
    result = runner.invoke(app, ["audit", str(planted), "--seq", str(seq), "--db", str(copy)])
    assert result.exit_code == 1 and "fish.unreachable" in result.stdout and "legal answers there" in result.stdout
    result = runner.invoke(app, ["audit", "--db", str(copy)])
    assert result.exit_code == 2 and "error[usage.arguments]" in result.stderr
