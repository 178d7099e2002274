"""`matchlog dataset`: recorded decisions as a training dataset (Parquet and a dataset card)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from matchlog.events import UsageError

from .base import DEFAULT_DB, MAX_SEAT, Db, Json, Server, app, open_log, reports_errors, since_option
from .output import console, emit_json


@app.command("dataset")
@reports_errors
def dataset(
    output: Annotated[Path, typer.Option("--output", "-o", help="The directory to write (new, or empty).")],
    game: Annotated[str | None, typer.Option(help="Only this game.")] = None,
    player: Annotated[str | None, typer.Option(help="Only matches with a seat of this name or strategy.")] = None,
    series: Annotated[
        str | None, typer.Option(help="Only the matches of this series (its id or a start of it).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Only matches started at or after this date (YYYY-MM-DD[THH:MM], UTC).")
    ] = None,
    as_seat: Annotated[
        int | None, typer.Option("--as-seat", min=0, max=MAX_SEAT, help="Only this seat's decisions, as it saw them.")
    ] = None,
    per_seat: Annotated[
        bool, typer.Option("--per-seat", help="Every seat's decisions, each as its seat saw them (the default).")
    ] = False,
    split: Annotated[
        str | None,
        typer.Option(help="Split by match, e.g. train=0.8,test=0.2 (a match's id decides its split; default: train)."),
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Write the ended matches as a training dataset: one Parquet row per decision, holding only what
    the deciding seat saw (its observation encoded for the game, the legal actions, the action, the
    reward at its last decision) with the event's hash and Merkle leaf, so any row can be proven with
    `matchlog prove`; a row per match; the checkpoint the rows are proven against; and a dataset card.
    `datasets.load_dataset("parquet", data_dir=DIR)` and polars read it as it is.

    Example: matchlog dataset -o bg-data --game backgammon --split train=0.9,test=0.1
    """
    from matchlog.dataset import parse_split, write_dataset

    if as_seat is not None and per_seat:
        raise UsageError("choose --as-seat or --per-seat, not both", code="usage.arguments")
    splits = parse_split(split)
    started = since_option(since)
    with open_log(db, server) as log:
        summary = write_dataset(
            log,
            output,
            game=game,
            player=player,
            series=series,
            since=started,
            as_seat=as_seat,
            split=splits,
            command=_described(game, player, series, since, as_seat, split),
        )
    if json:
        emit_json(summary)
        return
    for name in summary.matches:
        console.out(f"{name}: {summary.matches[name]:,} matches, {summary.steps[name]:,} steps")
    for match_id, why in summary.skipped:
        console.out(f"left out {match_id}: {why}")
    console.out(f"written to {summary.path} (proven against a checkpoint of {summary.checkpoint_size:,} events)")


def _described(
    game: str | None, player: str | None, series: str | None, since: str | None, as_seat: int | None, split: str | None
) -> str:
    """The command line that chose the matches, as the card shows it."""
    words = ["matchlog", "dataset"]
    for option, value in (("--game", game), ("--player", player), ("--series", series), ("--since", since)):
        if value is not None:
            words += [option, value]
    if as_seat is not None:
        words += ["--as-seat", str(as_seat)]
    if split is not None:
        words += ["--split", split]
    return shlex.join(words)
