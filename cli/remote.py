"""`matchlog serve fish` and `matchlog client fish`: the Fish course's remote players over TCP."""

from __future__ import annotations

import random
from typing import Annotated, Any

import msgspec
import typer

import matchlog.referee as referee_package

from .base import (
    DEFAULT_DB,
    MAX_SEAT,
    MAX_TIMEOUT,
    Cols,
    Db,
    FishCount,
    Holes,
    Json,
    OneFish,
    Quiet,
    RandomBoard,
    Rows,
    Seed,
    Server,
    client_app,
    fish_options,
    open_log,
    reports_errors,
    serve_app,
)
from .output import (
    console,
    emit_json,
    errors,
)
from .tournament import knockout_progress, report_knockout

# -- remote players ----------------------------------------------------------------------------

Host = Annotated[str, typer.Option(help="The address to listen on or connect to.")]


@serve_app.command("fish")
@reports_errors
def serve_fish(
    port: Annotated[int, typer.Option(min=0, max=65535, help="The TCP port (0: any free one).")] = 45678,
    host: Host = "127.0.0.1",
    min_players: Annotated[int, typer.Option(min=1, max=MAX_SEAT + 1, help="Start once this many have signed up.")] = 5,
    max_players: Annotated[int, typer.Option(min=1, max=MAX_SEAT + 1, help="Take no sign-ups beyond this many.")] = 10,
    wait: Annotated[
        float, typer.Option(min=0.1, max=MAX_TIMEOUT, help="Seconds of each sign-up period (two periods).")
    ] = 30.0,
    timeout: Annotated[
        float, typer.Option(min=0.001, max=MAX_TIMEOUT, help="Seconds a client may take per call.")
    ] = 3.0,
    rows: Rows = 5,
    cols: Cols = 5,
    fish: FishCount = 2,
    random_board: RandomBoard = False,
    holes: Holes = 0,
    one_fish: OneFish = 0,
    seed: Seed = None,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Take sign-ups from remote Fish clients, then referee a knockout tournament between them.

    Clients speak the course's JSON-over-TCP protocol (matchlog client fish is one): they send their
    name (1 to 12 letters) within 10 s of connecting. The server waits --wait seconds for
    --min-players, one more period if too few came, and stops at --max-players. Every game and the
    tournament are recorded; the last line is the course's output, [winners, kicked].
    Example: matchlog serve fish --port 45678 --min-players 2 --wait 10
    """
    from matchlog.referee.fish_remote import SignUp, serve

    options = fish_options(rows, cols, fish, random_board, holes, one_fish)
    chatty = not (json or quiet)

    def listening(bound: str, bound_port: int) -> None:
        errors.print(f"listening on {bound}:{bound_port}; sign-ups close in {wait:g} s", highlight=False)

    def signed(sign_up: SignUp) -> None:
        if chatty:
            said = f"refused ({sign_up.refused})" if sign_up.refused else "signed up"
            errors.print(f"{sign_up.address} {sign_up.name or '?'}: {said}", highlight=False)

    with open_log(db, server, create=True) as store:
        result = serve(
            host=host,
            port=port,
            min_players=min_players,
            max_players=max_players,
            wait=wait,
            timeout=timeout,
            options=options,
            store=store,
            seed=seed,
            on_listening=listening,
            on_signup=signed,
            on_event=knockout_progress() if chatty else None,
        )
        report_knockout(store, db, result, json=json)
    if not json:
        console.out(f"[{len(result.winners)}, {len(result.kicked)}]")


@client_app.command("fish")
@reports_errors
def client_fish(
    name: Annotated[str, typer.Option(help="Your name in the tournament: 1 to 12 ASCII letters.")],
    player: Annotated[
        str,
        typer.Option(
            "--player",
            "-p",
            metavar="SPEC",
            help="The local player: a built-in (maximin, maximin:DEPTH, random), path/to/file.py:Class "
            "or package.module:Class.",
        ),
    ] = "maximin",
    port: Annotated[int, typer.Option(min=1, max=65535, help="The server's TCP port.")] = 45678,
    host: Host = "127.0.0.1",
    timeout: Annotated[
        float,
        typer.Option(min=0.001, max=MAX_TIMEOUT, help="Seconds to wait for the server's next call before giving up."),
    ] = 300.0,
    seed: Seed = None,
    quiet: Quiet = False,
    json: Json = False,
) -> None:
    """Play in a remote Fish tournament with a local player (built-in or your own class).

    Exits 0 when the tournament ends (won or lost), 2 if the server cannot be reached or breaks the protocol.
    Example: matchlog client fish --name alice -p maximin:2 --port 45678
    """
    from matchlog.referee.fish_remote import play_remote

    # The client is the user's own process: its player runs in it, not in a child.
    seat = referee_package.seats_from_specs("fish", [player], in_process=True)[0]
    local = referee_package.make_player("fish", seat.player, random.Random(seed), in_process=True)
    chatty = not (json or quiet)

    def heard(message: str, arguments: list[Any]) -> None:
        if chatty and message in ("start", "playing-as", "playing-with", "end"):
            console.out(f"{message} {msgspec.json.encode(arguments).decode()}")

    result = play_remote(local, name, host=host, port=port, timeout=timeout, on_message=heard)
    if json:
        emit_json(result)
        return
    verdict = {True: "won", False: "lost", None: "was out before the end"}[result.won]
    console.out(f"{result.name} played {result.games} game(s) and {verdict}")
