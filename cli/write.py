"""Changing the log by appending (`undo`, `abandon`, `fork`), and moving matches out and in
(`export`, `import`)."""

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from matchlog import formats
from matchlog.events import ImportRejected, StoreError, UsageError
from matchlog.replay import abandon, export_seat_jsonl, fork, undo

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
    mat = "mat"
    sgf = "sgf"
    fish_state = "fish-state"
    text = "text"


@app.command("export")
@reports_errors
def export(
    match: Annotated[str | None, typer.Argument(help="The match to export.")] = None,
    all_matches: Annotated[bool, typer.Option("--all", help="Export every match.")] = False,
    format: Annotated[
        Format,
        typer.Option(
            "--format",
            help="jsonl (re-importable), parquet; other tools' records of one match: mat and sgf "
            "(backgammon, GNU Backgammon's), fish-state (the course's State JSON), text (porrinha, davinci).",
        ),
    ] = Format.jsonl,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (default stdout).")] = None,
    at: Annotated[int | None, typer.Option("--at", min=0, help="fish-state: the State at this seq.")] = None,
    as_seat: Annotated[
        int | None,
        typer.Option(
            "--as-seat", min=-1, help="Only what this seat saw (-1: a spectator); JSON Lines, not importable."
        ),
    ] = None,
    db: Db = DEFAULT_DB,
) -> None:
    """Export matches: JSON Lines with the hash chain (for `import`), Parquet for analysis, or one
    match as another tool's record (--format mat, sgf, fish-state, text)."""
    if (match is None) == (not all_matches):
        raise UsageError("give one MATCH or --all", code="usage.export")
    if at is not None and format is not Format.fish_state:
        raise UsageError("--at is for --format fish-state", code="usage.export")
    with open_log(db) as store:
        ids = None if all_matches else [store.resolve(match)]  # type: ignore[arg-type]
        if format.value in formats.FORMATS:
            if ids is None or as_seat is not None:
                raise UsageError(
                    f"--format {format.value} exports one MATCH, as the referee saw it", code="usage.export"
                )
            text = formats.export(store.read(ids[0]), format.value, at=at)
            if output is None:
                sys.stdout.buffer.write(text.encode())
                return
            output.with_name(output.name + ".partial").write_bytes(text.encode())
            output.with_name(output.name + ".partial").replace(output)
            count = text.count("\n")
        elif as_seat is not None:
            if format is not Format.jsonl:
                raise UsageError("--as-seat exports JSON Lines only", code="usage.export")
            chosen = ids if ids is not None else [info.match_id for info in store.matches(limit=None)]
            viewer = None if as_seat == -1 else as_seat
            if output is None:
                count = export_seat_jsonl(store, sys.stdout.buffer, chosen, viewer)
                sys.stdout.buffer.flush()
            else:
                with output.open("wb") as out:
                    count = export_seat_jsonl(store, out, chosen, viewer)
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
        console.out(f"{count} {'lines' if format.value in formats.FORMATS else 'events'} written to {output}")


@app.command("import")
@reports_errors
def import_command(
    file: Annotated[Path, typer.Argument(help="A JSON Lines export, or a .mat, .sgf, .json (Fish States) or .txt.")],
    format: Annotated[
        Format | None, typer.Option("--format", help="Read the file as this format (default: by its extension).")
    ] = None,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Import a JSON Lines export (every chain is checked), or another tool's record (every move is
    judged by the rules); all of it lands, or none of it."""
    if not file.is_file():
        raise UsageError(f"{file} is not a file", code="usage.file")
    kind = format.value if format is not None else formats.format_of(file)
    if kind in formats.FORMATS:
        matches = formats.read(file.read_bytes(), kind)
        with open_log(db, create=True) as store:
            try:
                appended = store.append_bulk(formats.batches(matches))
            except StoreError as error:
                raise ImportRejected(f"{error.message}; nothing was imported") from None
    else:
        with open_log(db, create=True) as store, file.open("rb") as lines:
            appended = store.import_jsonl(lines)
    written = sum(a.written for a in appended)
    if json:
        emit_json({"matches": len(appended), "events": written, "match_ids": [str(a.match_id) for a in appended]})
    else:
        console.out(f"imported {written} events of {len(appended)} match{'es' if len(appended) != 1 else ''}")
