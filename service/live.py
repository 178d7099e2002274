"""Recording for referees that live elsewhere: matches created through the service, appends judged
as the audit would judge them, and chance drawn by the service from a seed it committed to.

A game server in any language uses matchlog as its record of truth: it creates a match (and gets
a referee token and one token per seat), appends each step with `expected_seq`, and may ask the
service for the match's chance (a roll, a shuffle, a board), which the service draws from a seed
it committed to at the start and reveals when the rules say the match is over, ending it then.
Every batch is judged against the match's live state before it is written; a batch the rules
refuse is written not at all.

The live state of each match appended to is kept in memory (folded once from the log), with a
lock so one match's batches are judged and committed in order; the seed of a match whose chance
the service draws is derived from the service's key and the match id, so nothing secret is stored
and a restarted service picks up where it was.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Annotated, Any
from uuid import UUID

import msgspec

from matchlog.engines import CHANCE, parse_options
from matchlog.engines import get as get_engine
from matchlog.engines.chance import ALGORITHM, ChanceSource, commitment
from matchlog.events import (
    ActionsUndone,
    AnyEvent,
    ChanceCommitted,
    ChanceRevealed,
    ConcurrencyError,
    Draft,
    Event,
    IllegalAction,
    MatchEnded,
    MatchStarted,
    Record,
    Seat,
    UnknownMatch,
    UsageError,
    draft,
    drafts,
    uuid7,
)
from matchlog.replay.audit import LiveJudge
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
    """One match as the service keeps it: the judge (its live state, None until folded from the
    log) and its chance source, behind a lock that puts its batches in order."""

    def __init__(self) -> None:
        self.judge: LiveJudge | None = None
        self.source: ChanceSource | None = None
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
        options = msgspec.to_builtins(parse_options(spec, new.options))
        started = MatchStarted(game=new.game, options=options, seats=tuple(new.seats))
        engine.start(started)  # a table the game cannot set up is refused before anything is written
        match_id = uuid7()
        events: list[Event] = [started]
        source = None
        if spec.chance and new.chance == "service":
            source = ChanceSource(self.seed(match_id))
            events.append(ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(source.secret)))
        made = drafts(events)
        appended = self.log.append(match_id, made, 0)
        # Its referee appends next: the live state starts here rather than being read back.
        live = self._entry(match_id)
        live.judge, live.source = LiveJudge(_records(match_id, 0, made)), source
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

    async def _judge(self, match_id: UUID, live: _Live, *, again: bool = False) -> LiveJudge | None:
        """The judge of a match the log holds, folded from the log unless kept (`again`: fold it
        again, the log was written another way); None for a match the log does not hold.
        Called under the entry's lock."""
        if live.judge is None or again:
            try:
                records = await asyncio.to_thread(self.log.read, match_id)
            except UnknownMatch:
                live.judge = live.source = None
                return None
            live.judge = await asyncio.to_thread(LiveJudge, records)
            live.source = self._source_of(match_id, records)
        return live.judge

    def forget(self, match_id: UUID) -> None:
        """Drop a match's live state (it is folded again from the log when next needed)."""
        with self._live_lock:
            self._live.pop(match_id, None)

    def _source_of(self, match_id: UUID, records: Sequence[Record]) -> ChanceSource | None:
        """The service's chance source of a match whose chance it draws, advanced past every draw
        already recorded (None when the referee draws its own chance)."""
        committed = [r.event for r in records if isinstance(r.event, ChanceCommitted)]
        seed = self.seed(match_id)
        if not committed or committed[0].commitment != commitment(seed):
            return None
        source = ChanceSource(seed)
        engine = get_engine(records[0].event.game)  # type: ignore[attr-defined]
        state = engine.start(records[0].event)  # type: ignore[arg-type]
        stack = [(0, state)]
        for record in records[1:]:
            event = record.event
            if isinstance(event, ActionsUndone):
                taken = set(event.seqs)
                while len(stack) > 1 and stack[-1][0] in taken:
                    stack.pop()
                continue
            before = stack[-1][1]
            turn = engine.to_act(before)
            if turn is not None and turn.seat == CHANCE and not isinstance(event, ChanceCommitted | ChanceRevealed):
                engine.chance(before, source)  # the draw this event was: the stream moves past it
            stack.append((record.seq, engine.apply(before, event)))
        return source

    # -- appending -----------------------------------------------------------------------------

    async def append(self, match_id: UUID, expected_seq: int, given: Sequence[Appending]) -> tuple[Appended, bool]:
        """Judge and append a referee's batch; returns what was appended and whether the match has
        ended (the service ends a match whose chance it draws as soon as the rules say it is over).
        A batch at `expected_seq` 0 that starts with match.started starts a match the log does not hold.

        Raises:
            ConcurrencyError: `expected_seq` is not the match's next seq (and the batch is not a re-send).
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
                    return resent, judge.ended
                # The judge is behind if the match was written another way (an undo, a bulk append).
                head = (await asyncio.to_thread(self.log.info, match_id)).last_seq + 1
                if head != judge.next_seq:
                    judge = await self._judge(match_id, live, again=True)
                    assert judge is not None
                if expected_seq != judge.next_seq:
                    raise ConcurrencyError(match_id, expected_seq, judge.next_seq)
            batch = _drafts(given)
            if live.source is not None:
                for item in batch:
                    if isinstance(item.event, ChanceCommitted | ChanceRevealed | MatchEnded):
                        raise IllegalAction(
                            "chance.from_service",
                            f"the service draws this match's chance and ends it; {item.event.tag} is not the referee's",
                        )
                    if _is_chance(judge, item.event):
                        raise IllegalAction("chance.from_service", "draw this match's chance from the service")
            return await self._commit(match_id, live, judge, batch)

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
            turn = judge.engine.to_act(judge.state)
            if live.source is None:
                raise IllegalAction("chance.from_referee", "this match's referee records its own chance")
            if turn is None or turn.seat != CHANCE:
                whose = "the match is over" if turn is None else f"seat {turn.seat} is to {turn.decision}"
                raise IllegalAction("chance.not_now", f"chance is not to act now: {whose}")
            event = judge.engine.chance(judge.state, live.source)
            return await self._commit(match_id, live, judge, [draft(event)])

    async def _open(self, match_id: UUID, live: _Live, drafts: list[Draft]) -> tuple[Appended, bool]:
        """Judge and append the first batch of a match the log does not hold yet."""
        judge = await asyncio.to_thread(_opening, match_id, drafts[0])
        judge.next_seq = 1  # the opening judge holds the start already
        findings = judge.judge(_records(match_id, 1, drafts[1:]))
        if findings:
            raise IllegalAction(findings[0].rule, f"seq {findings[0].seq}: {findings[0].message}")
        appended = await asyncio.wrap_future(self.log.append_async(match_id, drafts, 0))
        live.judge, live.source = judge, None
        return appended, judge.ended

    async def _commit(
        self, match_id: UUID, live: _Live, judge: LiveJudge, drafts: list[Draft]
    ) -> tuple[Appended, bool]:
        first = judge.next_seq
        findings = judge.judge(_records(match_id, first, drafts))
        if findings:
            finding = findings[0]
            raise IllegalAction(finding.rule, f"seq {finding.seq}: {finding.message}")
        ending: list[Draft] = []
        if live.source is not None and not judge.ended and judge.engine.to_act(judge.state) is None:
            outcome = judge.engine.outcome(judge.state)
            ending = [draft(ChanceRevealed(seed=live.source.secret.hex())), draft(MatchEnded(outcome=outcome))]
            if judge.judge(_records(match_id, first + len(drafts), ending)):
                ending = []  # the rules' own outcome cannot be refused; if it is, leave the match open
        try:
            appended = await asyncio.wrap_future(self.log.append_async(match_id, [*drafts, *ending], first))
        except BaseException:
            live.judge = None  # the judge moved on; the log did not
            raise
        return appended, judge.ended

    def _resent(self, match_id: UUID, expected_seq: int, given: Sequence[Appending]) -> Appended | None:
        """What a re-send of stored events (same ids at the same seqs) appended, or None."""
        if not given or any(item.event_id is None for item in given):
            return None
        stored = self.log.read(match_id, start=expected_seq, stop=expected_seq + len(given) - 1)
        if len(stored) != len(given) or any(r.event_id != g.event_id for r, g in zip(stored, given, strict=True)):
            return None
        return Appended(match_id, expected_seq, stored[-1].seq, stored[-1].hash, 0)


def _opening(match_id: UUID, first: Draft) -> LiveJudge:
    """A judge for a match that starts with `first` (a match.started the rules can set up).

    Raises:
        UsageError: the game, its options or its table cannot be set up.
    """
    started = first.event
    assert isinstance(started, MatchStarted)
    engine = get_engine(started.game)
    engine.spec.check_players(len(started.seats))
    engine.start(started)
    return LiveJudge(_records(match_id, 0, [first]))


def _is_chance(judge: LiveJudge, event: Event) -> bool:
    """Whether `event` would be chance's (the match waits for chance, and it is not a ruling)."""
    turn = judge.engine.to_act(judge.state)
    return turn is not None and turn.seat == CHANCE and event.actor is None and not isinstance(event, ActionsUndone)


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
