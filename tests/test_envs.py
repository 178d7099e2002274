"""`matchlog.envs`: every game's environment and the replay environment pass PettingZoo's own API test
(with every warning an error), and a learner's episodes are matches like any other: recorded by the
game's referee, verified and audited clean, replayed with the observations and masks it was given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test

import matchlog
import matchlog.envs
from matchlog.events import AnswerRejected, UsageError
from matchlog.replay import audit_records

TABLES: dict[str, dict[str, Any]] = {
    "porrinha": {"players": 3},
    "backgammon": {},
    "davinci": {"players": 3, "options": {"jokers": True}},
    "fish": {"players": 3, "options": {"rows": 4, "columns": 5}},
    # A plugin's game (examples/dudo, installed as a user would), played under the generic protocol.
    "dudo": {"players": 3, "options": {"dice": 2}},
}


def random_episode(env: Any, rng: np.random.Generator) -> list[tuple[str, np.ndarray, np.ndarray, int]]:
    """Play one episode with legal actions drawn at random; what each agent saw and did."""
    seen = []
    for agent in env.agent_iter():
        observation, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        seen.append((agent, observation.copy(), info["action_mask"].copy(), action))
        env.step(action)
    return seen


@pytest.mark.parametrize("game", sorted(TABLES))
def test_every_game_environment_passes_pettingzoo_api_test(game: str):
    env = matchlog.envs.make(game, **TABLES[game])
    try:
        api_test(env, num_cycles=300)
    finally:
        env.close()


def test_a_random_agents_episodes_verify_audit_clean_and_replay_as_they_were_seen(tmp_path: Path):
    rng = np.random.default_rng(7)
    seen: dict[Any, list] = {}
    with matchlog.open(tmp_path / "learned.duckdb", mode="create") as log:
        for game, table in TABLES.items():
            env = matchlog.envs.make(game, log=log, **table)
            for episode in range(2):
                env.reset(seed=episode)
                seen[env.match_id] = random_episode(env, rng)
                assert all(env.terminations.get(a, True) for a in env.possible_agents)
            env.close()
        infos = log.matches()
        assert len(infos) == 2 * len(TABLES) and {info.status for info in infos} == {"finished"}
        assert {info.strategies for info in infos} >= {("learner",) * 3}
        verified = log.verify(deep=True)
        assert verified.ok and verified.matches == 2 * len(TABLES), verified.findings
        assert [a.findings for a in log.audit()] == [[]] * (2 * len(TABLES))

        for game in TABLES:
            replay = matchlog.envs.replay(log, game=game)
            api_test(replay, num_cycles=300)
            for match_id in replay.match_ids:
                replay.reset(options={"match": match_id})
                got = []
                for agent in replay.agent_iter():
                    observation, _, terminated, _, info = replay.last()
                    if terminated:
                        replay.step(None)
                        continue
                    got.append((agent, observation.copy(), info["action_mask"].copy(), info["recorded_action"]))
                    replay.step(0)
                expected = seen[match_id]
                assert len(got) == len(expected)
                for (agent, obs, mask, action), (agent_, obs_, mask_, action_) in zip(got, expected, strict=True):
                    assert agent == agent_ and action == action_
                    assert np.array_equal(obs, obs_) and np.array_equal(mask, mask_)


def test_an_action_the_rules_refuse_gets_the_games_ruling_and_the_match_audits_clean():
    env = matchlog.envs.make("porrinha", players=2, options={"chopsticks": 2})
    env.reset(seed=1)
    hand = env.agent_selection
    assert env.infos[hand]["decision"] == "hand" and env.infos[hand]["action_mask"][3] == 0
    env.step(3)  # three chopsticks in a hand of two: in the space (0..4), against the rules
    records = env.records()
    rejected = [r.event for r in records if isinstance(r.event, AnswerRejected)]
    assert [(e.code, e.decision) for e in rejected] == [("porrinha.hand_out_of_range", "hand")]
    assert env.agent_selection != hand  # lenient: the hand counts as 0 and the next seat is asked
    random_episode(env, np.random.default_rng(2))
    assert audit_records(env.records()).findings == []


def test_a_reset_or_close_mid_match_records_the_match_as_abandoned(tmp_path: Path):
    with matchlog.open(tmp_path / "cut.duckdb", mode="create") as log:
        env = matchlog.envs.make("backgammon", log=log)
        env.reset(seed=3)
        for _ in range(5):
            env.step(int(np.flatnonzero(env.infos[env.agent_selection]["action_mask"])[0]))
        first = env.match_id
        env.reset(seed=4)
        env.step(int(np.flatnonzero(env.infos[env.agent_selection]["action_mask"])[0]))
        second = env.match_id
        env.close()
        assert {log.info(m).status for m in (first, second)} == {"abandoned"}
        assert log.verify().ok
        assert [a.findings for a in log.audit([first, second])] == [[], []]


def test_an_index_outside_the_space_or_a_game_without_an_environment_is_a_usage_error():
    env = matchlog.envs.make("fish", players=2, options={"rows": 3, "columns": 3})
    env.reset(seed=0)
    for wrong in (-1, env.action_space(env.agent_selection).n, None):
        with pytest.raises(UsageError) as raised:
            env.step(wrong)
        assert raised.value.code == "usage.action"
    env.close()
    for game, code in (("knockout", "usage.encoding"), ("chess", "usage.game")):
        with pytest.raises(UsageError) as raised:
            matchlog.envs.make(game)
        assert raised.value.code == code
