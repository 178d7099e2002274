"""The registry: every game by name, as the `matchlog.games` entry point registers them.

The games are found once, at first use (`events.plugins`): ours through matchlog's own
`pyproject.toml`, any other package's through its own. A game of a `Family` is named
`family:member` (`openspiel:kuhn_poker`) and built when first asked for. A plugin that failed to
load is not a game here; `failures()` names it with the reason, and the other games work.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

from matchlog.events import UsageError, plugins

from .contract import Engine
from .plugin import Family, Game

__all__ = ["GAMES", "failures", "families", "game", "get", "known", "names", "split_name"]

_lock = threading.Lock()


def _loaded() -> Mapping[str, Any]:
    return plugins.load().games


def families() -> dict[str, Family]:
    """Every family of games, by its name."""
    return {name: found for name, found in _loaded().items() if isinstance(found, Family)}


def failures() -> Mapping[str, str]:
    """Each game plugin that failed to load, by its entry point's name, with the reason."""
    return plugins.failures()


def game(name: str) -> Game:
    """The game called `name` (`family:member` for a family's game).

    Raises:
        UsageError: no game has that name, or its family cannot make it (`usage.game`).
    """
    loaded = _loaded()
    found = loaded.get(name)
    if isinstance(found, Game):
        return found
    family, colon, member = name.partition(":")
    if colon and isinstance(loaded.get(family), Family):
        with _lock:
            return loaded[family].game(member)
    broken = failures().get(name) or failures().get(family)
    if broken is not None:
        raise UsageError(f"the game {name!r} is installed but did not load: {broken}", code="usage.game")
    raise UsageError(f"no game called {name!r}; games: {', '.join(_listed())}", code="usage.game")


def get(name: str) -> Engine[Any]:
    """The engine of the game called `name`.

    Raises:
        UsageError: no game has that name.
    """
    return game(name).engine


def known(name: str) -> Engine[Any] | None:
    """The engine of the game called `name`, or None for a game this matchlog cannot load (its
    plugin not installed, or broken)."""
    try:
        return get(name)
    except UsageError:
        return None


def split_name(text: str) -> tuple[str, dict[str, Any]]:
    """A game as a user names it (`fish`, `openspiel:leduc_poker(players=3)`): its name, and the
    options its parameters set (for a family's game).

    Raises:
        UsageError: a family's game named with parameters it cannot read (`usage.game`).
    """
    family, colon, member = text.partition(":")
    found = _loaded().get(family)
    if colon and isinstance(found, Family):
        name, options = found.split(member)
        return f"{family}:{name}", options
    return text, {}


def names() -> list[str]:
    """The names of every game registered (a family's games are named as they are played)."""
    return sorted(name for name, found in _loaded().items() if isinstance(found, Game))


def _listed() -> list[str]:
    return [*names(), *(f"{name}:GAME" for name in sorted(families()))]


class _Games(Mapping[str, Engine[Any]]):
    """Every registered game's engine by name (a family's games once made), read at each use."""

    def _engines(self) -> dict[str, Engine[Any]]:
        return {name: found.engine for name, found in _loaded().items() if isinstance(found, Game)}

    def __getitem__(self, name: str) -> Engine[Any]:
        return self._engines()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._engines())

    def __len__(self) -> int:
        return len(self._engines())


#: Every registered game's engine by name (a read-only view of the registry).
GAMES: Mapping[str, Engine[Any]] = _Games()
