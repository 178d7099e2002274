"""Figures: the numbers statistics need from each match, tallied event by event as it is played.

Each engine's `tally(before, event, after)` gives the figures one event adds, as (seat, figure,
amount) with seat None for the match as a whole: a game's own (Porrinha's correct guesses,
backgammon's dice faces and pips left, Fish's fish, Da Vinci Code's guesses). `Tally` adds the
ones every game shares (each seat's answers and rejected answers), forgets what an undo takes
back, and sums them per seat and figure. The referee tallies live and records the sums when the
match ends; `replay.projections` tallies matches recorded any other way from their logs.
"""

from __future__ import annotations

from typing import Any

from matchlog.events import ActionsUndone, AnswerRejected, Event

from .contract import Engine

__all__ = ["FIGURES_VERSION", "Figure", "Tally"]

#: Bump when a figure is added or changes meaning: matches projected under an older version are
#: projected again.
FIGURES_VERSION = 1

Figure = tuple[int | None, str, float]


class Tally:
    """A match's figures so far: what each event that still counts added."""

    def __init__(self, engine: Engine[Any]) -> None:
        self.engine = engine
        self._added: dict[int, list[Figure]] = {}

    def add(self, seq: int, before: Any, event: Event, after: Any) -> None:
        """Count what the event at `seq` adds."""
        figures: list[Figure] = []
        if isinstance(event, AnswerRejected):
            figures.append((event.seat, "rejected", 1.0))
        elif event.actor is not None and not isinstance(event, ActionsUndone):
            figures.append((event.actor, "answers", 1.0))
        figures.extend(self.engine.tally(before, event, after))
        if figures:
            self._added[seq] = figures

    def take_back(self, seqs: tuple[int, ...]) -> None:
        """Forget what the events an undo took back added."""
        for seq in seqs:
            self._added.pop(seq, None)

    def figures(self) -> list[Figure]:
        """The sums, per seat (None first) and figure."""
        sums: dict[tuple[int | None, str], float] = {}
        for added in self._added.values():
            for seat, figure, amount in added:
                sums[(seat, figure)] = sums.get((seat, figure), 0.0) + amount
        return [(seat, figure, value) for (seat, figure), value in sorted(sums.items(), key=_order)]


def _order(item: tuple[tuple[int | None, str], float]) -> tuple[int, str]:
    (seat, figure), _ = item
    return (-1 if seat is None else seat, figure)
