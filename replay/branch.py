"""Undo and fork: new facts about old matches, never edits of them.

Undo appends an `ActionsUndone` that takes back the latest effective action: the last answer a seat
gave and whatever the referee recorded after it. Fork copies a match's log up to a seq into a new
match whose `MatchStarted` names its origin, for what-if play from that point.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import msgspec

from matchlog.events import (
    ActionsUndone,
    Draft,
    MatchEnded,
    MatchStarted,
    Origin,
    Outcome,
    Record,
    UsageError,
    draft,
    uuid7,
)
from matchlog.store import Appended, Store

from .fold import effective, fold

__all__ = ["abandon", "fork", "undo", "undoable"]


def undoable(records: Sequence[Record]) -> tuple[int, ...]:
    """The seqs one undo would take back: the last effective seat answer and all effective after it.

    Raises:
        UsageError: no seat has answered anything that is still effective.
    """
    history = effective(records)
    for index in range(len(history) - 1, 0, -1):
        if history[index].actor is not None:
            return tuple(record.seq for record in history[index:])
    raise UsageError("there is nothing to undo: no answer of any seat is in effect", code="usage.nothing_to_undo")


def undo(store: Store, match_id: UUID | str, *, reason: str = "", by: int | None = None) -> Appended:
    """Append an undo of the latest effective action of a match (as an arbiter when `by` is None).

    Raises:
        UnknownMatch: no such match.
        UsageError: nothing to undo.
        ConcurrencyError: the match changed while the undo was being decided.
    """
    records = store.read(match_id)
    seqs = undoable(records)
    return store.append(records[0].match_id, [ActionsUndone(seqs=seqs, reason=reason, by=by)], len(records))


def abandon(store: Store, match_id: UUID | str, *, reason: str) -> Appended:
    """End an unfinished match (one whose referee stopped: a crash, a kill) as abandoned, with why.
    Every seat shares the place; players already removed keep that. What was played stays.

    Raises:
        UnknownMatch: no such match.
        UsageError: the match has already ended.
        ConcurrencyError: the match changed meanwhile.
    """
    records = store.read(match_id)
    info = store.match(records[0].match_id)
    if info.status != "running":
        raise UsageError(f"match {info.match_id} has already ended ({info.status})", code="usage.ended")
    state = fold(records)
    seats = len(info.players)
    removed = tuple(sorted(getattr(state, "removed", ())))
    outcome = Outcome(places=(1,) * seats, winners=(), result="abandoned", removed=removed)
    return store.append(info.match_id, [MatchEnded(outcome=outcome, reason=reason)], len(records))


def fork(store: Store, match_id: UUID | str, at: int) -> UUID:
    """Copy a match's log up to seq `at` into a new match that records its origin; returns its id.

    Raises:
        UnknownMatch: no such match.
        UsageError: `at` is not a seq of the match.
    """
    records = store.read(match_id, stop=at)
    source = records[0].match_id
    last = records[-1].seq
    if at < 0 or last != at:
        raise UsageError(f"seq {at} is not in match {source} (seqs 0 to {last})", code="usage.seq")
    started = records[0].event
    assert isinstance(started, MatchStarted)
    copies: list[Draft] = [
        draft(msgspec.structs.replace(started, origin=Origin(source, at)), at_us=records[0].at_us),
        *(draft(record.event, at_us=record.at_us) for record in records[1:]),
    ]
    new_id = uuid7()
    store.append(new_id, copies, 0)
    return new_id
