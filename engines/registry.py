"""The registry: every game by name."""

from __future__ import annotations

from typing import Any

from matchlog.events import UsageError

from . import backgammon, davinci, fish, knockout, porrinha
from .contract import Engine

__all__ = ["GAMES", "get", "names"]

GAMES: dict[str, Engine[Any]] = {
    porrinha.ENGINE.spec.name: porrinha.ENGINE,
    backgammon.ENGINE.spec.name: backgammon.ENGINE,
    davinci.ENGINE.spec.name: davinci.ENGINE,
    fish.ENGINE.spec.name: fish.ENGINE,
    knockout.ENGINE.spec.name: knockout.ENGINE,
}


def get(name: str) -> Engine[Any]:
    """The engine of the game called `name`.

    Raises:
        UsageError: no game has that name.
    """
    try:
        return GAMES[name]
    except KeyError:
        raise UsageError(f"no game called {name!r}; games: {', '.join(sorted(GAMES))}", code="usage.game") from None


def names() -> list[str]:
    """The names of every registered game."""
    return sorted(GAMES)
