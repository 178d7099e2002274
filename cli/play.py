"""`matchlog play GAME`: referee a series of matches between players and record them."""

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from matchlog.engines import ordinal
from matchlog.referee import DEFAULT_TIMEOUT, MatchResult, play_series

from .base import (
    DEFAULT_DB,
    FISH_TIMEOUT,
    Cols,
    Db,
    FishCount,
    Games,
    Holes,
    Json,
    OneFish,
    Quiet,
    RandomBoard,
    Rows,
    Seed,
    Timeout,
    fish_options,
    open_log,
    play_app,
    players_option,
    reports_errors,
)
from .output import (
    console,
    emit_json,
    error_line,
    short,
)

# -- play --------------------------------------------------------------------------------------


class Policy(StrEnum):
    lenient = "lenient"
    strict = "strict"


@play_app.command("porrinha")
@reports_errors
def play_porrinha(
    player: Annotated[list[str], players_option("random, reasoner")],
    chopsticks: Annotated[int, typer.Option(min=1, help="Chopsticks each player starts with.")] = 3,
    games: Games = 1,
    seed: Seed = None,
    policy: Annotated[
        Policy,
        typer.Option(
            help="lenient: an invalid hand counts as 0, an invalid guess cannot win; "
            "strict: an invalid answer removes the player."
        ),
    ] = Policy.lenient,
    timeout: Timeout = DEFAULT_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play Porrinha (a chopsticks guessing game) and record every match.

    Example: matchlog play porrinha -p random -p reasoner -p alice=my_ai.py:Player --games 10
    """
    options = {"chopsticks": chopsticks, "policy": policy.value}
    play_and_report(
        "porrinha", player, options=options, games=games, seed=seed, timeout=timeout, quiet=quiet, db=db, json=json
    )


class Rules(StrEnum):
    standard = "standard"
    pygammon = "pygammon"


@play_app.command("davinci")
@reports_errors
def play_davinci(
    player: Annotated[list[str], players_option("seed-ai, random, human")],
    jokers: Annotated[bool, typer.Option("--jokers", help="Play with the two jokers (26 tiles).")] = False,
    games: Games = 1,
    seed: Seed = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play Da Vinci Code (2 to 4 players; hidden tiles) and record every match.

    With --player human you play at the terminal: type "quit" (or press Ctrl-C) to leave the match.
    Example: matchlog play davinci -p human -p seed-ai --jokers
    """
    play_and_report(
        "davinci",
        player,
        options={"jokers": jokers},
        games=games,
        seed=seed,
        timeout=timeout,
        quiet=quiet,
        db=db,
        json=json,
    )


@play_app.command("fish")
@reports_errors
def play_fish(
    player: Annotated[list[str], players_option("maximin, maximin:DEPTH, random")],
    rows: Rows = 5,
    cols: Cols = 5,
    fish: FishCount = 3,
    random_board: RandomBoard = False,
    holes: Holes = 0,
    one_fish: OneFish = 0,
    games: Games = 1,
    seed: Seed = None,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds a user player may take per call.")] = FISH_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play Fish (penguins on hexagonal tiles; 2 to 4 players) and record every game.

    A user player implements the course's protocol: initialize(board, n_players, color) -> age,
    get_placement(state) -> [row, column], get_move(game) -> [from, to], and optionally listen,
    finalize and terminate. A player that answers illegally, raises or overruns --timeout is kicked.
    Example: matchlog play fish -p maximin:2 -p random --random-board --holes 3
    """
    options = fish_options(rows, cols, fish, random_board, holes, one_fish)
    play_and_report(
        "fish", player, options=options, games=games, seed=seed, timeout=timeout, quiet=quiet, db=db, json=json
    )


@play_app.command("backgammon")
@reports_errors
def play_backgammon(
    player: Annotated[list[str], players_option("random, heuristic")],
    games: Games = 1,
    seed: Seed = None,
    rules: Annotated[
        Rules,
        typer.Option(
            help="standard, or pygammon's (any higher die bears off any home checker; the larger-die rule "
            "and the use-both-dice rule are not checked move by move)."
        ),
    ] = Rules.standard,
    move_by_turn_rolls: Annotated[
        bool, typer.Option("--move-by-turn-rolls", help="The starting side plays the opening roll.")
    ] = False,
    timeout: Timeout = DEFAULT_TIMEOUT,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    json: Json = False,
) -> None:
    """Play backgammon (pygammon's board and protocol) and record every game.

    A user player is a class with move(board) -> (die_index, source) or "undo"; optional begin_game(board),
    observe(output_type, data, side) and end_game(board). Example:
    matchlog play backgammon -p heuristic -p random --games 100
    """
    options = {"rules": rules.value, "move_by_turn_rolls": move_by_turn_rolls}
    play_and_report(
        "backgammon", player, options=options, games=games, seed=seed, timeout=timeout, quiet=quiet, db=db, json=json
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
    json: bool,
) -> None:
    played: list[MatchResult] = []

    def report(result: MatchResult) -> None:
        played.append(result)
        if not (json or quiet):
            placed = ", ".join(
                f"{ordinal(result.outcome.places[s])} {result.seats[s].name}" for s in result.outcome.ranking
            )
            console.out(f"match {short(result.match_id)}  {placed}")

    with open_log(db, create=True) as store:
        try:
            series = play_series(
                game,
                specs,
                games=games,
                options=options,
                seed=seed,
                store=store,
                timeout=timeout,
                on_match=report,
            )
        except KeyboardInterrupt:
            # The match in play was ended as abandoned; those finished are durable and were printed.
            error_line(
                f"interrupted after {len(played)} finished match{'es' if len(played) != 1 else ''}; "
                "the match in play was ended as abandoned",
                "interrupted",
            )
            raise typer.Exit(130) from None
        findings = store.verify([m.match_id for m in series.matches])
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
        verdict = "their hash chains verify" if not findings else f"verify found {len(findings)} problem(s)!"
        console.out(f"{count} match{'es' if count != 1 else ''} recorded in {db}; {verdict}")


def _places_table(places: dict[str, dict[int, int]], seats: int) -> Table:
    table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
    table.add_column("player")
    for place in range(1, seats + 1):
        table.add_column(ordinal(place), justify="right")
    for name, counts in places.items():
        table.add_row(name, *(str(counts.get(place, 0)) for place in range(1, seats + 1)))
    return table
