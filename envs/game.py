"""`GameEnv`: a PettingZoo AEC environment in which learners play one of matchlog's games, each
episode a match refereed and recorded like any other.

The agents are players of the match. The game's own referee (`referee.play_match`, what `matchlog
play` runs) asks each decision through the game's protocol, judges the answer, rules on a refused
one, draws chance from a committed seed and records every event, into a log when one is given; so a
learner's games verify and audit as any others do. The referee runs on a thread of its own and
hands each question to `step`: one of them runs at a time.

Observations are the game's encoding (`engines.encodings`) of the state as the agent's seat sees it,
the same tensor a dataset's `observation` holds; `infos[agent]["action_mask"]` marks the legal
actions (all zeros while it is not the agent's turn). An action in the space but against the rules
is an answer like any other: the referee records its rejection and the game's ruling.
"""

from __future__ import annotations

import queue
import threading
from typing import Any
from uuid import UUID

import gymnasium
import msgspec
import numpy as np
from pettingzoo import AECEnv

from matchlog.engines import get as get_engine
from matchlog.engines import parse_options
from matchlog.engines.encodings import encoding
from matchlog.engines.views import shown_state
from matchlog.events import Event, MatchStarted, Outcome, Record, Seat, UsageError, uuid7
from matchlog.referee import MemoryRecorder, play_match

from .answers import Answers, answers

__all__ = ["GameEnv"]

#: How long closing an episode waits for its referee to record the match's end.
_CLOSE_SECONDS = 120.0


class _Closed(KeyboardInterrupt):
    """Raised in an episode's referee thread when the environment is reset or closed before the
    match ended: the referee records the match as abandoned, as it does on Ctrl-C."""


_CLOSE = object()


class _Episode:
    """One match in play: the referee's thread, the live state it keeps, and the hand-over of
    questions (to the environment) and answers (to the referee)."""

    def __init__(self, env: GameEnv, seed: int | None) -> None:
        self.questions: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.state: Any = None
        self.recorder = MemoryRecorder() if env.log is None else None
        self.match_id = uuid7()
        players = [_Seat(self, seat, env.answers) for seat in range(len(env.seats))]

        def run() -> None:
            try:
                result = play_match(
                    env.game,
                    env.seats,
                    players,
                    options=env.options,
                    store=env.log,
                    recorder=self.recorder,
                    timeout=None,
                    seed=seed,
                    on_event=self._heard,
                    match_id=self.match_id,
                )
                self.questions.put(("end", result.outcome))
            except _Closed:
                self.questions.put(("closed", None))
            except BaseException as error:  # handed to the environment's thread, which raises it
                self.questions.put(("failed", error))

        self.thread = threading.Thread(target=run, name=f"matchlog-env-{env.game}", daemon=True)
        self.thread.start()

    def _heard(self, event: Event, state: Any) -> None:
        self.state = state

    def ask(self, seat: int) -> Event:
        """The action the environment takes for `seat` (on the referee's thread).

        Raises:
            _Closed: the environment was reset or closed instead.
        """
        self.questions.put(("ask", seat))
        answer = self.answers.get()
        if answer is _CLOSE:
            raise _Closed
        return answer

    def close(self) -> None:
        """End the match if it is in play (recorded as abandoned) and wait for its thread."""
        if self.thread.is_alive():
            self.answers.put(_CLOSE)
            self.thread.join(_CLOSE_SECONDS)


class _Seat:
    """A player of the match whose answers are the environment's actions for its seat."""

    def __init__(self, episode: _Episode, seat: int, answers: Answers) -> None:
        self._episode = episode
        self._seat = seat
        self._answers = answers
        self._pending: Event | None = None

    def __getattr__(self, method: str) -> Any:
        answers = self.__dict__["_answers"]
        if method in answers.decisions:
            return lambda *args: self._decide()
        if method in answers.ahead:
            return lambda *args: self._ahead(method)
        raise AttributeError(method)

    def _decide(self) -> object:
        event = self._pending if self._pending is not None else self._episode.ask(self._seat)
        self._pending = None
        return self._answers.answer(event)

    def _ahead(self, method: str) -> object:
        if self._pending is None:
            self._pending = self._episode.ask(self._seat)
        value = self._answers.ahead[method](self._pending)
        if not value:  # the decision ends here (Da Vinci Code: stop guessing)
            self._pending = None
        return value


class GameEnv(AECEnv):
    """A PettingZoo AEC environment of one game (see the module docstring): agents `player_0`,
    `player_1`, ... sit at seats 0, 1, ...; `log` (a `matchlog.Log` opened for writing, or a
    `Store`) records every episode, else each is kept in memory (`records()`)."""

    def __init__(
        self,
        game: str,
        *,
        players: int | None = None,
        options: dict[str, Any] | None = None,
        log: Any = None,
        names: list[str] | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        engine = get_engine(game)
        code = encoding(game)
        answered = answers(game)
        count = players if players is not None else engine.spec.min_players
        engine.spec.check_players(count)
        if names is not None and len(names) != count:
            raise UsageError(f"{len(names)} names for {count} players", code="usage.players")
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode is None or 'ansi', not {render_mode!r}", code="usage.render")
        self.game = game
        self.engine = engine
        self.encoding = code
        self.answers = answered
        self.options = msgspec.to_builtins(parse_options(engine.spec, options))
        self.seats = tuple(Seat(name, "learner") for name in (names or [f"player_{i}" for i in range(count)]))
        self.log = log
        self.render_mode = render_mode
        start = engine.start(MatchStarted(game=game, options=self.options, seats=self.seats))
        low, high = code.bounds(start)
        self.possible_agents = [f"player_{i}" for i in range(count)]
        self._observation_space = gymnasium.spaces.Box(low, high, code.shape(start), np.float32)
        self._action_space = gymnasium.spaces.Discrete(code.actions(start))
        self.metadata = {"name": f"matchlog_{game}_v0", "render_modes": ["ansi"], "is_parallelizable": False}
        self._episode: _Episode | None = None
        self.agents: list[str] = []

    # -- spaces --------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return self._observation_space

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return self._action_space

    # -- an episode ----------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new match (the one in play, if any, is recorded as abandoned); `seed` seeds its chance.

        Raises:
            MatchlogError: the referee could not start the match (the log refused it, say).
        """
        self._end_episode()
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.agents[0]
        self._episode = _Episode(self, seed)
        self._await()

    def step(self, action: Any) -> None:
        """Answer for the agent whose turn it is: the index of an action in its space (None for an
        agent whose match is over).

        Raises:
            UsageError: the index is outside the action space, or there is no episode (reset first).
        """
        agent = self.agent_selection
        if self.terminations.get(agent) or self.truncations.get(agent):
            self._was_dead_step(action)
            return
        if self._episode is None:
            raise UsageError("reset the environment before stepping it", code="usage.env")
        if action is None or not self._action_space.contains(action):
            raise UsageError(f"action {action!r} is not in the action space of {self.game}", code="usage.action")
        seat = self.possible_agents.index(agent)
        view = shown_state(self.engine, self._episode.state, seat)
        self._cumulative_rewards[agent] = 0.0
        self._episode.answers.put(self.encoding.event_of(view, seat, int(action)))
        self._await()
        self._accumulate_rewards()

    def observe(self, agent: str) -> np.ndarray:
        seat = self.possible_agents.index(agent)
        state = self._episode.state if self._episode is not None else None
        view = shown_state(self.engine, state, seat)
        return np.asarray(self.encoding.observe(view, seat), dtype=np.float32)

    def render(self) -> str | None:
        """The table as the agent whose turn it is sees it, as text (render_mode "ansi")."""
        if self.render_mode != "ansi" or self._episode is None or not self.agents:
            return None
        seat = self.possible_agents.index(self.agent_selection)
        return self.engine.render(shown_state(self.engine, self._episode.state, seat))

    def close(self) -> None:
        """End the match in play, if any (recorded as abandoned)."""
        self._end_episode()

    # -- what the referee recorded -------------------------------------------------------------

    @property
    def match_id(self) -> UUID | None:
        """The match of the current (or last) episode, once its referee has started it."""
        return self._episode.match_id if self._episode is not None else None

    def records(self) -> list[Record]:
        """The current episode's events, unhashed, where no log records them.

        Raises:
            UsageError: the episodes go to a log (read them from it), or there is none yet.
        """
        if self._episode is None or self._episode.recorder is None:
            raise UsageError("the episodes are recorded in the log given, or none has started", code="usage.env")
        return self._episode.recorder.records(self._episode.match_id)

    # -- the hand-over -------------------------------------------------------------------------

    def _await(self) -> None:
        """Wait for the referee's next question (whose decision) or the match's end.

        Raises:
            BaseException: whatever stopped the referee (a log that refused the match, say).
        """
        episode = self._episode
        assert episode is not None
        kind, value = episode.questions.get()
        self._clear_rewards()
        if kind == "failed":
            self._episode = None
            raise value
        if kind == "ask":
            self.agent_selection = self.possible_agents[value]
            turn = self.engine.to_act(episode.state)
            for agent in self.agents:
                self.infos[agent] = self._info(agent, turn.decision if agent == self.agent_selection else None)
            return
        outcome: Outcome = value
        for agent in self.agents:
            seat = self.possible_agents.index(agent)
            self.rewards[agent] = self.encoding.reward(outcome, seat)
            self.terminations[agent] = True
            self.infos[agent] = self._info(agent, None)
        self.agent_selection = self.agents[0]

    def _info(self, agent: str, decision: str | None) -> dict[str, Any]:
        """An agent's info: the decision it is asked (None: it is not its turn) and the action mask."""
        mask = np.zeros(self._action_space.n, dtype=np.int8)
        if decision is not None:
            seat = self.possible_agents.index(agent)
            assert self._episode is not None
            view = shown_state(self.engine, self._episode.state, seat)
            for option in self.engine.legal(view, seat):
                index = self.encoding.action_of(view, option)
                if 0 <= index < len(mask):
                    mask[index] = 1
        return {"decision": decision, "action_mask": mask}

    def _end_episode(self) -> None:
        if self._episode is not None:
            self._episode.close()
