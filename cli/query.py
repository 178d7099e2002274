"""Questions across matches: `stats`, `sql`, and the reference commands `schema` and `games`."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.markup import escape
from rich.table import Table

from matchlog.engines import get as get_engine
from matchlog.engines import names as game_names
from matchlog.events import UsageError, json_schema
from matchlog.referee import builtin_names
from matchlog.store.limits import DEFAULT_SQL_ROWS, DEFAULT_SQL_TIMEOUT

from .base import (
    DEFAULT_DB,
    MAX_TIMEOUT,
    Archive,
    Db,
    Json,
    Server,
    app,
    open_log,
    reports_errors,
    since_option,
)
from .output import (
    console,
    csv_writer,
    emit_json,
    errors,
    print_statistics,
    print_statistics_csv,
)
from .plots import plot_statistics


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
    server: Server = None,
    archive: Archive = None,
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
    started = since_option(since)
    with open_log(db, server, archive=archive) as log:
        result = log.stats(game, by=by.value, since=started)
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


@app.command("sql")
@reports_errors
def sql(
    query: Annotated[
        str, typer.Argument(help="One SELECT over the tables events, matches, seats, figures and the views.")
    ],
    timeout: Annotated[
        float, typer.Option(min=0.001, max=MAX_TIMEOUT, help="Stop the query after this many seconds.")
    ] = DEFAULT_SQL_TIMEOUT,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, max=10_000_000, help="Print at most this many rows.")
    ] = DEFAULT_SQL_ROWS,
    db: Db = DEFAULT_DB,
    server: Server = None,
    archive: Archive = None,
    json: Json = False,
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
) -> None:
    """Run one SELECT on the log, where nothing can change it (a read-only transaction, always rolled
    back, with no access to files or settings). It stops after --timeout seconds (or at Ctrl-C),
    prints at most --max-rows rows and fetches at most 64 MB of them; DuckDB's memory limit is
    $MATCHLOG_MEMORY_LIMIT (default: a quarter of the machine's memory).

    Example: matchlog sql "SELECT player, avg(place) FROM seats GROUP BY player"
    """
    if json and csv:
        raise UsageError("choose --json or --csv, not both", code="usage.arguments")
    with open_log(db, server, archive=archive) as log:
        result = log.sql(query, timeout=timeout, max_rows=max_rows)
    columns, rows = result.columns, result.rows
    if json:
        emit_json([dict(zip(columns, row, strict=True)) for row in rows])
    elif csv:
        writer = csv_writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows([[_plain(v) for v in row] for row in rows])
    else:
        table = Table(show_edge=False, box=None, header_style="bold")
        for column in columns:
            table.add_column(escape(column))
        for row in rows:
            table.add_row(*(escape(_plain(v)) for v in row))
        console.print(table)
    if result.truncated:
        errors.print(f"(only the first {max_rows} rows: give --max-rows for more)", markup=False)


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
    json: Annotated[bool, typer.Option("--json", help="Without TAG: the JSON Schema of every event.")] = False,
) -> None:
    """List the event types, one a line with what each records; with TAG, print that event's JSON
    Schema; with --json, the JSON Schema of every event.

    Example: matchlog schema porrinha.guess_made
    """
    document = json_schema()
    definitions = document["$defs"]
    by_tag = {d.get("properties", {}).get("type", {}).get("enum", [None])[0]: name for name, d in definitions.items()}
    if tag is not None:
        if tag not in by_tag:
            raise UsageError(f"no event type {tag!r}; `matchlog schema` lists them all", code="usage.tag")
        emit_json(json_schema(tag))
    elif json:
        emit_json(document)
    else:
        tags = sorted(t for t in by_tag if t)
        width = max(map(len, tags))
        for name in tags:
            said = (definitions[by_tag[name]].get("description") or "").strip().splitlines()
            console.out(f"{name:<{width}}  {said[0] if said else ''}", highlight=False)


@app.command("games")
@reports_errors
def games(json: Json = False) -> None:
    """List the games (ours and every plugin's), their built-in players and their options, and name
    each game plugin that did not load, with the reason."""
    from matchlog.engines import failures, families

    listing: list[dict[str, Any]] = []
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
    for name, family in sorted(families().items()):
        reason = family.available()
        listing.append(
            {"game": f"{name}:GAME", "title": family.title, "family": True, "examples": list(family.examples)}
            | ({"failed": reason} if reason else {})
        )
    listing += [{"game": name, "failed": reason} for name, reason in sorted(failures().items())]
    if json:
        emit_json(listing)
        return
    for entry in listing:
        if "failed" in entry:
            console.out(f"{entry['game']}: did not load: {entry['failed']}", highlight=False)
            continue
        if entry.get("family"):
            console.out(f"{entry['game']}: {entry['title']}, e.g. " + ", ".join(entry["examples"]), highlight=False)
            continue
        least, most = entry["players"]
        table = (
            f"{least} players"
            if least == most
            else f"{least} or more players"
            if most is None
            else f"{least} to {most} players"
        )
        kind = (
            " (the record a knockout tournament keeps; see matchlog tournament --knockout)"
            if entry["tournament"]
            else ""
        )
        console.out(f"{entry['game']}: {entry['title']}, {table}{kind}")
        console.out("  options: " + ", ".join(f"{k}={v}" for k, v in entry["options"].items()))
        for name, summary_text in entry["builtin_players"].items():
            console.out(f"  player {name}: {summary_text}")
