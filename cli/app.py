"""The `matchlog` command: parses, calls the library, renders. It holds no rules.

Every command takes `--db PATH` (default `matches.duckdb`, or `$MATCHLOG_DB`); every read command
takes `--json`. Errors print one line, `error[code]: message`, and exit with status 2; `verify`
exits with status 1 when it finds a problem. Each command group lives in a module of its own; importing
them here registers them on the one typer application.
"""

# ruff: noqa: I001  (the commands register in the order --help lists them)
from __future__ import annotations

# Imported in the order `matchlog --help` lists them; each registers its commands on `app`.
from . import (  # noqa: F401
    play,
    tournament,
    duel,
    ratings,
    service,
    remote,
    inspect,
    check,
    proofs,
    analyse,
    query,
    write,
    dataset,
    archive,
    demo,
)
from .base import app

__all__ = ["app", "main"]


def main() -> None:
    """The console entry point."""
    app()
