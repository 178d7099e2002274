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

import msgspec
import typer
import typer.core
from typer.exceptions import TyperException

from matchlog.engines.fish import MAX_TILES
from matchlog.events import MatchlogError, UsageError

if TYPE_CHECKING:
    from matchlog import Log

from .output import (
    error_line,
    errors,
    fit_to_output,
)

__all__ = [
    "DEFAULT_DB",
    "FISH_TIMEOUT",
    "MAX_GAMES",
    "MAX_JOBS",
    "MAX_MEMORY",
    "MAX_SEAT",
    "MAX_SEQ",
    "MAX_TIMEOUT",
    "SEEDS",
    "TIMEOUT_HELP",
    "Archive",
    "AsSeat",
    "Cols",
    "Db",
    "FishCount",
    "GameOptions",
    "GameTimeout",
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
    "game_options",
    "open_log",
    "play_app",
    "players_option",
    "read_file",
    "reports_errors",
    "seat_of",
    "serve_app",
    "since_option",
    "warn_broken_games",
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

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands in sections, in the order a person looks for them (`HELP_SECTIONS`)."""
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        shown = {name: command for name, command in commands if command is not None and not command.hidden}
        if not shown:
            return
        limit = formatter.width - 6 - max(map(len, shown))
        placed = {name for names in HELP_SECTIONS.values() for name in names}
        sections = [*HELP_SECTIONS.items(), ("Other", tuple(name for name in shown if name not in placed))]
        for section, names in sections:
            rows = [(name, shown[name].get_short_help_str(limit)) for name in names if name in shown]
            if rows:
                with formatter.section(section):
                    formatter.write_dl(rows)


#: The sections of `matchlog --help`, in order, and what each holds (cli/app.py puts each command in one).
HELP_SECTIONS = {
    "Play": ("play", "resume", "tournament", "duel", "fork", "undo", "abandon", "demo"),
    "Read": ("list", "show", "replay", "stats", "ratings", "duel-report", "sql", "schema", "games"),
    "Check": ("verify", "audit", "prove", "check", "key", "checkpoint", "receipt"),
    "Analyse": ("analyse", "annotate", "annotations"),
    "Share": ("export", "import", "dataset", "archive"),
    "Serve": ("serve", "client"),
}


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


class _PlayGames(typer.core.TyperGroup):
    """`matchlog play GAME`: our games have commands of their own (with their options as flags);
    any other game (a plugin's, `openspiel:kuhn_poker`) is played by the command listed as GAME."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return args[0], self.commands["GAME"], args  # the game's name is GAME's first argument
        return super().resolve_command(ctx, args)


play_app = typer.Typer(
    cls=_PlayGames,
    help="Referee matches between players and record them (matchlog games lists the games).",
    no_args_is_help=True,
)
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


def game_options(game: str, given: list[str] | None) -> tuple[str, dict[str, Any]]:
    """A game as the user names it (`openspiel:leduc_poker(players=3)`) and its `--option KEY=VALUE`
    pairs: the game's name and its options (the name's parameters, then the pairs, each value read
    as JSON where it is JSON, else as text).

    Raises:
        UsageError: a pair that is not KEY=VALUE (`usage.options`), a name that is not a game's.
    """
    from matchlog.engines import split_name

    name, options = split_name(game)
    for pair in given or ():
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"--option takes KEY=VALUE, not {pair!r}", code="usage.options")
        try:
            options[key.strip()] = msgspec.json.decode(value)
        except msgspec.DecodeError:
            options[key.strip()] = value
    return name, options


_warned: list[bool] = []


def warn_broken_games() -> None:
    """Name, once on stderr, each game plugin that did not load, if this command loaded the games."""
    from matchlog.events import plugins

    loaded = plugins.if_loaded()
    if loaded is None or _warned or not loaded.failed:
        return
    _warned.append(True)
    for name, reason in loaded.failed.items():
        errors.out(f"warning: the game {name} did not load ({reason}); the other games work")


def reports_errors(command: F) -> F:
    """Turn our errors into one line and exit status 2; anything else is a bug, said as such. Names
    each game plugin that did not load, if the command needed the games."""

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
            from matchlog.store import is_interrupt

            if is_interrupt(error):  # Ctrl-C while DuckDB ran a statement: it was rolled back
                error_line("interrupted; everything acknowledged before is in the log", "interrupted")
                raise typer.Exit(130) from None
            if os.environ.get("MATCHLOG_DEBUG"):
                raise
            error_line(f"{type(error).__name__}: {error} (set MATCHLOG_DEBUG=1 for the traceback)", "internal")
            raise typer.Exit(3) from None
        finally:
            if command.__name__ != "games":  # which lists them itself
                warn_broken_games()

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


#: Bounds of the numbers options take, so that no number asks for more than a run can give: games
#: and pairs a command plays (ten million: days of play), seqs (the log's BIGINT), seats (the most a
#: table may have), seeds (64 bits), MiB of memory (a tebibyte), worker processes, seconds.
MAX_GAMES = 10_000_000
MAX_SEQ = 2**63 - 1
MAX_SEAT = 4_095  # engines.contract.MAX_SEATS - 1 (a test holds them together)
SEEDS = {"min": -(2**63), "max": 2**64 - 1}
MAX_MEMORY = 1 << 20
MAX_JOBS = 1_024

Games = Annotated[int, typer.Option(min=1, max=MAX_GAMES, help="Games in the series (same players, same seats).")]
Seed = Annotated[
    int | None,
    typer.Option(
        **SEEDS,
        help="Seed for chance and the built-in players' choices: reproducible, so not secret (a player that "
        "guesses it knows the dice); leave it out where user players compete.",
    ),
]
#: The longest a player may be given per call, in seconds (an hour: a longer wait is a hang).
MAX_TIMEOUT = 3600.0
TIMEOUT_HELP = "Seconds a user player may take per call."
Timeout = Annotated[float, typer.Option(min=0.001, max=MAX_TIMEOUT, help=TIMEOUT_HELP)]
GameTimeout = Annotated[
    float | None,
    typer.Option(
        min=0.001, max=MAX_TIMEOUT, help="Seconds a user player may take per call (default: 30 for Fish, else 10)."
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the series summary.")]

Match = Annotated[str, typer.Argument(help="A match id, or a unique start of one.")]
AsSeat = Annotated[
    int | None,
    typer.Option("--as-seat", help="Show only what this seat could see (-1: a spectator).", min=-1, max=MAX_SEAT),
]


def seat_of(as_seat: int | None, players: tuple[str, ...]) -> int | None:
    if as_seat is None or as_seat == -1:
        return None
    if as_seat >= len(players):
        raise UsageError(f"--as-seat {as_seat}: the match has seats 0 to {len(players) - 1}", code="usage.seat")
    return as_seat


#: The course's limit on a Fish player's call.
FISH_TIMEOUT = 30.0

Rows = Annotated[int, typer.Option(min=1, max=MAX_TILES, help="Rows of tiles.")]
Cols = Annotated[int, typer.Option("--cols", "--columns", min=1, max=MAX_TILES, help="Columns of tiles.")]
FishCount = Annotated[int, typer.Option(min=1, max=5, help="Fish on every tile of a uniform board.")]
RandomBoard = Annotated[
    bool, typer.Option("--random-board", help="1 to 5 fish at random on each tile, with --holes holes.")
]
Holes = Annotated[int, typer.Option(min=0, max=MAX_TILES, help="Holes in a random board.")]
OneFish = Annotated[
    int, typer.Option(min=0, max=MAX_TILES, help="At least this many one-fish tiles on a random board.")
]


GameOptions = Annotated[
    list[str] | None, typer.Option("--option", "-o", help="A game option, KEY=VALUE (e.g. rules=pygammon).")
]


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
