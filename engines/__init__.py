"""The rules: one pure reducer per game behind one contract, the registry of games, and the generic
lazy game tree. Engines import only `matchlog.events`; nothing here does I/O."""

from .contract import CHANCE, Engine, GameSpec, Rule, Turn, describe_lifecycle, ordinal, parse_options
from .registry import GAMES, get, names
from .tree import GameTree

__all__ = [
    "CHANCE",
    "GAMES",
    "Engine",
    "GameSpec",
    "GameTree",
    "Rule",
    "Turn",
    "describe_lifecycle",
    "get",
    "names",
    "ordinal",
    "parse_options",
]
