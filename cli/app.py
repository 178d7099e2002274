"""The `matchlog` command: parses, calls the library, renders. It holds no rules.

Every command takes `--db PATH` (default `matches.duckdb`, or `$MATCHLOG_DB`); every read command
takes `--json`. Errors print one line, `error[code]: message`, and exit with status 2; `verify`
exits with status 1 when it finds a problem. Each command group lives in a module of its own; importing
them here registers them on the one typer application, and `base.HELP_SECTIONS` puts each in its
section of `matchlog --help`. The modules load only what their commands need when those run, so
`--help` loads no DuckDB, pyarrow or Litestar.
"""

from __future__ import annotations

import importlib

from .base import HELP_SECTIONS, app

__all__ = ["app", "main"]

#: The modules whose commands `matchlog` has: importing one registers its commands on `app`.
COMMAND_MODULES = (
    "play",
    "tournament",
    "duel",
    "ratings",
    "service",
    "remote",
    "inspect",
    "check",
    "proofs",
    "analyse",
    "query",
    "write",
    "dataset",
    "archive",
    "demo",
)
for _module in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_module}")

# Each command carries its section of --help (as typer's rich help would show it too).
_SECTION = {name: section for section, names in HELP_SECTIONS.items() for name in names}
for _command in [*app.registered_commands, *app.registered_groups]:
    _command.rich_help_panel = _SECTION.get(_command.name or "")


def main() -> None:
    """The console entry point."""
    app()
