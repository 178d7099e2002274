"""Undo and fork: new facts about old matches, never edits of them, each judged as every write is.

Undo appends an `ActionsUndone` that takes back the latest effective action: the last answer a seat
gave and whatever the referee recorded after it (a commitment, a reveal and a resume stay: they are
not actions). Fork copies a match's log up to a seq into a new match whose `MatchStarted` names its
origin, for what-if play from that point. Each goes through the log's one write path
(`replay.clerk`); these functions are that path for a store opened here.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from matchlog.events import Record
from matchlog.store import Appended, Store

from .clerk import Clerk
from .judge import Judge

__all__ = ["abandon", "fork", "undo", "undoable"]


def undoable(records: Sequence[Record]) -> tuple[int, ...]:
    """The seqs one undo would take back: the last effective seat answer and all effective after it.

    Raises:
        UsageError: no seat has answered anything that is still effective.
        IllegalAction: the rules cannot fold the records.
    """
    return Judge.of(records).undoable()


def undo(store: Store, match_id: UUID | str, *, reason: str = "", by: int | None = None) -> Appended:
    """Append an undo of the latest effective action of a match (as an arbiter when `by` is None).

    Raises:
        UnknownMatch: no such match.
        UsageError: nothing to undo.
        IllegalAction: the rules refuse it (`chance.hidden_revealed`: the seed of a game with hidden
            information is revealed).
        ConcurrencyError: the match changed while the undo was being decided.
    """
    return Clerk(store).undo(match_id, reason=reason, by=by)


def abandon(store: Store, match_id: UUID | str, *, reason: str) -> Appended:
    """End an unfinished match (one whose referee stopped: a crash, a kill) as abandoned, with why.
    Every seat shares the place; players already removed keep that. What was played stays.

    Raises:
        UnknownMatch: no such match.
        UsageError: the match has already ended.
        IllegalAction: the rules refuse it.
        ConcurrencyError: the match changed meanwhile.
    """
    return Clerk(store).abandon(match_id, reason=reason)


def fork(store: Store, match_id: UUID | str, at: int) -> UUID:
    """Copy a match's log up to seq `at` into a new match that records its origin; returns its id.

    Raises:
        UnknownMatch: no such match.
        UsageError: `at` is not a seq of the match.
        IllegalAction: the rules refuse the copy (it holds what was written around the judge).
    """
    return Clerk(store).fork(match_id, at)
