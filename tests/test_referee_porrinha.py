"""Porrinha's referee: the seed's call sequence, the table queries, policies, failures and series."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines.porrinha import ENGINE, INVALID_GUESS, NOT_PLAYING, PENDING_GUESS, PorrinhaRule
from matchlog.events import (
    AnswerRejected,
    GuessMade,
    GuessVoided,
    HandChosen,
    HandReset,
    MatchEnded,
    MatchStarted,
    PlayerRemoved,
    Seat,
    UsageError,
)
from matchlog.referee import (
    MemoryRecorder,
    RandomPlayer,
    ReasonerPlayer,
    Table,
    play_match,
    play_series,
    seats_from_specs,
)
from matchlog.referee import match as match_module
from matchlog.store import Store

from .conftest import play, wait_for


class Scripted:
    """Answers from lists, and notes every call it gets."""

    def __init__(self, hands: list[object] | None = None, guesses: list[object] | None = None) -> None:
        self.hands = list(hands or [])
        self.guesses = list(guesses or [])
        self.calls: list[tuple[str, int]] = []
        self.tables: list[tuple[str, Table]] = []

    def _note(self, method: str, table: Table) -> None:
        self.calls.append((method, table.round))
        self.tables.append((method, table))

    def begin_game(self, table: Table) -> None:
        self._note("begin_game", table)

    def hand(self, table: Table) -> object:
        self._note("hand", table)
        return self.hands.pop(0) if self.hands else 0

    def guess(self, table: Table) -> object:
        self._note("guess", table)
        if self.guesses:
            return self.guesses.pop(0)
        return next(g for g in range(table.chopstick_count + 1) if table.valid_guess(g))

    def end_round(self, table: Table) -> None:
        self._note("end_round", table)

    def end_game(self, table: Table) -> None:
        self._note("end_game", table)


def seats(*names: str) -> tuple[Seat, ...]:
    return tuple(Seat(name, "user") for name in names)


def events_of(recorder: MemoryRecorder) -> list:
    return [d.event for d in recorder.drafts]


def test_the_call_sequence_of_a_game():
    a, b = Scripted([1, 0], [2, 1]), Scripted([1], [1])
    recorder = MemoryRecorder()
    result = play_match("porrinha", seats("a", "b"), [a, b], recorder=recorder, options={"chopsticks": 1})
    # Round 1: a holds 1, b holds 1, total 2; a guesses 2 and is right, leaving the game.
    assert a.calls == [("begin_game", 1), ("hand", 1), ("guess", 1), ("end_round", 1), ("end_game", 2)]
    assert b.calls == [("begin_game", 1), ("hand", 1), ("guess", 1), ("end_round", 1), ("end_game", 2)]
    assert result.outcome.places == (1, 2)
    assert [type(e) for e in events_of(recorder)] == [
        MatchStarted,
        HandChosen,
        HandChosen,
        GuessMade,
        GuessMade,
        MatchEnded,
    ]


def test_end_round_reaches_players_out_of_the_game_but_not_removed_ones():
    a, b, c = Scripted([1], [3]), Scripted([1, 0, 0]), Scripted([1, 0, 0])
    recorder = MemoryRecorder()
    play_match("porrinha", seats("a", "b", "c"), [a, b, c], recorder=recorder, options={"chopsticks": 1})
    # a guessed 3 = 1+1+1 in round 1 and left; it still hears every end_round after.
    rounds_heard = [r for method, r in a.calls if method == "end_round"]
    rounds_played = max(r for method, r in b.calls if method == "end_round")
    assert rounds_heard == list(range(1, rounds_played + 1))
    assert ("hand", 2) not in a.calls


def test_the_table_answers_the_seeds_queries_from_the_askers_view():
    spy = Scripted([2, 1], [4])
    other = Scripted([1, 0], [0])
    third = Scripted([0, 0], [1])
    play_match("porrinha", seats("spy", "other", "third"), [spy, other, third], options={"chopsticks": 3})
    tables = dict((method + str(t.round), t) for method, t in spy.tables)
    first_hand, first_guess, first_end = tables["hand1"], tables["guess1"], tables["end_round1"]
    assert (first_hand.index, first_hand.player_count, first_hand.active_player_count) == (0, 3, 3)
    assert first_hand.chopstick_count == 9 and first_hand.chopsticks() == (3, 3, 3)
    assert first_hand.hand() == (-1, -1, -1) and first_hand.last_winner == -1
    # The first guesser sees only pending guesses, and only its own hand.
    assert first_guess.guess() == (PENDING_GUESS,) * 3
    assert first_guess.my_hand == 2
    assert first_guess.valid_guess(9) and not first_guess.valid_guess(10) and not first_guess.valid_guess(-1)
    # At end_round the round just played is readable: hands, guesses, winner.
    assert first_end.hand() == (2, 1, 0) and first_end.last_winner == -1 and first_end.last_total == 3
    assert first_end.guess() == (4, 0, 1)
    assert first_end.round == 1
    with pytest.raises(AttributeError):
        first_end.index = 2  # type: ignore[misc]


def test_later_guessers_see_earlier_guesses_and_markers():
    first, second = Scripted([0], [1]), Scripted([0], [])
    out = Scripted()
    state_seen = {}

    class Watcher(Scripted):
        def guess(self, table: Table) -> object:
            state_seen["guesses"] = table.guess()
            return super().guess(table)

    watcher = Watcher([0])
    play_match("porrinha", seats("a", "w", "b", "c"), [first, watcher, second, out], options={"chopsticks": 1})
    assert state_seen["guesses"] == (1, PENDING_GUESS, PENDING_GUESS, PENDING_GUESS)


@given(seed=st.integers(0, 2**32), players=st.integers(2, 6))
def test_no_player_ever_sees_another_players_hand_before_the_round_settles(seed: int, players: int):
    class Spy(RandomPlayer):
        def hand(self, table: Table) -> int:
            self.check(table)
            return super().hand(table)

        def guess(self, table: Table) -> int:
            self.check(table)
            return super().guess(table)

        def check(self, table: Table) -> None:
            hands = table._state.hands
            assert all(h is None for s, h in enumerate(hands) if s != table.index)

    rng = random.Random(seed)
    spies = [Spy(random.Random(rng.random())) for _ in range(players)]
    play_match("porrinha", tuple(Seat(f"s{i}", "spy") for i in range(players)), spies)


# -- bad answers -----------------------------------------------------------------------------


def test_lenient_policy_resets_a_bad_hand_and_voids_a_bad_guess():
    bad, good = Scripted(["two", 1, 0, 0, 0], [99, 1, 2, 3]), Scripted([1, 1, 1, 1], [0, 5, 4, 4])
    recorder = MemoryRecorder()
    play_match("porrinha", seats("bad", "good"), [bad, good], recorder=recorder)
    events = events_of(recorder)
    assert events[1] == AnswerRejected(
        seat=0,
        decision="hand",
        answer="'two'",
        code=PorrinhaRule.NOT_AN_INTEGER,
        message="hand must be an integer, not str",
    )
    # The rejection is the ruling: the hand counts as 0, with no event of its own.
    assert events[2] == HandChosen(seat=1, hand=1)
    assert not any(isinstance(e, HandReset) for e in events)
    rejected = next(e for e in events if isinstance(e, AnswerRejected) and e.decision == "guess")
    assert rejected.code == PorrinhaRule.GUESS_OUT_OF_RANGE and rejected.answer == "99"
    assert events[events.index(rejected) + 1] == GuessVoided(seat=0)
    assert not any(isinstance(e, PlayerRemoved) for e in events)


def test_strict_policy_removes_the_player_with_the_rule_it_broke():
    bad, good, other = Scripted([0], [1]), Scripted([0], [1]), Scripted([0], [2])
    recorder = MemoryRecorder()
    result = play_match(
        "porrinha", seats("a", "dup", "c"), [bad, good, other], recorder=recorder, options={"policy": "strict"}
    )
    removal = next(e for e in events_of(recorder) if isinstance(e, PlayerRemoved))
    assert removal.seat == 1 and removal.code == PorrinhaRule.GUESS_TAKEN
    assert result.outcome.places[1] == 3 and result.outcome.removed == (1,)


def test_a_player_that_raises_is_removed_and_the_match_finishes():
    class Raises(Scripted):
        def guess(self, table: Table) -> object:
            raise ZeroDivisionError("division by zero")

    recorder = MemoryRecorder()
    result = play_match("porrinha", seats("a", "b", "boom"), [Scripted(), Scripted(), Raises()], recorder=recorder)
    removal = next(e for e in events_of(recorder) if isinstance(e, PlayerRemoved))
    assert removal.seat == 2 and removal.code == "player.exception"
    assert "ZeroDivisionError: division by zero" in removal.reason
    assert isinstance(events_of(recorder)[-1], MatchEnded) and result.outcome.places[2] == 3


def test_a_player_that_hangs_is_removed_after_its_timeout():
    release = threading.Event()

    class Sleeps(Scripted):
        def hand(self, table: Table) -> object:
            release.wait()  # until the test is over
            return 0

    recorder = MemoryRecorder()
    # The others are called inline, as built-in players are: only the sleeper plays under the short
    # timeout, so a busy machine cannot make them overrun it.
    table = (Seat("a", "random"), Seat("b", "random"), Seat("zz", "user"))
    try:
        result = play_match("porrinha", table, [Scripted(), Scripted(), Sleeps()], recorder=recorder, timeout=0.2)
        assert not release.is_set(), "the match waited for the hung player"
    finally:
        release.set()
    removal = next(e for e in events_of(recorder) if isinstance(e, PlayerRemoved))
    assert (removal.seat, removal.code) == (2, "player.timeout")
    assert "within 0.2 s" in removal.reason and result.outcome.places[2] == 3


@pytest.mark.parametrize("method", ["begin_game", "end_round", "end_game"])
def test_an_exception_in_a_notification_removes_the_player_too(method: str):
    class Raises(Scripted):
        pass

    def boom(self: Scripted, table: Table) -> None:
        raise RuntimeError(method)

    setattr(Raises, method, boom)
    recorder = MemoryRecorder()
    play_match("porrinha", seats("a", "b", "c"), [Scripted(), Raises(), Scripted()], recorder=recorder)
    removals = [e for e in events_of(recorder) if isinstance(e, PlayerRemoved)]
    assert [(r.seat, r.code) for r in removals] == [(1, "player.exception")]
    assert f"{method}() raised RuntimeError" in removals[0].reason
    assert isinstance(events_of(recorder)[-1], MatchEnded)


def test_a_player_without_hand_or_guess_is_removed():
    class Mute:
        pass

    recorder = MemoryRecorder()
    play_match("porrinha", seats("a", "mute"), [Scripted(), Mute()], recorder=recorder)
    removal = next(e for e in events_of(recorder) if isinstance(e, PlayerRemoved))
    assert removal.code == "player.missing_method"


@pytest.mark.parametrize(
    "answer",
    [10**5000, float("nan"), None, {"x": 1}, b"\x00", -(2**70)],
    ids=["10**5000", "nan", "none", "dict", "bytes", "-2**70"],
)
def test_garbage_answers_are_recorded_not_crashed_on(answer: object):
    recorder = MemoryRecorder()
    play_match("porrinha", seats("a", "b"), [Scripted([answer], [answer]), Scripted()], recorder=recorder)
    rejected = [e for e in events_of(recorder) if isinstance(e, AnswerRejected)]
    assert rejected and all(len(e.answer) <= 200 for e in rejected)


def test_players_that_never_finish_a_game_end_it_as_abandoned(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(match_module, "MAX_DECISIONS", 60)

    class NeverRight(Scripted):
        def guess(self, table: Table) -> object:
            return "never"

    recorder = MemoryRecorder()
    result = play_match("porrinha", seats("a", "b"), [NeverRight(), NeverRight()], recorder=recorder)
    assert result.outcome.result == "abandoned" and result.outcome.winners == ()
    assert "no result after 60 decisions" in events_of(recorder)[-1].reason


# -- built-in players, user players, series --------------------------------------------------


def test_the_reasoner_beats_random_players():
    wins = 0
    games = 300
    for game in range(games):
        reasoner_seat = game % 2
        players = [RandomPlayer(random.Random(game)), RandomPlayer(random.Random(game + 1))]
        players[reasoner_seat] = ReasonerPlayer(random.Random(game + 2))
        result = play_match("porrinha", seats("x", "y"), players)
        wins += result.outcome.winners == (reasoner_seat,)
    assert wins / games > 0.6, wins


USER_PLAYER = """
class Counter:
    def __init__(self, seed=None):
        self.seed = seed
        self.games = 0
    def begin_game(self, table):
        self.games += 1
    def hand(self, table):
        return 0
    def guess(self, table):
        return next(g for g in range(table.chopstick_count + 1) if table.valid_guess(g))
"""


def test_user_players_from_a_file_keep_their_knowledge_across_a_series(tmp_path: Path):
    path = tmp_path / "my_ai.py"
    path.write_text(USER_PLAYER)
    with Store() as store:
        series = play(store, ["random", f"me={path}:Counter", "reasoner"], games=4)
        assert [m.seats[1].name for m in series.matches] == ["me"] * 4
        assert sum(series.places["me"].values()) == 4
        assert sorted(sum(c.values()) for c in series.places.values()) == [4, 4, 4]
        infos = store.matches()
        assert {i.series_id for i in infos} == {series.series_id}
        assert sorted(i.series_game for i in infos) == [1, 2, 3, 4]
        assert store.verify() == []


def test_user_players_do_not_leave_threads_behind(tmp_path: Path):
    import threading

    path = tmp_path / "my_ai.py"
    path.write_text(USER_PLAYER)
    play_series("porrinha", [f"{path}:Counter", f"{path}:Counter"], games=2, seed=1)
    before = threading.active_count()
    play_series("porrinha", [f"{path}:Counter", f"{path}:Counter", "random"], games=20, seed=2)
    wait_for(lambda: threading.active_count() <= before, "the players' threads to end")


def test_user_players_from_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "my_package").mkdir()
    (tmp_path / "my_package" / "__init__.py").write_text("")
    (tmp_path / "my_package" / "ai.py").write_text(USER_PLAYER)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = play_series("porrinha", ["my_package.ai:Counter", "random"], seed=1)
    assert len(result.matches) == 1
    sys.modules.pop("my_package.ai", None)
    sys.modules.pop("my_package", None)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("grandmaster", "unknown player 'grandmaster'"),
        ("nowhere/ai.py:Player", "does not exist"),
        ("json:NoSuchClass", "has no class NoSuchClass"),
        ("no_such_module_xyz:Player", "importing no_such_module_xyz raised"),
        ("ai.py:", "expected path/to/file.py:Class"),
    ],
)
def test_bad_player_specs_are_usage_errors(spec: str, fragment: str):
    with pytest.raises(UsageError, match=fragment) as caught:
        seats_from_specs("porrinha", ["random", spec])
    assert caught.value.code == "usage.player"


def test_a_user_file_that_raises_on_import_is_a_usage_error(tmp_path: Path):
    path = tmp_path / "broken.py"
    path.write_text("raise SystemError('nope')\n")
    with pytest.raises(UsageError, match="SystemError: nope"):
        seats_from_specs("porrinha", [f"{path}:Player"])


def test_seat_names_are_unique():
    names = [s.name for s in seats_from_specs("porrinha", ["random", "random", "bob=reasoner", "random"])]
    assert names == ["random", "random#2", "bob", "random#3"]


def test_seeded_series_are_reproducible():
    one = play_series("porrinha", ["random", "reasoner", "random"], games=3, seed=42)
    two = play_series("porrinha", ["random", "reasoner", "random"], games=3, seed=42)
    assert [m.outcome for m in one.matches] == [m.outcome for m in two.matches]


@pytest.mark.parametrize(
    ("specs", "games", "code"), [(["random"], 1, "usage.players"), (["random"] * 2, 0, "usage.games")]
)
def test_tables_and_counts_that_cannot_be_played(specs: list[str], games: int, code: str):
    with pytest.raises(UsageError) as caught:
        play_series("porrinha", specs, games=games)
    assert caught.value.code == code


def test_the_recorded_log_replays_to_the_referees_final_state():
    with Store() as store:
        result = play(store, ["random", "reasoner", "random", "reasoner", "random"]).matches[0]
        from matchlog.replay import state_at

        final = state_at(store, result.match_id).state
        assert ENGINE.outcome(final) == result.outcome
        assert final.guesses == (NOT_PLAYING,) * 5 or INVALID_GUESS not in final.guesses
