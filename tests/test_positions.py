"""Matches started from a described position: recorded in match.started, played on from there by
every game, judged by the audit from that position, and readable by replay, show, fork and stats;
a bad position is a clear usage error that records nothing; Da Vinci Code's stays hidden from seats."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.engines import get as get_engine
from matchlog.engines.backgammon_id import board_of
from matchlog.events import CheckerMoved, DiceRolled, MatchStarted, OpeningRolled, Seat, UsageError
from matchlog.referee import play_series, resume_match
from matchlog.replay import audit, fold, fork, seat_lines, timeline
from matchlog.store import Store

runner = CliRunner()

FISH_STATE = {
    "players": [
        {"color": "brown", "score": 0, "places": [[3, 0], [3, 1]]},
        {"color": "white", "score": 3, "places": [[0, 0], [1, 1], [2, 0]]},
        {"color": "red", "score": 5, "places": [[0, 1], [1, 0], [2, 1]]},
    ],
    "board": [[1, 2, 3, 4], [4, 5, 1, 2], [2, 2, 2, 2], [1, 1, 1, 3], [3, 3, 3, 1]],
}

#: Each game, its players, options and a position, and what the state at seq 0 must say.
POSITIONS = {
    "backgammon": (["heuristic", "random"], {}, "4Dn4AFjgc/AAWA 21"),
    "porrinha": (["random", "reasoner", "random", "reasoner"], {}, "3,2,0,1 first=1"),
    "davinci": (["seed-ai", "random"], {"jokers": True}, "b1 W4 w7 / w0 b5 B9 b- | b2 w10 W11 turn=1"),
    "fish": (["maximin:1", "random", "random"], {}, json.dumps(FISH_STATE)),
}


@pytest.fixture(scope="module")
def log() -> Iterator[Store]:
    with Store(":memory:") as store:
        yield store


def first_state(game: str, state) -> None:
    """What each position says the table is."""
    match game:
        case "backgammon":
            assert (state.points, state.bar, state.off) == board_of("4Dn4AFjgc/AAWA", 0)
            assert (state.side, state.dice, state.opening) == (0, (2, 1), None)
        case "porrinha":
            assert (state.chopsticks, state.out, state.first_guesser) == ((3, 2, 0, 1), (2,), 1)
        case "davinci":
            assert state.rows == ((2, 9, 15), (1, 10, 18, 24)) and state.pile == (4, 21, 23)
            assert state.revealed == ((False, True, False), (False, False, True, False)) and state.turn == 1
        case "fish":
            assert state.order == (2, 1, 0) and state.scores == (5, 3, 0) and state.phase == "place"
            assert state.penguins[2] == ((3, 0), (3, 1)) and state.names == ("maximin:1", "random", "random#2")


@pytest.mark.parametrize("game", sorted(POSITIONS))
def test_a_match_from_a_position_plays_on_from_it_audits_clean_and_forks(log: Store, game: str):
    specs, options, position = POSITIONS[game]
    match_id = play_series(game, specs, options=options, seed=3, store=log, position=position).matches[0].match_id
    records = log.read(match_id)
    started = records[0].event
    assert isinstance(started, MatchStarted) and started.position == position
    first_state(game, fold(records[:1]))
    assert fold(records[:1]) == get_engine(game).start(started)
    assert log.match(match_id).status == "finished"
    (report,) = audit(log, [match_id])
    assert report.passed and report.notes == [], (report.findings, report.notes)
    assert report.checked["chance_rederived"] == report.checked["chance"]
    assert "from a given position" in next(timeline(records)).text
    # A fork of it starts from the same position and plays on.
    fork_id = fork(log, match_id, len(records) // 2)
    resume_match(log, fork_id, specs, seed=4)
    (forked,) = audit(log, [fork_id])
    assert forked.passed and log.read(fork_id, stop=0)[0].event.position == position  # type: ignore[attr-defined]


def test_backgammon_from_a_gnubg_position_id_plays_on_from_it(log: Store):
    # Black (X, seat 0) on roll with a checker on the bar; no dice given: it rolls first.
    match_id = play_series("backgammon", ["heuristic", "random"], seed=5, store=log, position="4Dn4AFjgc/AAWA")
    records = log.read(match_id.matches[0].match_id)
    events = [r.event for r in records]
    assert not any(isinstance(e, OpeningRolled) for e in events), "no opening roll: the position says who is on roll"
    rolled = next(e for e in events if isinstance(e, DiceRolled | CheckerMoved))
    assert isinstance(rolled, DiceRolled) and rolled.seat == 0
    entered = next(e for e in events if isinstance(e, CheckerMoved))
    assert entered.seat == 0 and entered.source is None, "the checker on the bar enters first"
    (report,) = audit(log, [records[0].match_id])
    assert report.passed and report.checked["chance_rederived"] == sum(isinstance(e, DiceRolled) for e in events)


def test_the_commands_show_replay_and_count_a_match_from_a_position(tmp_path: Path):
    db = str(tmp_path / "log.duckdb")
    result = runner.invoke(
        app, ["play", "backgammon", "-p", "heuristic", "-p", "random", "--position", "4HPhASjgc/ABMA turn=1",
              "--seed", "2", "--db", db, "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    match_id = json.loads(result.stdout)["matches"][0]["match_id"]
    shown = runner.invoke(app, ["show", match_id, "--at", "0", "--db", db])
    assert shown.exit_code == 0 and "random (O) to roll" in shown.stdout
    replayed = runner.invoke(app, ["replay", match_id, "--db", db])
    assert replayed.exit_code == 0 and "from a given position" in replayed.stdout
    stats = runner.invoke(app, ["stats", "backgammon", "--db", db, "--json"])
    assert stats.exit_code == 0 and json.loads(stats.stdout)
    assert runner.invoke(app, ["audit", "--all", "--db", db]).exit_code == 0


@pytest.mark.parametrize(
    ("game", "position", "fragment"),
    [
        ("backgammon", "4HPwATDgc/ABMA 9", "not the dice"),
        ("porrinha", "3,3", "chopsticks for 2 seats; the match has 3"),
        ("porrinha", "0,0,4", "two players or more"),
        ("davinci", "b1 b1 / w2", "b1 is in it twice"),
        ("davinci", "b- w1 / w2", "without jokers"),
        ("fish", '{"players": [], "board": [[1]]}', "two players or more"),
        ("fish", "{not json", "not JSON"),
    ],
)
def test_a_bad_position_is_a_clear_usage_error_and_records_nothing(tmp_path: Path, game: str, position: str,
                                                                  fragment: str):  # fmt: skip
    db = str(tmp_path / "log.duckdb")
    players = {"backgammon": ["random"] * 2, "porrinha": ["random"] * 3, "davinci": ["random"] * 2,
               "fish": ["random"] * 3}[game]  # fmt: skip
    args = ["play", game, *(f"-p{p}" for p in players), "--position", position, "--db", db]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "error[usage.position]" in result.stderr and fragment in result.stderr
    with Store(db) as store:
        assert store.matches(limit=None) == []


def test_a_da_vinci_position_shows_each_seat_only_its_own_hidden_tiles(log: Store):
    specs, options, position = POSITIONS["davinci"]
    match_id = play_series("davinci", specs, options=options, seed=6, store=log, position=position).matches[0].match_id
    records = log.read(match_id)
    seen = [next(seat_lines(records, seat)).event.position for seat in (0, 1, None)]  # type: ignore[attr-defined]
    assert seen == [
        "b1 W4 w7 / w? b? B9 b? | b? w? w? turn=1",
        "b? W4 w? / w0 b5 B9 b- | b? w? w? turn=1",
        "b? W4 w? / w? b? B9 b? | b? w? w? turn=1",
    ]
    with pytest.raises(UsageError):  # a seat's view of a position is not a position to start from
        get_engine("davinci").start(MatchStarted(game="davinci", options=options, seats=records[0].event.seats,  # type: ignore[attr-defined]
                                                 position=seen[0]))  # fmt: skip


_tiles = st.sampled_from(["b0", "w0", "B3", "w11", "W11", "b-", "w-", "b12", "x1"])
NEAR_POSITIONS = st.one_of(
    st.text(max_size=60),
    st.lists(st.integers(-2, 200), min_size=1, max_size=5).map(lambda c: ",".join(map(str, c)) + " first=1"),
    st.lists(st.lists(_tiles, max_size=4).map(" ".join), min_size=1, max_size=4).map(" / ".join),
    st.recursive(
        st.none() | st.booleans() | st.integers(-3, 9) | st.sampled_from(["red", "white", "brown"]),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["players", "board", "color",
                                                                                   "score", "places"]), inner),
        max_leaves=12,
    ).map(json.dumps),
)  # fmt: skip


@given(game=st.sampled_from(sorted(POSITIONS)), position=NEAR_POSITIONS)
def test_any_position_text_starts_a_game_or_is_a_clear_usage_error(game: str, position: str):
    specs, options, _ = POSITIONS[game]
    started = MatchStarted(
        game=game, options=options, seats=tuple(Seat(f"s{i}", s) for i, s in enumerate(specs)), position=position
    )
    engine = get_engine(game)
    refused: UsageError | None = None
    try:
        state = engine.start(started)
    except UsageError as error:
        refused = error
    if refused is not None:
        assert refused.code == "usage.position" and refused.message
    else:
        assert engine.to_act(state) is not None, "a position to play on from, not one already over"
