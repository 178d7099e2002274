"""The engine contract, checked on every registered game through seeded random playouts: the
contract kit's checks (`matchlog.testing`, which a game from another package runs too), driven here
by hypothesis over table sizes and seeds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines import GAMES
from matchlog.events import IllegalAction, Record
from matchlog.replay import state_at
from matchlog.store import Store
from matchlog.testing import kit

GAME_NAMES = sorted(name for name, engine in GAMES.items() if not engine.spec.tournament)


def playout(game: str, players: int, seed: int) -> tuple[Any, list[Any], list[Record]]:
    played = kit.playout(game, players, seed)
    return played, played.states, played.records


def player_counts(game: str) -> st.SearchStrategy[int]:
    spec = GAMES[game].spec
    return st.integers(spec.min_players, min(spec.max_players or 8, 8))


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_game_declares_itself(game: str):
    kit.check_declared(game)


@pytest.mark.parametrize("game", GAME_NAMES)
@given(data=st.data())
def test_random_playouts_end_and_the_fold_of_the_log_is_the_live_state_at_every_seq(game: str, data: st.DataObject):
    players = data.draw(player_counts(game), label="players")
    kit.check_playout(game, players, data.draw(st.integers(0, 2**32), label="seed"))


@pytest.mark.parametrize("game", GAME_NAMES)
@given(data=st.data())
def test_views_are_idempotent_and_hide_what_they_hide(game: str, data: st.DataObject):
    players = data.draw(player_counts(game), label="players")
    kit.check_views(game, [kit.playout(game, players, data.draw(st.integers(0, 2**32), label="seed"))])


@pytest.mark.parametrize("game", GAME_NAMES)
def test_state_at_every_seq_from_the_store_equals_the_live_state(game: str):
    spec = GAMES[game].spec
    _, live, records = playout(game, min(spec.min_players + 1, spec.max_players or 99), seed=11)
    match_id = records[0].match_id
    with Store() as store:
        store.append(match_id, [r.event for r in records], 0)
        for seq, expected in enumerate(live):
            assert state_at(store, match_id, seq).state == expected


@pytest.mark.parametrize("game", GAME_NAMES)
def test_check_refuses_everything_once_the_match_is_over(game: str):
    played, _, _ = playout(game, GAMES[game].spec.min_players, seed=3)
    engine = GAMES[game]
    for seat in range(GAMES[game].spec.min_players):
        assert engine.legal(played.state, seat) == ()
        with pytest.raises(IllegalAction):
            engine.parse(played.state, seat, 0)
