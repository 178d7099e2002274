"""A user's player class, loaded from a file (`path/to/file.py:Class`) or a module
(`package.module:Class`) and built with its seed: what a class spec names.

It needs nothing else of the referee, so the host of a player in a child process (`host.py`) loads
its class without the channel, the sandbox or the registry of built-ins.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

from matchlog.events import UsageError

__all__ = ["class_location", "load_class", "load_player"]


def load_player(spec: str, seed: int) -> object:
    """The user's class of `spec` loaded and built in this process, with `seed=` if it takes one.

    Raises:
        UsageError: the class cannot be loaded or built.
    """
    cls = load_class(spec)
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


def class_location(spec: str) -> tuple[str, str]:
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


def load_class(spec: str) -> type:
    """The class `spec` names, its module or file imported.

    Raises:
        UsageError: the module or file cannot be imported, or has no such class.
    """
    where, attribute = class_location(spec)
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
