"""`matchlog duel`: is one player better than another, and how sure: paired games and a sequential
test; `matchlog duel-report`: a duel's report, computed again from the log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from matchlog.engines import get as get_engine
from matchlog.events import Sprt, UsageError
from matchlog.referee import DEFAULT_TIMEOUT, Limits

from .base import (
    DEFAULT_DB,
    FISH_TIMEOUT,
    MAX_GAMES,
    MAX_JOBS,
    MAX_SEAT,
    Db,
    GameOptions,
    GameTimeout,
    Json,
    Quiet,
    Seed,
    Server,
    app,
    game_options,
    open_log,
    players_option,
    reports_errors,
)
from .output import console, emit_json, error_line, errors, finding_dict
from .play import InProcess, Memory, say_seeded
from .tournament import _ray_pool


@app.command("duel")
@reports_errors
def duel(
    game: Annotated[str, typer.Argument(help="The game (matchlog games lists them).")],
    player: Annotated[list[str], players_option("see matchlog games")],
    pairs: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_GAMES,
            help="Pairs to play (default 100); with --sprt, the most it may play (default 10,000); "
            "with --resume, the duel's own unless given.",
        ),
    ] = None,
    sprt: Annotated[
        str | None,
        typer.Option(
            metavar="elo0=E0,elo1=E1[,alpha=A,beta=B,model=M]",
            help="Stop as soon as a sequential test decides between Elo E0 (H0) and E1 (H1), logistic Elo unless "
            "model=normalized; alpha and beta default to 0.05.",
        ),
    ] = None,
    no_duplicate: Annotated[
        bool, typer.Option("--no-duplicate", help="Fresh chance for every game, not one seed per pair (to compare).")
    ] = False,
    seats: Annotated[
        int | None,
        typer.Option(min=2, max=MAX_SEAT + 1, help="Seats per table (default 2): the second player fills all but one."),
    ] = None,
    position: Annotated[str | None, typer.Option(help="Every pair starts from this position.")] = None,
    positions: Annotated[
        Path | None, typer.Option(help="A file of positions, one a line: pair N starts from line N (in turn).")
    ] = None,
    jobs: Annotated[
        int | None, typer.Option(min=1, max=MAX_JOBS, help="Worker processes (default 1; at most the cores).")
    ] = None,
    force_jobs: Annotated[bool, typer.Option("--force-jobs", help="Allow --jobs beyond the cores.")] = False,
    ray: Annotated[
        str | None, typer.Option("--ray", metavar="ADDRESS", help="Play on the Ray cluster at ADDRESS instead.")
    ] = None,
    option: GameOptions = None,
    seed: Seed = None,
    timeout: GameTimeout = None,
    resume: Annotated[
        str | None, typer.Option(metavar="DUEL", help="Play on the duel of this id (stopped before it decided).")
    ] = None,
    in_process: InProcess = False,
    memory: Memory = 1024,
    quiet: Quiet = False,
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """Play two players in pairs of games, the seats swapped within a pair and, where the game has
    chance, both games of a pair on one committed seed (duplicate), until --pairs are played or the
    --sprt test decides; then report the pentanomial counts, score, Elo ± 95%, LOS, the LLR and the
    verdict. Every game is a match of the log, tagged with the duel and its pair. Ctrl-C keeps every
    finished pair; --resume plays on, under the options the duel began with.

    Example: matchlog duel backgammon -p heuristic -p random --sprt elo0=0,elo1=100 --seed 1
    """
    game, settings = game_options(game, option)
    get_engine(game)
    if len(player) != 2:
        raise UsageError(f"a duel is between two players (-p twice), not {len(player)}", code="usage.players")
    if ray is not None and jobs is not None:
        raise UsageError("--ray plays on a cluster: it does not take --jobs", code="usage.ray")
    if position is not None and positions is not None:
        raise UsageError("give --position or --positions, not both", code="usage.arguments")
    starts: list[str] = [position] if position is not None else []
    if positions is not None:
        try:
            starts = [line.strip() for line in positions.read_text().splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--positions {positions}: {error}", code="usage.positions") from None
        if not starts:
            raise UsageError(f"--positions {positions} holds no position", code="usage.positions")
    test = Sprt.parse(sprt) if sprt is not None else None
    say_seeded(game, player, seed)
    if timeout is None:
        timeout = FISH_TIMEOUT if game == "fish" else DEFAULT_TIMEOUT
    from matchlog.referee.duel import run_duel

    def progress(state: Any) -> None:
        if not (json or quiet):
            errors.out(progress_line(state, test))

    with open_log(db, server, create=True) as log:
        run = run_duel(
            game,
            player[0],
            player[1],
            store=log,
            pairs=pairs,
            sprt=test,
            seats=seats,
            duplicate=not no_duplicate,
            options=settings,
            positions=starts,
            seed=seed,
            jobs=jobs,
            force_jobs=force_jobs,
            pool=_ray_pool(ray) if ray is not None else None,
            timeout=timeout,
            in_process=in_process,
            limits=Limits(memory=memory << 20),
            resume=resume,
            on_pair=progress,
        )
    if json:
        emit_json(
            {
                "report": run.report,
                "played": run.played,
                "unfinished": run.unfinished,
                "seconds": run.seconds,
                "interrupted": run.interrupted,
                "findings": [finding_dict(f) for f in run.findings],
                "failures": list(run.failures),
            }
        )
    else:
        print_duel(run.report)
        verdict = "every hash chain verifies" if not run.findings else f"verify found {len(run.findings)} problem(s)!"
        console.out(f"{run.played} games in {run.seconds:.1f} s recorded in {db}; {verdict}")
        if run.interrupted:
            console.out(
                f"interrupted: every finished pair is kept; play on with --resume {run.report.duel_id}"
                + (f" ({run.unfinished} game(s) in play were ended as abandoned)" if run.unfinished else "")
            )
    for failure in run.failures[:5]:
        error_line(failure, "duel.failed")
    if run.findings or run.failures:
        raise typer.Exit(1)
    if run.interrupted:
        raise typer.Exit(130)


@app.command("duel-report")
@reports_errors
def duel_report(
    duel_id: Annotated[
        str, typer.Argument(metavar="DUEL", help="The duel's id (its games' series id), or a unique prefix of it.")
    ],
    db: Db = DEFAULT_DB,
    server: Server = None,
    json: Json = False,
) -> None:
    """A duel's report, computed again from its games in the log: the same bytes every time.

    Example: matchlog duel-report 01a1fcca-6e4c --json
    """
    with open_log(db, server) as log:
        report = log.duel(duel_id)
    if json:
        emit_json(report)
    else:
        print_duel(report)


def progress_line(state: Any, test: Sprt | None) -> str:
    """One line on where a running duel stands."""
    e = state.estimate
    line = f"pair {state.pairs}: Elo {e.elo:+.1f} ({e.elo_low:+.1f} to {e.elo_high:+.1f}), LOS {e.los:.1%}"
    if test is not None and state.llr is not None:
        line += f", LLR {state.llr:.2f} ({test.lower:.2f}, {test.upper:.2f})"
    return line + (f": {state.verdict} accepted" if state.verdict else "")


def print_duel(report: Any) -> None:
    """A duel's report as text."""
    a, b = report.players
    chance = "duplicate chance (one seed a pair)" if report.duplicate else "fresh chance every game"
    console.out(f"duel {report.duel_id}: {report.game}, {a} against {b}, {report.seats} seats, {chance}")
    console.out(f"pairs: {report.pairs} complete ({report.games} games)", end="")
    extra = []
    if report.incomplete:
        extra.append(f"{report.incomplete} incomplete")
    if report.after_decision:
        extra.append(f"{report.after_decision} after the decision, not counted")
    console.out(f"; {', '.join(extra)}" if extra else "")
    if report.seats == 2:
        names = ("0", "½", "1", "1½", "2")
        counts = ", ".join(f"{n}: {c}" for n, c in zip(names, report.counts, strict=True))
        console.out(f"pentanomial (pairs by points): {counts}")
    else:
        console.out(f"pairs by score (0 to 1 in {len(report.counts) - 1} steps): {list(report.counts)}")
    e = report.estimate
    if e is not None:
        console.out(
            f"score {e.score:.3f}; Elo {e.elo:+.1f} ± {e.elo_error:.1f} ({e.elo_low:+.1f} to {e.elo_high:+.1f}), "
            f"normalised Elo {e.nelo:+.1f} ± {e.nelo_error:.1f}; LOS {e.los:.1%}; draw ratio {report.draw_ratio:.1%}"
        )
    if report.sprt is not None and report.llr is not None:
        t = report.sprt
        console.out(
            f"SPRT elo0={t.elo0:g} elo1={t.elo1:g} alpha={t.alpha:g} beta={t.beta:g} ({t.model}): "
            f"LLR {report.llr:.2f} ({report.lower:.2f}, {report.upper:.2f})"
        )
    verdict = report.verdict
    console.out(f"verdict: {verdict} accepted" if verdict in ("H1", "H0") else f"verdict: {verdict}")
    console.out(f"luck: {report.luck}")
