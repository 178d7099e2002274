"""`matchlog demo`: the README's main job."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Annotated

import typer

import matchlog.referee as referee_package
from matchlog.referee import DEFAULT_TIMEOUT
from matchlog.referee.sandbox import confinement

from .base import (
    DEFAULT_DB,
    MAX_GAMES,
    SEEDS,
    Db,
    app,
    open_log,
    reports_errors,
)
from .check import audit_command
from .inspect import replay, show
from .output import (
    console,
    errors,
    heading,
    short,
)
from .play import play_and_report
from .query import stats

# -- the main job ------------------------------------------------------------------------------


@app.command("demo")
@reports_errors
def demo(
    games: Annotated[int, typer.Option(min=1, max=MAX_GAMES, help="Matches of each game to play.")] = 5,
    seed: Annotated[
        int | None,
        typer.Option(**SEEDS, help="Seed for chance and the players (default: a new one each time, printed)."),
    ] = None,
    db: Db = DEFAULT_DB,
) -> None:
    """The main job: referee matches of every game into the log, then show statistics, a replay
    excerpt, a Fish board, and the audit of everything recorded."""
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
    console.out(f"seed {seed} (matchlog demo --seed {seed} plays these matches again)")
    example = Path(referee_package.__file__).resolve().parent / "example_player.py"
    tables = [
        (
            "Porrinha: 5 players, one a user class from a file",
            "porrinha",
            ["random", "reasoner", "cautious=" + f"{example}:CautiousPlayer", "random", "reasoner"],
            {"chopsticks": 3, "policy": "lenient"},
        ),
        ("backgammon: the heuristic player against random", "backgammon", ["heuristic", "random"], {}),
        (
            "Da Vinci Code: the seed's AI against random, with jokers",
            "davinci",
            ["seed-ai", "random", "seed-ai"],
            {"jokers": True},
        ),
        (
            "Fish: the house player, two turns ahead, against random, on a random board with holes",
            "fish",
            ["maximin:2", "random"],
            {"rows": 5, "columns": 5, "random_board": True, "holes": 3, "one_fish": 2},
        ),
    ]
    # The example class is matchlog's own code: where no sandbox can be made it plays inside matchlog,
    # said here and recorded as unconfined, so that the demo runs on any machine.
    found = confinement()
    if found.jail is None:
        errors.out(f"note: {found.why_not}; the example class plays inside matchlog, recorded as unconfined")
    for title, game, specs, options in tables:
        console.rule(heading("play", f" {title}"))
        play_and_report(
            game,
            specs,
            options=options,
            games=games,
            seed=seed,
            timeout=DEFAULT_TIMEOUT,
            quiet=True,
            db=db,
            json=False,
            in_process=found.jail is None,
        )
    console.rule(heading("stats"))
    stats(db=db)
    with open_log(db) as log:
        last = log.matches(game="porrinha", status="finished", limit=1)[0]
        board = log.matches(game="fish", status="finished", limit=1)[0]
    console.rule(heading("replay", f" of Porrinha match {short(last.match_id)} (first 16 events)"))
    replay(str(last.match_id), start=0, stop=15, as_seat=None, db=db, json=False)
    console.rule(heading("show", f" the end of Fish match {short(board.match_id)}"))
    show(str(board.match_id), db=db)
    console.rule(heading("audit", " of every match: the chain, every answer, ruling and die re-judged"))
    audit_command(None, all_matches=True, db=db)
    console.rule(heading("next", ": what to try"))
    where = "" if db == DEFAULT_DB else f" --db {db}"
    for command, what in (
        (f"matchlog serve{where}", "the viewer: open http://127.0.0.1:8080/ in a browser (Ctrl-C stops it)"),
        (f"matchlog list{where}", "the matches just recorded; then matchlog replay ID or matchlog show ID"),
        ("matchlog play porrinha -p random -p reasoner -p alice=examples/my_ai.py:Player", "your own player"),
        ("matchlog --help", "every command, by what it is for; the README's 'Using it' has more"),
    ):
        console.out(f"{command}  # {what}", highlight=False)
