"""`matchlog tournament`: round-robin tournaments in worker processes, and knockouts."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer
from rich.table import Table

import matchlog.referee as referee_package
from matchlog.engines import get as get_engine
from matchlog.events import UsageError
from matchlog.referee import DEFAULT_TIMEOUT, Limits

if TYPE_CHECKING:
    from matchlog import Log

from .base import (
    DEFAULT_DB,
    FISH_TIMEOUT,
    MAX_GAMES,
    MAX_JOBS,
    MAX_SEAT,
    Db,
    GameOptions,
    GameTimeout,
    Json,
    Quiet,
    Seed,
    Server,
    app,
    game_options,
    open_log,
    players_option,
    reports_errors,
)
from .output import (
    console,
    emit_json,
    error_line,
    errors,
    finding_dict,
    short,
    short_spec,
)
from .play import InProcess, Memory, Unconfined, say_seeded, say_unconfined
from .rulings import print_series_rulings, series_rulings

# -- tournaments -------------------------------------------------------------------------------


@app.command("tournament")
@reports_errors
def tournament(
    game: Annotated[str, typer.Argument(help="The game (matchlog games lists them).")],
    player: Annotated[list[str], players_option("see matchlog games")],
    games: Annotated[
        int, typer.Option(min=1, max=MAX_GAMES, help="Matches in all, spread over every table and seat order.")
    ] = 100,
    jobs: Annotated[
        int | None,
        typer.Option(min=1, max=MAX_JOBS, help="Worker processes (default: one per core; at most the cores)."),
    ] = None,
    force_jobs: Annotated[
        bool, typer.Option("--force-jobs", help="Allow --jobs beyond the cores of this machine.")
    ] = False,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Play the games as tasks on the Ray cluster at ADDRESS (host:port, auto, local, ray://...) "
            "instead of worker processes here; needs matchlog[ray].",
        ),
    ] = None,
    seats: Annotated[
        int | None, typer.Option(min=1, max=MAX_SEAT + 1, help="Players per table (default: the game's least).")
    ] = None,
    option: GameOptions = None,
    seed: Seed = None,
    timeout: GameTimeout = None,
    knockout: Annotated[
        bool,
        typer.Option(
            "--knockout",
            help="A knockout instead (the Fish course's): players in sign-up order at tables of up to 4, "
            "each table's winners go on, until a final table or a round nobody loses.",
        ),
    ] = False,
    in_process: InProcess = False,
    unconfined: Unconfined = False,
    memory: Memory = 1024,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    server: Server = None,
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

    game, settings = game_options(game, option)
    get_engine(game)
    if ray is not None and (jobs is not None or knockout):
        raise UsageError(
            "--ray plays a round-robin on a cluster: it takes neither --jobs nor --knockout", code="usage.ray"
        )
    if timeout is None:
        timeout = FISH_TIMEOUT if game == "fish" else DEFAULT_TIMEOUT
    limits = Limits(memory=memory << 20, unconfined=unconfined)
    say_unconfined(unconfined)
    say_seeded(game, player, seed)
    if knockout:
        from matchlog.referee.channel import close_players

        with open_log(db, server, create=True) as store:
            seats = referee_package.seats_from_specs(game, player, in_process=in_process, limits=limits)
            base = random.Random(seed)
            players: list[object] = []
            try:
                for s in seats:
                    rng = random.Random(base.randrange(2**63))
                    players.append(
                        referee_package.make_player(game, s.player, rng, in_process=in_process, limits=limits)
                    )
                result = referee_package.run_knockout(
                    game,
                    seats,
                    players,
                    options=settings,
                    store=store,
                    timeout=timeout,
                    seed=base.randrange(2**63),
                    on_event=None if json or quiet else knockout_progress(),
                )
            finally:
                close_players(players)
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

    with open_log(db, server, create=True) as store:
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
                in_process=in_process,
                limits=limits,
                force_jobs=force_jobs,
                pool=_ray_pool(ray) if ray is not None else None,
            )
        finally:
            if progress.live.is_started:  # stopping one never started would print a blank line
                progress.stop()
    with open_log(db, server) as store:
        rulings = series_rulings(store, result.tournament_id)
    if json:
        emit_json({**msgspec.to_builtins(result), "rulings": rulings})
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
        print_series_rulings(rulings, result.finished + result.unfinished)
    for failure in result.failures[:5]:
        error_line(failure, "tournament.failed")
    if len(result.failures) > 5:
        error_line(f"... and {len(result.failures) - 5} more (--json lists them all)", "tournament.failed")
    if result.findings or result.failures:
        raise typer.Exit(1)
    if result.interrupted:
        raise typer.Exit(130)


def _ray_pool(address: str) -> Any:
    """The pool that plays on the Ray cluster at `address` (ray is imported only now).

    Raises:
        UsageError: ray is not installed.
    """
    from matchlog.cluster import require_ray

    require_ray()
    from matchlog.cluster import ray_pool

    return ray_pool(address)


def knockout_progress() -> Callable[[Any, Any], None]:
    """An on_event callback printing each game of a knockout as it is recorded."""
    from matchlog.engines.knockout import ENGINE as KNOCKOUT
    from matchlog.events import KnockoutGamePlayed, PlayerRemoved

    last: list[Any] = []

    def heard(event: Any, state: Any) -> None:
        if last and isinstance(event, KnockoutGamePlayed | PlayerRemoved):
            console.out(KNOCKOUT.describe(last[-1], event, state))
        last[:] = [state]

    return heard


def report_knockout(store: Log, db: Path, result: Any, *, json: bool) -> None:
    """A finished knockout, checked against the log: as JSON, or as its winners and places."""
    findings = store.verify([result.tournament_id, *(g.match_id for g in result.games)]).findings
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
