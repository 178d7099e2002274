"""What every command shares: the typer applications, the common options, the error wrapper and
opening the log."""

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from matchlog.events import MatchlogError, StoreError, UsageError
from matchlog.store import Store, is_interrupt

from .output import (
    error_line,
    fit_to_output,
)

__all__ = [
    "DEFAULT_DB",
    "FISH_TIMEOUT",
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
    "Timeout",
    "app",
    "client_app",
    "fish_options",
    "open_log",
    "play_app",
    "players_option",
    "reports_errors",
    "seat_of",
    "serve_app",
]

app = typer.Typer(
    name="matchlog",
    help="Record, replay and audit matches of turn-based games, in an append-only, hash-chained log.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
play_app = typer.Typer(help="Referee matches between players and record them.", no_args_is_help=True)
app.add_typer(play_app, name="play")
serve_app = typer.Typer(help="Referee a tournament between remote players over TCP.", no_args_is_help=True)
app.add_typer(serve_app, name="serve")
client_app = typer.Typer(help="Connect a local player to a remote matchlog server.", no_args_is_help=True)
app.add_typer(client_app, name="client")

Db = Annotated[
    Path,
    typer.Option("--db", envvar="MATCHLOG_DB", help="The log file.", show_default=True),
]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for programs instead of text.")]
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


def open_log(db: Path, *, create: bool = False) -> Store:
    """The log at `db`, owned by this command; only commands that record may create it.

    Reading commands open it for writing too: that rolls the catalogue forward after a crash and
    lets time travel cache its snapshots (DuckDB lets one process own a file either way).
    """
    if not create and str(db) != ":memory:" and not db.exists():
        raise StoreError(f"there is no log at {db} (play a match first, or give --db)", code="store.missing")
    return Store(db)


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
