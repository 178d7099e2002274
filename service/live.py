"""Recording for referees that live elsewhere: matches created through the service, appends judged
by the one judge (`replay.judge`, the audit's) on the log's one write path (`replay.clerk`), and
chance drawn by the service from a seed it committed to.

A game server in any language uses matchlog as its record of truth: it creates a match (and gets
a referee token and one token per seat), appends each step with `expected_seq`, and may ask the
service for the match's chance (a roll, a shuffle, a board), which the service draws from a seed
it committed to at the start and reveals when the rules say the match is over, ending it then.
Every batch, and every bulk append of encoded events, is judged against the match's live state
before it is written; a batch the rules refuse is written not at all. In a match whose chance the
service draws, only the service records chance (and reveals it, resumes the match with a fresh
seed when one was revealed, and ends it): the judge refuses any of these from its referee,
wherever in a batch they come.

The judging is the log's clerk's (`FileLog.clerk`), which the arbiter's undo and abandonment and
a fork go through too; the seeds of the service's chance are derived from the service's key and
the match id (and the seq of a segment's resume), so nothing secret is stored and a restarted
service picks up where it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Annotated, Any
from uuid import UUID

import msgspec

from matchlog.engines import get as get_engine
from matchlog.engines import parse_options
from matchlog.events import Draft, Event, MatchStarted, Seat, UsageError, decode, drafts
from matchlog.store import Appended
from matchlog.store.writer import AT_US_MAX

__all__ = ["Appending", "LiveMatches", "NewMatch"]


class NewMatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A match a referee elsewhere starts: the game, its options, its seats in order, and who draws
    its chance: the `service` (committed, drawn on request, revealed at the end) or the `referee`
    itself (recorded as its own events, checked for possibility)."""

    game: str
    seats: list[Seat]
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    chance: str = "service"


class Appending(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One event to append: the event (a JSON object tagged by its `type`), and optionally the id
    and time its referee gave it (an id makes a re-send after a lost answer a no-op)."""

    # Kept as JSON values here and decoded by the codec when the batch is judged (`_drafts`): the
    # events a log may hold are those of the games loaded now (`events.plugins`), not those loaded
    # when this type was made.
    event: Annotated[dict[str, Any], msgspec.Meta(description="an event of the match's game, tagged by its `type`")]
    event_id: UUID | None = None
    at_us: Annotated[int, msgspec.Meta(ge=0, lt=AT_US_MAX)] | None = None


class LiveMatches:
    """The matches being recorded through the service, on the log's clerk. `log` is the service's
    `FileLog`; `key` derives the seeds of the chance the service draws."""

    def __init__(self, log: Any, key: bytes) -> None:
        self.log = log
        log.own_chance(key)

    def start(self, new: NewMatch) -> tuple[UUID, Appended]:
        """Record the start of a new match (and the service's chance commitment).

        Raises:
            UsageError: an unknown game, options it does not take, or a table it is not played by.
        """
        engine = get_engine(new.game)
        spec = engine.spec
        if spec.tournament:
            raise UsageError(f"{new.game} is a tournament's record, not a game to referee", code="usage.game")
        spec.check_players(len(new.seats))
        if new.chance not in ("service", "referee"):
            raise UsageError(f"chance is drawn by the service or the referee, not {new.chance!r}", code="usage.chance")
        # The service plays no match itself (a referee elsewhere drives it): the bounds that keep
        # matchlog's own play short do not apply.
        options = msgspec.to_builtins(parse_options(spec, new.options, bounded=False))
        started = MatchStarted(game=new.game, options=options, seats=tuple(new.seats))
        return self.log.clerk.start(started, owner_chance=spec.chance and new.chance == "service")

    async def append(self, match_id: UUID, expected_seq: int, given: Sequence[Appending]) -> tuple[Appended, bool]:
        """Judge and append a referee's batch; returns what was appended and whether the match has
        ended (the service ends a match whose chance it draws as soon as the rules say it is over).
        A batch at `expected_seq` 0 that starts with match.started starts a match the log does not hold.

        Raises:
            ConcurrencyError: `expected_seq` is not the match's next seq (and the batch is not a re-send).
            EventConflict: an event id the match holds is sent with another event, or for another seq.
            IllegalAction: the rules refuse an event (the code names the rule); nothing was written.
            UnknownMatch: no such match (and the batch does not start one).
            UsageError: the batch starts a match the rules cannot set up.
        """
        future, over = await asyncio.to_thread(self.log.clerk.submit, match_id, _drafts(given), expected_seq)
        return await asyncio.wrap_future(future), over

    async def append_encoded(
        self, batches: Sequence[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]
    ) -> list[Appended]:
        """Judge and append many matches' batches (a tournament's writer, another tool's records) at
        once: all of them, or none.

        Raises:
            ConcurrencyError: a batch's `expected_seq` is ahead of its match.
            IllegalAction, UsageError: the rules refuse an event, or a match cannot start as given.
            StoreError: as `append_bulk_encoded`; nothing at all was written.
        """
        return await asyncio.to_thread(self.log.clerk.append_bulk_encoded, batches)

    async def draw(self, match_id: UUID) -> tuple[Appended, bool]:
        """Draw the chance the match waits for (a roll, a shuffle, a board) and record it.

        Raises:
            IllegalAction: chance is not to act now, or the service does not draw this match's chance.
            UnknownMatch: no such match.
        """
        future, over = await asyncio.to_thread(self.log.clerk.draw, match_id)
        return await asyncio.wrap_future(future), over


def _drafts(given: Sequence[Appending]) -> list[Draft]:
    """The items as drafts: with the ids and times their referee gave them, else fresh ones (made
    in one go: an id each, one at a time, cost more than judging the event)."""
    events = [_event(item.event) for item in given]
    fresh = drafts(events)
    return [
        Draft(
            event,
            made.event_id if item.event_id is None else item.event_id,
            made.at_us if item.at_us is None else item.at_us,
        )
        for item, event, made in zip(given, events, fresh, strict=True)
    ]


def _event(value: dict[str, Any]) -> Event:
    """One item's event, decoded as the log's codec decodes events (of the games loaded now).

    Raises:
        DecodeError: it is not an event of any game loaded, or not a valid one.
    """
    return decode(msgspec.json.encode(value))
