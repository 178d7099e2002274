"""Changing the log by appending (`undo`, `abandon`, `fork`), and moving matches out and in
(`export`, `import`)."""

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from matchlog.events import MatchlogError, UsageError
from matchlog.replay import abandon, export_seat_jsonl, fork, import_jsonl, undo

from .base import (
    DEFAULT_DB,
    Db,
    Json,
    Match,
    app,
    open_log,
    reports_errors,
)
from .output import (
    console,
    emit_json,
    error_line,
)

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

            def skipped(match_id: object, error: MatchlogError) -> None:
                error_line(f"match {match_id} left out: {error.message}", error.code)

            if output is None:
                count = export_seat_jsonl(store, sys.stdout.buffer, chosen, viewer, on_skip=skipped)
                sys.stdout.buffer.flush()
            else:
                with output.open("wb") as out:
                    count = export_seat_jsonl(store, out, chosen, viewer, on_skip=skipped)
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
        appended = import_jsonl(store, lines)
    written = sum(a.written for a in appended)
    if json:
        emit_json({"matches": len(appended), "events": written, "match_ids": [str(a.match_id) for a in appended]})
    else:
        console.out(f"imported {written} events of {len(appended)} match{'es' if len(appended) != 1 else ''}")
