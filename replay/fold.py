"""Folding a log back into states: the effective history, the fold with its hooks, and the timeline.

The log keeps everything; an `ActionsUndone` event takes back the latest effective events, so the
effective history is the log with the taken-back events (and the undo events themselves) skipped.
A commitment, a reveal or a resume is never taken back (`replay.judge.SEGMENT_EVENTS`).
The state at seq N is the fold of the effective history of the log's first N+1 events: later undos
never change what the state was at N.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol
from uuid import UUID

import msgspec

from matchlog.engines import Engine
from matchlog.engines import get as get_engine
from matchlog.engines.views import Clock, shown_event, shown_state
from matchlog.events import ActionsUndone, DecodeError, Event, MatchStarted, Record, decode
from matchlog.store import Store

from .judge import SEGMENT_EVENTS

__all__ = [
    "Step",
    "Visitor",
    "by_match",
    "effective",
    "engine_of",
    "fold",
    "fold_all",
    "timeline",
    "undone_seqs",
    "walk",
]


class Visitor(Protocol):
    """Hooks called by `fold`: python-chess's game visitor in matchlog's terms."""

    def begin(self, state: Any) -> None: ...

    def on_event(self, before: Any, record: Record, after: Any) -> None: ...

    def end(self, state: Any) -> None: ...


def engine_of(records: Sequence[Record]) -> Engine[Any]:
    """The engine of the match whose log starts with `records[0]`.

    Raises:
        DecodeError: the log does not start with match.started.
        UsageError: the game is not one this matchlog knows.
    """
    if not records or not isinstance(records[0].event, MatchStarted):
        raise DecodeError("a match's log must start with match.started")
    return get_engine(records[0].event.game)


def by_match(records: Iterable[Record]) -> Iterator[list[Record]]:
    """Records ordered by match and seq (as `Store.records` reads them), one match's list at a time."""
    current: list[Record] = []
    for record in records:
        if current and record.match_id != current[0].match_id:
            yield current
            current = []
        current.append(record)
    if current:
        yield current


def fold_all(store: Store, match_ids: Sequence[UUID] | None = None) -> Iterator[tuple[str, Any]]:
    """The state at the end of every match (all by default), in match id order, as (match id text,
    state): the log read in column batches, each payload decoded once and folded by its game's
    rules, without building a Record per event (several times faster than `fold` match by match).

    Raises:
        DecodeError: a stored event does not decode.
    """
    match_id: str | None = None
    events: list[Event] = []
    for ids, _seqs, tags, versions, payloads in store.event_columns(match_ids):
        for mid, tag, version, payload in zip(ids, tags, versions, payloads, strict=True):
            if mid != match_id:
                if match_id is not None:
                    yield match_id, _fold_events(events)
                match_id, events = mid, []
            events.append(decode(payload, tag=tag, version=version))
    if match_id is not None:
        yield match_id, _fold_events(events)


def _fold_events(events: list[Event]) -> Any:
    """Fold one match's events (seq = position), skipping undos and what they took back."""
    started = events[0]
    if not isinstance(started, MatchStarted):
        raise DecodeError("a match's log must start with match.started")
    engine = get_engine(started.game)
    taken = {seq for e in events if isinstance(e, ActionsUndone) for seq in e.seqs}
    state = engine.start(started)
    apply = engine.apply
    if taken:
        for seq, event in enumerate(events[1:], start=1):
            if seq not in taken and not isinstance(event, ActionsUndone):
                state = apply(state, event)
        return state
    for event in events[1:]:
        state = apply(state, event)
    return state


def undone_seqs(records: Sequence[Record]) -> set[int]:
    """The seqs taken back by the undo events among `records`."""
    taken: set[int] = set()
    for record in records:
        if isinstance(record.event, ActionsUndone):
            taken.update(record.event.seqs)
    return taken


def effective(records: Sequence[Record]) -> list[Record]:
    """The records that count: undo events and what they took back are skipped."""
    taken = undone_seqs(records)
    return [r for r in records if r.seq not in taken and not isinstance(r.event, ActionsUndone)]


def fold(records: Sequence[Record], visitor: Visitor | None = None, *, engine: Engine[Any] | None = None) -> Any:
    """The state after the effective history of `records` (which start at seq 0)."""
    engine = engine or engine_of(records)
    history = effective(records)
    state = engine.start(history[0].event)  # type: ignore[arg-type]
    if visitor is not None:
        visitor.begin(state)
    for record in history[1:]:
        after = engine.apply(state, record.event)
        if visitor is not None:
            visitor.on_event(state, record, after)
        state = after
    if visitor is not None:
        visitor.end(state)
    return state


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """One record of a timeline: the event as shown, the states around it, and what it did.

    In a seat's timeline the record itself is as that seat sees it too: its event and actor are
    the shown ones, its time the one the views give it (`engines.views.Clock`: its own only where
    the seat sees it whole), and its hash is withheld (empty), since a hash over a hidden value can
    be searched for that value where it has few possibilities."""

    record: Record
    event: Event  # the event as the viewer may see it
    before: Any
    after: Any
    text: str
    undone_by: int | None = None  # the seq of the undo that later took this event back
    #: This event goes on the action of the line before it (a backgammon turn's next checker):
    #: readers show the two as one line, with this one's text, which says the whole of it so far.
    joins: bool = False


def timeline(records: Sequence[Record], seat: int | None = None, *, as_seat: bool = False) -> Iterator[Step]:
    """Every record in log order with the (effective) state before and after it.

    With `as_seat`, states are the seat's views and events, with their times, are shown as the
    seat sees them (`engines.views`; seat None: a spectator), so the timeline holds nothing that
    seat could not have seen at that point.
    """
    engine = engine_of(records)
    undone_at = {seq: r.seq for r in records if isinstance(r.event, ActionsUndone) for seq in r.event.seqs}
    state = engine.start(records[0].event)  # type: ignore[arg-type]
    # An engine may say an event goes on the one before it (`continues`): it joins that line when
    # nothing came between them in the log and both stand or were taken back together.
    continues = getattr(engine, "continues", None)
    clock = Clock()

    def shown(s: Any) -> Any:
        return shown_state(engine, s, seat) if as_seat else s

    def step(record: Record, before: Any, after: Any, undone_by: int | None, joins: bool = False) -> Step:
        event = shown_event(engine, before, record.event, seat) if as_seat else record.event
        if as_seat:
            at_us = clock.shown(record.event, event, record.at_us)
            record = msgspec.structs.replace(record, event=event, actor=event.actor, at_us=at_us, hash=b"")
        return Step(
            record=record,
            event=event,
            before=shown(before),
            after=shown(after),
            text=engine.describe(shown(before), event, shown(after)),
            undone_by=undone_by,
            joins=joins,
        )

    yield step(records[0], state, state, None)
    for record, before, after, follows in walk(engine, records, state):
        joins = (
            continues is not None
            and not isinstance(record.event, ActionsUndone)
            and follows == record.seq - 1
            and undone_at.get(record.seq) == undone_at.get(record.seq - 1)
            and continues(before, record.event)
        )
        yield step(record, before, after, undone_at.get(record.seq), joins)


def walk(engine: Any, records: Sequence[Record], start: Any) -> Iterator[tuple[Record, Any, Any, int]]:
    """Each record after the first (`match.started`, whose state is `start`) with the effective
    states before and after it, and the seq of the effective event it follows: an undo returns to
    the state before what it took back, which the log still holds and later records no longer
    build on."""
    stack: list[tuple[int, Any]] = [(0, start)]  # effective (seq, state after it)
    for record in records[1:]:
        follows, before = stack[-1]
        event = record.event
        if isinstance(event, ActionsUndone):
            taken = set(event.seqs)
            while len(stack) > 1 and stack[-1][0] in taken:
                stack.pop()
            after = stack[-1][1]
        else:
            after = engine.apply(before, event)
            if not isinstance(event, SEGMENT_EVENTS):  # (no undo takes one back: `replay.judge`)
                stack.append((record.seq, after))
        yield record, before, after, follows
