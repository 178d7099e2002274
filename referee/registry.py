"""What each game brings to the referee, by the game's name: its built-in players and its messages.

A game's referee module (`referee/porrinha.py`, ...) registers its built-in players
(`register_builtin`) and the messages of its protocol for players in other processes
(`register_messages`) when it is imported. This registry knows the games only by name: it imports a
game's module the first time that game is asked for, so imports point one way, from the games to
the registry, the channel and the messages they use, never back.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from matchlog.events import UsageError

from .messages import GenericMessages, Messages

if TYPE_CHECKING:
    from matchlog.engines import Game

__all__ = [
    "builtin_names",
    "find_builtin",
    "is_builtin",
    "known_builtins",
    "messages_for",
    "register_builtin",
    "register_messages",
]

_BUILTINS: dict[str, dict[str, tuple[Callable[..., object], str, str | None]]] = {}
_MESSAGES: dict[str, Callable[[int], Messages]] = {}
#: The module of each game that registers its players and messages, imported when first asked for.
_GAMES = {
    "porrinha": "matchlog.referee.porrinha",
    "backgammon": "matchlog.referee.backgammon",
    "davinci": "matchlog.referee.davinci",
    "fish": "matchlog.referee.fish",
}


def _load(game: str) -> None:
    """Import `game`'s referee module, which registers what it brings (once); a game from a plugin
    gets the generic `random` and the players its plugin brings."""
    if game in _GAMES:
        importlib.import_module(_GAMES[game])
    elif game not in _BUILTINS and (found := _plugin(game)) is not None and not found.spec.tournament:
        from .generic import RandomPlayer

        register_builtin(game, "random", RandomPlayer, "answers a legal answer, uniformly at random")
        for name, (factory, summary) in found.players().items():
            register_builtin(game, name, factory, summary)


def _plugin(game: str) -> Game | None:
    """The plugin of the game called `game`, or None (no such game, or it did not load)."""
    from matchlog.engines import game as registered

    try:
        return registered(game)
    except UsageError:
        return None


def register_builtin(
    game: str, name: str, factory: Callable[..., object], summary: str, *, argument: str | None = None
) -> None:
    """Make `factory(rng)` the built-in player `name` of `game`; with an `argument` (say "depth"),
    the spec `name:VALUE` calls `factory(rng, VALUE)` too, and plain `name` keeps the factory's default."""
    _BUILTINS.setdefault(game, {})[name] = (factory, summary, argument)


def register_messages(game: str, messages: Callable[[int], Messages]) -> None:
    """Make `messages(seat)` the messages of `game`'s protocol for the player at `seat`."""
    _MESSAGES[game] = messages


def known_builtins(game: str) -> dict[str, tuple[Callable[..., object], str, str | None]]:
    """`game`'s built-in players: each name's factory, summary and argument."""
    _load(game)
    return _BUILTINS.get(game, {})


def builtin_names(game: str) -> dict[str, str]:
    """The built-in players of `game`, with a line on how each plays."""
    return {
        name: f"{summary} (also {name}:{argument.upper()})" if argument else summary
        for name, (_, summary, argument) in sorted(known_builtins(game).items())
    }


def find_builtin(game: str, spec: str) -> tuple[Callable[..., object], str | None] | None:
    """The factory of the built-in player `spec` names, and the argument it gives, or None."""
    known = known_builtins(game)
    if spec in known:
        return known[spec][0], None
    name, colon, value = spec.partition(":")
    if colon and name in known and known[name][2] is not None and value and "/" not in value:
        return known[name][0], value
    return None


def is_builtin(game: str, spec: str) -> bool:
    """Whether `spec` names one of `game`'s built-in players (with its argument, if it takes one)."""
    return find_builtin(game, spec) is not None


def messages_for(game: str, seat: int = 0) -> Messages:
    """The messages of `game`'s protocol for the player at `seat` (a game that spells out none, a
    plugin's: the generic protocol's, `generic.Decision`)."""
    _load(game)
    messages = _MESSAGES.get(game)
    return GenericMessages() if messages is None else messages(seat)
