"""Analysis and annotations: `analyse` (judge every decision of ended matches, beside the record),
`annotate` (a comment or ruling on the timeline) and `annotations` (read them back, or export them)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from matchlog.events import UsageError

from .base import DEFAULT_DB, AsSeat, Db, Json, Server, app, open_log, reports_errors
from .output import console, emit_json, errors, short

Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write it to this file (default: stdout).")]


@app.command("analyse")
@reports_errors
def analyse(
    match: Annotated[list[str] | None, typer.Argument(help="Match ids (or unique starts of them).")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every ended match of the log.")] = False,
    series: Annotated[str | None, typer.Option("--series", metavar="ID", help="Every ended match of a series.")] = None,
    game: Annotated[str | None, typer.Option(help="Only matches of this game.")] = None,
    analyser: Annotated[
        str | None,
        typer.Option(
            "--analyser",
            metavar="NAME",
            help="gnubg (gnubg:PLIES), reasoner, seed-ai or maximin (maximin:DEPTH); default: each game's own.",
        ),
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Worker processes (at most one per core).")] = 1,
    again: Annotated[
        bool, typer.Option("--again", help="Analyse matches this analyser has analysed before (appends).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the totals.")] = False,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Judge every decision of ended matches, and the luck of every roll, and write the judgement
    beside the record as annotations (never in it: `verify` of a match is unchanged).

    Backgammon is judged by GNU Backgammon itself (Debian's gnubg, run as a process), Porrinha by the
    reasoner's odds, Da Vinci Code by the seed's probability vectors, Fish by the house player's
    maximin. A match its analyser (at the same version) analysed before is skipped unless --again,
    so --all picks up where it stopped.
    Example: matchlog analyse --all --jobs 2
    Example: matchlog analyse 01a1fcca-6e4c --analyser maximin:3
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from matchlog.analysis.run import Analysed, analyse_matches
    from matchlog.referee.tournament import cores

    chosen = [m for m in (match or [])]
    if sum(bool(x) for x in (chosen, every, series)) != 1:
        raise UsageError("give match ids, --all or --series ID (one of them)", code="usage.analyse")
    if jobs > cores():
        raise UsageError(f"--jobs {jobs}: this machine has {cores()} cores", code="usage.jobs")
    with open_log(db, server) as log:
        if chosen:
            infos = [log.info(m) for m in chosen]
        else:
            infos = [i for i in log.matches(game=game) if series is None or i.series_id == series]
            if series is not None and not infos:
                raise UsageError(f"no match of the log is of series {series!r}", code="usage.series")
        infos = [i for i in infos if game is None or i.game == game]
        infos.reverse()  # oldest first: the order they were played
        progress = Progress(
            TextColumn("[bold]analysing"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>6.2f} matches/s"),
            TimeRemainingColumn(),
            console=errors,
            disable=json or quiet,
        )
        task = progress.add_task("analysing", total=len(infos), rate=0.0)
        began = time.monotonic()
        done = 0

        def advance(outcome: Analysed) -> None:
            nonlocal done
            done += 1
            if not progress.live.is_started:
                progress.start()
            progress.update(task, completed=done, rate=done / max(time.monotonic() - began, 1e-9))
            if outcome.error is not None and not json:
                errors.out(f"match {short(outcome.match_id)}: error[{outcome.code}]: {outcome.error}")

        try:
            outcomes = analyse_matches(log, infos, analyser, jobs=jobs, again=again, on_match=advance)
        finally:
            if progress.live.is_started:
                progress.stop()
    failed = [o for o in outcomes if o.error is not None]
    if json:
        emit_json(outcomes)
    else:
        if not quiet:
            for outcome in outcomes:
                if outcome.written:
                    console.out(
                        f"match {short(outcome.match_id)}  {outcome.game}  {outcome.written} notes by {outcome.author}"
                    )
        analysed = sum(1 for o in outcomes if o.written or (o.error is None and o.skipped is None))
        skipped: dict[str, int] = {}
        for outcome in outcomes:
            if outcome.skipped:
                skipped[outcome.skipped] = skipped.get(outcome.skipped, 0) + 1
        said = ", ".join(f"{count} {why}" for why, count in sorted(skipped.items()))
        console.out(
            f"{analysed} match(es) analysed, {sum(o.written for o in outcomes)} notes written"
            + (f"; skipped: {said}" if said else "")
            + (f"; {len(failed)} failed" if failed else "")
        )
    if failed:
        raise typer.Exit(1)


@app.command("annotate")
@reports_errors
def annotate(
    match: Annotated[str, typer.Argument(help="A match id, or a unique start of one.")],
    text: Annotated[str, typer.Argument(help="What to say.")],
    seq: Annotated[int, typer.Option(min=0, help="The event it speaks of.")],
    mark: Annotated[str | None, typer.Option(help="A glyph: !!, !, !?, ?!, ? or ??.")] = None,
    ruling: Annotated[bool, typer.Option("--ruling", help="An arbiter's ruling, not a remark.")] = False,
    seat: Annotated[
        int | None, typer.Option(min=0, help="Only this seat (and whoever sees its view) may read it.")
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Put a comment, or with --ruling an arbiter's ruling, on one event of a match: beside the
    record, chained and in the Merkle tree, never changing the match itself.

    Example: matchlog annotate 01a1fcca-6e4c --seq 17 "the doubling window was missed" --mark "?!"
    """
    with open_log(db, server) as log:
        written = log.annotate(match, seq, text, mark=mark, ruling=ruling, seat=seat)
    if json:
        emit_json(written)
    else:
        console.out(
            f"annotated match {short(written.match_id)} seq {written.seq}"
            + (f" (annotation {written.number})" if written.number is not None else "")
        )


@app.command("annotations")
@reports_errors
def annotations(
    match: Annotated[str | None, typer.Argument(help="A match id, or a unique start of one.")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every match's (with --format jsonl).")] = False,
    format: Annotated[
        str, typer.Option("--format", help="text, json, or jsonl (the export, with each annotation's chain).")
    ] = "text",
    output: Output = None,
    as_seat: AsSeat = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """A match's annotations (analyses, comments, rulings) and each player's summary of its latest
    analysis: decisions, marks, error rate, accuracy, luck and the luck-adjusted result.

    Example: matchlog annotations 01a1fcca-6e4c --as-seat 0
    Example: matchlog annotations --all --format jsonl -o annotations.jsonl
    """
    fmt = "json" if json else format
    if fmt not in ("text", "json", "jsonl"):
        raise UsageError(f"--format is text, json or jsonl, not {format!r}", code="usage.format")
    if (match is None) == (not every):
        raise UsageError("give a match id or --all", code="usage.annotations")
    with open_log(db, server) as log:
        if fmt == "jsonl":
            if as_seat is not None:
                raise UsageError("the export is the whole record's (JSON Lines with each chain)", code="usage.export")
            out = sys.stdout.buffer if output is None or str(output) == "-" else output.open("wb")
            try:
                count = log.export_annotations(out, None if every else [match])  # type: ignore[list-item]
            finally:
                if out is not sys.stdout.buffer:
                    out.close()
            if output is not None and str(output) != "-":
                console.out(f"{count} annotations written to {output}")
            return
        if every:
            raise UsageError("--all goes with --format jsonl", code="usage.annotations")
        found = log.analysis(match, as_seat=as_seat)  # type: ignore[arg-type]
        info = log.info(match)  # type: ignore[arg-type]
    if fmt == "json":
        emit_json(found)
        return
    _print_analysis(found, info)


def _print_analysis(found: Any, info: Any) -> None:
    """A match's summaries, then its annotations one a line."""
    from matchlog.analysis.marks import GLYPHS
    from matchlog.events import Comment, Decision, Luck

    if found.analyser:
        console.out(f"analysis by {found.analyser}")
    for summary in found.summaries:
        # gnubg's error rate is in thousandths of an equity point (mEMG); the others' in their own unit.
        scale, unit = (1000.0, "mEMG") if summary.unit == "equity" else (1.0, summary.unit)
        rate = "-" if summary.error_rate is None else f"{summary.error_rate * scale:.1f} {unit}"
        marks = ", ".join(f"{count} {mark}" for mark, count in sorted(summary.marks.items())) or "no marks"
        line = (
            f"seat {summary.seat} {summary.name}: {summary.unforced} of {summary.decisions} decisions unforced, "
            f"error rate {rate}, accuracy {'-' if summary.accuracy is None else f'{summary.accuracy:.1f}%'}, {marks}"
        )
        if summary.luck is not None:
            line += f", luck {summary.luck:+.3f} over {summary.rolls} rolls"
        if summary.luck_adjusted is not None:
            line += f", luck-adjusted result {summary.luck_adjusted:+.3f}"
        console.out(line)
    for annotation in found.annotations:
        note = annotation.note
        if isinstance(note, Decision):
            glyph = GLYPHS.get(note.mark or "", "")
            said = f"seat {note.seat} {note.played}{glyph}"
            if note.loss > 0:
                said += f" (best {note.best}: {note.loss:.3f} {note.unit} lost{', ' + note.mark if note.mark else ''})"
        elif isinstance(note, Luck):
            said = f"seat {note.seat} luck {note.luck:+.3f}" + (f" ({note.mark})" if note.mark else "")
        elif isinstance(note, Comment):
            said = f"{'ruling' if note.ruling else 'comment'} by {annotation.author}: {note.text}"
            said += f" {note.mark}" if note.mark else ""
        else:  # pragma: no cover - every note type is listed above
            said = str(note)
        console.out(f"{annotation.seq:>5}  {said}")
    if not found.annotations:
        console.out(f"match {short(info.match_id)} has no annotations this view may see")
