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
    MatchStarted,
    Origin,
    Record,
    UsageError,
    draft,
    uuid7,
)
from matchlog.store import Appended, Store

from .fold import effective

__all__ = ["fork", "undo", "undoable"]


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
