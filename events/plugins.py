"""Games are plugins: every game, ours included, is found through the `matchlog.games` entry point.

A distribution declares its game in its `pyproject.toml`:

    [project.entry-points."matchlog.games"]
    connect4 = "connect4.game:GAME"

and the object named there (a `matchlog.engines.Game`, or a `Family` of games such as OpenSpiel's)
brings the game's name, its event types, its engine and the rest (`matchlog.engines.plugin`).
matchlog's own games register the same way, in matchlog's own `pyproject.toml`.

This module finds them, once, at first use: the codec's vocabulary (every event type the log may
hold) is the lifecycle's events and the events of every game found here, and the registry of
engines is built from the same load. A plugin that fails to load (its import raises, its object
is not a game, its name is not the entry point's, one of its tags is not under its name or is
another game's) is left out and named with the reason (`failures()`); the other games go on
working. The events layer knows a game only as this: a name, its event types, and that it is one
(`matchlog_game`); what an engine must be is checked where the game is built (`engines.plugin`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from types import MappingProxyType
from typing import Any

from .base import Event

__all__ = ["GROUP", "Loaded", "failures", "if_loaded", "load", "on_reload", "reload"]

#: The entry point group a game registers under.
GROUP = "matchlog.games"
#: A game's name: lowercase, a letter first; it is the namespace of its event tags (`fish.penguin_moved`).
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
#: Names a game may not take: the lifecycle's tag namespace and the viewer's generic board.
_RESERVED = frozenset({"match", "text"})


class Loaded:
    """The games found: each plugin object by its name, and each plugin that failed with why."""

    def __init__(self, games: dict[str, Any], failed: dict[str, str]) -> None:
        self.games: Mapping[str, Any] = MappingProxyType(games)
        self.failed: Mapping[str, str] = MappingProxyType(failed)

    @property
    def events(self) -> tuple[type[Event], ...]:
        """Every event type of every game loaded, in the order the games were found."""
        return tuple(kind for game in self.games.values() for kind in game.events)


_lock = threading.RLock()
_listeners: list[Any] = []
_loaded: Loaded | None = None
_loading = False


def load() -> Loaded:
    """The games registered through `matchlog.games`, loaded at the first call and kept."""
    global _loaded, _loading
    if _loaded is not None:
        return _loaded
    with _lock:
        if _loaded is None:
            if _loading:
                raise RuntimeError("a game plugin asked for the games while they were being loaded")
            _loading = True
            try:
                _loaded = _discover(entry_points(group=GROUP))
            finally:
                _loading = False
        return _loaded


def if_loaded() -> Loaded | None:
    """The games, if something has loaded them already (never loads them)."""
    return _loaded


def failures() -> Mapping[str, str]:
    """Each plugin that failed to load, by its entry point's name, with the reason."""
    return load().failed


def reload(found: list[EntryPoint] | None = None) -> Loaded:
    """Find the games again (after a package was installed in this process), or load exactly
    `found` (tests). Whatever was built from the last load (the codec's vocabulary, the registry)
    is built again at its next use."""
    global _loaded
    with _lock:
        _loaded = None
        if found is not None:
            _loaded = _discover(found)
        for listener in _listeners:
            listener()
        return load()


def on_reload(listener: Any) -> None:
    """Call `listener()` whenever the games are found again (what is built from them is dropped)."""
    _listeners.append(listener)


def _discover(found: Any) -> Loaded:
    games: dict[str, Any] = {}
    failed: dict[str, str] = {}
    owners: dict[str, str] = {}  # tag -> the game that has it
    for point in sorted(found, key=lambda point: (point.name, point.value)):
        name = point.name
        if name in games:
            failed[f"{name} ({point.value})"] = f"another package already registers a game called {name!r}"
            continue
        try:
            game = point.load()
            reason = _refusal(name, game, owners)
        except Exception as error:  # a plugin's import may raise anything: it is named, not fatal
            reason = f"{type(error).__name__}: {error}"
        if reason is not None:
            failed[name] = reason
            continue
        games[name] = game
        owners.update((kind.__struct_config__.tag, name) for kind in game.events)
    return Loaded(games, failed)


def _refusal(name: str, game: Any, owners: dict[str, str]) -> str | None:
    """Why `game`, registered as `name`, cannot be a game; None when it can."""
    if not getattr(game, "matchlog_game", False):
        return f"{type(game).__name__} is not a game (make it with matchlog.engines.Game or Family)"
    if not _NAME.match(name) or name in _RESERVED:
        return f"{name!r} is not a game's name (lowercase letters, digits and _, a letter first; not match or text)"
    if game.name != name:
        return f"the entry point is called {name!r} but the game calls itself {game.name!r}"
    events = game.events
    if not isinstance(events, tuple):
        return "its events are not a tuple of event types"
    tags: set[str] = set()
    for kind in events:
        if not (isinstance(kind, type) and issubclass(kind, Event)):
            return f"{kind!r} is not an event type (a subclass of matchlog.events.Event)"
        tag = kind.__struct_config__.tag
        if not isinstance(tag, str) or not tag.startswith(f"{name}."):
            return f"{kind.__name__}'s tag {tag!r} is not under the game's name ({name}.…)"
        if tag in tags or tag in owners:
            return f"the tag {tag!r} is taken twice"
        tags.add(tag)
    return None
