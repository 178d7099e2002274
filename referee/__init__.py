"""Live matches: the generic referee loop, each game's player protocol, built-in players, series.

The names below load on first use, so that the host of a Python player in a child process
(`host.py`) loads the game's protocol without the log's libraries (DuckDB, pyarrow).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .calls import DEFAULT_TIMEOUT, Channel, PlayerCalls, Reply
    from .channel import ChildPlayer
    from .generic import Decision, GenericProtocol
    from .knockout import KnockoutResult, run_knockout
    from .match import GameProtocol, MemoryRecorder, Recorder, Referee, Resumption, StoreRecorder
    from .play import (
        RUNNERS,
        MatchResult,
        SeriesResult,
        play_match,
        play_series,
        resume_match,
        runner,
    )
    from .players import make_player, seats_from_specs, seats_taken_by
    from .porrinha import PorrinhaProtocol, RandomPlayer, ReasonerPlayer, Table
    from .registry import builtin_names, register_builtin
    from .sandbox import Limits

_WHERE = {
    "Channel": ".calls",
    "PlayerCalls": ".calls",
    "Reply": ".calls",
    "ChildPlayer": ".channel",
    "KnockoutResult": ".knockout",
    "run_knockout": ".knockout",
    "GameProtocol": ".match",
    "MemoryRecorder": ".match",
    "Recorder": ".match",
    "Referee": ".match",
    "Resumption": ".match",
    "StoreRecorder": ".match",
    "DEFAULT_TIMEOUT": ".calls",
    "RUNNERS": ".play",
    "MatchResult": ".play",
    "SeriesResult": ".play",
    "play_match": ".play",
    "play_series": ".play",
    "resume_match": ".play",
    "runner": ".play",
    "Decision": ".generic",
    "GenericProtocol": ".generic",
    "builtin_names": ".registry",
    "make_player": ".players",
    "register_builtin": ".registry",
    "seats_from_specs": ".players",
    "seats_taken_by": ".players",
    "PorrinhaProtocol": ".porrinha",
    "RandomPlayer": ".porrinha",
    "ReasonerPlayer": ".porrinha",
    "Table": ".porrinha",
    "Limits": ".sandbox",
}

__all__ = [
    "DEFAULT_TIMEOUT",
    "RUNNERS",
    "Channel",
    "ChildPlayer",
    "Decision",
    "GameProtocol",
    "GenericProtocol",
    "KnockoutResult",
    "Limits",
    "MatchResult",
    "MemoryRecorder",
    "PlayerCalls",
    "PorrinhaProtocol",
    "RandomPlayer",
    "ReasonerPlayer",
    "Recorder",
    "Referee",
    "Reply",
    "Resumption",
    "SeriesResult",
    "StoreRecorder",
    "Table",
    "builtin_names",
    "make_player",
    "play_match",
    "play_series",
    "register_builtin",
    "resume_match",
    "run_knockout",
    "runner",
    "seats_from_specs",
    "seats_taken_by",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
