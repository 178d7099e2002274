"""Recording for referees that live elsewhere: matches created through the service, appends judged
by the one judge (`replay.judge`, the audit's), and chance drawn by the service from a seed it
committed to.

A game server in any language uses matchlog as its record of truth: it creates a match (and gets
a referee token and one token per seat), appends each step with `expected_seq`, and may ask the
service for the match's chance (a roll, a shuffle, a board), which the service draws from a seed
it committed to at the start and reveals when the rules say the match is over, ending it then.
Every batch, and every bulk append of encoded events, is judged against the match's live state
before it is written; a batch the rules refuse is written not at all. In a match whose chance the
service draws, only the service records chance (and reveals it, and ends the match): the judge
refuses any chance from its referee, wherever in a batch it comes.

The live state of each match appended to is kept in memory (folded once from the log), with a
lock so one match's batches are judged and committed in order; the seed of a match whose chance
the service draws is derived from the service's key and the match id, so nothing secret is stored
and a restarted service picks up where it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Annotated, Any
from uuid import UUID

import msgspec

from matchlog.engines import get as get_engine
from matchlog.engines import parse_options
from matchlog.engines.chance import ALGORITHM, commitment
from matchlog.events import (
    AnyEvent,
    ChanceCommitted,
    ChanceRevealed,
    ConcurrencyError,
    DecodeError,
    Draft,
    Event,
    EventConflict,
    IllegalAction,
    MatchEnded,
    MatchStarted,
    Record,
    Seat,
    StoreError,
    UnknownMatch,
    UsageError,
    decode,
    draft,
    drafts,
    uuid7,
)
from matchlog.replay.audit import audit_records
from matchlog.replay.judge import Judge
from matchlog.store import Appended
from matchlog.store.writer import AT_US_MAX

__all__ = ["Appending", "LiveMatches", "NewMatch"]

#: How many matches' live states are kept in memory.
LIVE_MATCHES = 4_096


class NewMatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A match a referee elsewhere starts: the game, its options, its seats in order, and who draws
    its chance: the `service` (committed, drawn on request, revealed at the end) or the `referee`
    itself (recorded as its own events, checked for possibility)."""

    game: str
    seats: list[Seat]
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    chance: str = "service"


class Appending(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One event to append: the event, and optionally the id and time its referee gave it (an id
    makes a re-send after a lost answer a no-op)."""

    event: AnyEvent  # type: ignore[valid-type]
    event_id: UUID | None = None
    at_us: Annotated[int, msgspec.Meta(ge=0, lt=AT_US_MAX)] | None = None


class _Live:
    """One match as the service keeps it: its judge (its live state, None until folded from the
    log), behind a lock that puts its batches in order."""

    def __init__(self) -> None:
        self.judge: Judge | None = None
        self.lock = asyncio.Lock()


class LiveMatches:
    """The matches being recorded through the service. `log` is the service's `FileLog`."""

    def __init__(self, log: Any, key: bytes) -> None:
        self.log = log
        self._key = hashlib.sha256(b"matchlog chance seeds\0" + key).digest()
        self._live: OrderedDict[UUID, _Live] = OrderedDict()
        self._live_lock = threading.Lock()  # undo and abandon forget matches from worker threads

    def seed(self, match_id: UUID) -> bytes:
        """The secret seed of the service's chance in `match_id`."""
        return hmac.new(self._key, match_id.bytes, hashlib.sha256).digest()

    # -- creating ------------------------------------------------------------------------------

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
        for seat in new.seats:
            if not seat.name or any(ord(c) < 32 or ord(c) == 127 for c in seat.name + seat.player):
                raise UsageError("a seat needs a name, with no control characters in it", code="usage.seat_name")
        if new.chance not in ("service", "referee"):
            raise UsageError(f"chance is drawn by the service or the referee, not {new.chance!r}", code="usage.chance")
        # The service plays no match itself (a referee elsewhere drives it): the bounds that keep
        # matchlog's own play short do not apply.
        options = msgspec.to_builtins(parse_options(spec, new.options, bounded=False))
        started = MatchStarted(game=new.game, options=options, seats=tuple(new.seats))
        match_id = uuid7()
        service = spec.chance and new.chance == "service"
        seed = self.seed(match_id)
        # The judge is the first to see the match: a table the game cannot set up is refused
        # before anything is written.
        judge = Judge(started, match_id=match_id, seeds=(seed,) if service else (), service_chance=service)
        events: list[Event] = [started]
        if service:
            events.append(ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(seed)))
        made = drafts(events)
        refused = judge.take_all(events[1:], by_service=True)
        assert not refused, refused
        appended = self.log.append(match_id, made, 0)
        # Its referee appends next: the live state starts here rather than being read back.
        self._entry(match_id).judge = judge
        return match_id, appended

    # -- the live state ------------------------------------------------------------------------

    def _entry(self, match_id: UUID) -> _Live:
        """The entry of a match (its judge folded only when first needed, under its lock)."""
        with self._live_lock:
            live = self._live.get(match_id)
            if live is None:
                live = self._live[match_id] = _Live()
                while len(self._live) > LIVE_MATCHES:
                    oldest, entry = next(iter(self._live.items()))
                    if entry.lock.locked():
                        break
                    del self._live[oldest]
            self._live.move_to_end(match_id)
            return live

    async def _judge(self, match_id: UUID, live: _Live, *, again: bool = False) -> Judge | None:
        """The judge of a match the log holds, folded from the log unless kept (`again`: fold it
        again, the log was written another way); None for a match the log does not hold.
        Called under the entry's lock."""
        if live.judge is None or again:
            try:
                records = await asyncio.to_thread(self.log.read, match_id)
            except UnknownMatch:
                live.judge = None
                return None
            live.judge = await asyncio.to_thread(self._folded, match_id, records)
        return live.judge

    def _folded(self, match_id: UUID, records: Sequence[Record]) -> Judge:
        """The judge of a match holding `records`: one whose chance the service draws knows its
        seed (and its draws move the stream on), and takes chance from the service only."""
        seed = self.seed(match_id)
        committed = next((r.event for r in records if isinstance(r.event, ChanceCommitted)), None)
        service = committed is not None and committed.commitment == commitment(seed)
        return Judge.of(records, seeds=(seed,) if service else (), service_chance=service)

    def forget(self, match_id: UUID) -> None:
        """Drop a match's live state (it is folded again from the log when next needed)."""
        with self._live_lock:
            self._live.pop(match_id, None)

    # -- appending -----------------------------------------------------------------------------

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
        live = self._entry(match_id)
        async with live.lock:
            judge = await self._judge(match_id, live)
            if judge is None:
                if expected_seq != 0 or not isinstance(given[0].event, MatchStarted):
                    raise UnknownMatch(f"no match {match_id} in the log")
                return await self._open(match_id, live, _drafts(given))
            if expected_seq != judge.next_seq:
                resent = await asyncio.to_thread(self._resent, match_id, expected_seq, given)
                if resent is not None:
                    return resent, judge.over
                # The judge is behind if the match was written another way (an undo, a bulk append).
                head = (await asyncio.to_thread(self.log.info, match_id)).last_seq + 1
                if head != judge.next_seq:
                    judge = await self._judge(match_id, live, again=True)
                    assert judge is not None
                if expected_seq != judge.next_seq:
                    raise ConcurrencyError(match_id, expected_seq, judge.next_seq)
            return await self._commit(match_id, live, judge, _drafts(given))

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
        entries = {match_id: self._entry(match_id) for match_id in sorted({m for m, _, _ in batches})}
        async with contextlib.AsyncExitStack() as locks:
            for entry in entries.values():  # in match id order: two callers never wait on each other
                await locks.enter_async_context(entry.lock)
            judged: list[_Live] = []
            try:
                for match_id, encoded, expected in batches:
                    live = entries[match_id]
                    judged.append(live)
                    await self._judge_batch(match_id, live, _decoded(match_id, encoded), expected)
                return await asyncio.to_thread(self.log.append_bulk_encoded, batches)
            except BaseException:
                for live in judged:
                    live.judge = None  # the judges moved on; the log did not
                raise

    async def _judge_batch(self, match_id: UUID, live: _Live, made: Sequence[Event], expected: int) -> None:
        """Judge one match's part of a bulk append, moving its judge on (events the match holds
        already, re-sent, are the store's to check)."""
        judge = await self._judge(match_id, live)
        if judge is None:
            if expected != 0 or not made or not isinstance(made[0], MatchStarted):
                raise UnknownMatch(f"no match {match_id} in the log")
            judge = live.judge = await asyncio.to_thread(_opening, match_id, made[0])
            made, expected = made[1:], 1
        if expected > judge.next_seq:
            raise ConcurrencyError(match_id, expected, judge.next_seq)
        findings = judge.take_all(made[judge.next_seq - expected :])
        if findings:
            finding = findings[0]
            raise IllegalAction(finding.rule, f"match {match_id} seq {finding.seq}: {finding.message}")

    async def draw(self, match_id: UUID) -> tuple[Appended, bool]:
        """Draw the chance the match waits for (a roll, a shuffle, a board) and record it.

        Raises:
            IllegalAction: chance is not to act now, or the service does not draw this match's chance.
            UnknownMatch: no such match.
        """
        live = self._entry(match_id)
        async with live.lock:
            judge = await self._judge(match_id, live)
            if judge is None:
                raise UnknownMatch(f"no match {match_id} in the log")
            if not judge.service_chance:
                raise IllegalAction("chance.from_referee", "this match's referee records its own chance")
            event = judge.draw(None)
            return await self._commit(match_id, live, judge, [draft(event)], by_service=True)

    async def _open(self, match_id: UUID, live: _Live, drafts: list[Draft]) -> tuple[Appended, bool]:
        """Judge and append the first batch of a match the log does not hold yet."""
        judge = await asyncio.to_thread(_opening, match_id, drafts[0].event)
        findings = judge.take_all([item.event for item in drafts[1:]])
        if findings:
            raise IllegalAction(findings[0].rule, f"seq {findings[0].seq}: {findings[0].message}")
        appended = await asyncio.wrap_future(self.log.append_async(match_id, drafts, 0))
        live.judge = judge
        return appended, judge.over

    async def _commit(
        self, match_id: UUID, live: _Live, judge: Judge, drafts: list[Draft], *, by_service: bool = False
    ) -> tuple[Appended, bool]:
        first = judge.next_seq
        findings = judge.take_all([item.event for item in drafts], by_service=by_service)
        if findings:
            finding = findings[0]
            raise IllegalAction(finding.rule, f"seq {finding.seq}: {finding.message}")
        if any(isinstance(item.event, ChanceRevealed) for item in drafts) and not judge.service_chance:
            try:
                await asyncio.to_thread(self._drawn_from_seed, match_id, first, drafts)
            except IllegalAction:
                live.judge = None  # the judge took the batch; the log will not
                raise
        ending: list[Draft] = []
        if judge.service_chance and not judge.over and judge.engine.to_act(judge.state) is None:
            outcome = judge.engine.outcome(judge.state)
            ending = [draft(ChanceRevealed(seed=self.seed(match_id).hex())), draft(MatchEnded(outcome=outcome))]
            if judge.take_all([item.event for item in ending], by_service=True):
                ending = []  # the rules' own outcome cannot be refused; if it is, leave the match open
        try:
            appended = await asyncio.wrap_future(self.log.append_async(match_id, [*drafts, *ending], first))
        except BaseException:
            live.judge = None  # the judge moved on; the log did not
            raise
        return appended, judge.over

    def _drawn_from_seed(self, match_id: UUID, first: int, drafts: Sequence[Draft]) -> None:
        """Now that a referee drawing its own chance reveals its seed, what it drew is judged as the
        audit judges it: every draw of the seed's segment exactly what the seed draws.

        Raises:
            IllegalAction: a draw is not the seed's (`chance.not_from_seed`), naming its seq.
        """
        records = [*self.log.read(match_id, stop=first - 1), *_records(match_id, first, drafts)]
        for finding in audit_records(records).findings:
            if finding.rule == "chance.not_from_seed":
                raise IllegalAction(finding.rule, f"seq {finding.seq}: {finding.message}")

    def _resent(self, match_id: UUID, expected_seq: int, given: Sequence[Appending]) -> Appended | None:
        """What a re-send of stored events (same ids, same events, at the same seqs) appended, or None.

        Raises:
            EventConflict: a stored id is sent again with another event.
        """
        if not given or any(item.event_id is None for item in given):
            return None
        stored = self.log.read(match_id, start=expected_seq, stop=expected_seq + len(given) - 1)
        if len(stored) != len(given) or any(r.event_id != g.event_id for r, g in zip(stored, given, strict=True)):
            return None
        for record, item in zip(stored, given, strict=True):
            if record.event != item.event:
                raise EventConflict(
                    f"match {match_id}: event id {record.event_id} is stored at seq {record.seq} with a different "
                    f"event than the {item.event.tag} sent again with it; nothing was written"
                )
        return Appended(match_id, expected_seq, stored[-1].seq, stored[-1].hash, 0)


def _opening(match_id: UUID, started: Event) -> Judge:
    """A judge for a match that starts with `started` (a match.started the rules can set up).

    Raises:
        UsageError: the game, its options or its table cannot be set up.
        IllegalAction: `started` does not start a match.
    """
    if not isinstance(started, MatchStarted):
        raise IllegalAction("store.bad_start", f"a match starts with match.started, not {started.tag}")
    return Judge(started, match_id=match_id)


def _drafts(given: Sequence[Appending]) -> list[Draft]:
    """The items as drafts: with the ids and times their referee gave them, else fresh ones (made
    in one go: an id each, one at a time, cost more than judging the event)."""
    for item in given:
        if not isinstance(item.event, Event):
            raise UsageError("each item needs an event", code="usage.event")
    fresh = drafts([item.event for item in given])
    return [
        Draft(
            item.event,
            made.event_id if item.event_id is None else item.event_id,
            made.at_us if item.at_us is None else item.at_us,
        )
        for item, made in zip(given, fresh, strict=True)
    ]


def _records(match_id: UUID, first: int, drafts: Sequence[Draft]) -> list[Record]:
    """Drafts about to be appended at `first`, as the log's records (unhashed), to audit."""
    return [
        Record(
            match_id=match_id,
            seq=first + offset,
            event_id=item.event_id,
            at_us=item.at_us,
            actor=item.event.actor,
            version=item.event.version,
            event=item.event,
            hash=b"",
        )
        for offset, item in enumerate(drafts)
    ]


def _decoded(match_id: UUID, encoded: Sequence[tuple[str, int, bytes]]) -> list[Event]:
    """The events of one match's encoded batch, to judge.

    Raises:
        StoreError: one does not decode (the log never holds bytes it cannot read).
    """
    try:
        return [decode(payload) for _, _, payload in encoded]
    except DecodeError as error:
        raise StoreError(f"match {match_id}: {error.message}", code="store.bad_event") from None
