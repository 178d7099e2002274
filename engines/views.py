"""What each seat sees: the default-deny allowlist that every view of a match goes through.

Every game declares, for every event type its log may hold, what each seat sees of it: its
`views` map an event type to a `Reveal`, a function of (state before, event, viewer) that gives
the event whole or what stands in for it (`HandHidden` for another seat's hand). A type the game
does not declare shows as `Withheld` to every seat: nothing of it. A spectator (seat None) sees
what no seat keeps to itself. The referee, and an audit run by whoever holds the log, see
everything; seats see only through these functions:

    shown_event(engine, before, event, seat)   the event as `seat` sees it
    shown_state(engine, state, seat)           the state as `seat` sees it (the engine's `view`)
    shown_turn(engine, state, seat)            whose decision it is, as `seat` sees it
    shown_outcome(engine, state, seat)         how it ended, as `seat` sees it

The actor a seat sees of an event is the shown event's `actor`, so a stand-in decides it too.

Times are views too. When an event was recorded is derived from the event (a Da Vinci Code tile
the referee sorts at once, 20 to 40 us after its draw, against a joker whose owner is asked where
it goes, a round trip to its process), so a reader gets an event's own time only where it sees
the event whole; an event it gets as a stand-in, `Withheld` or redacted shows the time of the last
event before it that the reader sees whole (`Clock`: causal, as a follow stream, which cannot know
a later time, must be). The one exception declared, `OWN_TIME`: a match's start, before which
nothing can be hidden (its time is the catalogue's `created_us`).
`matchlog.replay.views` builds every read-back output (timelines, exports, states, audit and
dispute reports) on these; the referee tells live players through them.

Aggregates are views too: a count, a rate or a hash derived from a value a reader may not know is
itself hidden from that reader. So every figure a game counts (`engines.figures`) and every column
of a match's catalogue row says what it is `Derived` from, and a reader gets it accordingly:

    PUBLIC   derived only from what every reader sees whole: every reader gets it as it is
    SEEN     derived from events some reader may not see whole: a reader gets it counted over its
             own view of the match (the figures keep a spectator's count beside the whole one)
    WHOLE    derived from the whole record (a hash): only a reader who sees every event whole

A figure or a column without a declaration is withheld from every reader but the whole record's,
and fails `test_every_figure_and_column_a_reader_gets_is_declared`. `matchlog.replay.aggregates`
reads the figures and the catalogue through these declarations for statistics, frames and the
service.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Protocol

from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    AnswerWithheld,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Outcome,
    PlayerRemoved,
    Withheld,
)

__all__ = [
    "CATALOGUE",
    "OWN_TIME",
    "Clock",
    "Derived",
    "Reveal",
    "by_decision",
    "declare",
    "declare_figures",
    "everyone",
    "figure_derived",
    "keeping",
    "lifecycle",
    "private",
    "public_start",
    "secret",
    "shared_figures",
    "shown_column",
    "shown_event",
    "shown_outcome",
    "shown_state",
    "shown_turn",
    "whole_to_everyone",
    "withheld_answer",
]

#: What a seat sees of one event: (state before it, the event, the viewer or None) -> the event shown.
Reveal = Callable[[Any, Event, "int | None"], Event]
StandIn = Callable[[Event], Event]


class Derived(StrEnum):
    """What a figure or a catalogue column is derived from, which decides what each reader gets of
    it (see the module docstring)."""

    PUBLIC = "public"
    SEEN = "seen"
    WHOLE = "whole"


class _Viewed(Protocol):
    views: Mapping[type[Event], Reveal]

    def view(self, state: Any, seat: int | None) -> Any: ...

    def to_act(self, state: Any) -> Any: ...

    def outcome(self, state: Any) -> Outcome | None: ...


def everyone(before: Any, event: Event, seat: int | None) -> Event:
    """Every seat sees the event whole."""
    return event


def private(stand_in: StandIn, *, owner: str = "seat") -> Reveal:
    """The seat named by the event's `owner` field sees it whole; every other seat, and a
    spectator, sees `stand_in(event)`."""

    def reveal(before: Any, event: Event, seat: int | None) -> Event:
        return event if seat is not None and getattr(event, owner) == seat else stand_in(event)

    return reveal


def secret(stand_in: StandIn) -> Reveal:
    """No seat sees the event whole (a shuffle): every seat sees `stand_in(event)`."""

    def reveal(before: Any, event: Event, seat: int | None) -> Event:
        return stand_in(event)

    return reveal


def by_decision(reveals: Mapping[str, Reveal], otherwise: Reveal) -> Reveal:
    """For a rejected answer: the reveal of the decision it answered, or `otherwise` for any
    decision not listed (a protocol's own, or one added later)."""

    def reveal(before: Any, event: Event, seat: int | None) -> Event:
        chosen = reveals.get(event.decision, otherwise)  # type: ignore[attr-defined]
        return chosen(before, event, seat)

    return reveal


def keeping(*fields: str, **fixed: Any) -> StandIn:
    """A stand-in of the same type holding only `fields` (and `fixed` values): every other field
    takes its default, so a field added to the type later is withheld until it is listed here.
    (A dropped field with no default needs a fixed value: the stand-in raises TypeError otherwise,
    which the views property test, playing every game, finds.)"""

    def stand_in(event: Event) -> Event:
        kept = {name: getattr(event, name) for name in fields}
        return type(event)(**kept, **fixed)

    return stand_in


_MATCH_STARTED_SHOWN = ("game", "options", "seats", "series", "origin")


def public_start(before: Any, event: Event, seat: int | None) -> Event:
    """A match's start as seats of a game with hidden information see it: its public fields only
    (game, options, seats, series, origin); a starting position stays with the referee."""
    return keeping(*_MATCH_STARTED_SHOWN)(event)


def lifecycle(*, hidden: bool, rejected: Reveal = everyone) -> dict[type[Event], Reveal]:
    """The declarations of the events every game shares. In a game with `hidden` information a
    match's start shows only its public fields (game, options, seats, series, origin: a starting
    position, say, stays with the referee) and a removal's free-text reason only to the removed
    seat; `rejected` decides what the others see of a rejected answer."""
    return {
        MatchStarted: public_start if hidden else everyone,
        AnswerRejected: rejected,
        PlayerRemoved: private(keeping("seat", "code", reason="")) if hidden else everyone,
        ActionsUndone: everyone,
        MatchEnded: everyone,
        ChanceCommitted: everyone,
        ChanceRevealed: everyone,
        MatchResumed: everyone,
        AnswerWithheld: everyone,
        Withheld: everyone,
    }


def withheld_answer(event: Event) -> Event:
    """What the other seats see of a rejected answer they may not see: who answered."""
    return AnswerWithheld(seat=event.seat)  # type: ignore[attr-defined]


def declare(*parts: Mapping[type[Event], Reveal]) -> Mapping[type[Event], Reveal]:
    """A game's declarations, the parts merged (a later part overrides), read-only."""
    merged: dict[type[Event], Reveal] = {}
    for part in parts:
        merged.update(part)
    return MappingProxyType(merged)


def shown_event(engine: _Viewed, before: Any, event: Event, seat: int | None) -> Event:
    """`event` (recorded after `before`) as `seat` sees it (None: a spectator); a type its game
    does not declare shows as `Withheld`."""
    reveal = engine.views.get(type(event))
    if reveal is None:
        return Withheld()
    return reveal(before, event, seat)


#: The event types whose own time every reader gets even where it sees them only in part: a
#: match's start, before which nothing can be hidden (its time is the catalogue's `created_us`).
#: Every other type's time is a view like its fields: its own only to a reader who sees it whole.
OWN_TIME: frozenset[type[Event]] = frozenset({MatchStarted})


class Clock:
    """The times one reader is given of one match's events, fed in log order: an event's own
    where the reader sees it whole (or its type is in `OWN_TIME`), else the time of the last event
    before it that the reader sees whole, which says nothing of how long a hidden step took."""

    def __init__(self) -> None:
        self.last_us: int | None = None  # the time the reader was last given

    def shown(self, event: Event, shown: Event, at_us: int) -> int:
        """The time the reader is given of `event`, recorded at `at_us`, which it sees as `shown`."""
        if shown == event or type(event) in OWN_TIME or self.last_us is None:
            self.last_us = at_us
        return self.last_us


def shown_state(engine: _Viewed, state: Any, seat: int | None) -> Any:
    """The state as `seat` sees it (None: a spectator)."""
    return engine.view(state, seat)


def shown_turn(engine: _Viewed, state: Any, seat: int | None) -> Any:
    """Whose decision it is, and of what kind, as `seat` sees it: read from what it sees, so a
    decision only one seat may know of (placing a joker) shows as the kind every seat sees."""
    return engine.to_act(engine.view(state, seat))


def shown_outcome(engine: _Viewed, state: Any, seat: int | None) -> Outcome | None:
    """How the match ended, as `seat` sees it (read from what it sees)."""
    return engine.outcome(engine.view(state, seat))


# -- aggregates: figures and catalogue columns -------------------------------------------------


def shared_figures(*, hidden: bool) -> dict[str, Derived]:
    """The declarations of the figures every game counts (`engines.figures.Tally`): each seat's
    answers and rejected answers. In a game with `hidden` information a reader may not see an
    answer whole (a Porrinha hand rejected and counted as 0, a Da Vinci Code joker placed), so each
    is counted over what the reader sees."""
    counted = Derived.SEEN if hidden else Derived.PUBLIC
    return {"answers": counted, "rejected": counted}


def declare_figures(*parts: Mapping[str, Derived]) -> Mapping[str, Derived]:
    """A game's figure declarations, the parts merged (a later part overrides), read-only."""
    merged: dict[str, Derived] = {}
    for part in parts:
        merged.update(part)
    return MappingProxyType(merged)


def figure_derived(engine: Any, figure: str) -> Derived | None:
    """What `figure` of `engine`'s game is derived from; None: undeclared, withheld."""
    return getattr(engine, "figures", {}).get(figure)


def whole_to_everyone(engine: Any) -> bool:
    """Whether every reader sees every event of the game whole: every type it declares is shown to
    everyone as it is (Fish, backgammon), so nothing derived from its events is hidden."""
    return all(reveal is everyone for reveal in engine.views.values())


#: What each column of a match's catalogue row (`store.MatchInfo`) is derived from: the start as
#: every seat sees it (game, options, seats, origin, series), the last seq, the times of its start
#: and its end (`OWN_TIME`, and an end every reader sees whole: the times every view gives them),
#: how it ended as every seat sees it, and the chain's head: a hash over every event, whole.
CATALOGUE: Mapping[str, Derived] = MappingProxyType(
    {
        "match_id": Derived.PUBLIC,
        "game": Derived.PUBLIC,
        "status": Derived.PUBLIC,
        "created_us": Derived.PUBLIC,
        "ended_us": Derived.PUBLIC,
        "players": Derived.PUBLIC,
        "strategies": Derived.PUBLIC,
        "options": Derived.PUBLIC,
        "last_seq": Derived.PUBLIC,
        "head_hash": Derived.WHOLE,
        "ended_seq": Derived.PUBLIC,
        "outcome": Derived.PUBLIC,
        "origin_match": Derived.PUBLIC,
        "origin_seq": Derived.PUBLIC,
        "series_id": Derived.PUBLIC,
        "series_game": Derived.PUBLIC,
    }
)


def shown_column(engine: Any | None, derived: Derived | None, seat: int | None) -> bool:
    """Whether a reader that is `seat` (None: a spectator) gets a column or figure `derived` so of
    a match of `engine`'s game (None: a game this matchlog does not know, whose views it cannot
    tell). A SEEN figure is given as the reader's own count, not by this."""
    if derived is Derived.PUBLIC:
        return True
    if derived is Derived.WHOLE:
        return engine is not None and whole_to_everyone(engine)
    return False
