"""The rules: one pure reducer per game behind one contract, the games as plugins (`Game`,
registered through the `matchlog.games` entry point) and their registry, and the generic lazy game
tree. Engines import only `matchlog.events`; nothing here does I/O."""

from .contract import CHANCE, Engine, GameSpec, Rule, Turn, describe_lifecycle, ordinal, parse_options
from .plugin import Family, Game
from .registry import GAMES, failures, families, game, get, known, names, split_name
from .tree import GameTree

__all__ = [
    "CHANCE",
    "GAMES",
    "Engine",
    "Family",
    "Game",
    "GameSpec",
    "GameTree",
    "Rule",
    "Turn",
    "describe_lifecycle",
    "failures",
    "families",
    "game",
    "get",
    "known",
    "names",
    "ordinal",
    "parse_options",
    "split_name",
]
