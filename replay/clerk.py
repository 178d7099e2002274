"""The clerk: the one write path of a log, where every event is judged before it is written.

Whatever writes to a log through `matchlog` goes through the `Clerk` over its store: the Python
API's `FileLog` (append, bulk appends, imports, undo, abandon, fork), the service beneath it (a
referee's batches, the service's own chance, the arbiter's undo and abandonment), the CLI on a file,
our referee's recorder writing to a log, a tournament's writer, another tool's record. The clerk
keeps each match's judge (`replay.judge`: folded from the log once, then moved on with each batch),
refuses a batch the judge refuses, with its code and nothing written, and only then hands it to the
store, which checks bytes and chains and knows no game. Writing to the store itself (`store.Store`)
is writing around the judge, as editing the file is: `audit` finds what that wrote.

A match that starts as a duel's game is also held to its duel and its pair as the log holds them
(`replay.pairs`, the rule `audit` and the duel's report read too): its start is refused where it
breaks what the duel's first game and its pair's first game fixed, and its judge is told the pair's
seed, which the game's first segment must commit to. Games taken in the same call (a bulk append,
an import) count as the log's; a game another writer has on its way but not yet committed is not
seen, and `audit` names what that let through.

The log's owner may draw a match's chance itself (the service does, for referees elsewhere): the
clerk commits to a seed derived from its key and the match, draws from it on request, starts a
fresh segment (match.resumed and a new commitment) when the one in play was revealed, and reveals
the seeds and ends the match as soon as the rules say it is over. Only the owner records that
match's chance, its resumes and its end (`chance.from_service`).

Each match's batches are judged and handed to the store in order, under a lock of its own; what
the store then fails to write makes the clerk forget the match's judge (it is folded again from
the log when next needed).
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines.chance import ALGORITHM, commitment
from matchlog.events import (
    ActionsUndone,
    ChanceCommitted,
    ChanceRevealed,
    ConcurrencyError,
    DecodeError,
    Draft,
    Event,
    IllegalAction,
    ImportRejected,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Origin,
    Outcome,
    StoreError,
    UnknownMatch,
    UsageError,
    decode,
    draft,
    uuid7,
)
from matchlog.store import Appended, Store

from .imports import check_match
from .judge import AuditFinding, Judge
from .pairs import DuelGame, PairChance, PairSeed, duel_games, start_break

__all__ = ["LIVE_MATCHES", "Clerk"]

#: How many matches' judges a clerk keeps in memory (a match's is folded again when needed).
LIVE_MATCHES = 4_096


class _Live:
    """One match as the clerk keeps it: its judge (None until folded from the log), behind a lock
    that puts its batches in order; `adopted`: the judge is a referee's, which judges each event as
    it records it (`Clerk.adopt`)."""

    __slots__ = ("adopted", "judge", "lock")

    def __init__(self) -> None:
        self.judge: Judge | None = None
        self.adopted = False
        self.lock = threading.Lock()


class Clerk:
    """Writes to `store` what each match's judge takes, and nothing else. With `key`, the log's
    owner draws the chance of the matches it starts with its own chance (`start`)."""

    def __init__(self, store: Store, *, key: bytes | None = None) -> None:
        self.store = store
        self._key = hashlib.sha256(b"matchlog chance seeds\0" + key).digest() if key is not None else None
        self._live: OrderedDict[UUID, _Live] = OrderedDict()
        self._live_lock = threading.Lock()

    # -- the owner's chance ----------------------------------------------------------------------

    def seed(self, match_id: UUID, segment: int = 0) -> bytes:
        """The secret seed of the owner's chance in the segment of `match_id` that starts at seq
        `segment` (0: the match's start), derived from the key: nothing secret is stored."""
        assert self._key is not None, "a clerk without a key draws no chance"
        message = match_id.bytes if segment == 0 else match_id.bytes + segment.to_bytes(8, "big")
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def _owner_seeds(self, match_id: UUID, records: Sequence[Any]) -> list[bytes] | None:
        """The seeds of every segment of a match whose chance the owner draws, or None for a match
        whose chance another draws (its first commitment is not to the owner's seed)."""
        if self._key is None:
            return None
        first = next((r.event for r in records if isinstance(r.event, ChanceCommitted)), None)
        if first is None or first.commitment != commitment(self.seed(match_id)):
            return None
        return [
            self.seed(match_id),
            *(self.seed(match_id, r.seq) for r in records if isinstance(r.event, MatchResumed)),
        ]

    # -- the judges --------------------------------------------------------------------------------

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

    def _judge(self, match_id: UUID, live: _Live, *, again: bool = False) -> Judge | None:
        """The judge of a match the log holds, folded from the log unless kept (`again`: fold it
        again, the log was written around the clerk); None for a match the log does not hold.
        Called under the entry's lock.

        Raises:
            IllegalAction, MatchlogError: the log holds a match the rules cannot fold.
        """
        if live.judge is None or again:
            live.judge = None
            try:
                records = self.store.read(match_id)
            except UnknownMatch:
                return None
            seeds = self._owner_seeds(match_id, records)
            judge = Judge.of(records, seeds=seeds or (), service_chance=seeds is not None)
            if len(records) == 1:  # what follows the start of a duel's game is held to its pair's seed
                _DuelBook(self.store).hold(match_id, judge, start=False)
            live.judge = judge
        return live.judge

    def forget(self, match_id: UUID) -> None:
        """Drop a match's judge (it is folded again from the log when next needed)."""
        with self._live_lock:
            self._live.pop(match_id, None)

    def _forget_on_failure(self, match_id: UUID, future: Future[Appended]) -> None:
        """Forget the match's judge if the store does not write what it took."""

        def check(done: Future[Appended]) -> None:
            if done.exception() is not None:
                self.forget(match_id)

        future.add_done_callback(check)

    def _current(self, match_id: UUID, live: _Live, expected: int) -> Judge | None:
        """The match's judge, folded again if the log was written around the clerk meanwhile."""
        judge = self._judge(match_id, live)
        if judge is not None and expected > judge.next_seq:
            stored = self.store.info(match_id).last_seq + 1
            if stored != judge.next_seq:
                judge = self._judge(match_id, live, again=True)
        return judge

    def _deciding(self, match_id: UUID, live: _Live) -> Judge | None:
        """The match's judge for a write whose seq the clerk chooses itself (an undo, an abandon, the
        owner's draw), folded again if the log holds more than it knows: another clerk wrote the
        match meanwhile (a second front of the service, a command on the same file). A batch a
        caller sends names its own seq, so a judge behind it is found by `_current`; here nothing
        but the log can say."""
        judge = self._judge(match_id, live)
        if judge is None:
            return None
        return self._current(match_id, live, self.store.info(match_id).last_seq + 1)

    # -- writing -----------------------------------------------------------------------------------

    def start(self, started: MatchStarted, *, owner_chance: bool = False) -> tuple[UUID, Appended]:
        """Record the start of a new match (and, with `owner_chance`, the owner's commitment to the
        seed it draws the match's chance from).

        Raises:
            UsageError, MatchlogError: the rules cannot set the table up as described.
            IllegalAction: (duel.*) a duel's game that breaks its duel or its pair.
        """
        match_id = uuid7()
        owner = owner_chance and self._key is not None
        seed = self.seed(match_id) if owner else b""
        judge = Judge(started, match_id=match_id, seeds=(seed,) if owner else (), service_chance=owner)
        _DuelBook(self.store).hold(match_id, judge)
        events: list[Event] = [started]
        if owner:
            events.append(ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(seed)))
        _refuse(judge.take_all(events[1:], by_service=True))
        live = self._entry(match_id)
        with live.lock:
            appended = self.store.append(match_id, [draft(e) for e in events], 0)
            live.judge = judge
        return match_id, appended

    def submit(
        self,
        match_id: UUID,
        events: Sequence[Event | Draft],
        expected_seq: int,
        *,
        figures: Any = None,
        by_owner: bool = False,
    ) -> tuple[Future[Appended], bool]:
        """Judge a batch of a match at `expected_seq` (the number of events already stored) and hand
        it to the store; returns the store's future (resolved once the batch is durable) and whether
        the match is over. A batch at 0 that starts with match.started starts a match; events the
        match holds already, sent again with their ids, are the store's to check. In a match whose
        chance the owner draws, the owner reveals its seeds and ends the match as soon as the rules
        say it is over.

        Raises:
            IllegalAction: the rules refuse an event (the code names the rule); nothing was written.
            ConcurrencyError: `expected_seq` is ahead of the match.
            UnknownMatch: no such match (and the batch does not start one).
            UsageError: the batch starts a match the rules cannot set up.
        """
        made = [item if isinstance(item, Draft) else draft(item) for item in events]
        if not made:
            raise StoreError("nothing to append", code="store.empty_append")
        live = self._entry(match_id)
        with live.lock:
            judge = self._current(match_id, live, expected_seq)
            if judge is None:  # (the judge of a match that does not start is never kept)
                judge, fresh = self._opening(match_id, made, expected_seq), made[1:]
            elif expected_seq > judge.next_seq:
                raise ConcurrencyError(match_id, expected_seq, judge.next_seq)
            else:
                fresh = made[judge.next_seq - expected_seq :]  # (before them: a re-send, the store's)
            _refuse(judge.take_all([item.event for item in fresh], by_service=by_owner))
            made += self._ending(judge)
            over = judge.over
            # An ended match's judge goes (a long match's states are many); an undo folds it again.
            live.judge = None if over else judge
            return self._send(match_id, live, made, expected_seq, figures), over

    def _send(
        self, match_id: UUID, live: _Live, made: list[Draft], first: int, figures: Any = None
    ) -> Future[Appended]:
        """Hand what the judge took to the store (under the match's lock, so in order); the judge
        goes if the store does not write it."""
        try:
            future = self.store.append_async(match_id, made, first, figures=figures)
        except BaseException:
            live.judge = None
            raise
        self._forget_on_failure(match_id, future)
        return future

    def adopt(self, match_id: UUID, judge: Judge) -> None:
        """Take `judge` as the match's judge: our referee (`referee.match.Referee`) judges each event
        as it records it, and hands the batches to `record`, so each event is judged once.

        Raises:
            IllegalAction: (duel.*) the match is a duel's game that breaks its duel or its pair.
        """
        live = self._entry(match_id)
        with live.lock:
            if judge.next_seq == 1:  # a match about to start: a duel's game is held to its duel
                _DuelBook(self.store).hold(match_id, judge)
            live.judge, live.adopted = judge, True

    def record(
        self, match_id: UUID, made: Sequence[Draft], expected_seq: int, *, figures: Any = None
    ) -> Future[Appended]:
        """Hand the store a batch of the match's events at `expected_seq` that its adopted judge has
        taken already; returns the store's future.

        Raises:
            StoreError: (`store.unjudged`) the match has no adopted judge, or it has not taken them.
        """
        live = self._entry(match_id)
        with live.lock:
            judge = live.judge
            if judge is None or not live.adopted or expected_seq + len(made) > judge.next_seq:
                raise StoreError(
                    f"match {match_id}: seqs {expected_seq} to {expected_seq + len(made) - 1} were not taken by "
                    "the match's judge; nothing was written",
                    code="store.unjudged",
                )
            return self._send(match_id, live, list(made), expected_seq, figures)

    def append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> Appended:
        """`submit`, returning once the batch is durable.

        Raises:
            As `submit`, and as `Store.append`.
        """
        return self.submit(match_id, events, expected_seq)[0].result()

    def _opening(self, match_id: UUID, made: Sequence[Draft], expected: int) -> Judge:
        """A judge for a match the log does not hold, that `made` starts.

        Raises:
            UnknownMatch: the batch does not start a match.
            UsageError, MatchlogError: the rules cannot set it up.
            IllegalAction: (duel.*) a duel's game that breaks its duel or its pair.
        """
        started = made[0].event
        if expected != 0 or not isinstance(started, MatchStarted):
            raise UnknownMatch(f"no match {match_id} in the log")
        judge = Judge(started, match_id=match_id)
        _DuelBook(self.store).hold(match_id, judge)
        return judge

    def _ending(self, judge: Judge) -> list[Draft]:
        """In a match whose chance the owner draws, once the rules say it is over: the owner's seeds
        revealed and the end, taken by the judge (none otherwise)."""
        if not judge.service_chance or judge.over or judge.engine.to_act(judge.state) is not None:
            return []
        outcome = judge.engine.outcome(judge.state)
        reveals = [
            ChanceRevealed(seed=segment.secret.hex())
            for segment in judge.segments
            if segment.committed is not None and segment.revealed is None and segment.secret is not None
        ]
        ending: list[Event] = [*reveals, MatchEnded(outcome=outcome)]
        if judge.take_all(ending, by_service=True):
            return []  # the rules' own outcome cannot be refused; if it is, the match stays open
        return [draft(event) for event in ending]

    def draw(self, match_id: UUID) -> tuple[Future[Appended], bool]:
        """Draw the chance the match waits for from the owner's seed and record it (first starting
        a fresh segment if the seed in play was revealed); as `submit`, what it returns.

        Raises:
            IllegalAction: chance is not to act now, or the owner does not draw this match's chance.
            UnknownMatch: no such match.
        """
        live = self._entry(match_id)
        with live.lock:
            judge = self._deciding(match_id, live)
            if judge is None:
                raise UnknownMatch(f"no match {match_id} in the log")
            if not judge.service_chance:
                raise IllegalAction("chance.from_referee", "this match's referee records its own chance")
            first = judge.next_seq
            saved = judge.save(undoes=False)
            events: list[Event] = []
            try:
                if judge.segment.revealed is not None:  # its seed is public: a fresh one from here on
                    resumed = MatchResumed(players=tuple(seat.player for seat in self._started(match_id).seats))
                    seed = self.seed(match_id, first)
                    judge.seeds[commitment(seed)] = seed
                    events += [resumed, ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(seed))]
                    _refuse(judge.take_all(events, by_service=True))
                events.append(judge.draw(None))
                judge.take(events[-1], by_service=True)
                made = [draft(event) for event in events] + self._ending(judge)
            except BaseException:
                judge.restore(saved)
                raise
            over = judge.over
            live.judge = None if over else judge
            return self._send(match_id, live, made, first), over

    def append_bulk_encoded(
        self, batches: Sequence[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]
    ) -> list[Appended]:
        """Judge and append many matches' batches of encoded events (a tournament's writer, another
        tool's records) at once: all of them, or none.

        Raises:
            ConcurrencyError: a batch's `expected_seq` is ahead of its match.
            IllegalAction, UsageError: the rules refuse an event, or a match cannot start as given.
            StoreError: an event does not decode, or as `Store.append_bulk_encoded`; nothing at all
                was written.
        """
        entries = {match_id: self._entry(match_id) for match_id in sorted({m for m, _, _ in batches})}
        held: list[_Live] = []
        try:
            for entry in entries.values():  # in match id order: two writers never wait on each other
                entry.lock.acquire()
                held.append(entry)
            judged: list[_Live] = []
            duels = _DuelBook(self.store)
            try:
                for match_id, encoded, expected in batches:
                    live = entries[match_id]
                    judged.append(live)
                    self._judge_encoded(match_id, live, _decoded(match_id, encoded), expected, duels)
                appended = self.store.append_bulk_encoded(batches)
            except BaseException:
                for live in judged:
                    live.judge = None  # the judges moved on; the log did not
                raise
            for live in judged:  # an ended match's judge goes, as in `submit` (its states are many)
                if live.judge is not None and live.judge.over:
                    live.judge = None
            return appended
        finally:
            for entry in held:
                entry.lock.release()

    def _judge_encoded(
        self, match_id: UUID, live: _Live, made: Sequence[Event], expected: int, duels: _DuelBook
    ) -> None:
        """Judge one match's part of a bulk append, moving its judge on (events the match holds
        already, sent again, are the store's to check); a duel's game is held to its duel as the
        log and the call's earlier matches (`duels`) hold it."""
        # A batch from the start holds the match's whole history up to its end: judged from it
        # alone, the log not read (the store writes it only where what the log holds of the match
        # is the same events). Not where the owner draws chance: what it drew is in the log.
        opens = bool(made) and isinstance(made[0], MatchStarted)
        whole = opens and expected == 0 and live.judge is None and self._key is None
        judge = None if whole else self._current(match_id, live, expected)
        if judge is None:
            if expected != 0 or not made or not isinstance(made[0], MatchStarted):
                raise UnknownMatch(f"no match {match_id} in the log")
            judge = live.judge = Judge(made[0], match_id=match_id)
            duels.hold(match_id, judge)
            duels.taken(match_id, made)
            made, expected = made[1:], 1
        if expected > judge.next_seq:
            raise ConcurrencyError(match_id, expected, judge.next_seq)
        findings = judge.take_all(made[judge.next_seq - expected :])
        if findings:
            finding = findings[0]
            raise IllegalAction(finding.rule, f"match {match_id} seq {finding.seq}: {finding.message}")

    def import_jsonl(self, lines: Iterable[bytes]) -> list[Appended]:
        """Import a JSON Lines export, every match judged from its start (`replay.imports`): all of
        it lands, or none.

        Raises:
            ImportRejected: a line or a match fails a check (naming the line); nothing was written.
        """
        duels = _DuelBook(self.store)

        def check(match_id: UUID, events: Sequence[tuple[int, Event]]) -> None:
            check_match(match_id, events)  # the judge, as audit runs it
            line, started = events[0]
            assert isinstance(started, MatchStarted)
            try:
                judge = Judge(started, match_id=match_id)
                duels.hold(match_id, judge)
                if len(events) > 1:
                    _refuse(judge.verdict(1, events[1][1])[0])
            except IllegalAction as error:
                raise ImportRejected(f"line {line}: {error.message} [{error.code}]") from None
            duels.taken(match_id, [event for _, event in events[:2]])

        appended = self.store.import_jsonl(lines, check=check)
        for done in appended:
            self.forget(done.match_id)  # (a match the log held in part goes on from the import)
        return appended

    # -- the arbiter -------------------------------------------------------------------------------

    def undo(self, match: UUID | str, *, reason: str = "", by: int | None = None) -> Appended:
        """Take back the latest effective answer of a match and whatever was recorded after it (as
        its arbiter when `by` is None); a commitment, a reveal and a resume stay.

        Raises:
            UnknownMatch: no such match.
            UsageError: nothing to undo.
            IllegalAction: the rules refuse it (a game with hidden information whose seed is
                revealed: `chance.hidden_revealed`).
        """
        match_id = self.store.resolve(match)
        live = self._entry(match_id)
        with live.lock:
            judge = self._deciding(match_id, live)
            assert judge is not None
            undo = ActionsUndone(seqs=judge.undoable(), reason=reason, by=by)
            return self._write(match_id, live, judge, [undo], by_owner=True)

    def abandon(self, match: UUID | str, *, reason: str) -> Appended:
        """End an unfinished match (one whose referee stopped: a crash, a kill) as abandoned, with
        why. Every seat shares the place; players already removed keep that. What was played stays.

        Raises:
            UnknownMatch: no such match.
            UsageError: the match has already ended.
            IllegalAction: the rules refuse it.
        """
        match_id = self.store.resolve(match)
        live = self._entry(match_id)
        with live.lock:
            judge = self._deciding(match_id, live)
            assert judge is not None
            if judge.over:
                status = self.store.info(match_id).status
                raise UsageError(f"match {match_id} has already ended ({status})", code="usage.ended")
            removed = tuple(sorted(getattr(judge.state, "removed", ())))
            outcome = Outcome(places=(1,) * judge.seats, winners=(), result="abandoned", removed=removed)
            return self._write(match_id, live, judge, [MatchEnded(outcome=outcome, reason=reason)], by_owner=True)

    def fork(self, match: UUID | str, at: int) -> UUID:
        """Copy a match's log up to seq `at` into a new match that records its origin (judged as any
        match is); returns its id.

        Raises:
            UnknownMatch: no such match.
            UsageError: `at` is not a seq of the match.
            IllegalAction: the rules refuse the copy (a prefix of a match that was written around
                the judge).
        """
        records = self.store.read(match, stop=at)
        source = records[0].match_id
        last = records[-1].seq
        if at < 0 or last != at:
            raise UsageError(f"seq {at} is not in match {source} (seqs 0 to {last})", code="usage.seq")
        started = records[0].event
        assert isinstance(started, MatchStarted)
        # A fork is a what-if of its own, not a game of the duel its origin was played in.
        copied = msgspec.structs.replace(started, origin=Origin(source, at), duel=None)
        copies = [draft(copied, at_us=records[0].at_us), *(draft(r.event, at_us=r.at_us) for r in records[1:])]
        new_id = uuid7()
        self.append(new_id, copies, 0)
        return new_id

    def _write(self, match_id: UUID, live: _Live, judge: Judge, events: list[Event], *, by_owner: bool) -> Appended:
        """Judge `events` as the next of the match and write them, under the match's lock."""
        first = judge.next_seq
        _refuse(judge.take_all(events, by_service=by_owner))
        return self._send(match_id, live, [draft(event) for event in events], first).result()

    def _started(self, match_id: UUID) -> MatchStarted:
        started = self.store.read(match_id, stop=0)[0].event
        assert isinstance(started, MatchStarted)
        return started


class _DuelBook:
    """The games a clerk holds a new duel game to (`replay.pairs`): the log's, and the ones it took
    earlier in the same call (a bulk append, an import), which the log does not hold yet."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._taken: list[tuple[str, MatchStarted, str | None]] = []  # (match, start, first commitment)

    def hold(self, match_id: UUID, judge: Judge, *, start: bool = True) -> None:
        """Refuse the start of a duel's game (`start`) that breaks its duel or its pair, and tell its
        judge the pair's chance; nothing for a match that is no duel's game.

        Raises:
            IllegalAction: (duel.*) the rule it breaks; nothing was written.
        """
        started = judge.started
        duel = started.duel
        if duel is None:
            return
        me = str(match_id)
        duel_first, pair_first, seed = duel_games(self.store, duel.id, duel.pair, besides=me)
        for other_id, other, committed in self._taken:
            assert other.duel is not None
            if other.duel.id != duel.id or other_id == me:
                continue
            duel_first = duel_first or DuelGame(match_id=other_id, started=other)
            if other.duel.pair == duel.pair:
                pair_first = pair_first or DuelGame(match_id=other_id, started=other)
                if seed is None and committed is not None:
                    seed = PairSeed(match_id=other_id, commitment=committed)
        if start:
            broken = start_break(me, started, duel_first, pair_first)
            if broken is not None:
                raise IllegalAction(broken.rule, broken.message)
        duplicate = (duel_first.started if duel_first is not None else started).duel.duplicate  # type: ignore[union-attr]
        judge.pair_chance = PairChance(me, started, duplicate, seed)

    def taken(self, match_id: UUID, made: Sequence[Event]) -> None:
        """Count a match taken in this call (its first events) among the log's, for the games after it."""
        started = made[0]
        if not isinstance(started, MatchStarted) or started.duel is None:
            return
        committed = made[1].commitment if len(made) > 1 and isinstance(made[1], ChanceCommitted) else None
        self._taken.append((str(match_id), started, committed))


def _refuse(findings: list[AuditFinding]) -> None:
    """Raise the first of the judge's findings as its refusal.

    Raises:
        IllegalAction: the finding's rule is its code.
    """
    if findings:
        finding = findings[0]
        raise IllegalAction(finding.rule, f"seq {finding.seq}: {finding.message}")


def _decoded(match_id: UUID, encoded: Sequence[tuple[str, int, bytes]]) -> list[Event]:
    """The events of one match's encoded batch, to judge.

    Raises:
        StoreError: one does not decode (the log never holds bytes it cannot read).
    """
    try:
        return [decode(payload) for _, _, payload in encoded]
    except DecodeError as error:
        raise StoreError(f"match {match_id}: {error.message}", code="store.bad_event") from None
