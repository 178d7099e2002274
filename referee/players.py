"""Players by name: the built-ins of each game, user classes from a file or a module, programs.

A player spec is `random`, `reasoner`, ... (a built-in of the game), `path/to/file.py:Class`,
`package.module:Class`, or `cmd:PROGRAM ARGS...` (any executable speaking docs/protocol.md),
optionally prefixed with the seat's name: `alice=reasoner`. Built-ins play in this process; a user's
class plays in a child process of its own (`channel.ChildPlayer`) unless `in_process` is asked for
(trusted code, for speed); a program always does.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import random
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from matchlog.engines import Game
from matchlog.engines import game as registered
from matchlog.events import Seat, UsageError

if TYPE_CHECKING:
    from .sandbox import Limits

__all__ = [
    "builtin_names",
    "load_player",
    "make_player",
    "register_builtin",
    "runs_unconfined",
    "seats_from_specs",
    "seats_taken_by",
]

_BUILTINS: dict[str, dict[str, tuple[Callable[..., object], str, str | None]]] = {}
_NAME = re.compile(r"^(?P<name>[A-Za-z0-9_.#-]{1,40})=(?P<spec>.+)$")
#: The modules that register each game's built-in players, imported when first asked for.
_GAMES = {
    "porrinha": "matchlog.referee.porrinha",
    "backgammon": "matchlog.referee.backgammon",
    "davinci": "matchlog.referee.davinci",
    "fish": "matchlog.referee.fish",
}


def register_builtin(
    game: str, name: str, factory: Callable[..., object], summary: str, *, argument: str | None = None
) -> None:
    """Make `factory(rng)` the built-in player `name` of `game`; with an `argument` (say "depth"),
    the spec `name:VALUE` calls `factory(rng, VALUE)` too, and plain `name` keeps the factory's default."""
    _BUILTINS.setdefault(game, {})[name] = (factory, summary, argument)


def _known(game: str) -> dict[str, tuple[Callable[..., object], str, str | None]]:
    """`game`'s built-in players, its module imported first if need be; a game from a plugin gets
    the generic `random` and the players its plugin brings."""
    if game not in _BUILTINS and game in _GAMES:
        importlib.import_module(_GAMES[game])
    elif game not in _BUILTINS and (found := known_game(game)) is not None and not found.spec.tournament:
        from .generic import RandomPlayer

        register_builtin(game, "random", RandomPlayer, "answers a legal answer, uniformly at random")
        for name, (factory, summary) in found.players().items():
            register_builtin(game, name, factory, summary)
    return _BUILTINS.get(game, {})


def known_game(game: str) -> Game | None:
    """The plugin of the game called `game`, or None (no such game, or it did not load)."""
    try:
        return registered(game)
    except UsageError:
        return None


def builtin_names(game: str) -> dict[str, str]:
    """The built-in players of `game`, with a line on how each plays."""
    _known(game)
    return {
        name: f"{summary} (also {name}:{argument.upper()})" if argument else summary
        for name, (_, summary, argument) in sorted(_BUILTINS.get(game, {}).items())
    }


def is_builtin(game: str, spec: str) -> bool:
    """Whether `spec` names one of `game`'s built-in players (with its argument, if it takes one)."""
    return _builtin(game, spec) is not None


def _builtin(game: str, spec: str) -> tuple[Callable[..., object], str | None] | None:
    known = _known(game)
    if spec in known:
        return known[spec][0], None
    name, colon, value = spec.partition(":")
    if colon and name in known and known[name][2] is not None and value and "/" not in value:
        return known[name][0], value
    return None


def seats_from_specs(
    game: str, specs: Sequence[str], *, in_process: bool = False, limits: Limits | None = None
) -> list[Seat]:
    """The seats for the given specs: names are unique (a repeated one gets #2, #3, ...). A user's
    class is loaded to check it: in a child process (under `limits`) unless `in_process`. A seat of
    user code that runs unconfined (`in_process`, `limits.unconfined`) is marked so.

    Raises:
        UsageError: a spec names no built-in, no program that can run, or no class that loads.
    """
    seats: list[Seat] = []
    used: dict[str, int] = {}
    for given in specs:
        text = given.strip()
        named = _NAME.match(text)
        name, spec = (named["name"], named["spec"].strip()) if named else (None, text)
        _check_spec(game, spec, in_process=in_process, limits=limits)
        base = name or (spec if is_builtin(game, spec) else _default_name(spec))
        used[base] = used.get(base, 0) + 1
        unconfined = runs_unconfined(game, spec, in_process=in_process, limits=limits)
        seats.append(Seat(name=base if used[base] == 1 else f"{base}#{used[base]}", player=spec, unconfined=unconfined))
    return seats


def runs_unconfined(game: str, spec: str, *, in_process: bool = False, limits: Limits | None = None) -> bool:
    """Whether `spec` is user code that the operating system will not confine: a class `in_process`,
    or any child under `limits.unconfined` (what its seat records, so no result reads as confined)."""
    if is_builtin(game, spec):
        return False
    return (in_process and not spec.startswith("cmd:")) or (limits is not None and limits.unconfined)


def seats_taken_by(game: str, seats: Sequence[Seat], specs: Sequence[str]) -> list[Seat]:
    """A match's `seats`, each taken by the player of the spec at its place: the seats keep their
    names (a `NAME=` prefix, if given, must be that seat's name).

    Raises:
        UsageError: (usage.players) not one spec per seat, or a name that is not its seat's;
            (usage.player) a spec that names no player.
    """
    names = ", ".join(f"{index} {seat.name}" for index, seat in enumerate(seats))
    if len(specs) != len(seats):
        raise UsageError(
            f"the match has {len(seats)} seats ({names}): give one player (-p) per seat, in seat order, "
            f"not {len(specs)}",
            code="usage.players",
        )
    taken: list[Seat] = []
    for index, (seat, given) in enumerate(zip(seats, specs, strict=True)):
        text = given.strip()
        named = _NAME.match(text)
        name, spec = (named["name"], named["spec"].strip()) if named else (None, text)
        if name is not None and name != seat.name:
            raise UsageError(
                f"seat {index} is {seat.name}, not {name}: players take the match's seats and keep their names "
                f"({names})",
                code="usage.players",
            )
        _check_spec(game, spec)
        taken.append(Seat(name=seat.name, player=spec))
    return taken


def make_player(
    game: str, spec: str, rng: random.Random, *, in_process: bool = False, limits: Limits | None = None
) -> object:
    """A new player for `spec`: built-ins get `rng`; a user's class gets `seed=` if it takes one and
    runs in a child process (started now, under `limits`) unless `in_process`; a program always
    runs in one. Close a child's player (`ChildPlayer.close`) when done with it.

    Raises:
        UsageError: the spec cannot be loaded, the class cannot be built, or its process cannot start.
    """
    builtin = _builtin(game, spec)
    if builtin is not None:
        factory, value = builtin
        try:
            return factory(rng) if value is None else factory(rng, value)
        except (TypeError, ValueError) as error:
            raise UsageError(f"player {spec}: {error}", code="usage.player") from None
    seed = rng.randrange(2**63)
    if in_process and not spec.startswith("cmd:"):
        return load_player(spec, seed)
    from .channel import ChildPlayer

    return ChildPlayer(game, spec, seed=seed, limits=limits).start()


def load_player(spec: str, seed: int) -> object:
    """The user's class of `spec` loaded and built in this process, with `seed=` if it takes one.

    Raises:
        UsageError: the class cannot be loaded or built.
    """
    cls = _load_class(spec)
    try:
        accepts_seed = "seed" in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        accepts_seed = False
    try:
        return cls(seed=seed) if accepts_seed else cls()
    except Exception as error:
        raise UsageError(
            f"player {spec}: building it raised {type(error).__name__}: {error}", code="usage.player"
        ) from None


def _check_spec(game: str, spec: str, *, in_process: bool = False, limits: Limits | None = None) -> None:
    builtin = _builtin(game, spec)
    if builtin is not None:
        if builtin[1] is not None:
            make_player(game, spec, random.Random(0))  # an argument it cannot take is said now
        return
    if spec in _known(game):
        _, _, argument = _known(game)[spec]
        raise UsageError(f"player {spec} needs its {argument}: {spec}:{(argument or '').upper()}", code="usage.player")
    if spec.startswith("cmd:"):
        from .channel import program_argv

        program = program_argv(spec)[0]
        if shutil.which(program) is None:
            raise UsageError(f"player {spec}: {program} is not a program this user can run", code="usage.player")
        return
    if ":" not in spec:
        known = ", ".join(builtin_names(game)) or "none"
        raise UsageError(
            f"unknown player {spec!r}: give a built-in ({known}), path/to/file.py:Class, package.module:Class "
            "or cmd:PROGRAM",
            code="usage.player",
        )
    if in_process:
        _load_class(spec)
        return
    _where(spec)  # what can be said without running the player's code
    from .channel import ChildPlayer

    with ChildPlayer(game, spec, seed=0, limits=limits) as player:
        player.start()


def _default_name(spec: str) -> str:
    if spec.startswith("cmd:"):
        from .channel import program_argv

        return re.sub(r"[^A-Za-z0-9_.#-]", "_", Path(program_argv(spec)[0]).name)[:40] or "program"
    return spec.rsplit(":", 1)[1] if ":" in spec else spec


def _where(spec: str) -> tuple[str, str]:
    """The module or file of a class spec, and the class's name.

    Raises:
        UsageError: the spec is not of that form, or names a file that does not exist.
    """
    where, _, attribute = spec.rpartition(":")
    if not where or not attribute.isidentifier():
        raise UsageError(
            f"player {spec!r}: expected path/to/file.py:Class or package.module:Class", code="usage.player"
        )
    if _is_file(where) and not Path(where).is_file():
        raise UsageError(f"player file {where} does not exist", code="usage.player")
    return where, attribute


def _is_file(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where


def _load_class(spec: str) -> type:
    where, attribute = _where(spec)
    try:
        module = _load_file(Path(where)) if _is_file(where) else importlib.import_module(where)
    except UsageError:
        raise
    except Exception as error:
        raise UsageError(
            f"player {spec}: importing {where} raised {type(error).__name__}: {error}", code="usage.player"
        ) from None
    cls = getattr(module, attribute, None)
    if cls is None or not callable(cls):
        raise UsageError(f"player {spec}: {where} has no class {attribute}", code="usage.player")
    return cls


def _load_file(path: Path) -> object:
    if not path.is_file():
        raise UsageError(f"player file {path} does not exist", code="usage.player")
    name = f"matchlog_player_{abs(hash(str(path.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"player file {path} cannot be imported", code="usage.player")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
