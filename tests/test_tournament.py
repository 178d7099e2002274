"""Tournaments: worker processes, one writer, every arrangement, clean stops, standings."""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import matchlog
from matchlog.events import HandChosen, MatchEnded, MatchStarted, Outcome, Seat, UsageError, draft, encode, uuid7
from matchlog.referee.tournament import (
    Setup,
    _QueueRecorder,
    _Stopped,
    arrangements,
    play_numbered,
    ratings,
    run_tournament,
)
from matchlog.store import Store

from .conftest import LONG_PATIENCE, PATIENCE, recorded_bytes, start_server, wait_for


def test_arrangements_are_every_table_in_every_seat_order():
    assert arrangements(3, 2) == [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]
    assert len(arrangements(4, 3)) == 4 * 6
    assert all(len(set(order)) == 3 for order in arrangements(5, 3))


def test_ratings_match_the_elo_difference_of_a_win_rate():
    rating = ratings([[0.0, 7500.0], [2500.0, 0.0]])
    assert rating[0] - rating[1] == pytest.approx(400 * math.log10(3), abs=0.5)  # 75% is 191 Elo points
    assert sum(rating) / 2 == pytest.approx(1500)


def test_equal_players_get_equal_ratings_and_an_unbeaten_one_stays_finite():
    # 0 and 1 split their games; 2 beat both every time.
    scored = [[0.0, 50.0, 0.0], [50.0, 0.0, 0.0], [40.0, 40.0, 0.0]]
    low, also_low, high = ratings(scored)
    assert low == pytest.approx(also_low)
    assert math.isfinite(high) and high - low > 400


@given(st.integers(0, 200), st.integers(0, 200))
def test_the_player_who_scored_more_is_rated_higher(a_wins: int, b_wins: int):
    a, b = ratings([[0.0, float(a_wins)], [float(b_wins), 0.0]])
    assert (a > b) == (a_wins > b_wins) and (a == pytest.approx(b)) == (a_wins == b_wins)


def test_a_porrinha_tournament_plays_every_arrangement_evenly(tmp_path: Path):
    with Store(tmp_path / "log.duckdb") as store:
        result = run_tournament(
            "porrinha", ["random", "reasoner", "random"], games=36, store=store, jobs=2, seats=3, seed=1
        )
        assert (result.finished, result.unfinished, result.findings, result.interrupted) == (36, 0, (), False)
        matches = store.matches(limit=None)
        assert len(matches) == 36 and all(m.status == "finished" for m in matches)
        assert {m.series_id for m in matches} == {result.tournament_id}
        orders = Counter(tuple(m.players) for m in matches)
        assert len(orders) == 6 and set(orders.values()) == {6}  # 3 players, 3 seats: 6 orders, 6 games each
        assert result.events == store.count()
        assert sum(s.matches for s in result.standings) == 36 * 3
        assert sum(s.wins + s.draws for s in result.standings) == 36
        best = result.standings[0]
        assert best.name == "reasoner" and best.rating > 1500  # the reasoner beats random players
        assert store.verify() == []


def test_a_backgammon_tournament_is_reproducible_from_its_seed(tmp_path: Path):
    outcomes = []
    for run in range(2):
        with Store(tmp_path / f"log{run}.duckdb") as store:
            run_tournament("backgammon", ["heuristic", "random"], games=6, store=store, jobs=2, seed=9)
            outcomes.append(sorted((m.series_game, m.outcome.result, m.outcome.winners) for m in store.matches()))
    assert outcomes[0] == outcomes[1]


class Broken:
    def __init__(self):
        raise RuntimeError("cannot start")


def test_matches_that_cannot_be_played_are_reported(tmp_path: Path):
    player = tmp_path / "broken.py"
    player.write_text("class Broken:\n    def __init__(self):\n        raise RuntimeError('cannot start')\n")
    with Store(tmp_path / "log.duckdb") as store:
        result = run_tournament(
            "porrinha", ["random", f"{player}:Broken"], games=4, store=store, jobs=1, seed=1, in_process=True
        )
        assert result.finished == 0 and len(result.failures) == 4
        assert "RuntimeError: cannot start" in result.failures[0]
        assert store.matches() == []


def test_workers_that_die_are_reported_not_taken_for_a_finished_tournament(tmp_path: Path):
    player = tmp_path / "fatal.py"
    player.write_text("import os\n\nclass Fatal:\n    def __init__(self):\n        os._exit(3)\n")
    with Store(tmp_path / "log.duckdb") as store:
        result = run_tournament(
            "porrinha", ["random", f"{player}:Fatal"], games=4, store=store, jobs=1, seed=1, in_process=True
        )
        assert result.finished == 0 and not result.interrupted
        assert any("every worker stopped (exit codes 3)" in failure for failure in result.failures), result.failures
        assert store.verify() == []


@pytest.mark.parametrize(
    ("specs", "seats", "code"), [(["random"], None, "usage.players"), (["random"] * 3, 3, "usage.seats")]
)
def test_tables_the_game_cannot_seat(tmp_path: Path, specs, seats, code):
    with Store() as store, pytest.raises(UsageError) as caught:
        run_tournament("backgammon", specs, games=2, store=store, seats=seats)
    assert caught.value.code == code


def test_ctrl_c_stores_what_finished_and_ends_the_rest_as_abandoned(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    command = [
        sys.executable,
        "-m",
        "matchlog.cli",
        "tournament",
        "backgammon",
        "-p",
        "random",
        "-p",
        "random",
        "--games",
        "5000",
        "--db",
        str(db),
        "-q",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Some matches are recorded (or it ended: what it said is checked below).
        wait_for(lambda: process.poll() is not None or recorded_bytes(db) >= 300_000, "matches recorded", every=0.1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=LONG_PATIENCE)
    finally:
        process.kill()  # (a no-op once it has exited) never leave it holding the log
    assert process.returncode == 130, err
    assert "interrupted:" in out
    with Store(db) as store:
        assert store.verify() == []
        statuses = Counter(m.status for m in store.matches(limit=None))
        assert statuses["finished"] >= 1 and statuses["running"] == 0
        for match in store.matches(status="abandoned"):
            assert store.read(match.match_id)[-1].event.reason == "tournament interrupted"


def loading_libraries(pid: int) -> bool:
    """Whether process `pid` has begun to load the commands' compiled libraries (numpy, pyarrow,
    DuckDB), which `matchlog.cli.main` does while it holds Ctrl-C (or has ended)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return True
    return re.search(r"/site-packages/\S+\.so\b", maps) is not None


@pytest.mark.parametrize("delay", [0.2, 0.5, 0.8, 1.1, 1.6])
def test_ctrl_c_at_any_moment_of_starting_ends_cleanly(tmp_path: Path, delay: float):
    """A terminal's Ctrl-C reaches the whole process group (the workers too), possibly while
    Python is still importing, DuckDB is opening the file or the workers are starting."""
    db = tmp_path / "log.duckdb"
    command = [sys.executable, "-m", "matchlog.cli", "tournament", "porrinha", "-p", "random", "-p", "random"]
    process = subprocess.Popen(
        [*command, "--games", "100000", "--db", str(db), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    # The moments count from matchlog's own start, not the interpreter's: a Ctrl-C while Python
    # itself starts (tens of milliseconds on a quiet machine, far longer on a busy one) is Python's.
    try:
        wait_for(lambda: loading_libraries(process.pid), "the command to load its libraries", every=0.01)
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=PATIENCE)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    # 130, or killed by the signal itself (-2) when it lands inside a library's own SIGINT handling
    # during the imports: a shell shows both as status 130.
    assert process.returncode in (130, -signal.SIGINT), err
    assert "Traceback" not in err and "Traceback" not in out
    if db.exists():
        with Store(db) as store:
            assert store.verify() == []
            assert not store.matches(status="running")


def test_a_stop_never_cuts_short_a_match_whose_end_is_being_recorded() -> None:
    # A worker asked to stop leaves its match for the writer to end as abandoned; one that is
    # recording the match's end sends it whole instead, or the match would end twice.
    class Stopped:
        @staticmethod
        def is_set() -> bool:
            return True

    sent: list[tuple] = []
    sink = type("Sink", (), {"put": staticmethod(sent.append)})
    started = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "random"), Seat("b", "random")))
    recorder = _QueueRecorder(sink, Stopped(), 0, uuid7())
    recorder.steps = 15  # the next step is one where the recorder looks for a stop
    recorder.record([draft(MatchEnded(outcome=Outcome(places=(1, 2), winners=(0,))))])
    recorder.flush()
    assert [m[0] for m in sent] == ["events"]
    recorder.steps = 15
    with pytest.raises(_Stopped):
        recorder.record([draft(started)])


class _Results(list):
    """What a worker puts for the writer, kept in order (`play_numbered`'s `results`)."""

    put = list.append


def _illegal_hand(payload: bytes) -> bytes:
    told = msgspec.json.decode(payload, type=HandChosen)
    return encode(HandChosen(seat=told.seat, hand=7))  # of 3 chopsticks


def _no_event(payload: bytes) -> bytes:
    return b'{"type":"porrinha.hand_chosen","seat":"zero"}'


#: What a lying worker puts in place of a match's first hand, and the code its ruling names.
LIES = {
    "a hand the rules refuse": (_illegal_hand, "porrinha.hand_out_of_range"),
    "no event": (_no_event, "store.bad_event"),
}


class _LyingPool:
    """A pool (as a cluster's is: anything that hands the writer messages) that plays each match here
    and hands over match `liar`'s events with its first hand replaced by `lie(its bytes)`."""

    def __init__(self, setup: Setup, liar: int, lie: Callable[[bytes], bytes]) -> None:
        self.setup, self.liar, self.lie, self.messages = setup, liar, lie, _Results()

    def start(self) -> None:
        never = threading.Event()
        for number in range(self.setup.total):
            sent = _Results()
            play_numbered(self.setup, number, sent, never)
            self.messages += [self.lied(m) if number == self.liar else m for m in sent]

    def lied(self, message: tuple) -> tuple:
        if message[0] != "events":
            return message
        events = msgspec.msgpack.decode(message[4], type=list[tuple[str, int, bytes]])
        first = next(i for i, (_, _, payload) in enumerate(events) if b'"porrinha.hand_chosen"' in payload)
        events[first] = (events[first][0], events[first][1], self.lie(events[first][2]))
        return (*message[:4], msgspec.msgpack.encode(events))

    def hand_out(self, done: int) -> None:
        return None

    def receive(self, timeout: float) -> list[tuple] | None:
        given, self.messages = self.messages, _Results()
        return list(given) or None

    def stop(self) -> Iterator[tuple]:
        return iter(())

    def shortfall(self, missing: int, games: int) -> str:
        return f"{missing} of {games} not played"


@pytest.mark.parametrize("target", ["store", "file", "server"])
@pytest.mark.parametrize("lie", sorted(LIES))
def test_an_event_the_rules_refuse_from_a_worker_is_not_written_and_its_match_ends_with_the_ruling(
    tmp_path: Path, target: str, lie: str
):
    """The writer hands every worker's events to the log's judge (`replay.clerk`), whatever it
    writes to: a match whose events it refuses keeps what was taken and ends abandoned, the ruling
    in its end and in the tournament's failures; every other match is written whole."""
    db = tmp_path / "log.duckdb"
    liar, games = 2, 6
    told, code = LIES[lie]
    served = start_server(db) if target == "server" else None
    try:
        if served is not None:
            opened = matchlog.open(served.url, token=served.admin)
        else:
            opened = Store(db) if target == "store" else matchlog.open(db, mode="create")
        with opened as log:
            result = run_tournament(
                "porrinha",
                ["random", "random"],
                games=games,
                store=log,
                seed=4,
                pool=lambda s: _LyingPool(s, liar, told),
            )
        assert (result.finished, result.unfinished, result.findings) == (games - 1, 0, ())
        assert [f for f in result.failures if f.startswith(f"match {liar + 1}:")] == list(result.failures)
        assert f"[{code}]" in result.failures[0], result.failures
        with matchlog.open(db) if served is None else matchlog.open(served.url, token=served.admin) as log:
            infos = {info.series_game - 1: info for info in log.matches()}  # (series games count from 1)
            assert sorted(infos) == list(range(games))
            assert {n: i.status for n, i in infos.items() if n != liar} == dict.fromkeys(
                set(infos) - {liar}, "finished"
            )
            lied = infos[liar]
            assert lied.status == "abandoned"
            records = log.read(lied.match_id)
            assert not any(isinstance(r.event, HandChosen) and r.event.hand == 7 for r in records)
            end = records[-1].event
            assert isinstance(end, MatchEnded) and f"[{code}]" in end.reason
            assert log.verify().ok
            assert [a.findings for a in log.audit()] == [[]] * games
    finally:
        if served is not None:
            served.stop()
