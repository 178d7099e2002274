"""The time-travel cache: a match being stepped through, held in memory, so each step is a short
fold from a state kept every few seqs instead of queries and a fold from a snapshot in the file.

A match is held from the second time its states are asked for (the first may be a single look,
such as a state read at its end, which the file's snapshots serve well): its events are read once,
and the effective state is kept every STEP_EVERY seqs, with the top of the effective stack there
(`replay.fold.walk`). The state at seq N is then folded from the kept state at or before N, at
most STEP_EVERY - 1 events, in one call of the game's `apply_all` where they hold no undo and no
segment event (a step's usual case: no state per event, so a step is short and leaves the garbage
collector little, whose pauses made the slowest steps); an undo between the two that takes back
what the kept state stands on sends it to an earlier kept state, as a snapshot's does
(`replay.travel`).

A log only grows, and the state at seq N is the fold of its first N + 1 events (later undos never
change it), so what is held never goes stale: a step past the last held seq reads the events after
it and goes on. What is held is the whole state, never a seat's view: views are made from it for
each reader, as from any state. The cache is bounded by the events it holds, all matches together
(STEP_EVENTS; the match stepped least recently is dropped first), and a match longer than that is
not held at all. It is kept per `Store` object and goes with it.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections import OrderedDict
from typing import Any
from uuid import UUID

from matchlog.events import ActionsUndone, Event
from matchlog.store import Store

from .judge import SEGMENT_EVENTS

__all__ = ["STEP_EVENTS", "STEP_EVERY", "StepCache", "step_cache"]

#: The most events the cache of one store holds, every match held together.
STEP_EVENTS = 250_000
#: The cache keeps the state every this many seqs (so a step folds fewer events than this).
STEP_EVERY = 32
#: How many matches asked about once the cache remembers (the second ask holds the match).
_ASKED = 1_024

#: The effective stack's top after a seq: (the seq of the effective event it ends with, the state).
_Top = tuple[int, Any]


class _Held:
    """One match in memory: its events from seq 0, and every STEP_EVERY seqs the state after that
    seq with the effective stack's top there."""

    __slots__ = ("apply_all", "engine", "events", "kept", "marks")

    def __init__(self, engine: Any, events: list[Event]) -> None:
        self.engine = engine
        self.apply_all = getattr(engine, "apply_all", None)
        self.events = events
        self.kept: list[tuple[Any, _Top]] = []  # [k]: after seq k * STEP_EVERY
        self.marks: list[int] = []  # the seqs of the undos and segment events, in order

    def extend(self, events: list[Event]) -> None:
        """Hold the events after the last held seq, and keep the states they reach."""
        held = len(self.events)
        self.marks.extend(
            held + k for k, event in enumerate(events) if isinstance(event, (ActionsUndone, *SEGMENT_EVENTS))
        )
        self.events.extend(events)
        while len(self.kept) * STEP_EVERY < len(self.events):
            seq = len(self.kept) * STEP_EVERY
            if seq == 0:
                started = self.engine.start(self.events[0])
                self.kept.append((started, (0, started)))
            else:
                self.kept.append(self.at(seq))

    def state(self, seq: int) -> Any:
        """The state after `seq` (held): from the kept state at or before it, through the game's
        `apply_all` where the events between hold no undo and no segment event (a step's usual
        case: one call, no state per event, so a step makes little for the garbage collector and
        is over quickly); otherwise as `at` folds them."""
        base = min(seq // STEP_EVERY, len(self.kept) - 1)
        start = base * STEP_EVERY + 1
        if self.apply_all is None or start > seq:
            return self.at(seq)[0]
        marked = bisect_left(self.marks, start)
        if marked < len(self.marks) and self.marks[marked] <= seq:
            return self.at(seq)[0]
        # With no undo and no segment event on the way, `_fold` applies each event to the last
        # state, starting from the kept stack top's: that is the game's `apply_all` of the run.
        return self.apply_all(self.kept[base][1][1], self.events[start : seq + 1])

    def at(self, seq: int) -> tuple[Any, _Top]:
        """The state after `seq` (held) and the effective stack's top there."""
        base = min(seq // STEP_EVERY, len(self.kept) - 1)
        while True:
            done = self._fold(base, seq)
            if isinstance(done, tuple):
                return done
            base = max(0, done - 1) // STEP_EVERY  # an undo took back what the kept state stands on

    def _fold(self, base: int, seq: int) -> tuple[Any, _Top] | int:
        """Fold from the state kept at `base` to `seq`; or the earliest seq an undo on the way takes
        back, when it takes back the kept state's own top (an earlier kept state is needed)."""
        after, top = self.kept[base]
        stack = [top]
        apply, events = self.engine.apply, self.events
        for at in range(base * STEP_EVERY + 1, seq + 1):
            event = events[at]
            if isinstance(event, ActionsUndone):
                taken = set(event.seqs)
                while stack[-1][0] in taken and stack[-1][0] != 0:
                    if len(stack) == 1:
                        return min(taken)
                    stack.pop()
                after = stack[-1][1]
            else:
                after = apply(stack[-1][1], event)
                if not isinstance(event, SEGMENT_EVENTS):  # (as `replay.fold.walk`)
                    stack.append((at, after))
        return after, stack[-1]


class StepCache:
    """The matches of one store being stepped through (see the module's docstring)."""

    def __init__(self, limit: int = STEP_EVENTS) -> None:
        self.limit = limit
        self._held: OrderedDict[UUID, _Held] = OrderedDict()
        self._asked: OrderedDict[UUID, None] = OrderedDict()
        self._events = 0
        self._lock = threading.Lock()

    @property
    def events(self) -> int:
        """How many events the cache holds now."""
        return self._events

    def held(self) -> list[UUID]:
        """The matches held, the least recently stepped first."""
        with self._lock:
            return list(self._held)

    def state(self, store: Store, match_id: UUID, seq: int, engine: Any) -> Any | None:
        """The state of `match_id` after `seq` from memory, reading what memory lacks; None where
        the cache does not serve it (the first ask about a match, a seq past the match's end, a
        match too long to hold): the caller folds it from the file.

        Raises:
            DecodeError: a stored event does not decode, or the events are not whole.
        """
        with self._lock:
            held = self._held.get(match_id)
            if held is not None:
                self._held.move_to_end(match_id)
            elif match_id not in self._asked:
                self._asked[match_id] = None
                while len(self._asked) > _ASKED:
                    self._asked.popitem(last=False)
                return None
        if held is None or held.engine is not engine:
            held = self._hold(store, match_id, seq, engine)
            if held is None:
                return None
        if seq >= len(held.events):
            more = store.read_events(match_id, start=len(held.events), stop=seq)
            if not more or more[-1][0] != seq:
                return None  # (not in the match: the caller says so)
            with self._lock:
                if self._held.get(match_id) is not held or seq < len(held.events):
                    return None if self._held.get(match_id) is not held else held.state(seq)
                if not self._room(len(more), keep=match_id):
                    self._drop(match_id)
                    return None
                held.extend([event for _, event in more])
                self._events += len(more)
        with self._lock:
            return held.state(seq)

    def _hold(self, store: Store, match_id: UUID, seq: int, engine: Any) -> _Held | None:
        """Read a match's events (to its end, or `seq` if further) and hold them."""
        pairs = store.read_events(match_id)
        if not pairs or len(pairs) > self.limit or pairs[-1][0] != len(pairs) - 1:
            return None
        held = _Held(engine, [])
        held.extend([event for _, event in pairs])
        with self._lock:
            self._drop(match_id)
            if not self._room(len(pairs), keep=None):
                return None
            self._held[match_id] = held
            self._events += len(pairs)
        return held

    def _room(self, count: int, keep: UUID | None) -> bool:
        """Drop the least recently stepped matches (but `keep`) until `count` more events fit."""
        if count > self.limit:
            return False
        for match_id in list(self._held):
            if self._events + count <= self.limit:
                break
            if match_id != keep:
                self._drop(match_id)
        return self._events + count <= self.limit

    def _drop(self, match_id: UUID) -> None:
        held = self._held.pop(match_id, None)
        if held is not None:
            self._events -= len(held.events)


_caches: weakref.WeakKeyDictionary[Store, StepCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def step_cache(store: Store) -> StepCache:
    """The time-travel cache of `store` (made at its first use)."""
    with _caches_lock:
        cache = _caches.get(store)
        if cache is None:
            cache = _caches[store] = StepCache()
        return cache
