"""`ReplayEnv`: a PettingZoo AEC environment that steps through recorded matches, decision by
decision, as the seats that made them saw them.

Each episode is one ended match of the log (in turn, or the one `reset(options={"match": ID})`
names). The agent whose decision comes next is selected; its observation and action mask are the
ones the match's dataset rows hold (`replay.steps.decisions`); `step(action)` moves to the next
decision whatever the action, and the agent's info tells what was recorded (`recorded_action`,
`recorded_event`) beside the action it was given (`proposed_action`), so a policy can be scored
against recorded play. At the match's end every agent terminates with the outcome's reward.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import gymnasium
import msgspec
import numpy as np
from pettingzoo import AECEnv

from matchlog.engines import get as get_engine
from matchlog.engines.encodings import encoding
from matchlog.engines.views import shown_state
from matchlog.events import MatchEnded, Record, UsageError
from matchlog.replay import timeline
from matchlog.replay.steps import Decision, decisions

__all__ = ["ReplayEnv"]


class ReplayEnv(AECEnv):
    """Recorded matches of one game as episodes (see the module docstring): `log` is a `matchlog.Log`
    (or anything with its `matches` and `read`); `matches` chooses them (default: every ended match
    of `game`, oldest first). All must share one table size and encoding shape."""

    def __init__(
        self,
        log: Any,
        *,
        game: str,
        matches: Sequence[UUID | str] | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        engine = get_engine(game)
        code = encoding(game)
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode is None or 'ansi', not {render_mode!r}", code="usage.render")
        if matches is None:
            found = [info.match_id for info in reversed(log.matches(game=game)) if info.status != "running"]
        else:
            found = [log.info(match).match_id for match in matches]
        if not found:
            raise UsageError(f"the log has no ended {game} match to replay", code="usage.empty")
        self.log = log
        self.game = game
        self.engine = engine
        self.encoding = code
        self.render_mode = render_mode
        self.match_ids = found
        first = log.read(found[0], stop=0)
        start = engine.start(first[0].event)
        self._shape = code.shape(start)
        self._size = code.actions(start)
        count = len(start.names)
        low, high = code.bounds(start)
        self.possible_agents = [f"player_{i}" for i in range(count)]
        self._observation_space = gymnasium.spaces.Box(low, high, self._shape, np.float32)
        self._action_space = gymnasium.spaces.Discrete(self._size)
        self.metadata = {"name": f"matchlog_{game}_replay_v0", "render_modes": ["ansi"], "is_parallelizable": False}
        self._next = 0
        self._records: list[Record] = []
        self._rows: list[Decision] = []
        self._states: dict[int, Any] = {}
        self._final: Any = None
        self._at = 0
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return self._observation_space

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return self._action_space

    # -- an episode ----------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Replay the next match (or the one `options["match"]` names; with `seed`, the match at
        that place in the list, counting round).

        Raises:
            UnknownMatch: the match named is not in the log.
            UsageError: it is of another game or table size than this environment's.
        """
        if options and options.get("match") is not None:
            match_id = self.log.info(options["match"]).match_id
        else:
            if seed is not None:
                self._next = seed % len(self.match_ids)
            match_id = self.match_ids[self._next % len(self.match_ids)]
            self._next += 1
        records = self.log.read(match_id)
        start = self.engine.start(records[0].event)
        if records[0].event.game != self.game or self.encoding.shape(start) != self._shape:  # type: ignore[attr-defined]
            message = f"match {match_id} is not a {self.game} match of this environment's size"
            raise UsageError(message, code="usage.env")
        self._records = records
        self._rows = decisions(records)
        steps = list(timeline(records))
        self._states = {step.record.seq: step.before for step in steps}
        self._final = steps[-1].after
        self._at = 0
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._show()

    def step(self, action: Any) -> None:
        """Move to the next recorded decision; `action` (an index, or None) is kept in the agent's
        info beside what was recorded.

        Raises:
            UsageError: an action outside the action space.
        """
        agent = self.agent_selection
        if self.terminations.get(agent) or self.truncations.get(agent):
            self._was_dead_step(action)
            return
        if action is not None and not self._action_space.contains(action):
            raise UsageError(f"action {action!r} is not in the action space of {self.game}", code="usage.action")
        self._cumulative_rewards[agent] = 0.0
        self.infos[agent] = {**self.infos[agent], "proposed_action": None if action is None else int(action)}
        self._at += 1
        self._show()
        self._accumulate_rewards()

    def observe(self, agent: str) -> np.ndarray:
        seat = self.possible_agents.index(agent)
        if self._at < len(self._rows) and self._rows[self._at].seat == seat:
            return np.asarray(self._rows[self._at].observation, dtype=np.float32)
        view = shown_state(self.engine, self._state(), seat)
        return np.asarray(self.encoding.observe(view, seat), dtype=np.float32)

    def render(self) -> str | None:
        """The table as the selected agent sees it, as text (render_mode "ansi")."""
        if self.render_mode != "ansi" or not self.agents:
            return None
        seat = self.possible_agents.index(self.agent_selection)
        return self.engine.render(shown_state(self.engine, self._state(), seat))

    def close(self) -> None:
        """Nothing to release: the records are read at each reset."""

    @property
    def match_id(self) -> UUID | None:
        """The match being replayed."""
        return self._records[0].match_id if self._records else None

    # -- the record ----------------------------------------------------------------------------

    def _state(self) -> Any:
        """The whole state before the current decision (after the last one, the final state)."""
        if self._at < len(self._rows):
            return self._states[self._rows[self._at].seq]
        return self._final

    def _show(self) -> None:
        """Select the agent of the current decision, or end the episode after the last one."""
        self._clear_rewards()
        if self._at < len(self._rows):
            row = self._rows[self._at]
            agent = self.possible_agents[row.seat]
            self.agent_selection = agent
            mask = np.zeros(self._size, dtype=np.int8)
            mask[row.legal] = 1
            for other in self.agents:
                if other != agent:
                    self.infos[other] = {"decision": None, "action_mask": np.zeros(self._size, dtype=np.int8)}
            self.infos[agent] = {
                "decision": row.decision,
                "action_mask": mask,
                "seq": row.seq,
                "recorded_action": row.action,
                "recorded_event": msgspec.to_builtins(row.event),
            }
            return
        ended = next((r.event for r in reversed(self._records) if isinstance(r.event, MatchEnded)), None)
        for agent in self.agents:
            seat = self.possible_agents.index(agent)
            self.rewards[agent] = self.encoding.reward(ended.outcome, seat) if ended is not None else 0.0
            self.terminations[agent] = True
            self.infos[agent] = {"decision": None, "action_mask": np.zeros(self._size, dtype=np.int8)}
        self.agent_selection = self.agents[0]
