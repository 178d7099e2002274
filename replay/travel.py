"""Time travel: the state of a match at any seq, folded from the nearest cached snapshot.

A match asked about again is stepped through from memory instead (`replay.steps_cache`): its
events read once, a state kept every few seqs; what follows is the path from the file.

A snapshot is the effective state after some seq S, as it was at S; it stays right for every later
seq N unless an undo between S and N takes back an event at or before S, in which case an earlier
snapshot (or seq 0) is used. Snapshots are a cache: dropping them changes nothing but speed. The
store hands out only a snapshot whose digest matches the log; one that still cannot be read or
folded on from is dropped, and the state is folded from seq 0 instead.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import Engine
from matchlog.engines import get as get_engine
from matchlog.events import ActionsUndone, Record, UsageError
from matchlog.store import Store

from .fold import engine_of
from .steps_cache import step_cache

__all__ = ["SNAPSHOT_EVERY", "MatchState", "load", "state_at"]

#: A fold writes a snapshot every this many seqs.
SNAPSHOT_EVERY = 256


class MatchState(msgspec.Struct, frozen=True):
    """A match's state at one seq, with the engine that reads it."""

    match_id: UUID
    seq: int
    engine: Any
    state: Any


@cache
def _state_decoder(state_type: type) -> msgspec.msgpack.Decoder:
    return msgspec.msgpack.Decoder(state_type)


def load(store: Store, match_id: UUID | str) -> tuple[Engine[Any], list[Record]]:
    """The engine and every record of one match."""
    records = store.read(match_id)
    return engine_of(records), records


def state_at(
    store: Store,
    match_id: UUID | str,
    seq: int | None = None,
    *,
    cache_snapshots: bool = True,
    use_snapshots: bool = True,
) -> MatchState:
    """The state of a match after seq `seq` (default: its last), folded from the nearest snapshot
    (or, without `use_snapshots`, from seq 0).

    Raises:
        UnknownMatch: no such match.
        UsageError: the seq is not in the match.
    """
    if seq is None or not isinstance(match_id, UUID) or seq < 0:
        info = store.match(match_id)
        match_id = info.match_id
        target = info.last_seq if seq is None else seq
        if not 0 <= target <= info.last_seq:
            raise UsageError(f"seq {seq} is not in match {match_id} (seqs 0 to {info.last_seq})", code="usage.seq")
        game = store.game_of(match_id)  # (its first event's: the catalogue row may have been edited)
    else:  # the usual step of a replay: the catalogue need not be read (the tail shows whether seq exists)
        target, game = seq, store.game_of(match_id)
    engine = get_engine(game)
    if use_snapshots:  # a match being stepped through is served from memory (replay.steps_cache)
        held = step_cache(store).state(store, match_id, target, engine)
        if held is not None:
            return MatchState(match_id, target, engine, held)
    key = engine.spec.snapshot_key
    decoder = _state_decoder(engine.spec.state)

    # Find a snapshot that no later undo (up to the target) reaches behind.
    upto = target if use_snapshots else -1
    while True:
        found = store.snapshot(match_id, upto, key) if upto >= 0 else None
        start_seq = found[0] if found else 0
        tail = store.read_events(match_id, start=start_seq + 1 if found else 0, stop=target)
        if (tail[-1][0] if tail else start_seq) != target:
            last = store.match(match_id).last_seq
            raise UsageError(f"seq {seq} is not in match {match_id} (seqs 0 to {last})", code="usage.seq")
        reach = min((s for _, e in tail if isinstance(e, ActionsUndone) for s in e.seqs), default=None)
        if found is None or reach is None or reach > start_seq:
            break
        upto = reach - 1

    history = _effective(tail)
    if found is None:
        state = engine.start(history[0][1])  # type: ignore[arg-type]
        history = history[1:]
    else:
        try:
            state = decoder.decode(found[1])
            state = engine.apply(state, history[0][1]) if history else state
        except Exception:  # a snapshot the rules cannot go on from: drop it, and fold from the start
            store.drop_snapshot(match_id, start_seq, key)
            return state_at(store, match_id, target, cache_snapshots=cache_snapshots, use_snapshots=False)
        history = history[1:]
    last_snapshot = start_seq
    cached: list[tuple[int, bytes]] = []
    for at, event in history:
        try:
            state = engine.apply(state, event)
        except Exception:
            if found is None:
                raise
            store.drop_snapshot(match_id, start_seq, key)
            return state_at(store, match_id, target, cache_snapshots=cache_snapshots, use_snapshots=False)
        if cache_snapshots and at - last_snapshot >= SNAPSHOT_EVERY:
            cached.append((at, msgspec.msgpack.encode(state)))
            last_snapshot = at
    if cached:
        store.put_snapshots(match_id, key, cached)  # queued: a reader need not wait for a cache
    return MatchState(match_id, target, engine, state)


def _effective(pairs: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """(seq, event) pairs without undos and what they took back."""
    taken = {seq for _, event in pairs if isinstance(event, ActionsUndone) for seq in event.seqs}
    return [(seq, event) for seq, event in pairs if seq not in taken and not isinstance(event, ActionsUndone)]
