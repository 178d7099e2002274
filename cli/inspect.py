"""Reading matches: `list`, `show` and `replay`."""

from typing import Annotated

import msgspec
import typer

from matchlog.engines import get as get_engine
from matchlog.replay import seat_catalogue, seat_lines, seat_state_at, state_at, timeline

from .base import (
    DEFAULT_DB,
    AsSeat,
    Db,
    Json,
    Match,
    app,
    open_log,
    reports_errors,
    seat_of,
)
from .output import (
    console,
    emit_json,
    match_dict,
    matches_table,
    when,
)

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
        if as_seat is not None:
            seen = seat_state_at(store, info.match_id, at, as_seat)
            seq, state, turn, outcome, text = seen.seq, seen.state, seen.to_act, seen.outcome, seen.text
            info = seat_catalogue(info, get_engine(info.game))
        else:
            current = state_at(store, info.match_id, at)
            engine, state, seq = current.engine, current.state, current.seq
            turn, outcome, text = engine.to_act(state), engine.outcome(state), engine.render(state)
    if json:
        emit_json(
            {
                "match": match_dict(info),
                "seq": seq,
                "as_seat": as_seat,
                "state": msgspec.to_builtins(state),
                "to_act": msgspec.to_builtins(turn) if turn else None,
                "outcome": msgspec.to_builtins(outcome) if outcome else None,
            }
        )
        return
    seat = seat_of(as_seat, info.players)
    viewer = "" if as_seat is None else f" as {'a spectator' if seat is None else info.players[seat]}"
    console.out(f"match {info.match_id} · {info.game} · seq {seq} of {info.last_seq}{viewer}")
    console.out(text)


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
    seat = seat_of(as_seat, info.players)
    if as_seat is not None:
        lines = [
            (line.seq, line.at_us, line.actor, line.event, line.text, line.undone_by)
            for line in seat_lines(records, seat)
        ]
    else:
        lines = [
            (s.record.seq, s.record.at_us, s.record.actor, s.event, s.text, s.undone_by) for s in timeline(records)
        ]
    lines = [line for line in lines if line[0] >= start]
    if json:
        emit_json(
            [
                {
                    "seq": seq,
                    "at": when(at_us),
                    "actor": actor,
                    "type": event.tag,
                    "event": msgspec.to_builtins(event),
                    "text": text,
                    "undone_by": undone_by,
                }
                for seq, at_us, actor, event, text, undone_by in lines
            ]
        )
        return
    for seq, at_us, actor, _, text, undone_by in lines:
        who = "referee" if actor is None else info.players[actor]
        undone = f"  (taken back at seq {undone_by})" if undone_by is not None else ""
        console.out(f"{seq:>5}  {when(at_us)}  {who:<12}  {text}{undone}")
