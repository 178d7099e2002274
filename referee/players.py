"""Players by name: the built-ins of each game, and user classes from a file or a module.

A player spec is `random`, `reasoner`, ... (a built-in of the game), `path/to/file.py:Class`, or
`package.module:Class`, optionally prefixed with the seat's name: `alice=reasoner`.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import random
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from matchlog.events import Seat, UsageError

__all__ = ["builtin_names", "make_player", "register_builtin", "seats_from_specs"]

_BUILTINS: dict[str, dict[str, tuple[Callable[[random.Random], object], str]]] = {}
_NAME = re.compile(r"^(?P<name>[A-Za-z0-9_.#-]{1,40})=(?P<spec>.+)$")


def register_builtin(game: str, name: str, factory: Callable[[random.Random], object], summary: str) -> None:
    """Make `factory(rng)` the built-in player `name` of `game`."""
    _BUILTINS.setdefault(game, {})[name] = (factory, summary)


def builtin_names(game: str) -> dict[str, str]:
    """The built-in players of `game`, with a line on how each plays."""
    return {name: summary for name, (_, summary) in sorted(_BUILTINS.get(game, {}).items())}


def seats_from_specs(game: str, specs: Sequence[str]) -> list[Seat]:
    """The seats for the given specs: names are unique (a repeated one gets #2, #3, ...).

    Raises:
        UsageError: a spec names no built-in and is not of the form `file.py:Class` or `module:Class`.
    """
    seats: list[Seat] = []
    used: dict[str, int] = {}
    for given in specs:
        text = given.strip()
        named = _NAME.match(text)
        name, spec = (named["name"], named["spec"].strip()) if named else (None, text)
        _check_spec(game, spec)
        base = name or _default_name(spec)
        used[base] = used.get(base, 0) + 1
        seats.append(Seat(name=base if used[base] == 1 else f"{base}#{used[base]}", player=spec))
    return seats


def make_player(game: str, spec: str, rng: random.Random) -> object:
    """A new player object for `spec`; built-ins get `rng`, user classes get `seed=` if they take it.

    Raises:
        UsageError: the spec cannot be loaded, or the class cannot be built.
    """
    builtin = _BUILTINS.get(game, {}).get(spec)
    if builtin is not None:
        return builtin[0](rng)
    cls = _load_class(spec)
    try:
        accepts_seed = "seed" in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        accepts_seed = False
    try:
        return cls(seed=rng.randrange(2**63)) if accepts_seed else cls()
    except Exception as error:
        raise UsageError(
            f"player {spec}: building it raised {type(error).__name__}: {error}", code="usage.player"
        ) from None


def _check_spec(game: str, spec: str) -> None:
    if spec in _BUILTINS.get(game, {}):
        return
    if ":" not in spec:
        known = ", ".join(builtin_names(game)) or "none"
        raise UsageError(
            f"unknown player {spec!r}: give a built-in ({known}), path/to/file.py:Class or package.module:Class",
            code="usage.player",
        )
    _load_class(spec)


def _default_name(spec: str) -> str:
    return spec.rsplit(":", 1)[1] if ":" in spec else spec


def _load_class(spec: str) -> type:
    where, _, attribute = spec.rpartition(":")
    if not where or not attribute.isidentifier():
        raise UsageError(
            f"player {spec!r}: expected path/to/file.py:Class or package.module:Class", code="usage.player"
        )
    try:
        if where.endswith(".py") or "/" in where or "\\" in where:
            module = _load_file(Path(where))
        else:
            module = importlib.import_module(where)
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
