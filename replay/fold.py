"""Folding a log back into states: the effective history, the fold with its hooks, and the timeline.

The log keeps everything; an `ActionsUndone` event takes back the latest effective events, so the
effective history is the log with the taken-back events (and the undo events themselves) skipped.
A commitment, a reveal or a resume is never taken back (`replay.judge.SEGMENT_EVENTS`).
The state at seq N is the fold of the effective history of the log's first N+1 events: later undos
never change what the state was at N.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol
from uuid import UUID

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from matchlog.engines import Engine
from matchlog.engines import get as get_engine
from matchlog.engines.views import Clock, shown_event, shown_state
from matchlog.events import ActionsUndone, DecodeError, Event, MatchStarted, Record, decode, decode_lines
from matchlog.store import Store

from .judge import SEGMENT_EVENTS

_UNDONE = ActionsUndone.__struct_config__.tag

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
    state): the log read in Arrow batches, each batch's events decoded in one call where they are
    all of the versions this matchlog writes, and each match folded by its game's rules (with the
    engine's `apply_all` where it has one), without building a Record per event.

    Raises:
        DecodeError: a stored event does not decode.
    """
    batches = getattr(store, "event_lines", None)
    if batches is None:  # a reader without Arrow batches (the archive): column lists, event by event
        yield from _fold_columns(store, match_ids)
        return
    match_id: str | None = None
    events: list[Event] = []
    undone = False  # whether an undo is among the match's events (its batches say)
    for batch in batches(match_ids):
        decoded, undos = _decode_batch(batch)
        ids = batch.column(0)
        for start, end, mid in _runs(ids):
            if mid == match_id:  # the match goes on from the batch before
                events.extend(decoded[start:end])
                undone = undone or undos
                continue
            if match_id is not None:
                yield match_id, _fold_events(events, undone=undone)
            match_id, events, undone = mid, decoded[start:end], undos
    if match_id is not None:
        yield match_id, _fold_events(events, undone=undone)


def _runs(ids: Any) -> list[tuple[int, int, str]]:
    """(start, end, match id) of each run of one match id in a batch's id column (sorted)."""
    count = len(ids)
    if count == 0:
        return []
    changes = pc.indices_nonzero(pc.not_equal(ids.slice(1), ids.slice(0, count - 1))).to_pylist()
    starts = [0, *(k + 1 for k in changes)]
    return list(zip(starts, [*starts[1:], count], ids.take(starts).to_pylist(), strict=True))


def _decode_batch(batch: Any) -> tuple[list[Event], bool]:
    """Every event of a batch of `Store.event_lines`, in order, and whether an undo is among them:
    the lines in one call where all are
    of the current versions, one by one (upcast) otherwise, or where the one call finds a line
    that is not an event (so a payload decodes here exactly when `decode` decodes it).

    Raises:
        DecodeError: a stored event does not decode.
    """
    lines = batch.column(3)
    if lines.type != pa.string():
        lines = lines.cast(pa.string())
    kinds = pa.Table.from_batches([batch.select([1, 2])]).group_by(["type", "version"]).aggregate([])
    pairs = set(zip(kinds.column(0).to_pylist(), kinds.column(1).to_pylist(), strict=True))
    undos = any(tag == _UNDONE for tag, _ in pairs)
    _, offsets, data = lines.buffers()
    if data is not None and not lines.null_count:
        bounds = memoryview(offsets).cast("i")
        begin, end = bounds[lines.offset], bounds[lines.offset + len(lines)]
        with contextlib.suppress(DecodeError), _collector_paused():
            decoded = decode_lines(memoryview(data)[begin:end], pairs)
            if decoded is not None and len(decoded) == len(lines):
                return decoded, undos
    tags, versions = batch.column(1).to_pylist(), batch.column(2).to_pylist()
    return [
        decode(line, tag=tag, version=version)
        for line, tag, version in zip(lines.to_pylist(), tags, versions, strict=True)
    ], undos


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a batch's events are made: 100,000 new objects
    would otherwise run it a hundred times over everything the process holds, and events (frozen
    structs of values) make no cycles for it to find. Left as it was found."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _fold_columns(store: Any, match_ids: Sequence[UUID] | None) -> Iterator[tuple[str, Any]]:
    """`fold_all` over a reader's column lists (`event_columns`), decoding event by event."""
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


def _fold_events(events: list[Event], *, undone: bool = True) -> Any:
    """Fold one match's events (seq = position), skipping undos and what they took back (none
    are looked for where the caller knows there are none: `undone` False)."""
    started = events[0]
    if not isinstance(started, MatchStarted):
        raise DecodeError("a match's log must start with match.started")
    engine = get_engine(started.game)
    taken = {seq for e in events if isinstance(e, ActionsUndone) for seq in e.seqs} if undone else set()
    state = engine.start(started)
    apply = engine.apply
    if taken:
        for seq, event in enumerate(events[1:], start=1):
            if seq not in taken and not isinstance(event, ActionsUndone):
                state = apply(state, event)
        return state
    apply_all = getattr(engine, "apply_all", None)
    if apply_all is not None:  # the game folds a run of events itself, without a state per event
        return apply_all(state, events[1:])
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
