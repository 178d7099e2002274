"""Figures: the numbers statistics need from each match, tallied event by event as it is played.

Each engine's `tally(before, event, after)` gives the figures one event adds, as (seat, figure,
amount) with seat None for the match as a whole: a game's own (Porrinha's correct guesses,
backgammon's dice faces and pips left, Fish's fish, Da Vinci Code's guesses). `Tally` adds the
ones every game shares (each seat's answers and rejected answers), forgets what an undo takes
back, and sums them per seat and figure. The referee tallies live and records the sums when the
match ends; `replay.projections` tallies matches recorded any other way from their logs.

A figure some reader may not see whole (declared `Derived.SEEN` in the game's `figures`, beside its
event views) is also counted over what a spectator sees: the event as `shown_event` gives it, the
states as `view` does. That count is kept as `seen:<figure>`, and every reader who may not see the
whole record is given it instead (`replay.aggregates`).
"""

from __future__ import annotations

from typing import Any

from matchlog.events import ActionsUndone, AnswerRejected, Event

from .contract import Engine
from .views import Derived, shown_event

__all__ = ["FIGURES_VERSION", "SEEN", "Figure", "Tally"]

#: Bump when a figure is added or changes meaning: matches projected under an older version are
#: projected again. 2: a spectator's count of each SEEN figure, as `seen:<figure>`.
FIGURES_VERSION = 2

#: The prefix of a figure counted over what a spectator sees.
SEEN = "seen:"

#: The figures every game counts (`engines.views.shared_figures` declares them).
_SHARED = ("answers", "rejected")

Figure = tuple[int | None, str, float]


class Tally:
    """A match's figures so far: what each event that still counts added."""

    def __init__(self, engine: Engine[Any]) -> None:
        self.engine = engine
        self._added: dict[int, list[Figure]] = {}
        seen = {name for name, derived in getattr(engine, "figures", {}).items() if derived is Derived.SEEN}
        self._seen_shared = seen & set(_SHARED)
        self._seen_own = seen - set(_SHARED)

    def add(self, seq: int, before: Any, event: Event, after: Any) -> None:
        """Count what the event at `seq` adds."""
        figures = _shared(event, set(_SHARED))
        figures.extend(self.engine.tally(before, event, after))
        if self._seen_shared or self._seen_own:
            figures.extend(self._seen(before, event, after))
        if figures:
            self._added[seq] = figures

    def _seen(self, before: Any, event: Event, after: Any) -> list[Figure]:
        """What the event adds to the SEEN figures, counted over what a spectator sees of it."""
        shown = shown_event(self.engine, before, event, None)
        counted = _shared(shown, self._seen_shared)
        if self._seen_own:
            engine = self.engine
            own = engine.tally(engine.view(before, None), shown, engine.view(after, None))
            counted += [(seat, figure, amount) for seat, figure, amount in own if figure in self._seen_own]
        return [(seat, SEEN + figure, amount) for seat, figure, amount in counted]

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


def _shared(event: Event, wanted: set[str]) -> list[Figure]:
    """The figures every game counts that `event` adds: a rejected answer, or an answer."""
    if isinstance(event, AnswerRejected):
        return [(event.seat, "rejected", 1.0)] if "rejected" in wanted else []
    if event.actor is not None and not isinstance(event, ActionsUndone) and "answers" in wanted:
        return [(event.actor, "answers", 1.0)]
    return []


def _order(item: tuple[tuple[int | None, str], float]) -> tuple[int, str]:
    (seat, figure), _ = item
    return (-1 if seat is None else seat, figure)
