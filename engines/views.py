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
`matchlog.replay.views` builds every read-back output (timelines, exports, states, audit and
dispute reports) on these; the referee tells live players through them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    "Reveal",
    "by_decision",
    "declare",
    "everyone",
    "keeping",
    "lifecycle",
    "private",
    "public_start",
    "secret",
    "shown_event",
    "shown_outcome",
    "shown_state",
    "shown_turn",
    "withheld_answer",
]

#: What a seat sees of one event: (state before it, the event, the viewer or None) -> the event shown.
Reveal = Callable[[Any, Event, "int | None"], Event]
StandIn = Callable[[Event], Event]


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
