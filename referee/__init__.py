"""Live matches: the generic referee loop, each game's player protocol, built-in players, series."""

from .calls import PlayerCalls, Reply
from .knockout import KnockoutResult, run_knockout
from .match import GameProtocol, MemoryRecorder, Recorder, Referee, Resumption, StoreRecorder
from .play import DEFAULT_TIMEOUT, RUNNERS, MatchResult, SeriesResult, play_match, play_series, resume_match
from .players import builtin_names, make_player, register_builtin, seats_from_specs
from .porrinha import PorrinhaProtocol, RandomPlayer, ReasonerPlayer, Table

__all__ = [
    "DEFAULT_TIMEOUT",
    "RUNNERS",
    "GameProtocol",
    "KnockoutResult",
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
    "seats_from_specs",
]
