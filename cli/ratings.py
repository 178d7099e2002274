"""`matchlog ratings`: who leads and by how much, computed again from the log's ended matches."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from matchlog.engines import get as get_engine
from matchlog.events import UsageError

from .base import DEFAULT_DB, Db, Json, Server, app, open_log, reports_errors, since_option
from .output import console, csv_writer, emit_json


def aliases_option(given: list[str]) -> dict[str, str]:
    """--alias OLD=NEW pairs as a dict.

    Raises:
        UsageError: one is not OLD=NEW.
    """
    aliases: dict[str, str] = {}
    for pair in given:
        old, equals, new = pair.partition("=")
        if not equals or not old.strip() or not new.strip():
            raise UsageError(f"--alias takes OLD=NEW, not {pair!r}", code="usage.alias")
        aliases[old.strip()] = new.strip()
    return aliases


@app.command("ratings")
@reports_errors
def ratings(
    game: Annotated[str | None, typer.Argument(help="Only this game (else a table for each game).")] = None,
    since: Annotated[
        str | None, typer.Option(help="Only matches ended at or after this date (YYYY-MM-DD[THH:MM], UTC).")
    ] = None,
    series: Annotated[
        str | None, typer.Option(help="Only the matches of this series, tournament or duel (its id).")
    ] = None,
    player: Annotated[
        list[str] | None, typer.Option("--player", "-p", help="Show only this player (the fit uses everyone).")
    ] = None,
    alias: Annotated[
        list[str] | None,
        typer.Option("--alias", metavar="OLD=NEW", help="Count the name OLD as the player NEW (strategies merged)."),
    ] = None,
    anchor: Annotated[
        str | None, typer.Option(help="The player at Elo 0 of the Bradley-Terry fit (default: who played most).")
    ] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV rows instead of a table.")] = False,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Ratings of every player from the ended matches of the log, computed again each time: Weng-Lin
    (μ, σ and μ - 3σ, provisional while σ is large) for a leaderboard, and Bradley-Terry Elo with a
    95% interval relative to an anchor player, for fixed versions of programs.

    Example: matchlog ratings backgammon --anchor random
    """
    if game is not None:
        get_engine(game)
    if json and csv:
        raise UsageError("choose --json or --csv, not both", code="usage.arguments")
    with open_log(db, server) as log:
        table = log.rating_table(
            game,
            since=since_option(since),
            series=series,
            players=player or (),
            aliases=aliases_option(alias or []),
            anchor=anchor,
        )
    if json:
        emit_json(table)
        return
    columns = ["game", "player", "strategy", "matches", "wins", "draws", "losses", "μ", "σ", "μ-3σ", "Elo (95% CI)"]
    if csv:
        out = csv_writer(typer.get_text_stream("stdout"))
        out.writerow([*columns[:7], "mu", "sigma", "conservative", "provisional", "elo", "elo_low", "elo_high"])
        for r in table.ratings:
            numbers = [r.matches, r.wins, r.draws, r.losses, r.mu, r.sigma, r.conservative, r.provisional]
            out.writerow([r.game, r.player, " ".join(r.strategies), *numbers, r.elo, r.elo_low, r.elo_high])
        return
    screen = Table(show_edge=False, box=None, header_style="bold", pad_edge=False, collapse_padding=True)
    for index, column in enumerate(columns):
        screen.add_column(column, justify="left" if index < 3 else "right", overflow="fold")
    for r in table.ratings:
        elo = "-" if r.elo is None else f"{r.elo:+.0f} ({r.elo_low:+.0f} to {r.elo_high:+.0f})"
        screen.add_row(
            r.game,
            r.player + (" ?" if r.provisional else ""),
            " ".join(r.strategies),
            str(r.matches),
            str(r.wins),
            str(r.draws),
            str(r.losses),
            f"{r.mu:.1f}",
            f"{r.sigma:.1f}",
            f"{r.conservative:.1f}",
            elo,
        )
    console.print(screen)
    anchors = sorted({r.anchor for r in table.ratings if r.anchor})
    console.out(
        f"{table.matches} ended match{'es' if table.matches != 1 else ''} (the log up to event {table.head + 1:,});"
        f" ? = provisional (σ > {table.provisional_sigma:g}); Elo relative to {', '.join(anchors) or 'nobody'}"
        + (f"; {table.skipped} left out (one player at two seats, or places not one per seat)" if table.skipped else "")
    )
