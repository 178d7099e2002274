"""`matchlog archive`: seal ended matches into an archive, a Delta Lake table other engines read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .base import DEFAULT_DB, Db, Json, Server, app, date_option, reports_errors
from .output import console, emit_json, errors, finding_dict


@app.command("archive")
@reports_errors
def archive(
    to: Annotated[
        Path,
        typer.Option("--to", metavar="PATH", help="The archive: a directory with its Delta table (made if need be)."),
    ],
    before: Annotated[
        str | None, typer.Option(help="Only matches that ended before this date (YYYY-MM-DD[THH:MM], UTC).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Seal the log's ended matches into an archive: a Delta Lake table, partitioned by game and month,
    of their events with the chain heads, seats and figures. Matches already archived are skipped, so
    running it again archives only what is new; each batch is one commit, whole or not at all. The log
    itself is only read, never changed. Several logs may archive into one table at the same time.
    Then `matchlog stats|sql|list|show|replay|audit|verify --archive PATH` read it, as do Spark and Ray.

    Example: matchlog archive --to /data/matchlog-archive --before 2026-11-01
    """
    import matchlog
    from matchlog.lake.seal import archive_log
    from matchlog.lake.table import deltalake

    deltalake()
    cutoff = date_option(before, "before")
    with matchlog.open(server or db) as log:  # read-only: archiving never changes the log
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        progress = Progress(
            TextColumn("[bold]archiving"),
            BarColumn(),
            TextColumn("{task.completed:,} of {task.total:,} events"),
            TimeRemainingColumn(),
            console=errors,
            disable=json or quiet,
        )
        task = progress.add_task("archive", total=0)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)
            progress.start()  # shown from the first batch on

        try:
            sealed = archive_log(log, str(to), before=cutoff, on_progress=advance)
        finally:
            progress.stop()
    if json:
        emit_json(
            {
                "archive": sealed.archive,
                "matches": sealed.matches,
                "events": sealed.events,
                "already": sealed.already,
                "commits": sealed.commits,
                "retries": sealed.retries,
                "seconds": sealed.seconds,
                "refused": [finding_dict(f) for f in sealed.refused],
            }
        )
    else:
        console.out(
            f"archived {sealed.matches} match{'es' if sealed.matches != 1 else ''} ({sealed.events:,} events) into "
            f"{sealed.archive} in {sealed.seconds:.1f} s ({sealed.rate:,.0f} events/s, {sealed.commits} commits); "
            f"{sealed.already} already there"
        )
        for finding in sealed.refused:
            where = f" seq {finding.seq}" if finding.seq is not None else ""
            console.out(f"REFUSED match {finding.match_id}{where} [{finding.code}] {finding.message}")
    if sealed.refused:
        raise typer.Exit(1)
