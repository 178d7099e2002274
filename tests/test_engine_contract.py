"""The engine contract, checked on every registered game through seeded random playouts."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines import CHANCE, GAMES, Engine
from matchlog.engines.chance import ChanceSource
from matchlog.engines.views import shown_event
from matchlog.events import Event, IllegalAction, MatchStarted, Record, Seat
from matchlog.referee import RUNNERS, MemoryRecorder, PlayerCalls, Referee, builtin_names, make_player
from matchlog.replay import audit_records, fold, state_at
from matchlog.store import Store

GAME_NAMES = sorted(name for name, engine in GAMES.items() if not engine.spec.tournament)


class Guarded:
    """An engine wrapper that checks, on every call, what the contract promises."""

    def __init__(self, engine: Engine[Any]) -> None:
        self.engine = engine
        self.spec = engine.spec
        self.decisions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def apply(self, state: Any, event: Event) -> Any:
        before = msgspec.msgpack.encode(state)
        after = self.engine.apply(state, event)
        assert msgspec.msgpack.encode(state) == before, f"apply({event.tag}) mutated its input"
        assert isinstance(after, msgspec.Struct) and after.__struct_config__.frozen
        return after

    def chance(self, state: Any, rng: random.Random) -> Event:
        event = self.engine.chance(state, rng)
        outcomes = self.engine.chance_outcomes(state)
        assert not outcomes or event in outcomes, "chance drew something it does not list as possible"
        self.engine.check_chance(state, event)  # and what it draws, it accepts as possible
        return event

    def to_act(self, state: Any) -> Any:
        turn = self.engine.to_act(state)
        if turn is not None and turn.seat == CHANCE:
            assert all(self.engine.legal(state, seat) == () for seat in range(len(state.names)))
        elif turn is not None:
            self.decisions += 1
            legal = self.engine.legal(state, turn.seat)
            assert legal, f"nothing is legal for seat {turn.seat} at {turn.decision}"
            for action in random.Random(self.decisions).sample(list(legal), min(len(legal), 5)):
                self.engine.check(state, turn.seat, action)
            for other in range(len(state.names)):
                if other != turn.seat:
                    assert self.engine.legal(state, other) == ()
        return turn


def playout(game: str, players: int, seed: int) -> tuple[Referee, list[Any], list[Record]]:
    engine = GAMES[game]
    rng = random.Random(seed)
    names = sorted(name for name in builtin_names(game) if name != "human")  # no one at a terminal
    seats = tuple(Seat(f"s{i}", rng.choice(names)) for i in range(players))
    started = MatchStarted(game=game, options={}, seats=seats)
    recorder = MemoryRecorder()
    live: list[Any] = []
    guarded = Guarded(engine)
    chance = ChanceSource(rng.randbytes(32)) if engine.spec.chance else None
    referee = Referee(guarded, started, recorder, on_event=lambda event, state: live.append(state), chance=chance)  # type: ignore[arg-type]
    calls = [PlayerCalls(make_player(game, seat.player, random.Random(rng.random())), None) for seat in seats]
    RUNNERS[game](referee, calls, chance or random.Random(rng.random()))
    records = recorder.records(referee.match_id)
    return referee, live, records


def player_counts(game: str) -> st.SearchStrategy[int]:
    spec = GAMES[game].spec
    return st.integers(spec.min_players, min(spec.max_players or 8, 8))


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_game_declares_itself(game: str):
    spec = GAMES[game].spec
    assert spec.name == game and spec.min_players >= 1
    assert "random" in builtin_names(game), "every game ships a random player (the contract plays with it)"
    assert game in RUNNERS


@pytest.mark.parametrize("game", GAME_NAMES)
@given(data=st.data())
def test_random_playouts_end_and_the_fold_of_the_log_is_the_live_state_at_every_seq(game: str, data: st.DataObject):
    players = data.draw(player_counts(game), label="players")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    referee, live, records = playout(game, players, seed)
    engine = GAMES[game]
    # The game ended, within a bound, with an outcome that places every seat.
    assert engine.to_act(referee.state) is None
    assert referee.seq < 20_000
    outcome = engine.outcome(referee.state)
    assert len(outcome.places) == players and all(1 <= p <= players for p in outcome.places)
    assert all(outcome.places[w] == 1 for w in outcome.winners)
    # Folding any prefix of the log gives the state the referee had then.
    assert len(live) == len(records)
    for seq in sorted({0, len(records) - 1, *random.Random(seed).sample(range(len(records)), min(25, len(records)))}):
        assert fold(records[: seq + 1]) == live[seq], f"seq {seq}"
    # The audit re-judges the whole log without a finding, and re-derives every draw from the seed.
    report = audit_records(records)
    assert report.findings == [], report.findings[:3]
    assert report.checked["chance_rederived"] == report.checked["chance"]
    assert (report.checked["chance"] > 0) == engine.spec.chance


@pytest.mark.parametrize("game", GAME_NAMES)
@given(data=st.data())
def test_views_are_idempotent_and_hide_what_they_hide(game: str, data: st.DataObject):
    players = data.draw(player_counts(game), label="players")
    _, live, records = playout(game, players, data.draw(st.integers(0, 2**32), label="seed"))
    engine = GAMES[game]
    for state, record in zip(live[::7], records[::7], strict=True):
        for seat in [None, *range(players)]:
            seen = engine.view(state, seat)
            assert engine.view(seen, seat) == seen
            shown = shown_event(engine, state, record.event, seat)
            assert isinstance(shown, Event)
            if not engine.spec.hidden:
                assert seen == state and shown == record.event


@pytest.mark.parametrize("game", GAME_NAMES)
def test_state_at_every_seq_from_the_store_equals_the_live_state(game: str):
    spec = GAMES[game].spec
    referee, live, records = playout(game, min(spec.min_players + 1, spec.max_players or 99), seed=11)
    with Store() as store:
        store.append(referee.match_id, [r.event for r in records], 0)
        for seq, expected in enumerate(live):
            assert state_at(store, referee.match_id, seq).state == expected


@pytest.mark.parametrize("game", GAME_NAMES)
def test_check_refuses_everything_once_the_match_is_over(game: str):
    referee, _, _ = playout(game, GAMES[game].spec.min_players, seed=3)
    engine = GAMES[game]
    for seat in range(GAMES[game].spec.min_players):
        assert engine.legal(referee.state, seat) == ()
        with pytest.raises(IllegalAction):
            engine.parse(referee.state, seat, 0)
