"""Where each move went wrong: analysers that judge every decision of a recorded match (and the
luck of its chance) from what the deciding seat knew, and write their judgement beside the record
as annotations (`store.annotations`), never in it.

    game         analyser (--analyser)     judges by
    backgammon   gnubg, gnubg:PLIES        GNU Backgammon itself, run as a process (analysis/gnubg.py)
    porrinha     reasoner                  the reasoner's chances of the total
    davinci      seed-ai                   the seed's probability vectors
    fish         maximin, maximin:DEPTH    the house player's maximin search (depth 2 unless given)

`make_analyser(game, spec)` builds one; `analyse_matches` (analysis/run.py) runs one over a log's
matches, on several processes with `jobs`, resuming where it stopped.
"""

from __future__ import annotations

from typing import Any

from matchlog.events import UsageError

from .base import Analyser, Decided, decisions, matchlog_version

__all__ = [
    "ANALYSERS",
    "Analyser",
    "Decided",
    "analyser_game",
    "decisions",
    "make_analyser",
    "matchlog_version",
]

#: Each game's analyser: its name, and what it judges by.
ANALYSERS: dict[str, tuple[str, str]] = {
    "backgammon": ("gnubg", "GNU Backgammon's own analysis, run as a process (gnubg:PLIES: at that many plies)"),
    "porrinha": ("reasoner", "each guess by the reasoner's chances of the total"),
    "davinci": ("seed-ai", "each guess, and going on or stopping, by the seed's probability vectors"),
    "fish": (
        "maximin",
        "each move by the house player's maximin over the next DEPTH turns (maximin:DEPTH, 2 unless given)",
    ),
}


def analyser_game(spec: str) -> str:
    """The game an analyser named `spec` judges.

    Raises:
        UsageError: no analyser has that name (`usage.analyser`).
    """
    name = spec.partition(":")[0].strip()
    for game, (known, _) in ANALYSERS.items():
        if name == known:
            return game
    listed = ", ".join(f"{known} ({game})" for game, (known, _) in ANALYSERS.items())
    raise UsageError(f"no analyser {spec!r}: there are {listed}", code="usage.analyser")


def make_analyser(game: str, spec: str | None = None) -> Any:
    """The analyser of `game`: its default, or the one `spec` names ("maximin:3", "gnubg:0").

    Raises:
        UsageError: `spec` names no analyser, or one of another game, or a bad argument; gnubg is
            not installed (`analyser.missing`).
    """
    if game not in ANALYSERS:
        raise UsageError(f"matchlog has no analyser of {game}", code="usage.analyser")
    spec = spec or ANALYSERS[game][0]
    judged = analyser_game(spec)
    if judged != game:
        raise UsageError(f"{spec} judges {judged}, not {game}", code="usage.analyser")
    name, _, argument = spec.partition(":")
    argument = argument.strip() or None
    if game == "backgammon":
        from .gnubg import GnubgAnalyser

        return GnubgAnalyser(argument)
    from .games import DavinciAnalyser, FishAnalyser, PorrinhaAnalyser

    if game == "fish":
        return FishAnalyser(argument or 2)
    if argument is not None:
        raise UsageError(f"{name} takes no argument (not {argument!r})", code="usage.analyser")
    return PorrinhaAnalyser() if game == "porrinha" else DavinciAnalyser()
