"""Questions across matches: `stats`, `sql`, and the reference commands `schema` and `games`."""

import sys
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import duckdb
import msgspec
import typer
from rich.table import Table

from matchlog.engines import get as get_engine
from matchlog.engines import names as game_names
from matchlog.events import MatchlogError, UsageError, json_schema
from matchlog.referee import builtin_names
from matchlog.replay import statistics
from matchlog.store import connect_read_only

from .base import (
    DEFAULT_DB,
    Db,
    Json,
    app,
    open_log,
    reports_errors,
)
from .output import (
    console,
    csv_writer,
    emit_json,
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
        writer = csv_writer(sys.stdout)
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
