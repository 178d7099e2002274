"""Reading matches: `list`, `show` and `replay`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from matchlog.events import UsageError

from .base import (
    DEFAULT_DB,
    MAX_SEQ,
    Archive,
    AsSeat,
    Db,
    Json,
    Match,
    Server,
    app,
    open_log,
    reports_errors,
    since_option,
)
from .output import (
    console,
    emit_json,
    match_dict,
    matches_table,
    when,
)

if TYPE_CHECKING:
    from matchlog.api import Line


@app.command("list")
@reports_errors
def list_matches(
    game: Annotated[str | None, typer.Option(help="Only this game.")] = None,
    status: Annotated[str | None, typer.Option(help="Only running, finished or abandoned matches.")] = None,
    player: Annotated[str | None, typer.Option(help="Only matches with a seat of this name or strategy.")] = None,
    since: Annotated[
        str | None, typer.Option(help="Only matches started at or after this date (YYYY-MM-DD[THH:MM], UTC).")
    ] = None,
    limit: Annotated[
        int, typer.Option(min=1, max=MAX_SEQ, clamp=True, help="At most this many, newest first (a huge number: all).")
    ] = 50,
    offset: Annotated[int, typer.Option(min=0, max=1_000_000_000, help="Skip this many first (paging).")] = 0,
    db: Db = DEFAULT_DB,
    server: Server = None,
    archive: Archive = None,
    json: Json = False,
) -> None:
    """List the matches in the log, newest first."""
    started = since_option(since)
    with open_log(db, server, archive=archive) as log:
        found = log.matches(game=game, status=status, player=player, since=started, limit=limit, offset=offset)
    if json:
        emit_json([match_dict(info) for info in found])
    elif not found:
        console.out("no matches")
    else:
        console.print(matches_table(found))


@app.command("show")
@reports_errors
def show(
    match: Match,
    at: Annotated[
        int | None, typer.Option("--at", min=0, max=MAX_SEQ, help="The state after this seq (default: the last).")
    ] = None,
    as_seat: AsSeat = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    archive: Archive = None,
    json: Json = False,
) -> None:
    """Show a match's state at a seq, as the referee saw it or as one seat did."""
    with open_log(db, server, archive=archive) as log:
        info = log.info(match, as_seat=as_seat)  # its catalogue row as the seat may know it, too
        position = log.state(info.match_id, at, as_seat=as_seat)
    if json:
        emit_json(
            {
                "match": match_dict(info),
                "seq": position.seq,
                "as_seat": as_seat,
                "state": msgspec.to_builtins(position.state),
                "to_act": msgspec.to_builtins(position.to_act) if position.to_act else None,
                "outcome": msgspec.to_builtins(position.outcome) if position.outcome else None,
            }
        )
        return
    seen_by = "a spectator" if as_seat == -1 else info.players[as_seat] if as_seat is not None else ""
    viewer = f" as {seen_by}" if seen_by else ""
    console.out(f"match {info.match_id} · {info.game} · seq {position.seq} of {info.last_seq}{viewer}")
    console.out(position.text)


@app.command("replay")
@reports_errors
def replay(
    match: Match,
    start: Annotated[int, typer.Option("--from", help="First seq to print.", min=0, max=MAX_SEQ)] = 0,
    stop: Annotated[int | None, typer.Option("--to", help="Last seq to print.", min=0, max=MAX_SEQ)] = None,
    as_seat: AsSeat = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    archive: Archive = None,
    json: Json = False,
) -> None:
    """Replay a match step by step: one event a line, with what it changed (a backgammon turn's
    checkers on one line, its seqs joined: 14-15)."""
    if stop is not None and stop < start:
        raise UsageError(f"--to {stop} comes before --from {start}: give the first seq first", code="usage.range")
    with open_log(db, server, archive=archive) as log:
        info = log.info(match)
        lines = log.lines(info.match_id, start=start, stop=stop, as_seat=as_seat)
    if json:
        emit_json(
            [
                {
                    "seq": line.seq,
                    "at": when(line.at_us),
                    "actor": line.actor,
                    "type": line.type,
                    "event": msgspec.to_builtins(line.event),
                    "text": line.text,
                    "undone_by": line.undone_by,
                    "joins": line.joins,
                }
                for line in lines
            ]
        )
        return
    for first, last in joined(lines):
        actor = "referee" if last.actor is None else _seat_name(info.players, last.actor)
        undone = f"  (taken back at seq {last.undone_by})" if last.undone_by is not None else ""
        seqs = f"{first.seq}" if first is last else f"{first.seq}-{last.seq}"
        console.out(f"{seqs:>5}  {when(first.at_us)}  {actor:<12}  {last.text}{undone}")


def joined(lines: list[Line]) -> list[tuple[Line, Line]]:
    """The lines as a reader sees them: a line that goes on the one before it (`Line.joins`) is
    shown with it, as (first, last) of each run."""
    runs: list[tuple[Line, Line]] = []
    for line in lines:
        if line.joins and runs:
            runs[-1] = (runs[-1][0], line)
        else:
            runs.append((line, line))
    return runs


def _seat_name(players: tuple[str, ...], seat: int) -> str:
    """A seat's name (a seat the table does not have, in a log edited by hand, by its number)."""
    return players[seat] if 0 <= seat < len(players) else f"seat {seat}"
