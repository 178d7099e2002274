"""Statistics: hand-made matches give the values worked out by hand; dice counts and chi-square
agree with a count made straight from the log; figures tallied live equal figures projected from
the log; and the command's tables, JSON, CSV and plots."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.cli.plots import rate_labels
from matchlog.engines import get as get_engine
from matchlog.events import (
    AnswerRejected,
    DiceRolled,
    Event,
    GuessMade,
    GuessVoided,
    HandChosen,
    MatchEnded,
    MatchStarted,
    OpeningRolled,
    Seat,
    draft,
    uuid7,
)
from matchlog.referee import play_series
from matchlog.replay import chi_square_p, refresh, statistics
from matchlog.store import Store

runner = CliRunner()

# -- the chi-square test ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "df", "p"), [(3.841459, 1, 0.05), (11.070498, 5, 0.05), (15.086272, 5, 0.01), (1.610308, 5, 0.9)]
)
def test_chi_square_p_matches_the_tables(x: float, df: int, p: float):
    assert chi_square_p(x, df) == pytest.approx(p, abs=1e-5)


@given(st.floats(0.01, 80))
def test_chi_square_p_with_five_degrees_matches_its_closed_form(x: float):
    closed = math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (1 + x / 3)
    assert chi_square_p(x, 5) == pytest.approx(closed, rel=1e-9, abs=1e-12)


# -- hand-made matches -----------------------------------------------------------------------

ANN, BOB = 0, 1


def porrinha(*answers: Event, at_us: int) -> list[Any]:
    """A Porrinha match between ann and bob (one chopstick each) with these answers, checked by the
    rules as it is built, and ended with the outcome the rules give."""
    engine = get_engine("porrinha")
    started = MatchStarted(game="porrinha", options={"chopsticks": 1}, seats=(Seat("ann", "a"), Seat("bob", "b")))
    state = engine.start(started)
    events: list[Event] = [started]
    for event in answers:
        if event.actor is not None and not isinstance(event, AnswerRejected):
            engine.check(state, event.actor, event)
        state = engine.apply(state, event)
        events.append(event)
    outcome = engine.outcome(state)
    assert outcome is not None, "the hand-made match must be over"
    events.append(MatchEnded(outcome=outcome))
    return [draft(event, at_us=at_us + i) for i, event in enumerate(events)]


def hand_made(store: Store) -> None:
    day = 86_400_000_000
    # 1: ann shows 1, bob 0; ann guesses 1 (right): ann is out of chopsticks, and wins.
    one = porrinha(
        HandChosen(seat=ANN, hand=1),
        HandChosen(seat=BOB, hand=0),
        GuessMade(seat=ANN, guess=1),
        GuessMade(seat=BOB, guess=0),
        at_us=1_700_000_000_000_000,
    )
    # 2: ann 0, bob 1; ann guesses 0 (wrong), bob 1 (right): bob wins.
    two = porrinha(
        HandChosen(seat=ANN, hand=0),
        HandChosen(seat=BOB, hand=1),
        GuessMade(seat=ANN, guess=0),
        GuessMade(seat=BOB, guess=1),
        at_us=1_700_000_000_000_000 + day,
    )
    # 3: nobody right in round 1 (total 2); in round 2 bob (first) answers "x", which is voided,
    #    and ann guesses 1 (right): ann wins after two rounds. Round 2 starts with bob, who
    #    guessed first after nobody was right.
    three = porrinha(
        HandChosen(seat=ANN, hand=1),
        HandChosen(seat=BOB, hand=1),
        GuessMade(seat=ANN, guess=0),
        GuessMade(seat=BOB, guess=1),
        HandChosen(seat=BOB, hand=0),
        HandChosen(seat=ANN, hand=1),
        AnswerRejected(seat=BOB, decision="guess", answer="'x'", code="porrinha.not_an_integer", message="not an int"),
        GuessVoided(seat=BOB),
        GuessMade(seat=ANN, guess=1),
        at_us=1_700_000_000_000_000 + 2 * day,
    )
    for drafts in (one, two, three):
        store.append(uuid7(), drafts, 0)


def test_hand_made_matches_give_the_figures_worked_out_by_hand(file_store: Store):
    hand_made(file_store)
    result = statistics(file_store, "porrinha")
    assert result.projected == 3, "matches appended straight to the log are projected first"
    (game,) = result.games
    assert (game.matches, game.finished, game.events) == (3, 3, 6 + 6 + 11)
    assert game.mean_turns == pytest.approx(4 / 3) and game.median_turns == 1.0, "rounds: 1, 1, 2"
    # Answers: ann 2 + 2 + 4, bob 2 + 2 + 3 (its rejected guess is not an answer); one rejected.
    assert (game.answers, game.rejected) == (15, 1) and game.rejection_rate == pytest.approx(1 / 16)
    rates = {r.subject: r for r in result.rates}
    assert (rates["ann"].wins, rates["ann"].matches, rates["bob"].wins) == (2, 3, 1)
    assert rates["ann"].win_rate == pytest.approx(2 / 3) and rates["ann"].mean_place == pytest.approx(4 / 3)
    assert rates["ann"].win_low < 2 / 3 < rates["ann"].win_high
    seats = {r.subject: r.wins for r in result.seats}
    assert seats == {"seat 0": 2, "seat 1": 1}
    accuracy = {f.subject: (f.value, f.count) for f in result.figures if f.figure == "guess accuracy"}
    # ann: right, wrong, wrong, right; bob: wrong, right, wrong (its voided guess is not a guess).
    assert accuracy == {"all": (pytest.approx(3 / 7), 7), "ann": (0.5, 4), "bob": (pytest.approx(1 / 3), 3)}
    later = statistics(file_store, "porrinha", since=datetime(2023, 11, 16))
    assert [g.matches for g in later.games] == [1], "only the third match started on or after that day"
    assert statistics(file_store, "porrinha").projected == 0, "nothing is projected twice"


# -- dice, and figures tallied live ----------------------------------------------------------


def test_dice_counts_and_their_chi_square_agree_with_a_count_made_from_the_log(file_store: Store):
    play_series("backgammon", ["heuristic", "random"], games=6, seed=3, store=file_store)
    counted: dict[str, Counter[int]] = {"heuristic": Counter(), "random": Counter()}
    for record in file_store.records():
        match record.event:
            case DiceRolled(seat=seat, dice=dice):
                counted[("heuristic", "random")[seat]].update(dice)
            case OpeningRolled(first=first, second=second):
                counted["heuristic"][first] += 1
                counted["random"][second] += 1
    counted["all"] = counted["heuristic"] + counted["random"]
    found = {d.subject: d for d in statistics(file_store, "backgammon").dice}
    for who, faces in counted.items():
        counts = tuple(faces[f] for f in range(1, 7))
        rolls = sum(counts)
        chi2 = sum((c - rolls / 6) ** 2 / (rolls / 6) for c in counts)
        assert found[who].counts == counts and found[who].rolls == rolls
        assert found[who].chi_square == pytest.approx(chi2) and found[who].p_value == pytest.approx(
            chi_square_p(chi2, 5)
        )


def test_figures_tallied_live_equal_figures_projected_from_the_log(file_store: Store):
    play_series("porrinha", ["random", "reasoner", "random"], games=5, seed=1, store=file_store)
    play_series("backgammon", ["heuristic", "random"], games=3, seed=1, store=file_store)
    play_series("davinci", ["seed-ai", "random"], games=3, seed=1, store=file_store)
    play_series("fish", ["maximin", "random", "random"], games=3, seed=1, store=file_store)

    def figures() -> set[tuple[Any, ...]]:
        return {(str(m), s, f, v) for m, s, f, v in file_store.query("SELECT * FROM figures")}

    live = figures()
    assert refresh(file_store) == 0, "the referee projected every match as it ended"
    file_store.query("DELETE FROM projected")
    assert refresh(file_store) == 14
    assert figures() == live and len(live) > 100


# -- the command -----------------------------------------------------------------------------


def test_the_stats_command_prints_tables_json_csv_and_plots(tmp_path: Path):
    db = str(tmp_path / "log.duckdb")
    with Store(db) as store:
        hand_made(store)
        play_series("backgammon", ["heuristic", "random"], games=3, seed=2, store=store)
    out = runner.invoke(app, ["stats", "--db", db])
    assert out.exit_code == 0 and "guess accuracy" in out.stdout and "dice fairness" in out.stdout, out.stdout
    report = json.loads(runner.invoke(app, ["stats", "porrinha", "--by", "seat", "--db", db, "--json"]).stdout)
    assert report["by"] == "seat" and [r["subject"] for r in report["rates"]] == ["seat 0", "seat 1"]
    rows = list(csv.DictReader(io.StringIO(runner.invoke(app, ["stats", "--db", db, "--csv"]).stdout)))
    wins = {r["subject"]: float(r["value"]) for r in rows if r["section"] == "by_player" and r["measure"] == "wins"}
    assert wins["ann (a)"] == 2 and any(r["section"] == "dice" for r in rows)
    for suffix in ("png", "svg"):
        picture = tmp_path / f"stats.{suffix}"
        result = runner.invoke(app, ["stats", "--db", db, "--plot", str(picture)])
        assert result.exit_code == 0 and picture.stat().st_size > 1000
    for view in ("match_results", "seat_results", "dice_faces", "rulings"):
        result = runner.invoke(app, ["sql", f"SELECT count(*) AS n FROM {view}", "--db", db, "--json"])
        assert result.exit_code == 0 and json.loads(result.stdout)[0]["n"] > 0, (view, result.stdout)
    turns = runner.invoke(
        app, ["sql", "SELECT turns FROM match_results WHERE game = 'porrinha' ORDER BY created_at", "--db", db, "--csv"]
    )
    assert turns.stdout.split() == ["turns", "1.0", "1.0", "2.0"]
    for args, code in (
        (["--plot", str(tmp_path / "stats.pdf")], "usage.plot"),
        (["--since", "last tuesday"], "usage.since"),
        (["--json", "--csv"], "usage.arguments"),
        (["chess"], "usage.game"),
    ):
        result = runner.invoke(app, ["stats", *args, "--db", db])
        assert result.exit_code == 2 and f"error[{code}]" in result.stderr, (args, result.stderr)


def test_stats_say_no_mean_score_for_games_without_scores_and_tell_two_strategies_of_one_name_apart(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    with Store(db) as store:
        play_series("porrinha", ["awk=random", "reasoner"], games=2, seed=1, store=store)
        play_series("porrinha", ["awk=reasoner", "random"], games=2, seed=2, store=store)
        play_series("backgammon", ["heuristic", "random"], games=2, seed=3, store=store)
        result = statistics(store)
    porrinha = [r for r in result.rates if r.game == "porrinha"]
    assert porrinha and all(r.mean_score is None for r in porrinha)  # places only: no scores to average
    assert all(r.mean_score is not None for r in result.rates if r.game == "backgammon")
    labels = [label for label in rate_labels(porrinha) if label.startswith("porrinha: awk")]
    assert sorted(labels) == ["porrinha: awk (random)", "porrinha: awk (reasoner)"]
    table = runner.invoke(app, ["stats", "porrinha", "--db", str(db)]).stdout
    assert "mean score" not in table and "0.00" not in table.split("win rates by player")[1].split("\n\n")[0]
    assert "mean score" in runner.invoke(app, ["stats", "backgammon", "--db", str(db)]).stdout
    rows = list(csv.DictReader(io.StringIO(runner.invoke(app, ["stats", "porrinha", "--db", str(db), "--csv"]).stdout)))
    assert not [r for r in rows if r["measure"] == "mean_score"]
    with matchlog.open(db) as log:
        seats = log.seats_frame().to_pandas()
    assert not seats["rejected"].isna().any() and not seats["answers"].isna().any()
    assert (seats["rejected"] == 0).all()  # nobody's answer was rejected: none, not unknown
