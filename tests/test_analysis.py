"""The analysers of Porrinha, Da Vinci Code and Fish judge by the built-in players' own reasoning, so
the player an analyser is built on never errs by its measure (the reasoner's guesses, the seed AI's
guesses and its going on or stopping, the house player's moves at its depth), while a random player
does; every value is the reasoning's own; marks, luck marks and accuracy follow their thresholds."""

from __future__ import annotations

import math
import random

import pytest

from matchlog.analysis import make_analyser
from matchlog.analysis.base import decisions
from matchlog.analysis.marks import luck_mark, mark
from matchlog.engines import GameTree
from matchlog.engines import get as get_engine
from matchlog.events import Decision, UsageError
from matchlog.referee import make_player, play_match, seats_from_specs
from matchlog.referee.fish import move_value
from matchlog.referee.porrinha import Table, TableView, guess_odds
from matchlog.replay.annotations import accuracy


def _played(game: str, specs: list[str], seed: int, **options: object) -> list:
    seats = seats_from_specs(game, specs)
    players = [make_player(game, seat.player, random.Random(seed + i)) for i, seat in enumerate(seats)]
    result = play_match(game, seats, players, options=options, seed=seed)
    return result.recorder.records(result.match_id)


def _by_seat(judged: list) -> dict[int, list[Decision]]:
    found: dict[int, list[Decision]] = {}
    for j in judged:
        if isinstance(j.note, Decision):
            assert j.seat == j.note.seat
            found.setdefault(j.seat, []).append(j.note)
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_reasoner_never_errs_by_its_own_odds_and_each_guess_is_valued_by_them(seed: int):
    records = _played("porrinha", ["reasoner", "random", "random"], seed)
    judged = make_analyser("porrinha").analyse(records)
    by_seat = _by_seat(judged)
    assert by_seat[0] and all(d.loss == 0 and d.mark is None for d in by_seat[0])
    assert any(d.loss > 0 for d in by_seat[1] + by_seat[2]), "the random players err"
    odds = {}
    for decided in decisions(records, ("guess",)):
        table = Table(TableView.of(decided.seen, decided.turn.seat))
        odds[decided.record.seq] = guess_odds(table)
    for j in judged:
        note = j.note
        chances = odds[j.seq]
        assert note.before == pytest.approx(max(chances.values()))
        assert note.after == pytest.approx(chances[int(note.played)])
        assert note.loss == pytest.approx(note.before - note.after) and note.mark == mark(note.loss, "chance")
        assert note.chance == note.after and note.best_chance == note.before and note.unit == "chance"


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_seed_ai_never_errs_by_its_vectors_and_a_random_player_does(seed: int):
    records = _played("davinci", ["seed-ai", "random"], seed, jokers=seed % 2 == 0)
    by_seat = _by_seat(make_analyser("davinci").analyse(records))
    assert by_seat[0] and all(d.loss == pytest.approx(0) for d in by_seat[0]), [
        (d.played, d.best, d.loss) for d in by_seat[0] if d.loss
    ]
    kinds = {d.decision for d in by_seat[0]}
    assert "guess" in kinds
    for decision in by_seat[0] + by_seat.get(1, []):
        assert 0 <= decision.after <= decision.before <= 1
        if decision.decision == "guess or stop":
            stop = next(c.value for c in decision.choices if c.choice == "stop") if decision.played == "stop" else None
            assert stop is None or stop == pytest.approx(decision.after)


@pytest.mark.parametrize("depth", [1, 2])
def test_the_house_player_never_errs_by_maximin_at_its_depth_and_values_are_move_value(depth: int):
    records = _played("fish", [f"maximin:{depth}", "random"], 5, rows=4, columns=5)
    analyser = make_analyser("fish", f"maximin:{depth}")
    judged = analyser.analyse(records)
    by_seat = _by_seat(judged)
    assert by_seat[0] and all(d.loss == 0 for d in by_seat[0])
    engine = get_engine("fish")
    for decided in decisions(records, ("move",)):
        note = next(j.note for j in judged if j.seq == decided.record.seq)
        tree = GameTree(engine, decided.seen)
        values = {move: move_value(tree, move, depth) for move in tree.valid_moves()}
        assert note.before == max(values.values()) and note.after == values[decided.record.event]
        assert note.unit == "fish" and note.chance is None and len(note.steps) == 1
        best = note.steps[0]
        assert max(v for m, v in values.items() if (*m.source, *m.target) == best) == note.before


def test_marks_and_luck_marks_follow_their_thresholds():
    assert [mark(x, "equity") for x in (0.0399, 0.04, 0.08, 0.16)] == [None, "doubtful", "bad", "very bad"]
    assert [mark(x, "chance") for x in (0.099, 0.1, 0.2, 0.3)] == [None, "inaccuracy", "mistake", "blunder"]
    assert [mark(x, "fish") for x in (0, 1, 2, 7)] == [None, "inaccuracy", "mistake", "blunder"]
    assert [luck_mark(x) for x in (-0.7, -0.3, 0.0, 0.3, 0.6)] == [
        "very unlucky",
        "unlucky",
        None,
        "lucky",
        "very lucky",
    ]
    assert accuracy(0.6, 0.6, "chance") == pytest.approx(100.0, abs=0.01)
    assert accuracy(0.6, 0.5, "chance") == pytest.approx(103.1668 * math.exp(-0.4354) - 3.1669)
    assert accuracy(0.9, 0.0, "chance") == 0.0 and accuracy(6.0, 3.0, "fish") == 50.0


def test_an_analyser_is_named_for_its_game_with_its_argument():
    assert make_analyser("fish").author.startswith("maximin:2 ")
    assert make_analyser("fish", "maximin:3").depth == 3
    for game, spec, code in [
        ("fish", "maximin:9", "usage.analyser"),
        ("fish", "reasoner", "usage.analyser"),
        ("porrinha", "reasoner:2", "usage.analyser"),
        ("porrinha", "stockfish", "usage.analyser"),
        ("knockout", None, "usage.analyser"),
    ]:
        with pytest.raises(UsageError) as refused:
            make_analyser(game, spec)
        assert refused.value.code == code
    with pytest.raises(UsageError) as wrong:
        make_analyser("porrinha").analyse(_played("fish", ["random", "random"], 1, rows=3, columns=3))
    assert wrong.value.code == "usage.analyser"
