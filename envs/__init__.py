"""Environments for learners (PettingZoo's AEC API): play matchlog's games, or step through
recorded matches, with the observations and action masks a `matchlog dataset` holds.

    import matchlog.envs
    env = matchlog.envs.make("backgammon")            # a GameEnv; log=... records every episode
    replay = matchlog.envs.replay(log, game="porrinha")  # a ReplayEnv over a log's matches

Needs the `envs` extra (`pip install 'matchlog[envs]'`: PettingZoo, Gymnasium, NumPy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from matchlog.events import UsageError

if TYPE_CHECKING:
    from .game import GameEnv
    from .recorded import ReplayEnv

__all__ = ["GameEnv", "ReplayEnv", "make", "replay"]


def make(game: str, **settings: Any) -> GameEnv:
    """A `GameEnv` of `game` (settings: players, options, log, names, render_mode).

    Raises:
        UsageError: no such game or no environment for it, a table size or options it cannot
            take, or PettingZoo is not installed (`usage.extra`).
    """
    return _load("game").GameEnv(game, **settings)


def replay(log: Any, **settings: Any) -> ReplayEnv:
    """A `ReplayEnv` stepping through `log`'s recorded matches (settings: game, matches, render_mode).

    Raises:
        UsageError: as `ReplayEnv` does, or PettingZoo is not installed (`usage.extra`).
    """
    return _load("recorded").ReplayEnv(log, **settings)


def _load(module: str) -> Any:
    """One of the environment modules (they import PettingZoo).

    Raises:
        UsageError: PettingZoo is not installed.
    """
    import importlib

    try:
        return importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError as error:
        if error.name not in ("pettingzoo", "gymnasium", "numpy"):
            raise
        raise UsageError(f"environments need {error.name}: pip install 'matchlog[envs]'", code="usage.extra") from None


def __getattr__(name: str) -> Any:
    if name == "GameEnv":
        return _load("game").GameEnv
    if name == "ReplayEnv":
        return _load("recorded").ReplayEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
