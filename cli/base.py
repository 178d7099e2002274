"""What every command shares: the typer applications, the common options, the error wrapper and
opening the log."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import typer.core
from typer.exceptions import TyperException

from matchlog.events import MatchlogError, UsageError
from matchlog.store import is_interrupt

if TYPE_CHECKING:
    from matchlog import Log

from .output import (
    error_line,
    fit_to_output,
)

__all__ = [
    "DEFAULT_DB",
    "FISH_TIMEOUT",
    "Archive",
    "AsSeat",
    "Cols",
    "Db",
    "FishCount",
    "Games",
    "Holes",
    "Json",
    "Match",
    "OneFish",
    "Quiet",
    "RandomBoard",
    "Rows",
    "Seed",
    "Server",
    "Timeout",
    "app",
    "client_app",
    "fish_options",
    "open_log",
    "play_app",
    "players_option",
    "read_file",
    "reports_errors",
    "seat_of",
    "serve_app",
    "since_option",
]


class _Commands(typer.core.TyperGroup):
    """The root command: a usage error (an unknown option, a bad value, a missing argument) is the
    one line every other error is, `error[usage]: ...`, with status 2, not click's usage box."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        try:
            returned = super().main(*args, standalone_mode=False, **kwargs)
        except TyperException as error:  # typer's own click: its UsageError and friends
            context = getattr(error, "ctx", None)
            if type(error).__name__ == "NoArgsIsHelpError" and context is not None:  # `matchlog play`: its help
                with contextlib.suppress(BrokenPipeError):
                    print(context.get_help())
                sys.exit(0)
            where = f"{context.command_path}: " if context is not None else ""
            hint = f" (see {context.command_path} --help)" if context is not None else ""
            text = error.format_message() if hasattr(error, "format_message") else str(error)
            error_line(f"{where}{_lower_first(text)}{hint}", "usage")
            sys.exit(getattr(error, "exit_code", 2) or 2)
        except typer.Abort:
            error_line("interrupted; nothing was done", "interrupted")
            sys.exit(130)
        if isinstance(returned, int) and not isinstance(returned, bool):  # typer.Exit(code), not standalone
            sys.exit(returned)
        return returned


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import version

        print(f"matchlog {version('matchlog')}")
        raise typer.Exit()


app = typer.Typer(
    cls=_Commands,
    name="matchlog",
    help="Record, replay and audit matches of turn-based games, in an append-only, hash-chained log.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print matchlog's version and exit.")
    ] = False,
) -> None:
    """Record, replay and audit matches of turn-based games, in an append-only, hash-chained log."""


play_app = typer.Typer(help="Referee matches between players and record them.", no_args_is_help=True)
app.add_typer(play_app, name="play")
serve_app = typer.Typer(invoke_without_command=True)  # its help is `matchlog serve`'s docstring
app.add_typer(serve_app, name="serve")
client_app = typer.Typer(help="Connect a local player to a remote matchlog server.", no_args_is_help=True)
app.add_typer(client_app, name="client")

Server = Annotated[
    str | None,
    typer.Option(
        "--server",
        metavar="URL",
        envvar="MATCHLOG_SERVER",
        help="Work through the matchlog server at URL (default: the server that owns --db, if one runs).",
    ),
]
Db = Annotated[
    Path,
    typer.Option("--db", envvar="MATCHLOG_DB", help="The log file.", show_default=True),
]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for programs instead of text.")]
Archive = Annotated[
    Path | None,
    typer.Option(
        "--archive",
        metavar="PATH",
        help="Read the archive at PATH (the Delta table matchlog archive writes) instead of the log.",
    ),
]
DEFAULT_DB = Path("matches.duckdb")
#: The course's limit on a Fish player's call.
FISH_TIMEOUT = 30.0

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(command: F) -> F:
    """Turn our errors into one line and exit status 2; anything else is a bug, said as such."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        fit_to_output()
        try:
            return command(*args, **kwargs)
        except MatchlogError as error:
            error_line(error)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            error_line("interrupted; everything acknowledged before is in the log", "interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # The reader went away (`matchlog export ... | head`): stop quietly, as other tools do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(0) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as error:
            if is_interrupt(error):  # Ctrl-C while DuckDB ran a statement: it was rolled back
                error_line("interrupted; everything acknowledged before is in the log", "interrupted")
                raise typer.Exit(130) from None
            if os.environ.get("MATCHLOG_DEBUG"):
                raise
            error_line(f"{type(error).__name__}: {error} (set MATCHLOG_DEBUG=1 for the traceback)", "internal")
            raise typer.Exit(3) from None

    return run  # type: ignore[return-value]


def open_log(db: Path, server: str | None = None, *, create: bool = False, archive: Path | None = None) -> Log:
    """The log a command works on: the archive at `archive` (read-only); else the server at
    `server`; else the server that owns `db` (found
    through the file it writes beside the log); else the file itself, for writing where this user
    may (that rolls the catalogue forward after a crash and lets time travel cache its snapshots),
    read-only where not. Only commands that record may create a file, so a mistyped --db never
    leaves an empty log behind.

    Raises:
        StoreError: no log there (`store.missing`, `archive.missing`), or it cannot be opened.
        RemoteError: the server cannot be reached.
        UsageError: an archive, and deltalake is not installed.
    """
    import matchlog

    if archive is not None:
        from matchlog.archive import ArchiveLog

        return ArchiveLog(archive)
    if server:
        return matchlog.open(server)
    return matchlog.open(db, mode="create" if create else "auto")


def read_file(path: Path, most: int) -> bytes:
    """The bytes of a file of at most `most` bytes (a record to import, a note, a key, a bundle), read
    no further than that.

    Raises:
        UsageError: the file cannot be read, or is bigger (`usage.file`).
    """
    try:
        with path.open("rb") as file:
            data = file.read(most + 1)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error}", code="usage.file") from None
    if len(data) > most:
        raise UsageError(f"{path} is bigger than {most:,} bytes: more than matchlog reads there", code="usage.file")
    return data


def players_option(builtins: str) -> Any:
    return typer.Option(
        "--player",
        "-p",
        metavar="SPEC",
        help=f"A player, once per seat in seat order: a built-in ({builtins}), path/to/file.py:Class, "
        'package.module:Class or cmd:"PROGRAM ARGS" (docs/protocol.md); prefix NAME= to name the seat.',
    )


Games = Annotated[int, typer.Option(min=1, help="Games in the series (same players, same seats).")]
Seed = Annotated[int | None, typer.Option(help="Seed for chance and the built-in players' choices.")]
Timeout = Annotated[float, typer.Option(min=0.001, help="Seconds a user player may take per call.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the series summary.")]

Match = Annotated[str, typer.Argument(help="A match id, or a unique start of one.")]
AsSeat = Annotated[
    int | None,
    typer.Option("--as-seat", help="Show only what this seat could see (-1: a spectator).", min=-1),
]


def seat_of(as_seat: int | None, players: tuple[str, ...]) -> int | None:
    if as_seat is None or as_seat == -1:
        return None
    if as_seat >= len(players):
        raise UsageError(f"--as-seat {as_seat}: the match has seats 0 to {len(players) - 1}", code="usage.seat")
    return as_seat


#: The course's limit on a Fish player's call.
FISH_TIMEOUT = 30.0

Rows = Annotated[int, typer.Option(min=1, help="Rows of tiles.")]
Cols = Annotated[int, typer.Option("--cols", "--columns", min=1, help="Columns of tiles.")]
FishCount = Annotated[int, typer.Option(min=1, max=5, help="Fish on every tile of a uniform board.")]
RandomBoard = Annotated[
    bool, typer.Option("--random-board", help="1 to 5 fish at random on each tile, with --holes holes.")
]
Holes = Annotated[int, typer.Option(min=0, help="Holes in a random board.")]
OneFish = Annotated[int, typer.Option(min=0, help="At least this many one-fish tiles on a random board.")]


def fish_options(rows: int, cols: int, fish: int, random_board: bool, holes: int, one_fish: int) -> dict[str, Any]:
    if holes and not random_board:
        raise UsageError("--holes needs --random-board (a uniform board has none)", code="usage.options")
    return {
        "rows": rows,
        "columns": cols,
        "fish": fish,
        "random_board": random_board,
        "holes": holes,
        "one_fish": one_fish,
    }


def since_option(text: str | None) -> datetime | None:
    """A --since date (YYYY-MM-DD or YYYY-MM-DDTHH:MM, UTC).

    Raises:
        UsageError: it is not such a date.
    """
    return date_option(text, "since")


def date_option(text: str | None, option: str) -> datetime | None:
    """The date `--OPTION` was given (YYYY-MM-DD or YYYY-MM-DDTHH:MM, UTC), naive UTC.

    Raises:
        UsageError: it is not such a date (`usage.OPTION`).
    """
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        raise UsageError(
            f"--{option} takes a date like 2026-11-21 or 2026-11-21T18:30, not {text!r}", code=f"usage.{option}"
        ) from None
