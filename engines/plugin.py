"""What a game brings: the object a package registers through the `matchlog.games` entry point.

A `Game` is everything matchlog needs to record, replay, audit, prove, rate, show and learn from a
game, in one place: its engine (the rules, `engines.contract`, with its `views` and `figures`),
its event types (each tag under the game's name), and, each optional, what the layers above the
rules use:

    referee    its player protocol (a runner: (referee, player channels, chance's rng) -> outcome);
               without one, the generic protocol (`referee.generic`): `act(decision) -> answer`,
               with `answer(event)` the raw answer that proposes an event (what `parse` reads)
    players    its built-in players, {name: (factory(rng), summary)}; every game also gets `random`
    board      its drawing model for the viewer (a function of a state as one reader sees it, to a
               msgspec Struct tagged with the game's name: `board_type`), and `script` the ES module
               that draws it (`export function draw(model, options) -> SVGElement`); without one
               the viewer shows the state as text (the engine's `render`) beside the event list
    encoding   its tensors and action indices for learners (`engines.encodings.Encoding`); without
               one, datasets and environments refuse the game with `usage.encoding`
    analysers  its analysers (a table per game, for annotations); empty by default

A part that belongs to a layer above the engines (the referee's protocol, say) may be given as the
text "module:attribute", imported only when that layer asks for it, so loading a game's rules never
loads its players. A `Family` is many games behind one entry point (OpenSpiel's): it names each
game `family:game` and builds its `Game` when first asked for.

A bad `Game` raises `TypeError` when it is made, that is, when its plugin is loaded: matchlog
names it with the reason (`matchlog games`) and goes on with the others.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from matchlog.events import Event, UsageError

from .contract import GameSpec

__all__ = ["Family", "Game", "resolve"]

#: What every engine must have (`engines.contract.Engine`).
_ENGINE = (
    "start",
    "apply",
    "to_act",
    "chance",
    "chance_outcomes",
    "check_chance",
    "tally",
    "legal",
    "parse",
    "check",
    "outcome",
    "view",
    "render",
    "describe",
)


def resolve(part: Any) -> Any:
    """A part given as "module:attribute", imported; any other part as it is.

    Raises:
        UsageError: the module or the attribute is not there (`usage.plugin`).
    """
    if not isinstance(part, str):
        return part
    module, _, attribute = part.partition(":")
    try:
        found: Any = importlib.import_module(module)
        for name in attribute.split(".") if attribute else ():
            found = getattr(found, name)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"cannot load {part}: {error}", code="usage.plugin") from None
    return found


class Game:
    """One game as a plugin: its engine and event types, and the optional parts the module
    docstring lists.

    Raises:
        TypeError: the engine lacks part of the contract, or a part is of the wrong kind.
    """

    #: What `events.plugins` looks for: this object is a game.
    matchlog_game = True

    def __init__(
        self,
        engine: Any,
        events: tuple[type[Event], ...],
        *,
        referee: Any = None,
        players: Mapping[str, tuple[Callable[..., object], str]] | str | None = None,
        board: Callable[[Any], msgspec.Struct] | None = None,
        board_type: type[msgspec.Struct] | None = None,
        script: str | Path | None = None,
        encoding: Any = None,
        analysers: Mapping[str, Any] | str | None = None,
        answer: Callable[[Event], object] | None = None,
    ) -> None:
        spec = getattr(engine, "spec", None)
        if not isinstance(spec, GameSpec):
            raise TypeError(f"{type(engine).__name__} has no spec (a GameSpec)")
        missing = [name for name in _ENGINE if not callable(getattr(engine, name, None))]
        if missing:
            raise TypeError(f"the engine of {spec.name} lacks {', '.join(missing)}")
        if not isinstance(getattr(engine, "views", None), Mapping):
            raise TypeError(f"the engine of {spec.name} declares no views (what each seat sees of each event)")
        if not isinstance(getattr(engine, "figures", None), Mapping):
            raise TypeError(f"the engine of {spec.name} declares no figures (what each figure is derived from)")
        if not isinstance(events, tuple):
            raise TypeError(f"the events of {spec.name} are not a tuple of event types")
        if (board is None) != (board_type is None):
            raise TypeError(f"{spec.name}: a board needs its board_type, and the other way round")
        if board_type is not None and board_type.__struct_config__.tag != spec.name:
            raise TypeError(f"{spec.name}'s board_type must be tagged with the game's name (tag={spec.name!r})")
        if script is not None and board is None:
            raise TypeError(f"{spec.name}: a script draws a board: give the board too")
        self.engine = engine
        self.events = events
        self.referee = referee
        self._players = players
        self.board = board
        self.board_type = board_type
        self.script = None if script is None else Path(script)
        self._encoding = encoding
        self._analysers = analysers
        #: The raw answer a player gives to propose an event (the inverse of the engine's `parse`),
        #: what the generic protocol offers a player as its legal answers; None: the event's fields.
        self.answer = answer

    @property
    def name(self) -> str:
        """The game's name: its engine's, its entry point's, and the namespace of its tags."""
        return self.engine.spec.name

    @property
    def spec(self) -> GameSpec:
        """The game declared as data (its engine's)."""
        return self.engine.spec

    def players(self) -> Mapping[str, tuple[Callable[..., object], str]]:
        """Its built-in players, {name: (factory(rng), summary)} (the referee's own are registered
        by its protocol's module, loaded with `referee`).

        Raises:
            UsageError: a part given as "module:attribute" does not load.
        """
        return dict(resolve(self._players) or {})

    def encoding(self) -> Any:
        """Its encoding for learners, or None.

        Raises:
            UsageError: a part given as "module:attribute" does not load.
        """
        return resolve(self._encoding)

    def analysers(self) -> Mapping[str, Any]:
        """Its analysers by name (none by default).

        Raises:
            UsageError: a part given as "module:attribute" does not load.
        """
        return dict(resolve(self._analysers) or {})

    def __repr__(self) -> str:
        return f"Game({self.name!r})"


_MEMBER = re.compile(r"^(?P<member>[A-Za-z0-9_]{1,60})(?:\((?P<params>.*)\))?$")


class Family:
    """Many games behind one entry point: `family:member` names a game (`openspiel:kuhn_poker`),
    built by `make(member, text)` when first asked for; `available()` says why none can be (a
    library not installed), else None. Its events are the family's, shared by every member.

    `make(member)` builds the member's `Game`; `parameters(text)` reads the parameters given in a
    name (`players=3` of `leduc_poker(players=3)`) into the options a match records, so a replay
    builds the same game."""

    matchlog_game = True

    def __init__(
        self,
        name: str,
        title: str,
        events: tuple[type[Event], ...],
        make: Callable[[str], Game],
        *,
        parameters: Callable[[str], dict[str, Any]] | None = None,
        available: Callable[[], str | None] = lambda: None,
        examples: tuple[str, ...] = (),
        figures: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.title = title
        self.events = events
        self._make = make
        self._parameters = parameters
        self.available = available
        self.examples = examples
        #: What each figure its games count is derived from (every member declares the same).
        self.figures: Mapping[str, Any] = dict(figures or {})
        self._made: dict[str, Game] = {}

    def game(self, member: str) -> Game:
        """The game `family:member`, built the first time.

        Raises:
            UsageError: the family cannot be used here, or has no such game (`usage.game`).
        """
        made = self._made.get(member)
        if made is None:
            reason = self.available()
            if reason is not None:
                raise UsageError(f"{self.name} games cannot be played here: {reason}", code="usage.game")
            made = self._made[member] = self._make(member)
        return made

    def split(self, text: str) -> tuple[str, dict[str, Any]]:
        """A member given with parameters (`leduc_poker(players=3)`) as its name and the options
        the parameters set.

        Raises:
            UsageError: the text is not a member's name with parameters (`usage.game`).
        """
        named = _MEMBER.match(text)
        if named is None:
            raise UsageError(
                f"{self.name}:{text} is not a game's name (name or name(key=value,...))", code="usage.game"
            )
        params = named["params"]
        if params is None or self._parameters is None:
            if params:
                raise UsageError(f"{self.name} games take no parameters", code="usage.game")
            return named["member"], {}
        return named["member"], self._parameters(params)

    def __repr__(self) -> str:
        return f"Family({self.name!r})"
