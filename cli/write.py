"""Changing the log by appending (`undo`, `abandon`, `fork`), and moving matches out and in
(`export`, `import`)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated

import typer

from matchlog.events import UsageError

from .base import (
    DEFAULT_DB,
    Db,
    Json,
    Match,
    Server,
    app,
    open_log,
    reports_errors,
)
from .output import (
    console,
    emit_json,
)


@app.command("undo")
@reports_errors
def undo_command(
    match: Match,
    reason: Annotated[str, typer.Option(help="Why, for the record.")] = "",
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Take back a match's latest effective action (as an arbiter). The log keeps everything."""
    with open_log(db, server) as log:
        appended = log.undo(match, reason=reason)
        line = log.lines(appended.match_id, start=appended.first_seq, stop=appended.first_seq)[0]
    seqs = list(line.event.seqs)  # type: ignore[attr-defined]
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
    server: Server = None,
    json: Json = False,
) -> None:
    """End unfinished matches (their referee crashed or was killed) as abandoned, with a reason.

    Only do this when no referee is still recording them: it appends match.ended for each.
    Example: matchlog abandon --all-running --reason "the server lost power"
    """
    if (match is None) == (not all_running):
        raise UsageError("give one MATCH or --all-running", code="usage.arguments")
    with open_log(db, server) as log:
        ids = [m.match_id for m in log.matches(status="running")] if all_running else [match]
        ended = [log.abandon(match_id, reason=reason).match_id for match_id in ids]  # type: ignore[arg-type]
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
    server: Server = None,
    json: Json = False,
) -> None:
    """Copy a match up to a seq into a new match (for what-if play); the new one records its origin."""
    with open_log(db, server) as log:
        source = log.info(match).match_id
        new_id = log.fork(source, at)
    if json:
        emit_json({"match_id": str(new_id), "origin": {"match_id": str(source), "seq": at}})
    else:
        console.out(f"match {new_id} is a fork of {source} at seq {at}")


class Format(StrEnum):
    jsonl = "jsonl"
    parquet = "parquet"
    html = "html"


@app.command("export")
@reports_errors
def export(
    match: Annotated[str | None, typer.Argument(help="The match to export.")] = None,
    all_matches: Annotated[bool, typer.Option("--all", help="Export every match.")] = False,
    format: Annotated[
        Format, typer.Option("--format", help="jsonl (re-importable), parquet, or html (one match's replay).")
    ] = Format.jsonl,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (jsonl: default stdout).")
    ] = None,
    as_seat: Annotated[
        int | None,
        typer.Option(
            "--as-seat", min=-1, help="Only what this seat saw (-1: a spectator); JSON Lines (not importable) or HTML."
        ),
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
) -> None:
    """Export matches: JSON Lines with the hash chain (for `import`), Parquet for other tools, or one
    match as an HTML page that replays it in a browser with no server and no network.

    Example: matchlog export 01a2 --format html -o match.html --as-seat 0
    """
    if (match is None) == (not all_matches):
        raise UsageError("give one MATCH or --all", code="usage.export")
    if as_seat is not None and format is Format.parquet:
        raise UsageError("--as-seat exports JSON Lines or HTML", code="usage.export")
    if format is Format.html and all_matches:
        raise UsageError("an HTML export replays one MATCH", code="usage.export")
    if format is Format.parquet and output is None:
        raise UsageError("parquet needs --output FILE", code="usage.export")
    with open_log(db, server) as log:
        ids = None if all_matches else [log.info(match).match_id]  # type: ignore[arg-type]

        def write(out: IO[bytes]) -> int:
            if format is Format.html:
                from matchlog.service.html_export import write_html

                return write_html(log, ids[0], out, as_seat=as_seat)  # type: ignore[index]
            return log.export(out, ids, format=format.value, as_seat=as_seat)

        if output is None:
            count = write(sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            # Written whole, then renamed: a reader never finds half a file under that name.
            partial = output.with_name(output.name + ".partial")
            try:
                with partial.open("wb") as out:
                    count = write(out)
                partial.replace(output)
            finally:
                partial.unlink(missing_ok=True)
    if output is not None:
        console.out(f"{count} events written to {output}")


@app.command("import")
@reports_errors
def import_command(
    file: Annotated[Path, typer.Argument(help="A JSON Lines export.")],
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Import a JSON Lines export: every chain is checked; all of it lands, or none of it."""
    if not file.is_file():
        raise UsageError(f"{file} is not a file", code="usage.file")
    with open_log(db, server, create=True) as log, file.open("rb") as lines:
        appended = log.import_jsonl(lines)
    written = sum(a.written for a in appended)
    if json:
        emit_json({"matches": len(appended), "events": written, "match_ids": [str(a.match_id) for a in appended]})
    else:
        console.out(f"imported {written} events of {len(appended)} match{'es' if len(appended) != 1 else ''}")
