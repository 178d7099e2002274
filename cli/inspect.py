"""Reading matches: `list`, `show` and `replay`."""

from typing import Annotated

import msgspec
import typer

from matchlog.replay import state_at, timeline

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
        current = state_at(store, info.match_id, at)
    engine, state = current.engine, current.state
    seat = seat_of(as_seat, info.players)
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
    seat = seat_of(as_seat, info.players)
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
