"""Changing the log by appending (`undo`, `abandon`, `fork`), and moving matches out and in
(`export`, `import`)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated

import typer

from matchlog.events import ImportRejected, MatchlogError, StoreError, UsageError, encode

from .base import (
    DEFAULT_DB,
    MAX_SEAT,
    MAX_SEQ,
    MAX_TIMEOUT,
    Db,
    Json,
    Match,
    Seed,
    Server,
    app,
    open_log,
    read_file,
    reports_errors,
)
from .output import (
    console,
    emit_json,
    error_line,
    errors,
    short,
)
from .play import resume_and_report


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
    at: Annotated[int, typer.Option("--at", help="The last seq to copy.", min=0, max=MAX_SEQ)],
    player: Annotated[
        list[str] | None,
        typer.Option(
            "--player",
            "-p",
            metavar="SPEC",
            help="Play the fork on at once with these players, one per seat in seat order (as `resume`).",
        ),
    ] = None,
    seed: Seed = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            min=0.001, max=MAX_TIMEOUT, help="With -p: seconds a user player may take per call (30 for Fish, else 10)."
        ),
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Copy a match up to a seq into a new match (for what-if play); the new one records its origin.

    With -p the fork is played on to its end at once, as `matchlog resume` would.
    Example: matchlog fork 01a1fcca --at 40 -p heuristic -p random
    """
    with open_log(db, server) as log:
        source = log.info(match).match_id
        if player:  # the players must fit the seats before there is a fork to leave unplayed
            from matchlog.referee.players import seats_taken_by

            started = log.read(source, stop=0)[0].event
            seats_taken_by(started.game, started.seats, player)  # type: ignore[attr-defined]
        new_id = log.fork(source, at)
        if not json:
            console.out(f"match {new_id} is a fork of {source} at seq {at}")
        played = resume_and_report(log, new_id, player, seed=seed, timeout=timeout, json=json) if player else None
    if json:
        emit_json({"match_id": str(new_id), "origin": {"match_id": str(source), "seq": at}, "played": played})


class Format(StrEnum):
    jsonl = "jsonl"
    parquet = "parquet"
    html = "html"
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
            help="jsonl (re-importable), parquet; one match's replay as html; other tools' records of one "
            "match: mat and sgf (backgammon, GNU Backgammon's), fish-state (the course's State JSON), text "
            "(porrinha, davinci).",
        ),
    ] = Format.jsonl,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (default stdout).")] = None,
    at: Annotated[
        int | None, typer.Option("--at", min=0, max=MAX_SEQ, help="fish-state: the State at this seq.")
    ] = None,
    as_seat: Annotated[
        int | None,
        typer.Option(
            "--as-seat",
            min=-1,
            max=MAX_SEAT,
            help="Only what this seat saw (-1: a spectator); JSON Lines (not importable) or HTML.",
        ),
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
) -> None:
    """Export matches: JSON Lines with the hash chain (for `import`), Parquet for analysis, one match
    as an HTML page that replays it in a browser with no server and no network, or one match as
    another tool's record (--format mat, sgf, fish-state, text).

    Example: matchlog export 01a2 --format html -o match.html --as-seat 0
    """
    if (match is None) == (not all_matches):
        raise UsageError("give one MATCH or --all", code="usage.export")
    if at is not None and format is not Format.fish_state:
        raise UsageError("--at is for --format fish-state", code="usage.export")
    from matchlog import formats

    other_tool = format.value in formats.FORMATS
    if other_tool and (all_matches or as_seat is not None):
        raise UsageError(f"--format {format.value} exports one MATCH, as the referee saw it", code="usage.export")
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
            if format is Format.sgf:  # with the match's analysis as GNU Backgammon's own properties
                from matchlog.analysis.gnubg import analysed_sgf

                text = analysed_sgf(log.read(ids[0]), log.annotations_of(ids[0])).encode()  # type: ignore[index]
                out.write(text)
                return text.count(b"\n")
            if other_tool:
                text = formats.export(log.read(ids[0]), format.value, at=at).encode()  # type: ignore[index]
                out.write(text)
                return text.count(b"\n")
            return log.export(out, ids, format=format.value, as_seat=as_seat, on_skip=skipped)

        def skipped(match_id: object, error: MatchlogError) -> None:
            error_line(f"match {match_id} left out: {error.message}", error.code)

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
        unit = "lines" if other_tool else "events"
        console.out(f"{count} {unit} written to {output}")


@app.command("import")
@reports_errors
def import_command(
    file: Annotated[Path, typer.Argument(help="A JSON Lines export, or a .mat, .sgf, .json (Fish States) or .txt.")],
    format: Annotated[
        Format | None, typer.Option("--format", help="Read the file as this format (default: by its extension).")
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Import a JSON Lines export (every chain is checked), or another tool's record (every move is
    judged by the rules); all of it lands, or none of it."""
    if not file.is_file():
        raise UsageError(f"{file} is not a file", code="usage.file")
    if (format is not None and format is Format.parquet) or file.suffix.lower() == ".parquet":
        raise UsageError(
            f"{file}: Parquet is an export for analysis (no hash chain to check), not a record to import; "
            "import the JSON Lines export (matchlog export --format jsonl)",
            code="usage.import",
        )
    from matchlog import formats

    kind = format.value if format is not None else formats.format_of(file)
    with open_log(db, server, create=True) as log:
        if kind in formats.FORMATS:
            try:
                data = read_file(file, formats.MAX_RECORD_BYTES)
            except UsageError as error:
                raise formats.FormatError(kind, error.message) from None
            matches = []
            for match in formats.read(data, kind):
                same = formats.recorded_already(log, match)
                if same is None:
                    matches.append(match)
                else:
                    errors.out(
                        f"match {short(match.match_id)} of {file} is match {short(same)} already: not imported again"
                    )
            encoded = [
                (match_id, [(str(d.event_id), d.at_us, encode(d.event)) for d in drafts], expected)
                for match_id, drafts, expected in formats.batches(matches)
            ]
            try:
                appended = log.append_bulk_encoded(encoded)
            except StoreError as error:
                raise ImportRejected(f"{error.message}; nothing was imported") from None
        else:
            with file.open("rb") as lines:
                appended = log.import_jsonl(formats.bounded_lines(lines))
    written = sum(a.written for a in appended)
    if json:
        emit_json({"matches": len(appended), "events": written, "match_ids": [str(a.match_id) for a in appended]})
    else:
        console.out(f"imported {written} events of {len(appended)} match{'es' if len(appended) != 1 else ''}")
