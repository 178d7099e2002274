"""The typer application behind the `matchlog` command."""

from __future__ import annotations

import importlib
import signal
import sys
from types import ModuleType
from typing import Any

__all__ = ["app", "main"]


def _load() -> ModuleType:
    """Import the commands (numpy, pyarrow and DuckDB with them: it takes a moment)."""
    commands = importlib.import_module(f"{__name__}.app")  # the import system names the submodule `app` here ...
    globals()["app"] = commands.app  # ... but `matchlog.cli.app` is the typer application
    return commands


def main() -> None:
    """The console entry point. A Ctrl-C while the commands load (numpy, pyarrow and DuckDB take a
    moment) is held until they have loaded, since a library may swallow a KeyboardInterrupt raised
    inside its imports; then it ends the command in one line and status 130."""
    if sys.argv[1:] == ["--version"]:  # nothing else to load for it
        from matchlog import __version__

        print(f"matchlog {__version__}")
        return
    pressed: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    except ValueError:  # not the main thread: nothing to hold
        previous = None
    try:
        commands = _load()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    try:
        if pressed:
            raise KeyboardInterrupt
        commands.main()
    except KeyboardInterrupt:  # before a command started (commands say what they kept themselves)
        sys.stderr.write("error[interrupted]: interrupted while starting; nothing was done\n")
        raise SystemExit(130) from None


def __getattr__(name: str) -> Any:
    if name == "app":
        _load()
        return globals()["app"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
