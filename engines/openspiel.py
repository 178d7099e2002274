"""OpenSpiel's games through one bridge engine: `openspiel:GAME`, any sequential game OpenSpiel has.

The engine asks OpenSpiel everything: who acts (`current_player`, chance included), what is legal
(`legal_actions`), what a chance node may draw (`chance_outcomes`), what each player observes (its
information state string, or its observation string where the game gives no information state)
and how it ended (`returns`). matchlog records each action and each chance outcome as an event;
chance is drawn from the referee's committed seed, so an audit draws it again, and the judge is
OpenSpiel itself, asked again over the recorded actions.

A game is named with its parameters, `openspiel:leduc_poker(players=3)`; they are recorded in the
match's options (`params`), so a replay loads the same game. Where the game has a `players`
parameter and none is given, the table's size is used.

The state is a frozen struct holding the action history and what was read off OpenSpiel after it
(whose turn, each seat's observation, the returns); a seat's view of a game with imperfect
information drops the history and every other seat's observation, so it holds exactly what
OpenSpiel says that seat observes (with OpenSpiel's tensor of it, and the actions legal for it now,
which a learner's encoding reads: `OpenSpielEncoding`). OpenSpiel's own states are rebuilt from the
history (kept in a small cache), never stored.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from typing import Any

import msgspec

from matchlog.events import (
    ActionHidden,
    ActionsUndone,
    ActionTaken,
    AnswerRejected,
    ChanceCommitted,
    ChanceDrawn,
    ChanceHidden,
    ChanceRevealed,
    Event,
    IllegalAction,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Outcome,
    PlayerRemoved,
    UsageError,
)
from matchlog.events import openspiel as openspiel_events

from .contract import CHANCE, GameSpec, Rule, Turn, describe_lifecycle, parse_options
from .encodings import NO_ACTION, place_reward
from .plugin import Family, Game
from .views import (
    Derived,
    declare,
    declare_figures,
    everyone,
    lifecycle,
    private,
    secret,
    shared_figures,
    withheld_answer,
)

__all__ = ["FAMILY", "OpenSpiel", "OpenSpielEncoding", "OpenSpielOptions", "OpenSpielRule", "OpenSpielState"]

#: OpenSpiel's player id of a finished game.
_TERMINAL = -4
#: OpenSpiel's states rebuilt from a history, kept for the next event (folding stays linear).
_CACHED = 512


class OpenSpielRule:
    """The bridge's codes for answers OpenSpiel refuses."""

    ILLEGAL = "openspiel.illegal_action"
    MALFORMED = "openspiel.malformed"


class OpenSpielOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The game's parameters, as OpenSpiel takes them (`players`, `winscore`, ...)."""

    params: dict[str, int | float | bool | str] = msgspec.field(default_factory=dict)


class OpenSpielState(msgspec.Struct, frozen=True, kw_only=True):
    """A match of an OpenSpiel game after some events: the action history (None in a seat's view of
    a game with imperfect information), OpenSpiel's current player (a seat, CHANCE, or -4 when it is
    over), what each seat observes now (in a seat's view: its own only), the returns once it is
    over, and matchlog's own: removed seats and whether the match was ended. A seat's view of a
    game with imperfect information also holds OpenSpiel's tensor of what that seat observes and
    the actions legal for it now (the whole state has neither: its history rebuilds them)."""

    params: dict[str, int | float | bool | str]
    names: tuple[str, ...]
    history: tuple[int, ...] | None
    current: int
    seen: tuple[str, ...]
    returns: tuple[float, ...] | None = None
    moves: int = 0
    removed: tuple[int, ...] = ()
    ended: bool = False
    tensor: tuple[float, ...] | None = None
    legal_actions: tuple[int, ...] | None = None


def _pyspiel() -> Any:
    import pyspiel

    return pyspiel


def _available() -> str | None:
    try:
        _pyspiel()
    except ImportError:
        return "the open_spiel package is not installed (pip install 'matchlog[openspiel]')"
    return None


class OpenSpiel:
    """The bridge engine of one OpenSpiel game (its short name, e.g. `kuhn_poker`)."""

    def __init__(self, short_name: str) -> None:
        pyspiel = _pyspiel()
        if short_name not in pyspiel.registered_names():
            raise UsageError(
                f"OpenSpiel has no game {short_name!r} (pyspiel.registered_names() lists them)", code="usage.game"
            )
        kind = pyspiel.load_game(short_name).get_type()
        if kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
            raise UsageError(
                f"openspiel:{short_name} has simultaneous moves: matchlog records turns", code="usage.game"
            )
        self.short_name = short_name
        self._kind = kind
        self._observe = (
            "information_state_string"
            if kind.provides_information_state_string
            else "observation_string"
            if kind.provides_observation_string
            else None
        )
        #: OpenSpiel's tensor of what a player observes, as its string (the information state's
        #: where the game gives one), for learners; None: the game gives no tensor.
        self.tensor = (
            "information_state_tensor"
            if kind.provides_information_state_tensor
            else "observation_tensor"
            if kind.provides_observation_tensor
            else None
        )
        hidden = kind.information != pyspiel.GameType.Information.PERFECT_INFORMATION
        self.spec = GameSpec(
            name=f"openspiel:{short_name}",
            title=f"{kind.long_name} (OpenSpiel)",
            min_players=kind.min_num_players,
            max_players=kind.max_num_players,
            chance=kind.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC,
            hidden=hidden,
            options=OpenSpielOptions,
            state=OpenSpielState,
        )
        if hidden:
            # Another seat's action, and chance, show only as that they happened: what a seat
            # learns of them is in its own observation (its view of the state).
            self.views = declare(
                lifecycle(hidden=True, rejected=private(withheld_answer)),
                {
                    ActionTaken: private(lambda event: ActionHidden(seat=event.seat)),  # type: ignore[attr-defined]
                    ChanceDrawn: secret(lambda event: ChanceHidden()),
                    ActionHidden: everyone,
                    ChanceHidden: everyone,
                },
            )
        else:
            self.views = declare(
                lifecycle(hidden=False),
                {ActionTaken: everyone, ChanceDrawn: everyone, ActionHidden: everyone, ChanceHidden: everyone},
            )
        self.figures = FIGURES
        self._lock = threading.Lock()
        self._games: dict[tuple[tuple[str, Any], ...], Any] = {}
        self._states: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    # -- OpenSpiel's own objects -------------------------------------------------------------

    def _game(self, params: dict[str, Any]) -> Any:
        key = tuple(sorted(params.items()))
        with self._lock:
            game = self._games.get(key)
            if game is None:
                try:
                    game = _pyspiel().load_game(self.short_name, dict(params))
                except Exception as error:  # pyspiel raises its own errors for bad parameters
                    raise UsageError(f"{self.spec.name}{_params_text(params)}: {error}", code="usage.options") from None
                _check_size(f"{self.spec.name}{_params_text(params)}", game)
                self._games[key] = game
            return game

    def _spiel(self, state: OpenSpielState) -> Any:
        """OpenSpiel's state after the history of `state` (the whole state, not a view)."""
        if state.history is None:
            raise UsageError("a seat's view holds no history to rebuild OpenSpiel's state from", code="usage.view")
        key = (tuple(sorted(state.params.items())), state.history)
        with self._lock:
            cached = self._states.get(key)
            if cached is not None:
                self._states.move_to_end(key)
                return cached.clone()
        game = self._game(state.params)
        history = state.history
        with self._lock:
            shorter = self._states.get((key[0], history[:-1])) if history else None
        if shorter is not None:
            spiel = shorter.clone()
            spiel.apply_action(history[-1])
        else:
            spiel = game.new_initial_state()
            for action in history:
                spiel.apply_action(action)
        with self._lock:
            self._states[key] = spiel.clone()
            while len(self._states) > _CACHED:
                self._states.popitem(last=False)
        return spiel

    def _read(self, state: OpenSpielState, history: tuple[int, ...]) -> OpenSpielState:
        """`state` with `history` and what OpenSpiel says after it."""
        grown = msgspec.structs.replace(state, history=history)
        spiel = self._spiel(grown)
        players = len(state.names)
        seen = tuple(self._seen(spiel, seat) for seat in range(players))
        returns = tuple(float(r) for r in spiel.returns()) if spiel.is_terminal() else None
        current = _TERMINAL if spiel.is_terminal() else (CHANCE if spiel.is_chance_node() else spiel.current_player())
        return msgspec.structs.replace(grown, current=current, seen=seen, returns=returns, moves=len(history))

    def _seen(self, spiel: Any, seat: int) -> str:
        if self._observe is None:
            return str(spiel)
        return getattr(spiel, self._observe)(seat)

    # -- building and folding ----------------------------------------------------------------

    def start(self, started: MatchStarted) -> OpenSpielState:
        options: OpenSpielOptions = parse_options(self.spec, started.options)
        params = dict(options.params)
        seats = len(started.seats)
        if "players" in self._game({}).get_parameters() and "players" not in params:
            params["players"] = seats  # the table's size, as OpenSpiel's parameter
        game = self._game(params)
        if game.num_players() != seats:
            raise UsageError(
                f"{self.spec.name}{_params_text(params)} is played by {game.num_players()} players, not {seats}",
                code="usage.players",
            )
        if started.position is not None:
            raise UsageError(f"{self.spec.name} starts from no position but its own", code="usage.position")
        names = tuple(seat.name for seat in started.seats)
        empty = OpenSpielState(params=params, names=names, history=(), current=CHANCE, seen=("",) * seats)
        return self._read(empty, ())

    def apply(self, state: OpenSpielState, event: Event) -> OpenSpielState:
        match event:
            case ActionTaken(action=action) | ChanceDrawn(outcome=action):
                return self._read(state, (*(state.history or ()), action))
            case ActionHidden() | ChanceHidden():
                return msgspec.structs.replace(state, moves=state.moves + 1)
            case PlayerRemoved(seat=seat):
                return msgspec.structs.replace(state, removed=(*state.removed, seat))
            case MatchEnded():
                return msgspec.structs.replace(state, ended=True)
            case AnswerRejected() | ChanceCommitted() | ChanceRevealed() | MatchResumed():
                return state
            case MatchStarted() | ActionsUndone():
                return state
        raise IllegalAction(Rule.WRONG_DECISION, f"{self.spec.name} has no event {event.tag}")

    # -- whose turn, and what may happen ------------------------------------------------------

    def to_act(self, state: OpenSpielState) -> Turn | None:
        if state.ended or state.removed or state.current == _TERMINAL:
            return None
        if state.current == CHANCE:
            return Turn(CHANCE, "chance")
        return Turn(state.current, "act")

    def _outcomes(self, state: OpenSpielState) -> list[tuple[int, float]]:
        if self.to_act(state) != Turn(CHANCE, "chance"):
            return []
        return [(int(action), float(p)) for action, p in self._spiel(state).chance_outcomes() if p > 0]

    def chance(self, state: OpenSpielState, rng: random.Random) -> Event:
        outcomes = self._outcomes(state)
        point = rng.random() * sum(p for _, p in outcomes)
        for action, p in outcomes:
            point -= p
            if point < 0:
                return ChanceDrawn(outcome=action)
        return ChanceDrawn(outcome=outcomes[-1][0])

    def chance_outcomes(self, state: OpenSpielState) -> tuple[Event, ...]:
        outcomes = self._outcomes(state)
        if len({p for _, p in outcomes}) > 1:
            return ()  # not equally likely: judged by `check_chance`
        return tuple(ChanceDrawn(outcome=action) for action, _ in outcomes)

    def check_chance(self, state: OpenSpielState, event: Event) -> None:
        possible = {action for action, _ in self._outcomes(state)}
        if not isinstance(event, ChanceDrawn) or event.outcome not in possible:
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"OpenSpiel's chance could not record {event!r} here")

    def tally(
        self, before: OpenSpielState, event: Event, after: OpenSpielState
    ) -> tuple[tuple[int | None, str, float], ...]:
        match event:
            case ActionTaken(seat=seat) | ActionHidden(seat=seat):
                return ((seat, "actions", 1.0),)
        return ()

    def legal(self, state: OpenSpielState, seat: int) -> tuple[Event, ...]:
        if self.to_act(state) != Turn(seat, "act"):
            return ()
        if state.history is None:  # a seat's view: the actions OpenSpiel gave it (none for another seat)
            actions: Any = state.legal_actions or ()
        else:
            actions = self._spiel(state).legal_actions(seat)
        return tuple(ActionTaken(seat=seat, action=int(action)) for action in actions)

    def parse(self, state: OpenSpielState, seat: int, answer: object) -> Event:
        if isinstance(answer, int) and not isinstance(answer, bool):
            return ActionTaken(seat=seat, action=answer)
        if isinstance(answer, str) and self.to_act(state) == Turn(seat, "act"):
            spiel = self._spiel(state)
            for action in spiel.legal_actions(seat):
                if spiel.action_to_string(seat, action) == answer:
                    return ActionTaken(seat=seat, action=int(action))
        raise IllegalAction(OpenSpielRule.MALFORMED, "an answer is one of OpenSpiel's legal action numbers")

    def check(self, state: OpenSpielState, seat: int, action: Event) -> None:
        turn = self.to_act(state)
        if turn is None:
            raise IllegalAction(Rule.MATCH_OVER, "the match is over")
        if turn.seat != seat:
            raise IllegalAction(Rule.NOT_YOUR_TURN, f"it is not seat {seat}'s turn")
        if not isinstance(action, ActionTaken):
            raise IllegalAction(Rule.WRONG_DECISION, f"{action.tag} is not an action")
        legal = self._spiel(state).legal_actions(seat)
        if action.action not in legal:
            raise IllegalAction(
                OpenSpielRule.ILLEGAL, f"action {action.action} is not legal now (legal: {list(legal)})"
            )

    # -- how it ended, and what a seat sees --------------------------------------------------

    def outcome(self, state: OpenSpielState) -> Outcome | None:
        if self.to_act(state) is not None:
            return None
        players = len(state.names)
        if state.removed:
            places = tuple(players if seat in state.removed else 1 for seat in range(players))
            winners = tuple(seat for seat in range(players) if seat not in state.removed)
            return Outcome(places=places, winners=winners, result="removed", removed=state.removed)
        if state.returns is None:  # ended before OpenSpiel's end (abandoned)
            return Outcome(places=(1,) * players, winners=(), result="abandoned")
        returns = state.returns
        places = tuple(1 + sum(other > mine for other in returns) for mine in returns)
        winners = tuple(seat for seat, place in enumerate(places) if place == 1)
        return Outcome(places=places, winners=winners, scores=returns)

    def view(self, state: OpenSpielState, seat: int | None) -> OpenSpielState:
        if not self.spec.hidden:
            return state
        seen = tuple(text if index == seat else "" for index, text in enumerate(state.seen))
        if state.history is None or seat is None:  # a view already, or a spectator's: no seat's tensor
            return msgspec.structs.replace(state, history=None, seen=seen)
        spiel = self._spiel(state)
        tensor = None if self.tensor is None else tuple(float(x) for x in getattr(spiel, self.tensor)(seat))
        legal = () if spiel.is_terminal() else tuple(int(action) for action in spiel.legal_actions(seat))
        return msgspec.structs.replace(state, history=None, seen=seen, tensor=tensor, legal_actions=legal)

    # -- showing a state ---------------------------------------------------------------------

    def render(self, state: OpenSpielState) -> str:
        turn = self.to_act(state)
        who = (
            "over" if turn is None else "chance to draw" if turn.seat == CHANCE else f"{state.names[turn.seat]} to act"
        )
        lines = [f"{self.spec.title} · {state.moves} moves · {who}"]
        if state.history is not None:
            lines.append(str(self._spiel(state)))
        else:
            lines += [f"{state.names[seat]} observes: {text}" for seat, text in enumerate(state.seen) if text]
        if state.returns is not None:
            lines.append(
                "returns: "
                + ", ".join(f"{name} {value:g}" for name, value in zip(state.names, state.returns, strict=True))
            )
        return "\n".join(lines)

    def describe(self, before: OpenSpielState, event: Event, after: OpenSpielState) -> str:
        shared = describe_lifecycle(before.names, event)
        if shared is not None:
            return shared
        match event:
            case ActionTaken(seat=seat, action=action):
                return f"{before.names[seat]} plays {self._said(before, seat, action)}"
            case ChanceDrawn(outcome=outcome):
                return f"chance draws {self._said(before, CHANCE, outcome)}"
            case ActionHidden(seat=seat):
                return f"{before.names[seat]} acts"
            case ChanceHidden():
                return "chance draws"
        return event.tag

    def _said(self, state: OpenSpielState, player: int, action: int) -> str:
        if state.history is None:
            return f"action {action}"
        return f"{self._spiel(state).action_to_string(player, action)} (action {action})"


class OpenSpielEncoding:
    """An OpenSpiel game for learners, in OpenSpiel's own terms.

    Observation: OpenSpiel's tensor of what the seat observes, its information state tensor where
    the game gives one, else its observation tensor (`information_state_tensor_size()` or
    `observation_tensor_size()` values, flat; OpenSpiel states no bounds, so neither does this).

    Actions: OpenSpiel's action numbers, `num_distinct_actions()` of them; the reward is the
    seat's return.
    """

    def __init__(self, engine: OpenSpiel) -> None:
        self.engine = engine
        self.game = engine.spec.name

    def _size(self, state: OpenSpielState) -> int:
        return int(self.engine._game(state.params).num_distinct_actions())

    def shape(self, start: OpenSpielState) -> tuple[int, ...]:
        game = self.engine._game(start.params)
        return (int(getattr(game, f"{self.engine.tensor}_size")()),)

    def bounds(self, start: OpenSpielState) -> tuple[float, float]:
        return float("-inf"), float("inf")

    def observe(self, view: OpenSpielState, seat: int) -> list[float]:
        if view.tensor is not None:
            return list(view.tensor)
        # A game that hides nothing: the view is the whole state, whose history rebuilds OpenSpiel's.
        return [float(x) for x in getattr(self.engine._spiel(view), str(self.engine.tensor))(seat)]

    def actions(self, start: OpenSpielState) -> int:
        return self._size(start)

    def action_of(self, view: OpenSpielState, event: Event) -> int:
        if isinstance(event, ActionTaken) and 0 <= event.action < self._size(view):
            return event.action
        return NO_ACTION

    def event_of(self, view: OpenSpielState, seat: int, index: int) -> Event:
        size = self._size(view)
        if not 0 <= index < size:
            raise UsageError(f"action {index} is not in the action space (0 to {size - 1})", code="usage.action")
        return ActionTaken(seat=seat, action=index)

    def reward(self, outcome: Outcome, seat: int) -> float:
        return outcome.scores[seat] if outcome.scores else place_reward(outcome, seat)


#: Every game of the family counts the same figures: answers, rejections and actions, each over
#: what its reader sees (another seat's action shows as that it acted, so it counts alike).
FIGURES = declare_figures(shared_figures(hidden=True), {"actions": Derived.SEEN})


#: The most moves and distinct actions a game may have: OpenSpiel bounds no parameter, and the judge
#: lists a decision's legal actions and folds every move (every other game bounds its options too).
MAX_MOVES = 100_000
MAX_ACTIONS = 100_000


def _check_size(name: str, game: Any) -> None:
    """Refuse a game with parameters matchlog cannot judge or show.

    Raises:
        UsageError: more moves or actions than matchlog takes, or states OpenSpiel gives as bytes that
            are not UTF-8 (its text of a board of more than 9 rows, say), as `usage.options`.
    """
    for what, count, most in (
        ("moves", game.max_game_length(), MAX_MOVES),
        ("distinct actions", game.num_distinct_actions(), MAX_ACTIONS),
    ):
        if count > most:
            raise UsageError(f"{name} has up to {count:,} {what}, more than {most:,}", code="usage.options")
    try:
        str(game.new_initial_state())
    except UnicodeDecodeError:
        raise UsageError(
            f"{name}: OpenSpiel gives its states as bytes that are not text (UTF-8) with these parameters",
            code="usage.options",
        ) from None


def _params_text(params: dict[str, Any]) -> str:
    return "(" + ",".join(f"{key}={value}" for key, value in sorted(params.items())) + ")" if params else ""


def _parameters(text: str) -> dict[str, Any]:
    """`players=3,winscore=20` as the options a match records (`params`), each value a number,
    true or false where it reads as one, else text.

    Raises:
        UsageError: a parameter that is not KEY=VALUE (`usage.game`).
    """
    params: dict[str, Any] = {}
    for pair in filter(None, (part.strip() for part in text.split(","))):
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"an OpenSpiel parameter is KEY=VALUE, not {pair!r}", code="usage.game")
        try:
            params[key.strip()] = msgspec.json.decode(value.strip())
        except msgspec.DecodeError:
            params[key.strip()] = value.strip()
    return {"params": params}


def _make(member: str) -> Game:
    engine = OpenSpiel(member)
    return Game(
        engine,
        openspiel_events.EVENTS,
        answer=lambda event: event.action,  # type: ignore[attr-defined]
        # A game whose OpenSpiel gives no tensor has no encoding: datasets refuse it.
        encoding=None if engine.tensor is None else OpenSpielEncoding(engine),
    )


#: The entry point's object: every OpenSpiel game, `openspiel:GAME`.
FAMILY = Family(
    "openspiel",
    "any sequential game of OpenSpiel, as openspiel:GAME or openspiel:GAME(KEY=VALUE,...)",
    openspiel_events.EVENTS,
    _make,
    parameters=_parameters,
    available=_available,
    examples=("kuhn_poker", "leduc_poker(players=3)", "tic_tac_toe", "pig(winscore=20)", "backgammon", "connect_four"),
    figures=FIGURES,
)
