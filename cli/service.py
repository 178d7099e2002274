"""`matchlog serve`: the HTTP service that owns a log while many clients use it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from matchlog.events import UsageError

from .base import DEFAULT_DB, MAX_TIMEOUT, Db, reports_errors, serve_app
from .output import console


@serve_app.callback(invoke_without_command=True)
@reports_errors
def serve(
    context: typer.Context,
    db: Db = DEFAULT_DB,
    host: Annotated[
        str, typer.Option(help="The address to listen on: loopback unless you mean to serve others.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, envvar="MATCHLOG_PORT", help="The TCP port (0: any free one).")
    ] = 8080,
    access_log: Annotated[bool, typer.Option("--access-log", help="Print a line for every request.")] = False,
    checkpoint_every: Annotated[
        float,
        typer.Option(
            "--checkpoint-every",
            metavar="SECONDS",
            min=0,
            max=MAX_TIMEOUT,
            help="Sign a checkpoint of the log's tree this often (at least 0.1), when it has grown (0: on request).",
        ),
    ] = 60.0,
    fronts: Annotated[
        int,
        typer.Option(
            "--fronts",
            min=1,
            max=64,
            help="Serve requests from this many processes, while one more keeps the log (1: one process does both).",
        ),
    ] = 1,
) -> None:
    """Serve the log over HTTP until Ctrl-C: the API (/api, described at /api/openapi.json), the
    match viewer, and live follow streams. While it runs it owns the log file, and every matchlog
    command given the same --db works through it (it writes where it listens to DB.server). Writes
    need the admin token, made on the first start and kept in DB.token, readable by its owner only;
    each match's seats get tokens that see what that seat may, and everyone else sees what a
    spectator may. It signs a checkpoint of the log's Merkle tree at start and every
    --checkpoint-every seconds (GET /api/checkpoint; docs/proofs.md).

    `matchlog serve fish` instead referees a Fish knockout between remote players over TCP.
    Example: matchlog serve --db matches.duckdb --port 8080
    """
    if context.invoked_subcommand is not None:
        return
    if 0 < checkpoint_every < 0.1:  # waking every few microseconds keeps a core busy for nothing
        raise UsageError(
            f"--checkpoint-every is 0 (only on request) or at least 0.1 seconds, not {checkpoint_every:g}",
            code="usage.checkpoint_every",
        )
    from matchlog.service.run import serve as run

    def listening(url: str, token_file: Path) -> None:
        console.out(f"matchlog serves {db} at {url}")
        console.out(f"the admin token is in {token_file} (only its owner can read it); Ctrl-C stops")

    run(
        db,
        host=host,
        port=port,
        on_listening=listening,
        access_log=access_log,
        checkpoint_every=checkpoint_every or None,
        fronts=fronts,
    )
    console.out("stopped; every acknowledged event is in the log")
