"""The `matchlog` command: parses, calls the library, renders. It holds no rules.

Every command takes `--db PATH` (default `matches.duckdb`, or `$MATCHLOG_DB`); every read command
takes `--json`. Errors print one line, `error[code]: message`, and exit with status 2; `verify`
exits with status 1 when it finds a problem.
"""

from __future__ import annotations

import functools
import os
import random
import sys
import time
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import duckdb
import msgspec
import typer
from rich.table import Table

import matchlog.referee as referee_package
from matchlog.engines import get as get_engine
from matchlog.engines import names as game_names
from matchlog.engines import ordinal
from matchlog.events import MatchlogError, StoreError, UsageError, json_schema
from matchlog.referee import DEFAULT_TIMEOUT, MatchResult, builtin_names, play_series
from matchlog.replay import abandon, export_seat_jsonl, fork, state_at, statistics, timeline, undo
from matchlog.replay.audit import audit, dispute
from matchlog.store import Store, connect_read_only, is_interrupt

from .output import (
    console,
    emit_json,
    error_line,
    errors,
    finding_dict,
    fit_to_output,
    match_dict,
    matches_table,
    print_audit,
    print_dispute,
    print_statistics,
    print_statistics_csv,
    short,
    short_spec,
    when,
)
from .plots import plot_statistics

__all__ = ["app", "main"]

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


# -- play --------------------------------------------------------------------------------------


class Policy(StrEnum):
    lenient = "lenient"
    strict = "strict"


def _players(builtins: str) -> Any:
    return typer.Option(
        "--player",
        "-p",
        metavar="SPEC",
        help=f"A player, once per seat in seat order: a built-in ({builtins}), path/to/file.py:Class "
        "or package.module:Class; prefix NAME= to name the seat.",
    )


Games = Annotated[int, typer.Option(min=1, help="Games in the series (same players, same seats).")]
Seed = Annotated[int | None, typer.Option(help="Seed for chance and the built-in players' choices.")]
Timeout = Annotated[float, typer.Option(min=0.001, help="Seconds a user player may take per call.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the series summary.")]


@play_app.command("porrinha")
@reports_errors
def play_porrinha(
    player: Annotated[list[str], _players("random, reasoner")],
    chopsticks: Annotated[int, typer.Option(min=1, help="Chopsticks each player starts with.")] = 3,
    games: Games = 1,
    seed: Seed = None,
    policy: Annotated[
        Policy,
        typer.Option(
            help="lenient: an invalid hand counts as 0, an invalid guess cannot win; "
            "strict: an invalid answer removes the player."
        ),
    ] = Policy.lenient,
    timeout: Timeout = DEFAULT_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play Porrinha (a chopsticks guessing game) and record every match.

    Example: matchlog play porrinha -p random -p reasoner -p alice=my_ai.py:Player --games 10
    """
    options = {"chopsticks": chopsticks, "policy": policy.value}
    _play("porrinha", player, options=options, games=games, seed=seed, timeout=timeout, quiet=quiet, db=db, json=json)


class Rules(StrEnum):
    standard = "standard"
    pygammon = "pygammon"


@play_app.command("davinci")
@reports_errors
def play_davinci(
    player: Annotated[list[str], _players("seed-ai, random, human")],
    jokers: Annotated[bool, typer.Option("--jokers", help="Play with the two jokers (26 tiles).")] = False,
    games: Games = 1,
    seed: Seed = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play Da Vinci Code (2 to 4 players; hidden tiles) and record every match.

    With --player human you play at the terminal: type "quit" (or press Ctrl-C) to leave the match.
    Example: matchlog play davinci -p human -p seed-ai --jokers
    """
    _play(
        "davinci",
        player,
        options={"jokers": jokers},
        games=games,
        seed=seed,
        timeout=timeout,
        quiet=quiet,
        db=db,
        json=json,
    )


Rows = Annotated[int, typer.Option(min=1, help="Rows of tiles.")]
Cols = Annotated[int, typer.Option("--cols", "--columns", min=1, help="Columns of tiles.")]
FishCount = Annotated[int, typer.Option(min=1, max=5, help="Fish on every tile of a uniform board.")]
RandomBoard = Annotated[
    bool, typer.Option("--random-board", help="1 to 5 fish at random on each tile, with --holes holes.")
]
Holes = Annotated[int, typer.Option(min=0, help="Holes in a random board.")]
OneFish = Annotated[int, typer.Option(min=0, help="At least this many one-fish tiles on a random board.")]


def _fish_options(rows: int, cols: int, fish: int, random_board: bool, holes: int, one_fish: int) -> dict[str, Any]:
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


@play_app.command("fish")
@reports_errors
def play_fish(
    player: Annotated[list[str], _players("maximin, maximin:DEPTH, random")],
    rows: Rows = 5,
    cols: Cols = 5,
    fish: FishCount = 3,
    random_board: RandomBoard = False,
    holes: Holes = 0,
    one_fish: OneFish = 0,
    games: Games = 1,
    seed: Seed = None,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds a user player may take per call.")] = FISH_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play Fish (penguins on hexagonal tiles; 2 to 4 players) and record every game.

    A user player implements the course's protocol: initialize(board, n_players, color) -> age,
    get_placement(state) -> [row, column], get_move(game) -> [from, to], and optionally listen,
    finalize and terminate. A player that answers illegally, raises or overruns --timeout is kicked.
    Example: matchlog play fish -p maximin:2 -p random --random-board --holes 3
    """
    options = _fish_options(rows, cols, fish, random_board, holes, one_fish)
    _play("fish", player, options=options, games=games, seed=seed, timeout=timeout, quiet=quiet, db=db, json=json)


@play_app.command("backgammon")
@reports_errors
def play_backgammon(
    player: Annotated[list[str], _players("random, heuristic")],
    games: Games = 1,
    seed: Seed = None,
    rules: Annotated[
        Rules,
        typer.Option(
            help="standard, or pygammon's (any higher die bears off any home checker; the larger-die rule "
            "and the use-both-dice rule are not checked move by move)."
        ),
    ] = Rules.standard,
    move_by_turn_rolls: Annotated[
        bool, typer.Option("--move-by-turn-rolls", help="The starting side plays the opening roll.")
    ] = False,
    timeout: Timeout = DEFAULT_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play backgammon (pygammon's board and protocol) and record every game.

    A user player is a class with move(board) -> (die_index, source) or "undo"; optional begin_game(board),
    observe(output_type, data, side) and end_game(board). Example:
    matchlog play backgammon -p heuristic -p random --games 100
    """
    options = {"rules": rules.value, "move_by_turn_rolls": move_by_turn_rolls}
    _play("backgammon", player, options=options, games=games, seed=seed, timeout=timeout, quiet=quiet, db=db, json=json)


def _play(
    game: str,
    specs: list[str],
    *,
    options: dict[str, Any],
    games: int,
    seed: int | None,
    timeout: float,
    quiet: bool,
    db: Path,
    json: bool,
) -> None:
    played: list[MatchResult] = []

    def report(result: MatchResult) -> None:
        played.append(result)
        if not (json or quiet):
            placed = ", ".join(
                f"{ordinal(result.outcome.places[s])} {result.seats[s].name}" for s in result.outcome.ranking
            )
            console.out(f"match {short(result.match_id)}  {placed}")

    with open_log(db, create=True) as store:
        try:
            series = play_series(
                game,
                specs,
                games=games,
                options=options,
                seed=seed,
                store=store,
                timeout=timeout,
                on_match=report,
            )
        except KeyboardInterrupt:
            unfinished = [m for m in store.matches(game=game, status="running", limit=1)]
            left = f"; match {short(unfinished[0].match_id)} is left unfinished" if unfinished else ""
            raise StoreError(f"interrupted after {len(played)} finished matches{left}", code="interrupted") from None
        findings = store.verify([m.match_id for m in series.matches])
        if json:
            emit_json(
                {
                    "series_id": series.series_id,
                    "matches": [
                        {
                            "match_id": str(m.match_id),
                            "places": list(m.outcome.places),
                            "winners": list(m.outcome.winners),
                            "result": m.outcome.result,
                        }
                        for m in series.matches
                    ],
                    "seats": [{"name": s.name, "player": s.player} for s in series.matches[0].seats],
                    "places": {name: {str(k): v for k, v in sorted(c.items())} for name, c in series.places.items()},
                    "db": str(db),
                }
            )
            return
        if games > 1:
            console.print(_places_table(series.places, len(specs)))
        count = len(series.matches)
        verdict = "their hash chains verify" if not findings else f"verify found {len(findings)} problem(s)!"
        console.out(f"{count} match{'es' if count != 1 else ''} recorded in {db}; {verdict}")


def _places_table(places: dict[str, dict[int, int]], seats: int) -> Table:
    table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
    table.add_column("player")
    for place in range(1, seats + 1):
        table.add_column(ordinal(place), justify="right")
    for name, counts in places.items():
        table.add_row(name, *(str(counts.get(place, 0)) for place in range(1, seats + 1)))
    return table


# -- tournaments -------------------------------------------------------------------------------


def _options(given: list[str]) -> dict[str, Any]:
    """KEY=VALUE pairs, each value read as JSON where it is JSON (numbers, true, false), else as text."""
    options: dict[str, Any] = {}
    for pair in given:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"--option takes KEY=VALUE, not {pair!r}", code="usage.options")
        try:
            options[key.strip()] = msgspec.json.decode(value)
        except msgspec.DecodeError:
            options[key.strip()] = value
    return options


@app.command("tournament")
@reports_errors
def tournament(
    game: Annotated[str, typer.Argument(help="The game (matchlog games lists them).")],
    player: Annotated[list[str], _players("see matchlog games")],
    games: Annotated[int, typer.Option(min=1, help="Matches in all, spread over every table and seat order.")] = 100,
    jobs: Annotated[int | None, typer.Option(min=1, help="Worker processes (default: one per core).")] = None,
    seats: Annotated[int | None, typer.Option(min=1, help="Players per table (default: the game's least).")] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="A game option, KEY=VALUE (e.g. rules=pygammon).")
    ] = None,
    seed: Seed = None,
    timeout: Annotated[
        float | None,
        typer.Option(min=0.001, help="Seconds a user player may take per call (default: 30 for Fish, else 10)."),
    ] = None,
    knockout: Annotated[
        bool,
        typer.Option(
            "--knockout",
            help="A knockout instead (the Fish course's): players in sign-up order at tables of up to 4, "
            "each table's winners go on, until a final table or a round nobody loses.",
        ),
    ] = False,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play a round-robin tournament in parallel worker processes, recording every match.

    Every table of players plays in every seat order. Ctrl-C stops cleanly: finished matches are stored
    and verified, and matches in progress are ended as abandoned.
    With --knockout, one game per table (--games, --jobs and --seats do not apply); the tournament is
    recorded as a match of its own (game "knockout") next to its games.
    Example: matchlog tournament backgammon -p heuristic -p random --games 1000
    Example: matchlog tournament fish --knockout -p maximin:2 -p maximin:1 -p random -p random -p maximin
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from matchlog.referee.tournament import run_tournament

    get_engine(game)
    settings = _options(option or [])
    if timeout is None:
        timeout = FISH_TIMEOUT if game == "fish" else DEFAULT_TIMEOUT
    if knockout:
        with open_log(db, create=True) as store:
            seats = referee_package.seats_from_specs(game, player)
            base = random.Random(seed)
            players = [referee_package.make_player(game, s.player, random.Random(base.randrange(2**63))) for s in seats]
            result = referee_package.run_knockout(
                game,
                seats,
                players,
                options=settings,
                store=store,
                timeout=timeout,
                seed=base.randrange(2**63),
                on_event=None if json or quiet else _knockout_progress(),
            )
            report_knockout(store, db, result, json=json)
        return
    show_progress = not (json or quiet)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>8.1f} matches/s"),
        TimeRemainingColumn(),
        console=errors,
        disable=not show_progress,
    )
    began = time.monotonic()
    task = progress.add_task(f"{game} tournament", total=games, rate=0.0)

    def advance(done: int, total: int) -> None:
        progress.start()  # shown from the first finished match on, not over a usage error
        progress.update(task, completed=done, rate=done / max(time.monotonic() - began, 1e-9))

    with open_log(db, create=True) as store:
        try:
            result = run_tournament(
                game,
                player,
                games=games,
                store=store,
                jobs=jobs,
                seats=seats,
                options=settings,
                seed=seed,
                timeout=timeout,
                on_progress=advance,
            )
        finally:
            progress.stop()
    if json:
        emit_json(result)
    else:
        table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False, collapse_padding=True)
        # The strategy column only when it says more than the names (`-p alice=random`).
        strategies = any(s.name.split("#")[0] != short_spec(s.player) for s in result.standings)
        columns = ["player", "strategy"] if strategies else ["player"]
        for column in (*columns, "matches", "wins", "draws", "losses", "win rate (95% CI)", "mean place", "rating"):
            names = column in ("player", "strategy")
            table.add_column(column, justify="left" if names else "right", no_wrap=not names, overflow="fold")
        for s in result.standings:
            table.add_row(
                s.name,
                *([short_spec(s.player)] if strategies else []),
                str(s.matches),
                str(s.wins),
                str(s.draws),
                str(s.losses),
                f"{s.win_rate:.1%} ({s.win_low * 100:.1f}-{s.win_high:.1%})",
                f"{s.mean_place:.2f}",
                f"{s.rating:.0f}",
            )
        console.print(table)
        verdict = (
            "every hash chain verifies" if not result.findings else f"verify found {len(result.findings)} problem(s)!"
        )
        console.out(
            f"{result.finished} matches in {result.seconds:.1f} s ({result.rate:.1f} matches/s), {result.events} events"
            f" recorded in {db}; {verdict}"
        )
        if result.unfinished or result.interrupted:
            console.out(f"interrupted: {result.unfinished} unfinished match(es) were ended as abandoned")
    for failure in result.failures[:5]:
        error_line(failure, "tournament.failed")
    if len(result.failures) > 5:
        error_line(f"... and {len(result.failures) - 5} more (--json lists them all)", "tournament.failed")
    if result.findings or result.failures:
        raise typer.Exit(1)
    if result.interrupted:
        raise typer.Exit(130)


def _knockout_progress() -> Callable[[Any, Any], None]:
    """An on_event callback printing each game of a knockout as it is recorded."""
    from matchlog.engines.knockout import ENGINE as KNOCKOUT
    from matchlog.events import KnockoutGamePlayed, PlayerRemoved

    last: list[Any] = []

    def heard(event: Any, state: Any) -> None:
        if last and isinstance(event, KnockoutGamePlayed | PlayerRemoved):
            console.out(KNOCKOUT.describe(last[-1], event, state))
        last[:] = [state]

    return heard


def report_knockout(store: Store, db: Path, result: Any, *, json: bool) -> None:
    """A finished knockout, checked against the log: as JSON, or as its winners and places."""
    findings = store.verify([result.tournament_id, *(g.match_id for g in result.games)])
    outcome = result.outcome
    if json:
        emit_json(
            {
                "tournament_id": str(result.tournament_id),
                "winners": result.winners,
                "kicked": result.kicked,
                "places": {seat.name: outcome.places[s] for s, seat in enumerate(result.seats)},
                "games": [
                    {
                        "match_id": str(g.match_id),
                        "players": [seat.name for seat in g.seats],
                        "winners": [g.seats[s].name for s in g.outcome.winners],
                        "kicked": [g.seats[s].name for s in g.outcome.removed],
                    }
                    for g in result.games
                ],
                "findings": [finding_dict(f) for f in findings],
                "db": str(db),
            }
        )
    else:
        console.out(f"winners: {', '.join(result.winners) or 'nobody'}; kicked: {', '.join(result.kicked) or 'nobody'}")
        verdict = "every hash chain verifies" if not findings else f"verify found {len(findings)} problem(s)!"
        games = f"{len(result.games)} game{'s' if len(result.games) != 1 else ''}"
        console.out(f"tournament {short(result.tournament_id)}: {games} recorded in {db}; {verdict}")
    if findings:
        raise typer.Exit(1)


# -- remote players ----------------------------------------------------------------------------

Host = Annotated[str, typer.Option(help="The address to listen on or connect to.")]


@serve_app.command("fish")
@reports_errors
def serve_fish(
    port: Annotated[int, typer.Option(min=0, max=65535, help="The TCP port (0: any free one).")] = 45678,
    host: Host = "127.0.0.1",
    min_players: Annotated[int, typer.Option(min=1, help="Start once this many have signed up.")] = 5,
    max_players: Annotated[int, typer.Option(min=1, help="Take no sign-ups beyond this many.")] = 10,
    wait: Annotated[float, typer.Option(min=0.1, help="Seconds of each sign-up period (two periods).")] = 30.0,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds a client may take per call.")] = 3.0,
    rows: Rows = 5,
    cols: Cols = 5,
    fish: FishCount = 2,
    random_board: RandomBoard = False,
    holes: Holes = 0,
    one_fish: OneFish = 0,
    seed: Seed = None,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Take sign-ups from remote Fish clients, then referee a knockout tournament between them.

    Clients speak the course's JSON-over-TCP protocol (matchlog client fish is one): they send their
    name (1 to 12 letters) within 10 s of connecting. The server waits --wait seconds for
    --min-players, one more period if too few came, and stops at --max-players. Every game and the
    tournament are recorded; the last line is the course's output, [winners, kicked].
    Example: matchlog serve fish --port 45678 --min-players 2 --wait 10
    """
    from matchlog.referee.fish_remote import SignUp, serve

    options = _fish_options(rows, cols, fish, random_board, holes, one_fish)
    chatty = not (json or quiet)

    def listening(bound: str, bound_port: int) -> None:
        errors.print(f"listening on {bound}:{bound_port}; sign-ups close in {wait:g} s", highlight=False)

    def signed(sign_up: SignUp) -> None:
        if chatty:
            said = f"refused ({sign_up.refused})" if sign_up.refused else "signed up"
            errors.print(f"{sign_up.address} {sign_up.name or '?'}: {said}", highlight=False)

    with open_log(db, create=True) as store:
        result = serve(
            host=host,
            port=port,
            min_players=min_players,
            max_players=max_players,
            wait=wait,
            timeout=timeout,
            options=options,
            store=store,
            seed=seed,
            on_listening=listening,
            on_signup=signed,
            on_event=_knockout_progress() if chatty else None,
        )
        report_knockout(store, db, result, json=json)
    if not json:
        console.out(f"[{len(result.winners)}, {len(result.kicked)}]")


@client_app.command("fish")
@reports_errors
def client_fish(
    name: Annotated[str, typer.Option(help="Your name in the tournament: 1 to 12 ASCII letters.")],
    player: Annotated[
        str,
        typer.Option(
            "--player",
            "-p",
            metavar="SPEC",
            help="The local player: a built-in (maximin, maximin:DEPTH, random), path/to/file.py:Class "
            "or package.module:Class.",
        ),
    ] = "maximin",
    port: Annotated[int, typer.Option(min=1, max=65535, help="The server's TCP port.")] = 45678,
    host: Host = "127.0.0.1",
    timeout: Annotated[
        float, typer.Option(min=0.001, help="Seconds to wait for the server's next call before giving up.")
    ] = 300.0,
    seed: Seed = None,
    quiet: Quiet = False,
    json: Json = False,
) -> None:
    """Play in a remote Fish tournament with a local player (built-in or your own class).

    Exits 0 when the tournament ends (won or lost), 2 if the server cannot be reached or breaks the protocol.
    Example: matchlog client fish --name alice -p maximin:2 --port 45678
    """
    from matchlog.referee.fish_remote import play_remote

    seat = referee_package.seats_from_specs("fish", [player])[0]
    local = referee_package.make_player("fish", seat.player, random.Random(seed))
    chatty = not (json or quiet)

    def heard(message: str, arguments: list[Any]) -> None:
        if chatty and message in ("start", "playing-as", "playing-with", "end"):
            console.out(f"{message} {msgspec.json.encode(arguments).decode()}")

    result = play_remote(local, name, host=host, port=port, timeout=timeout, on_message=heard)
    if json:
        emit_json(result)
        return
    verdict = {True: "won", False: "lost", None: "was out before the end"}[result.won]
    console.out(f"{result.name} played {result.games} game(s) and {verdict}")


# -- reading -----------------------------------------------------------------------------------


@app.command("list")
@reports_errors
def list_matches(
    game: Annotated[str | None, typer.Option(help="Only this game.")] = None,
    status: Annotated[str | None, typer.Option(help="Only running, finished or abandoned matches.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many, newest first.")] = 50,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """List the matches in the log, newest first."""
    with open_log(db) as store:
        found = store.matches(game=game, status=status, limit=limit)
    if json:
        emit_json([match_dict(info) for info in found])
    elif not found:
        console.out("no matches")
    else:
        console.print(matches_table(found))


Match = Annotated[str, typer.Argument(help="A match id, or a unique start of one.")]
AsSeat = Annotated[
    int | None,
    typer.Option("--as-seat", help="Show only what this seat could see (-1: a spectator).", min=-1),
]


@app.command("show")
@reports_errors
def show(
    match: Match,
    at: Annotated[int | None, typer.Option("--at", help="The state after this seq (default: the last).")] = None,
    as_seat: AsSeat = None,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Show a match's state at a seq, as the referee saw it or as one seat did."""
    with open_log(db) as store:
        info = store.match(match)
        current = state_at(store, info.match_id, at)
    engine, state = current.engine, current.state
    seat = _seat(as_seat, info.players)
    if as_seat is not None:
        state = engine.view(state, seat)
    if json:
        turn = engine.to_act(current.state)
        outcome = engine.outcome(current.state)
        emit_json(
            {
                "match": match_dict(info),
                "seq": current.seq,
                "as_seat": as_seat,
                "state": msgspec.to_builtins(state),
                "to_act": msgspec.to_builtins(turn) if turn else None,
                "outcome": msgspec.to_builtins(outcome) if outcome else None,
            }
        )
        return
    viewer = "" if as_seat is None else f" as {'a spectator' if seat is None else info.players[seat]}"
    console.out(f"match {info.match_id} · {info.game} · seq {current.seq} of {info.last_seq}{viewer}")
    console.out(engine.render(state))


@app.command("replay")
@reports_errors
def replay(
    match: Match,
    start: Annotated[int, typer.Option("--from", help="First seq to print.", min=0)] = 0,
    stop: Annotated[int | None, typer.Option("--to", help="Last seq to print.", min=0)] = None,
    as_seat: AsSeat = None,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Replay a match step by step: one event a line, with what it changed."""
    with open_log(db) as store:
        info = store.match(match)
        records = store.read(info.match_id, stop=stop)
    seat = _seat(as_seat, info.players)
    steps = [s for s in timeline(records, seat, as_seat=as_seat is not None) if s.record.seq >= start]
    if json:
        emit_json(
            [
                {
                    "seq": s.record.seq,
                    "at": when(s.record.at_us),
                    "actor": s.record.actor,
                    "type": s.event.tag,
                    "event": msgspec.to_builtins(s.event),
                    "text": s.text,
                    "undone_by": s.undone_by,
                }
                for s in steps
            ]
        )
        return
    for step in steps:
        actor = "referee" if step.record.actor is None else info.players[step.record.actor]
        undone = f"  (taken back at seq {step.undone_by})" if step.undone_by is not None else ""
        console.out(f"{step.record.seq:>5}  {when(step.record.at_us)}  {actor:<12}  {step.text}{undone}")


def _seat(as_seat: int | None, players: tuple[str, ...]) -> int | None:
    if as_seat is None or as_seat == -1:
        return None
    if as_seat >= len(players):
        raise UsageError(f"--as-seat {as_seat}: the match has seats 0 to {len(players) - 1}", code="usage.seat")
    return as_seat


@app.command("verify")
@reports_errors
def verify(
    match: Annotated[str | None, typer.Argument(help="One match (default: every match in the log).")] = None,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Check the hash chain of every event, and each match's head in the catalogue."""
    with open_log(db) as store:
        findings = store.verify(match)
        count = store.count() if match is None else store.match(match).last_seq + 1
        matches = len(store.matches(limit=None)) if match is None else 1
    if json:
        emit_json(
            {
                "ok": not findings,
                "matches": matches,
                "events": count,
                "findings": [finding_dict(f) for f in findings],
            }
        )
    elif findings:
        for finding in findings:
            where = f" seq {finding.seq}" if finding.seq is not None else ""
            console.out(f"FAIL match {finding.match_id}{where} [{finding.code}] {finding.message}")
    else:
        console.out(f"ok: {matches} match{'es' if matches != 1 else ''}, {count} events, every hash chain verifies")
    if findings:
        raise typer.Exit(1)


@app.command("audit")
@reports_errors
def audit_command(
    match: Annotated[str | None, typer.Argument(help="One match (an id or a unique prefix).")] = None,
    all_matches: Annotated[bool, typer.Option("--all", help="Every match in the log.")] = False,
    seq: Annotated[
        int | None, typer.Option(min=0, help="The dispute report for this event of MATCH: the evidence about it.")
    ] = None,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Re-judge recorded matches by the rules, from the log alone; exit status 1 on any finding.

    Checks the hash chain, every accepted answer (legal, in turn), every rejection and removal (really
    against that rule), every undo, the outcome, and every die, shuffle and board: possible, and drawn
    from the seed the referee committed to before play and revealed at the end.
    With --seq N: the state before event N (as the referee and as the acting seat saw it), the answer,
    the ruling and its rule, the legal alternatives, and the hashes that prove the record unchanged.
    Example: matchlog audit --all      matchlog audit 01a1fd1f-6d40 --seq 17
    """
    if (match is None) == (not all_matches):
        raise UsageError("give one MATCH or --all", code="usage.arguments")
    if seq is not None and match is None:
        raise UsageError("--seq needs a MATCH", code="usage.arguments")
    with open_log(db) as store:
        if seq is not None:
            report = dispute(store, match, seq)  # type: ignore[arg-type]
            findings = report.findings
            if json:
                emit_json(report)
            else:
                print_dispute(report)
        else:
            ids = None if match is None else [store.resolve(match)]
            reports = list(audit(store, ids))
            findings = [f for r in reports for f in r.findings]
            if json:
                emit_json({"ok": not findings, "matches": reports})
            else:
                print_audit(reports)
    if findings:
        raise typer.Exit(1)


class By(StrEnum):
    player = "player"
    seat = "seat"


@app.command("stats")
@reports_errors
def stats(
    game: Annotated[str | None, typer.Argument(help="Only this game.")] = None,
    by: Annotated[By, typer.Option(help="Win rates by player (name and strategy) or by seat.")] = By.player,
    since: Annotated[
        str | None, typer.Option(help="Only matches started at or after this date (YYYY-MM-DD[THH:MM], UTC).")
    ] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print every figure as CSV rows instead of tables.")] = False,
    plot: Annotated[
        Path | None, typer.Option(help="Also draw the figures into this .png or .svg file (needs matplotlib).")
    ] = None,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Statistics across matches: win rates with 95% intervals, first-mover advantage, match length,
    rejection and removal rates, dice fairness (chi-square, per player and overall), and each game's
    own figures (guess accuracy, gammons and pips, fish per game and per penguin).

    Example: matchlog stats backgammon --by seat --since 2026-01-01 --plot stats.png
    """
    if game is not None:
        get_engine(game)
    if json and csv:
        raise UsageError("choose --json or --csv, not both", code="usage.arguments")
    started = _date(since) if since is not None else None
    with open_log(db) as store:
        result = statistics(store, game, by=by.value, since=started)
    if plot is not None:
        plot_statistics(result, plot)
    if json:
        emit_json(result)
    elif csv:
        print_statistics_csv(result)
    else:
        print_statistics(result)
        if plot is not None:
            console.out(f"\nplotted to {plot}")


def _date(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        raise UsageError(
            f"--since takes a date like 2026-11-21 or 2026-11-21T18:30, not {text!r}", code="usage.since"
        ) from None


@app.command("sql")
@reports_errors
def sql(
    query: Annotated[str, typer.Argument(help="A SELECT over the tables events, matches, seats.")],
    db: Db = DEFAULT_DB,
    json: Json = False,
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
) -> None:
    """Run read-only SQL on the log: it can neither change the log nor read or write other files."""
    open_log(db).close()  # first bring the catalogue up to date, should a writer have stopped short
    con = connect_read_only(db)
    try:
        relation = con.execute(query)
        columns = [d[0] for d in relation.description or []]
        rows = relation.fetchall()
    except duckdb.Error as error:
        raise MatchlogError(str(error).strip().splitlines()[0], code="sql.error") from None
    finally:
        con.close()
    if json:
        emit_json([dict(zip(columns, row, strict=True)) for row in rows])
    elif csv:
        import csv as csv_module

        writer = csv_module.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows([[_plain(v) for v in row] for row in rows])
    else:
        table = Table(show_edge=False, box=None, header_style="bold")
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*(_plain(v) for v in row))
        console.print(table)


def _plain(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    return str(value)


@app.command("schema")
@reports_errors
def schema(
    tag: Annotated[str | None, typer.Argument(help="One event type, e.g. porrinha.guess_made.")] = None,
) -> None:
    """Print the JSON Schema of every event (or of one)."""
    document = json_schema()
    if tag is not None:
        definitions = document["$defs"]
        found = [
            name for name, d in definitions.items() if d.get("properties", {}).get("type", {}).get("enum") == [tag]
        ]
        if not found:
            raise UsageError(f"no event type {tag!r}; `matchlog schema` lists them all", code="usage.tag")
        document = {"$ref": f"#/$defs/{found[0]}", "$defs": definitions}
    emit_json(document)


@app.command("games")
@reports_errors
def games(json: Json = False) -> None:
    """List the games, their built-in players and their options."""
    listing = []
    for name in game_names():
        spec = get_engine(name).spec
        listing.append(
            {
                "game": name,
                "title": spec.title,
                "players": [spec.min_players, spec.max_players],
                "chance": spec.chance,
                "hidden_information": spec.hidden,
                "tournament": spec.tournament,
                "options": msgspec.to_builtins(spec.options()),
                "builtin_players": builtin_names(name),
            }
        )
    if json:
        emit_json(listing)
        return
    for entry in listing:
        most = entry["players"][1] or "any number of"
        kind = (
            " (the record a knockout tournament keeps; see matchlog tournament --knockout)"
            if entry["tournament"]
            else ""
        )
        console.out(f"{entry['game']}: {entry['title']}, {entry['players'][0]} to {most} players{kind}")
        console.out("  options: " + ", ".join(f"{k}={v}" for k, v in entry["options"].items()))
        for name, summary_text in entry["builtin_players"].items():
            console.out(f"  player {name}: {summary_text}")


# -- writing -----------------------------------------------------------------------------------


@app.command("undo")
@reports_errors
def undo_command(
    match: Match,
    reason: Annotated[str, typer.Option(help="Why, for the record.")] = "",
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Take back a match's latest effective action (as an arbiter). The log keeps everything."""
    with open_log(db, create=True) as store:
        appended = undo(store, match, reason=reason)
        records = store.read(appended.match_id, start=appended.first_seq, stop=appended.first_seq)
    seqs = list(records[0].event.seqs)  # type: ignore[attr-defined]
    if json:
        emit_json({"match_id": str(appended.match_id), "seq": appended.first_seq, "undone": seqs})
    else:
        console.out(f"seq {appended.first_seq}: took back seq {', '.join(map(str, seqs))}")


@app.command("abandon")
@reports_errors
def abandon_command(
    match: Annotated[str | None, typer.Argument(help="One unfinished match (an id or a unique prefix).")] = None,
    all_running: Annotated[bool, typer.Option("--all-running", help="Every match still running.")] = False,
    reason: Annotated[str, typer.Option(help="Why, for the record.")] = "its referee stopped before the end",
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """End unfinished matches (their referee crashed or was killed) as abandoned, with a reason.

    Only do this when no referee is still recording them: it appends match.ended for each.
    Example: matchlog abandon --all-running --reason "the server lost power"
    """
    if (match is None) == (not all_running):
        raise UsageError("give one MATCH or --all-running", code="usage.arguments")
    with open_log(db) as store:
        ids = [m.match_id for m in store.matches(status="running", limit=None)] if all_running else [match]
        ended = [abandon(store, match_id, reason=reason).match_id for match_id in ids]  # type: ignore[arg-type]
    if json:
        emit_json({"abandoned": [str(m) for m in ended], "reason": reason})
    else:
        console.out(f"{len(ended)} match{'es' if len(ended) != 1 else ''} ended as abandoned: {reason}")


@app.command("fork")
@reports_errors
def fork_command(
    match: Match,
    at: Annotated[int, typer.Option("--at", help="The last seq to copy.", min=0)],
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Copy a match up to a seq into a new match (for what-if play); the new one records its origin."""
    with open_log(db, create=True) as store:
        source = store.resolve(match)
        new_id = fork(store, source, at)
    if json:
        emit_json({"match_id": str(new_id), "origin": {"match_id": str(source), "seq": at}})
    else:
        console.out(f"match {new_id} is a fork of {source} at seq {at}")


class Format(StrEnum):
    jsonl = "jsonl"
    parquet = "parquet"


@app.command("export")
@reports_errors
def export(
    match: Annotated[str | None, typer.Argument(help="The match to export.")] = None,
    all_matches: Annotated[bool, typer.Option("--all", help="Export every match.")] = False,
    format: Annotated[Format, typer.Option("--format", help="jsonl (re-importable) or parquet.")] = Format.jsonl,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (jsonl: default stdout).")
    ] = None,
    as_seat: Annotated[
        int | None,
        typer.Option(
            "--as-seat", min=-1, help="Only what this seat saw (-1: a spectator); JSON Lines, not importable."
        ),
    ] = None,
    db: Db = DEFAULT_DB,
) -> None:
    """Export matches: JSON Lines with the hash chain (for `import`), or Parquet for other tools."""
    if (match is None) == (not all_matches):
        raise UsageError("give one MATCH or --all", code="usage.export")
    with open_log(db) as store:
        ids = None if all_matches else [store.resolve(match)]  # type: ignore[arg-type]
        if as_seat is not None:
            if format is not Format.jsonl:
                raise UsageError("--as-seat exports JSON Lines only", code="usage.export")
            chosen = ids if ids is not None else [info.match_id for info in store.matches(limit=None)]
            viewer = None if as_seat == -1 else as_seat
            if output is None:
                count = export_seat_jsonl(store, sys.stdout.buffer, chosen, viewer)
                sys.stdout.buffer.flush()
            else:
                with output.open("wb") as out:
                    count = export_seat_jsonl(store, out, chosen, viewer)
        elif format is Format.parquet:
            if output is None:
                raise UsageError("parquet needs --output FILE", code="usage.export")
            count = store.export_parquet(output, ids)
        elif output is None:
            count = store.export_jsonl(sys.stdout.buffer, ids)
            sys.stdout.buffer.flush()
        else:
            partial = output.with_name(output.name + ".partial")
            with partial.open("wb") as out:
                count = store.export_jsonl(out, ids)
            partial.replace(output)
    if output is not None:
        console.out(f"{count} events written to {output}")


@app.command("import")
@reports_errors
def import_command(
    file: Annotated[Path, typer.Argument(help="A JSON Lines export.")],
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Import a JSON Lines export: every chain is checked; all of it lands, or none of it."""
    if not file.is_file():
        raise UsageError(f"{file} is not a file", code="usage.file")
    with open_log(db, create=True) as store, file.open("rb") as lines:
        appended = store.import_jsonl(lines)
    written = sum(a.written for a in appended)
    if json:
        emit_json({"matches": len(appended), "events": written, "match_ids": [str(a.match_id) for a in appended]})
    else:
        console.out(f"imported {written} events of {len(appended)} match{'es' if len(appended) != 1 else ''}")


# -- the main job ------------------------------------------------------------------------------


@app.command("demo")
@reports_errors
def demo(
    games: Annotated[int, typer.Option(min=1, help="Matches of each game to play.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed for chance and the players.")] = 2026,
    db: Db = DEFAULT_DB,
) -> None:
    """The main job: referee matches of every game into the log, then show statistics, a replay
    excerpt, a Fish board, and the audit of everything recorded."""
    example = Path(referee_package.__file__).resolve().parent / "example_player.py"
    tables = [
        (
            "Porrinha: 5 players, one a user class from a file",
            "porrinha",
            ["random", "reasoner", "cautious=" + f"{example}:CautiousPlayer", "random", "reasoner"],
            {"chopsticks": 3, "policy": "lenient"},
        ),
        ("backgammon: the heuristic player against random", "backgammon", ["heuristic", "random"], {}),
        (
            "Da Vinci Code: the seed's AI against random, with jokers",
            "davinci",
            ["seed-ai", "random", "seed-ai"],
            {"jokers": True},
        ),
        (
            "Fish: house players on a random board with holes",
            "fish",
            ["maximin:2", "maximin:1", "random"],
            {"rows": 5, "columns": 5, "random_board": True, "holes": 3, "one_fish": 2},
        ),
    ]
    for title, game, specs, options in tables:
        console.rule(f"[bold]play[/] {title}")
        _play(
            game, specs, options=options, games=games, seed=seed, timeout=DEFAULT_TIMEOUT, quiet=True, db=db, json=False
        )
    console.rule("[bold]stats[/]")
    stats(db=db)
    with open_log(db) as store:
        last = store.matches(game="porrinha", status="finished", limit=1)[0]
        board = store.matches(game="fish", status="finished", limit=1)[0]
    console.rule(f"[bold]replay[/] of Porrinha match {short(last.match_id)} (first 16 events)")
    replay(str(last.match_id), start=0, stop=15, as_seat=None, db=db, json=False)
    console.rule(f"[bold]show[/] the end of Fish match {short(board.match_id)}")
    show(str(board.match_id), db=db)
    console.rule("[bold]audit[/] of every match: the chain, every answer, ruling and die re-judged")
    audit_command(None, all_matches=True, db=db)


def main() -> None:
    """The console entry point."""
    app()
