"""`matchlog play GAME`: referee a series of matches between players (from the game's start, or
from a described position) and record them; `matchlog resume MATCH`: play on a match that has not
ended."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from matchlog.engines import ordinal

if TYPE_CHECKING:
    from matchlog.referee import MatchResult
from matchlog.engines.porrinha import MAX_CHOPSTICKS
from matchlog.referee.calls import DEFAULT_TIMEOUT
from matchlog.referee.players import user_players
from matchlog.referee.sandbox import Limits

from .base import (
    DEFAULT_DB,
    FISH_TIMEOUT,
    MAX_MEMORY,
    MAX_TIMEOUT,
    TIMEOUT_HELP,
    Cols,
    Db,
    FishCount,
    Games,
    GameTimeout,
    Holes,
    Json,
    Match,
    OneFish,
    Quiet,
    RandomBoard,
    Rows,
    Seed,
    Server,
    Timeout,
    app,
    fish_options,
    game_options,
    open_log,
    play_app,
    players_option,
    reports_errors,
)
from .output import (
    console,
    emit_json,
    error_line,
    errors,
    short,
)
from .rulings import match_rulings, print_match_rulings, print_series_rulings, series_rulings

# -- play --------------------------------------------------------------------------------------

InProcess = Annotated[
    bool,
    typer.Option(
        "--in-process",
        help="Run user classes in this process: faster, for code you trust. By default each plays in a "
        "confined process of its own (docs/protocol.md), as cmd: programs always do.",
    ),
]
Memory = Annotated[
    int, typer.Option(min=16, max=MAX_MEMORY, help="MiB of memory each process of a child player may hold.")
]
Unconfined = Annotated[
    bool,
    typer.Option(
        "--unconfined",
        help="Run child players without the operating system's confinement (on a machine without "
        "bubblewrap): they can read whatever this user can. Each match records that they were unconfined.",
    ),
]


def say_unconfined(unconfined: bool) -> None:
    """Say aloud that user players run unconfined, before they run."""
    if unconfined:
        errors.out(
            "warning: players run unconfined (--unconfined): a user's player can read whatever this user "
            "can, the log included; the matches record that they were unconfined"
        )


def say_seeded(game: str, specs: Sequence[str], seed: int | None) -> None:
    """Say aloud that a given --seed makes the chance knowable to the user players it would face."""
    if seed is not None and user_players(game, specs):
        errors.out(
            f"warning: --seed {seed} makes every roll, shuffle and deal reproducible, and so knowable to a player "
            "that guesses the seed (or works it out from its own seed=); leave --seed out where user players "
            "compete: a fresh seed is drawn, committed and revealed at the end"
        )


def position_option(notation: str) -> Any:
    return typer.Option(
        "--position",
        metavar="TEXT",
        help=f"Start from this position instead of the game's start: {notation}.",
    )


class Policy(StrEnum):
    lenient = "lenient"
    strict = "strict"


def series_command(
    game: str, *, builtins: str, position: str, timeout: float = DEFAULT_TIMEOUT
) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., None]]:
    """`matchlog play GAME`, made from a function of the game's own options that returns them as the
    match records them: the players, the position (in the game's `position` notation) and every
    option a series of any game takes (games, seed, timeout, confinement, the log) are added here."""

    def decorate(options_of: Callable[..., dict[str, Any]]) -> Callable[..., None]:
        own = list(inspect.signature(options_of, eval_str=True).parameters.values())
        common = {
            "games": (Games, 1),
            "seed": (Seed, None),
            "timeout": (Annotated[float, typer.Option(min=0.001, max=MAX_TIMEOUT, help=TIMEOUT_HELP)], timeout),
            "position": (Annotated[str | None, position_option(position)], None),
            "in_process": (InProcess, False),
            "unconfined": (Unconfined, False),
            "memory": (Memory, 1024),
            "quiet": (Quiet, False),
            "db": (Db, DEFAULT_DB),
            "server": (Server, None),
            "json": (Json, False),
        }
        keyword = inspect.Parameter.KEYWORD_ONLY
        players = inspect.Parameter("player", keyword, annotation=Annotated[list[str], players_option(builtins)])
        shared = [
            inspect.Parameter(name, keyword, annotation=kind, default=value) for name, (kind, value) in common.items()
        ]
        mine = [parameter.replace(kind=keyword) for parameter in own]

        @functools.wraps(options_of)
        def command(*, player: list[str], **given: Any) -> None:
            options = options_of(**{parameter.name: given.pop(parameter.name) for parameter in own})
            play_and_report(game, player, options=options, **given)

        command.__signature__ = inspect.Signature([players, *mine, *shared])  # type: ignore[attr-defined]
        return command

    return decorate


@play_app.command("porrinha")
@reports_errors
@series_command(
    "porrinha",
    builtins="random, reasoner",
    position="chopsticks per seat and the first guesser, e.g. '3,2,0,1 first=1'",
)
def play_porrinha(
    chopsticks: Annotated[int, typer.Option(min=1, max=MAX_CHOPSTICKS, help="Chopsticks each player starts with.")] = 3,
    policy: Annotated[
        Policy,
        typer.Option(
            help="lenient: an invalid hand counts as 0, an invalid guess cannot win; "
            "strict: an invalid answer removes the player."
        ),
    ] = Policy.lenient,
) -> dict[str, Any]:
    """Play Porrinha (a chopsticks guessing game) and record every match.

    Example: matchlog play porrinha -p random -p reasoner -p alice=examples/my_ai.py:Player --games 10
    """
    return {"chopsticks": chopsticks, "policy": policy.value}


class Rules(StrEnum):
    standard = "standard"
    pygammon = "pygammon"


@play_app.command("davinci")
@reports_errors
@series_command(
    "davinci",
    builtins="seed-ai, random, human",
    position="rows split by /, then | and the pile from the top, optionally turn=SEAT; b3 / w3 a hidden tile, "
    "B3 / W3 one turned up, b- a joker, e.g. 'b1 W4 w7 / w0 b5 B9 | b2 w10 turn=1' (the log keeps it; "
    "seats see only their own tiles)",
)
def play_davinci(
    jokers: Annotated[bool, typer.Option("--jokers", help="Play with the two jokers (26 tiles).")] = False,
) -> dict[str, Any]:
    """Play Da Vinci Code (2 to 4 players; hidden tiles) and record every match.

    With --player human you play at the terminal: type "quit" (or press Ctrl-C) to leave the match.
    Example: matchlog play davinci -p human -p seed-ai --jokers
    """
    return {"jokers": jokers}


@play_app.command("fish")
@reports_errors
@series_command(
    "fish",
    builtins="maximin, maximin:DEPTH, random",
    position="the course's State JSON: players in turn order from the one to act, each its color, score and "
    "penguins' places, and the board (placing while penguins are left to place, else moving)",
    timeout=FISH_TIMEOUT,
)
def play_fish(
    rows: Rows = 5,
    cols: Cols = 5,
    fish: FishCount = 3,
    random_board: RandomBoard = False,
    holes: Holes = 0,
    one_fish: OneFish = 0,
) -> dict[str, Any]:
    """Play Fish (penguins on hexagonal tiles; 2 to 4 players) and record every game.

    A user player implements the course's protocol: initialize(board, n_players, color) -> age,
    get_placement(state) -> [row, column], get_move(game) -> [from, to], and optionally listen,
    finalize and terminate. A player that answers illegally, raises or overruns --timeout is kicked.
    Example: matchlog play fish -p maximin:2 -p random --random-board --holes 3
    """
    return fish_options(rows, cols, fish, random_board, holes, one_fish)


@play_app.command("backgammon")
@reports_errors
@series_command(
    "backgammon",
    builtins="random, heuristic",
    position="a GNU Backgammon position ID, optionally the dice rolled and the side on roll (0 first), "
    "e.g. '4HPwATDgc/ABMA 52 turn=1'",
)
def play_backgammon(
    rules: Annotated[
        Rules,
        typer.Option(
            help="standard, or pygammon's (any higher die bears off any home checker; the larger-die rule "
            "and the use-both-dice rule are not checked move by move)."
        ),
    ] = Rules.standard,
    move_by_turn_rolls: Annotated[
        bool | None,
        typer.Option(
            "--move-by-turn-rolls/--roll-again",
            help="Whether the starting side plays the opening roll (default: it does under standard rules, "
            "and rolls again under pygammon's, as pygammon does).",
        ),
    ] = None,
) -> dict[str, Any]:
    """Play backgammon (pygammon's board and protocol) and record every game.

    A user player is a class with move(board) -> (die_index, source) or "undo"; optional begin_game(board),
    observe(output_type, data, side) and end_game(board). Example:
    matchlog play backgammon -p heuristic -p random --games 100
    """
    return {"rules": rules.value, "move_by_turn_rolls": move_by_turn_rolls}


@play_app.command("GAME")
@reports_errors
def play_game(
    game: Annotated[
        str,
        typer.Argument(
            metavar="GAME",
            help="Any game matchlog games lists (a plugin's, or a family's such as openspiel:leduc_poker(players=3)).",
        ),
    ],
    player: Annotated[list[str], players_option("random, and the game's own (matchlog games)")],
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="A game option, KEY=VALUE (e.g. dice=5).")
    ] = None,
    games: Games = 1,
    seed: Seed = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    position: Annotated[str | None, position_option("in the game's own notation, where it has one")] = None,
    in_process: InProcess = False,
    unconfined: Unconfined = False,
    memory: Memory = 1024,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Play any other game (from a package of its own, or OpenSpiel's) and record every match.

    A user player is a class with act(decision) -> answer, where decision has the seat, the
    decision awaited, its view of the state and the legal answers (docs/protocol.md).
    Example: matchlog play openspiel:kuhn_poker -p random -p random --games 20
    """
    name, options = game_options(game, option)
    play_and_report(
        name,
        player,
        options=options,
        games=games,
        seed=seed,
        timeout=timeout,
        quiet=quiet,
        db=db,
        server=server,
        json=json,
        position=position,
        in_process=in_process,
        unconfined=unconfined,
        memory=memory,
    )


def play_and_report(
    game: str,
    specs: list[str],
    *,
    options: dict[str, Any],
    games: int,
    seed: int | None,
    timeout: float,
    quiet: bool,
    db: Path,
    server: str | None = None,
    json: bool,
    position: str | None = None,
    in_process: bool = False,
    unconfined: bool = False,
    memory: int = 1024,
) -> None:
    played: list[MatchResult] = []
    rulings: dict[Any, list[dict[str, Any]]] = {}
    say_unconfined(unconfined)
    say_seeded(game, specs, seed)

    def report(result: MatchResult) -> None:
        played.append(result)
        rulings[result.match_id] = match_rulings(log.read(result.match_id), result.seats)
        if not (json or quiet):
            console.out(f"match {short(result.match_id)}  {placed(result)}")
            print_match_rulings(rulings[result.match_id])

    with open_log(db, server, create=True) as log:
        try:
            from matchlog.referee import play_series

            series = play_series(
                game,
                specs,
                games=games,
                options=options,
                seed=seed,
                store=log,
                timeout=timeout,
                on_match=report,
                position=position,
                in_process=in_process,
                limits=Limits(memory=memory << 20, unconfined=unconfined),
            )
        except KeyboardInterrupt:
            # The match in play was ended as abandoned; those finished are durable and were printed.
            error_line(
                f"interrupted after {len(played)} finished match{'es' if len(played) != 1 else ''}; "
                "the match in play was ended as abandoned",
                "interrupted",
            )
            raise typer.Exit(130) from None
        findings = log.verify([m.match_id for m in series.matches]).findings
        if json:
            emit_json(
                {
                    "series_id": series.series_id,
                    "matches": [
                        {
                            "match_id": str(m.match_id),
                            "places": list(m.outcome.places),
                            "winners": list(m.outcome.winners),
                            "result": m.outcome.result,
                            "rulings": rulings.get(m.match_id, []),
                        }
                        for m in series.matches
                    ],
                    "seats": [{"name": s.name, "player": s.player} for s in series.matches[0].seats],
                    "places": {name: {str(k): v for k, v in sorted(c.items())} for name, c in series.places.items()},
                    "db": str(db),
                }
            )
            return
        if games > 1:
            console.print(_places_table(series.places, len(specs)))
        count = len(series.matches)
        if games > 1 or quiet:
            print_series_rulings(series_rulings(log, series.series_id), count)
        verdict = "their hash chains verify" if not findings else f"verify found {len(findings)} problem(s)!"
        console.out(f"{count} match{'es' if count != 1 else ''} recorded in {db}; {verdict}")


def placed(result: MatchResult) -> str:
    """ "1st alice, 2nd bob": the seats of a played match by place."""
    return ", ".join(f"{ordinal(result.outcome.places[s])} {result.seats[s].name}" for s in result.outcome.ranking)


# -- resume ------------------------------------------------------------------------------------


@app.command("resume")
@reports_errors
def resume_command(
    match: Match,
    player: Annotated[
        list[str],
        typer.Option(
            "--player",
            "-p",
            metavar="SPEC",
            help="A player for each of the match's seats, in seat order (as for play); the seats keep their "
            "names, so a NAME= prefix must be the seat's.",
        ),
    ],
    seed: Seed = None,
    timeout: GameTimeout = None,
    in_process: InProcess = False,
    unconfined: Unconfined = False,
    memory: Memory = 1024,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Play on a match that has not ended (after an arbiter's undo, in a fork, after a crash) to its end.

    Play goes on from the state the log folds to (undone events skipped); chance draws from a
    fresh seed committed here and revealed at the end, so `matchlog audit` re-derives every draw.
    Example: matchlog undo 01a1fcca --reason appeal && matchlog resume 01a1fcca -p random -p reasoner
    """
    say_unconfined(unconfined)
    with open_log(db, server) as log:
        info = log.info(match)
        say_seeded(info.game, player, seed)
        result = resume_and_report(
            log,
            info.match_id,
            player,
            seed=seed,
            timeout=timeout,
            json=json,
            in_process=in_process,
            limits=Limits(memory=memory << 20, unconfined=unconfined),
        )
    if json:
        emit_json(result)


def resume_and_report(
    store: Any,
    match_id: Any,
    specs: list[str],
    *,
    seed: int | None,
    timeout: float | None,
    json: bool,
    in_process: bool = False,
    limits: Limits | None = None,
) -> dict[str, Any]:
    """Resume a match, print its result (unless `json`), and return it for --json."""
    if timeout is None:
        timeout = FISH_TIMEOUT if store.info(match_id).game == "fish" else DEFAULT_TIMEOUT
    from matchlog.referee import resume_match

    result = resume_match(store, match_id, specs, seed=seed, timeout=timeout, in_process=in_process, limits=limits)
    findings = store.verify([result.match_id]).findings
    if not json:
        verdict = "its hash chain verifies" if not findings else f"verify found {len(findings)} problem(s)!"
        console.out(f"match {short(result.match_id)} played on to its end: {placed(result)}; {verdict}")
    return {
        "match_id": str(result.match_id),
        "places": list(result.outcome.places),
        "winners": list(result.outcome.winners),
        "result": result.outcome.result,
        "seats": [{"name": s.name, "player": s.player} for s in result.seats],
        "verified": not findings,
    }


def _places_table(places: dict[str, dict[int, int]], seats: int) -> Table:
    table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
    table.add_column("player")
    for place in range(1, seats + 1):
        table.add_column(ordinal(place), justify="right")
    for name, counts in places.items():
        table.add_row(name, *(str(counts.get(place, 0)) for place in range(1, seats + 1)))
    return table
