"""Audit: re-judge a recorded match from its log alone, and the evidence for one disputed event.

The audit verifies the hash chain, then re-folds the match the way the referee lived it (undo
included) and judges every record again:

- every accepted answer was the acting seat's turn and legal there (`engine.check`);
- every rejected answer is really against the rules, with the recorded code (its recorded text is
  read back as a Python literal; one cut short or not a literal cannot be re-judged, and is counted,
  as are a protocol's own rulings on answers that are not a decision of the game, such as
  pygammon's undo);
- every removal for breaking a rule follows a rejection of that seat with that code, and a removal
  for too many rejected answers follows at least that many in a row;
- every undo takes back the latest effective events, and nothing follows the end;
- every chance event is possible there (`engine.check_chance`), and, when the referee committed to
  a seed and revealed it, is exactly what that seed draws (`engines.chance`); a resumed match
  (`match.resumed`) starts a new segment with its own commitment (`chance.uncommitted` without
  one), and each segment's draws are re-derived from its own seed;
- the recorded outcome is the one the rules give (unless the match was abandoned);
- a knockout's games are matches in the same log with the players and winners it says;
- a duplicate duel's pair drew the same chance in each game (`replay.pairs`).

A finding names the match, the seq, the rule and the evidence.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import CHANCE, Engine, Rule
from matchlog.engines.chance import ALGORITHM, ChanceSource, commitment
from matchlog.engines.views import shown_state
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    DecodeError,
    Event,
    IllegalAction,
    KnockoutGamePlayed,
    MatchEnded,
    MatchlogError,
    MatchResumed,
    MatchStarted,
    PlayerRemoved,
    Record,
    UsageError,
)
from matchlog.store import Store

from .fold import by_match, engine_of
from .pairs import check_pair

__all__ = ["AuditFinding", "Dispute", "LiveJudge", "MatchAudit", "audit", "audit_records", "dispute", "dispute_records"]

#: Removal codes that come from outside the rules (a timeout, an exception, a lost connection).
_OUTSIDE_THE_RULES = ("player.", "remote.", "match.")
#: How many legal alternatives a dispute report lists.
ALTERNATIVES_SHOWN = 40


class AuditFinding(msgspec.Struct, frozen=True, kw_only=True):
    """One thing the log says that the rules (or the chain) do not allow."""

    match_id: str
    seq: int | None
    rule: str
    message: str
    evidence: dict[str, Any] = msgspec.field(default_factory=dict)


class MatchAudit(msgspec.Struct, kw_only=True):
    """The audit of one match: what was checked, what was found, and what could not be checked."""

    match_id: str
    game: str
    events: int
    findings: list[AuditFinding] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    checked: dict[str, int] = msgspec.field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.findings


class _Walk:
    """The state as the referee had it before each record, and the findings so far."""

    def __init__(self, records: Sequence[Record]) -> None:
        self.records = records
        self.match_id = str(records[0].match_id)
        self.engine: Engine[Any] = engine_of(records)
        self.report = MatchAudit(match_id=self.match_id, game=self.engine.spec.name, events=len(records))
        #: Each seat's rejected answers since its last accepted one.
        self.streak: dict[int, int] = {}
        self.counts = dict.fromkeys(
            (
                "answers",
                "rejections",
                "rejections_not_rechecked",
                "protocol_rulings",
                "removals",
                "chance",
                "chance_rederived",
                "undos",
            ),
            0,
        )

    def find(self, seq: int | None, rule: str, message: str, **evidence: Any) -> None:
        evidence = {key: _plain(value) for key, value in evidence.items()}
        self.report.findings.append(
            AuditFinding(match_id=self.match_id, seq=seq, rule=rule, message=message, evidence=evidence)
        )


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value) if isinstance(value, msgspec.Struct | tuple | list) else value


def audit_records(
    records: Sequence[Record], on_record: Callable[[Record, Any, list[AuditFinding]], None] | None = None
) -> MatchAudit:
    """Audit one match from its records (seq 0 onwards; the chain is the store's to check).

    `on_record(record, state_before, findings_at_that_seq)` is called for every record after the first.
    """
    try:
        walk = _Walk(records)
    except (DecodeError, UsageError) as error:
        match_id = str(records[0].match_id) if records else "?"
        report = MatchAudit(match_id=match_id, game="?", events=len(records))
        report.findings.append(AuditFinding(match_id=match_id, seq=0, rule="audit.bad_start", message=error.message))
        return report
    report = walk.report
    try:
        auditor = _Auditor(walk, _chance_sources(walk))
    except _CannotStart:
        return report
    for record in records[1:]:
        before = auditor.state
        found_before = len(report.findings)
        if not auditor.step(record):
            break
        if on_record is not None:
            on_record(record, before, report.findings[found_before:])
    if auditor.ended is None:
        report.notes.append("the match has not ended")
    report.checked = walk.counts
    return report


class _CannotStart(Exception):
    """The match's first event does not start a match (a finding says why)."""


class _Auditor:
    """The referee's life re-lived one record at a time: the effective states (an undo pops them),
    each seat's latest rejection, and where the match ended."""

    def __init__(self, walk: _Walk, sources: dict[int, ChanceSource | None]) -> None:
        self.walk = walk
        self.sources = sources  # each chance segment's source, by the seq it starts at
        self.rng = sources.get(0)
        started = walk.records[0].event
        assert isinstance(started, MatchStarted)
        try:
            state = walk.engine.start(started)
        except MatchlogError as error:
            walk.find(0, "audit.bad_start", f"the match cannot start as recorded: {error.message}")
            raise _CannotStart from None
        self.stack: list[tuple[int, Any]] = [(0, state)]  # effective (seq, state after it)
        self.rejected: dict[int, str] = {}  # each seat's latest rejection code
        self.ended: int | None = None

    @property
    def state(self) -> Any:
        return self.stack[-1][1]

    def step(self, record: Record) -> bool:
        """Judge one record and move on; False when the rules cannot fold the log any further."""
        walk = self.walk
        before = self.state
        seq, event = record.seq, record.event
        if self.ended is not None and not isinstance(event, ActionsUndone):  # an arbiter may undo after the end
            walk.find(seq, "audit.after_end", f"{event.tag} was recorded after the match ended at seq {self.ended}")
        if isinstance(event, ActionsUndone):
            walk.counts["undos"] += 1
            if event.by is not None:  # a seat's undo is an accepted answer of its own
                walk.streak.pop(event.by, None)
            if self.ended in event.seqs:
                self.ended = None  # the end is taken back: the match goes on
            effective = [s for s, _ in self.stack[1:]]
            if not event.seqs or list(event.seqs) != effective[-len(event.seqs) :]:
                walk.find(
                    seq,
                    "audit.bad_undo",
                    "the undo does not take back the latest effective events",
                    undone=event.seqs,
                    latest=effective[-len(event.seqs) :] if event.seqs else [],
                )
            else:
                del self.stack[-len(event.seqs) :]
            return True
        if isinstance(event, MatchResumed):  # a new chance segment, drawn from its own seed
            self.rng = self.sources.get(seq)
        _judge(walk, record, before, self.rng, self.rejected)
        if isinstance(event, MatchEnded):
            self.ended = seq
        try:
            self.stack.append((seq, walk.engine.apply(before, event)))
        except Exception as error:  # a log the rules cannot fold any further
            walk.find(seq, "audit.cannot_apply", f"the rules cannot apply {event.tag} here: {error}")
            return False
        return True


class LiveJudge:
    """The audit one append at a time, for a service recording what a referee elsewhere sends: each
    batch is judged as `audit` would judge it, and taken only if nothing is found. Chance is
    checked for possibility (a seed is revealed only at the end)."""

    def __init__(self, records: Sequence[Record]) -> None:
        # Only the first record is kept: a match recorded for hours must not hold all of its events.
        self._walk = _Walk(records[:1])
        self._auditor = _Auditor(self._walk, {})
        for record in records[1:]:
            self._auditor.step(record)
        self._walk.report.findings.clear()  # what is stored was judged when it was appended
        self.next_seq = len(records)

    @property
    def engine(self) -> Engine[Any]:
        return self._walk.engine

    @property
    def state(self) -> Any:
        """The effective state after the last record taken."""
        return self._auditor.state

    @property
    def ended(self) -> bool:
        return self._auditor.ended is not None

    def judge(self, records: Sequence[Record]) -> list[AuditFinding]:
        """Judge `records` (the next seqs) and take them if nothing is found; else leave the state
        as it was and return what was found."""
        auditor, walk = self._auditor, self._walk
        # What to restore if the batch is refused: the stack only grows, unless an undo pops it
        # (copying it whole for every batch would cost a long match's length each time).
        undoes = any(isinstance(record.event, ActionsUndone) for record in records)
        stack = list(auditor.stack) if undoes else len(auditor.stack)
        saved = (dict(auditor.rejected), auditor.ended, dict(walk.counts), dict(walk.streak))
        findings = walk.report.findings
        for record in records:
            if not auditor.step(record) or findings:
                break
        if findings:
            found = list(findings)
            findings.clear()
            if undoes:
                auditor.stack = stack  # type: ignore[assignment]
            else:
                del auditor.stack[stack:]  # type: ignore[misc]
            auditor.rejected, auditor.ended, walk.counts, walk.streak = saved
            return found
        self.next_seq += len(records)
        return []


def _chance_sources(walk: _Walk) -> dict[int, ChanceSource | None]:
    """Each chance segment's source, by the seq its segment starts at (0, and each match.resumed),
    rebuilt from a revealed seed that matches the segment's commitment (None where none does).

    A segment's commitment comes right after its start (a resumed segment of a match whose chance
    was committed must have one); any other commitment is a finding. A seed
    may be revealed anywhere after its commitment (the end of the match, even an end later taken
    back), and every revealed seed must match one of the match's commitments.
    """
    starts = [0] + [r.seq for r in walk.records if isinstance(r.event, MatchResumed)]
    committed: dict[int, ChanceCommitted] = {}
    for record in walk.records:
        event = record.event
        if not isinstance(event, ChanceCommitted):
            continue
        segment = max(start for start in starts if start < record.seq)
        if segment in committed:
            walk.find(
                record.seq,
                "chance.committed_twice",
                "the referee committed to a second seed in one segment (only a resume starts another)",
            )
        elif record.seq != segment + 1:
            walk.find(record.seq, "chance.late_commitment", "the commitment does not come before everything else")
        else:
            committed[segment] = event
    if not committed:
        if walk.engine.spec.chance and not walk.engine.spec.tournament:
            walk.report.notes.append("no chance commitment recorded: chance is checked for possibility only")
        return {}
    for start in starts:
        if start not in committed and start > 0:  # its referee drew chance it never committed to
            walk.find(start, "chance.uncommitted", "the match was resumed without a commitment to a fresh seed")
    seeds: dict[str, bytes] = {}  # commitment -> the seed revealed for it
    wanted = {event.commitment for event in committed.values()}
    for record in walk.records:
        event = record.event
        if not isinstance(event, ChanceRevealed):
            continue
        try:
            seed = bytes.fromhex(event.seed)
        except ValueError:
            walk.find(record.seq, "chance.reveal_mismatch", "the revealed seed is not hex", seed=event.seed)
            continue
        if commitment(seed) not in wanted:
            walk.find(
                record.seq,
                "chance.reveal_mismatch",
                "the revealed seed does not match any commitment of the match",
                commitments=sorted(wanted),
                seed=event.seed,
            )
            continue
        seeds[commitment(seed)] = seed
    sources: dict[int, ChanceSource | None] = {}
    for segment, event in committed.items():
        later = segment != starts[-1]  # another referee picked the match up after this one
        where = f" of the segment resumed at seq {segment}" if segment else " of the first segment" if later else ""
        if event.algorithm != ALGORITHM:
            walk.report.notes.append(
                f"chance{where} committed under {event.algorithm!r}, which this matchlog cannot re-derive"
            )
            sources[segment] = None
        elif event.commitment not in seeds:
            why = (
                "was never revealed (its referee stopped first)"
                if later
                else "is not revealed (the match has not ended)"
            )
            walk.report.notes.append(f"the chance seed{where} {why}: draws checked for possibility only")
            sources[segment] = None
        else:
            sources[segment] = ChanceSource(seeds[event.commitment])
    return sources


def _judge(walk: _Walk, record: Record, before: Any, rng: ChanceSource | None, rejected: dict[int, str]) -> None:
    """Judge one record (not an undo) against the state before it."""
    engine, seq, event = walk.engine, record.seq, record.event
    turn = engine.to_act(before)
    match event:
        case MatchStarted():
            walk.find(seq, "audit.restarted", "a second match.started inside the match")
        case ChanceCommitted() | ChanceRevealed():
            pass
        case MatchResumed(players=players):
            seats = len(walk.records[0].event.seats)  # type: ignore[attr-defined]
            if len(players) != seats:
                walk.find(
                    seq, "audit.bad_resume", f"the match was resumed with {len(players)} players for {seats} seats"
                )
        case MatchEnded(outcome=outcome):
            expected = engine.outcome(before)
            if outcome.result != "abandoned":
                if expected is None:
                    walk.find(seq, "audit.early_end", "the match ended while the rules had it go on", outcome=outcome)
                elif expected != outcome:
                    walk.find(
                        seq,
                        "audit.wrong_outcome",
                        "the recorded outcome is not the one the rules give",
                        recorded=outcome,
                        expected=expected,
                    )
        case AnswerRejected(seat=seat, answer=answer, code=code):
            walk.counts["rejections"] += 1
            rejected[seat] = code
            walk.streak[seat] = walk.streak.get(seat, 0) + 1
            if turn is None or turn.seat != seat:
                walk.find(
                    seq, "audit.out_of_turn", f"seat {seat}'s answer was judged when it was not its turn", turn=turn
                )
                return
            if event.decision != turn.decision:  # a protocol's ruling (pygammon's undo, a bad input type)
                walk.counts["protocol_rulings"] += 1
                return
            value = _literal(answer)
            if value is _NOT_A_LITERAL:
                walk.counts["rejections_not_rechecked"] += 1
                return
            try:
                engine.check(before, seat, engine.parse(before, seat, value))
            except IllegalAction as error:
                if error.code != code:
                    walk.find(
                        seq,
                        "audit.wrong_code",
                        f"the answer breaks {error.code}, not {code}: {error.message}",
                        answer=answer,
                        recorded=code,
                        rule=error.code,
                    )
            else:
                walk.find(
                    seq, "audit.legal_rejected", f"a legal answer was rejected as {code}", answer=answer, recorded=code
                )
        case PlayerRemoved(seat=seat, code=Rule.REJECTION_LIMIT, reason=reason):
            walk.counts["removals"] += 1
            said = reason.split(" ", 1)[0]
            streak = walk.streak.get(seat, 0)
            if not streak or (said.isdigit() and streak < int(said)):
                walk.find(
                    seq,
                    "audit.unexplained_removal",
                    f"seat {seat} was removed for {Rule.REJECTION_LIMIT} ({reason}) after {streak} rejected "
                    "answers in a row",
                    code=Rule.REJECTION_LIMIT,
                )
        case PlayerRemoved(seat=seat, code=code):
            walk.counts["removals"] += 1
            if not code.startswith(_OUTSIDE_THE_RULES) and rejected.get(seat) != code:
                walk.find(
                    seq,
                    "audit.unexplained_removal",
                    f"seat {seat} was removed for {code} without a rejected answer breaking it",
                    code=code,
                )
        case _ if record.actor is not None:
            walk.counts["answers"] += 1
            walk.streak.pop(record.actor, None)
            if turn is None:
                walk.find(
                    seq, "match.over", f"seat {record.actor}'s {event.tag} came after the game was over", event=event
                )
            elif turn.seat != record.actor:
                walk.find(
                    seq,
                    "match.not_your_turn",
                    f"seat {record.actor} answered when seat {turn.seat} was to act",
                    event=event,
                )
            else:
                try:
                    engine.check(before, record.actor, event)
                except IllegalAction as error:
                    walk.find(
                        seq,
                        error.code,
                        f"an accepted answer breaks the rules: {error.message}",
                        event=event,
                        alternatives=len(engine.legal(before, record.actor)),
                    )
        case _ if turn is not None and turn.seat == CHANCE:
            walk.counts["chance"] += 1
            try:
                engine.check_chance(before, event)
            except IllegalAction as error:
                walk.find(seq, error.code, error.message, event=event)
            if rng is not None:
                try:
                    derived: Event | None = engine.chance(before, rng)
                except Exception:  # what the seed draws here cannot even be computed
                    derived = None
                walk.counts["chance_rederived"] += 1
                if derived != event:
                    walk.find(
                        seq,
                        "chance.not_from_seed",
                        "the revealed seed draws something else here",
                        recorded=event,
                        derived=derived,
                    )


_NOT_A_LITERAL = object()


def _literal(text: str) -> Any:
    """The answer a rejection recorded as its repr, if that repr is a whole Python literal."""
    if text.endswith("…"):
        return _NOT_A_LITERAL
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_A_LITERAL


def audit(store: Store, match_ids: Sequence[UUID] | None = None, *, batch: int = 500) -> Iterator[MatchAudit]:
    """Audit matches of the log (all by default), one report each in match id order: the chain
    first (store.verify), then the rules."""
    ids = (
        list(match_ids)
        if match_ids is not None
        else [row[0] for row in store.query("SELECT match_id FROM matches ORDER BY match_id")]
    )
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        chain: dict[str, list[AuditFinding]] = {}
        for finding in store.verify(chunk):
            chain.setdefault(str(finding.match_id), []).append(
                AuditFinding(
                    match_id=str(finding.match_id), seq=finding.seq, rule=finding.code, message=finding.message
                )
            )
        for records in _read(store, chunk):
            if isinstance(records, MatchAudit):  # it does not even decode
                chain.pop(records.match_id, None)
                yield records
                continue
            report = audit_records(records)
            report.findings[:0] = chain.pop(report.match_id, [])
            if report.game == "knockout":
                _check_knockout(store, records, report)
            check_pair(store, records, report)
            yield report
        for match_id, findings in chain.items():  # a match whose rows are gone altogether
            yield MatchAudit(match_id=match_id, game="?", events=0, findings=findings)


def _read(store: Store, chunk: Sequence[UUID]) -> Iterator[list[Record] | MatchAudit]:
    """Each match's records; for a match with an event that does not decode, a report saying so."""
    try:
        yield from list(by_match(store.records(chunk)))
        return
    except DecodeError:
        pass
    for match_id in chunk:  # find the ones that do not decode, one by one
        try:
            yield store.read(match_id)
        except DecodeError as error:
            report = MatchAudit(match_id=str(match_id), game="?", events=0)
            report.findings.append(
                AuditFinding(match_id=str(match_id), seq=None, rule=error.code, message=error.message)
            )
            yield report


def _check_knockout(store: Store, records: Sequence[Record], report: MatchAudit) -> None:
    """Each game a knockout says it played is in the log, with those players and those winners."""
    names = [seat.name for seat in records[0].event.seats]  # type: ignore[attr-defined]
    for record in records:
        event = record.event
        if not isinstance(event, KnockoutGamePlayed):
            continue
        try:
            info = store.match(event.match_id)
        except MatchlogError:
            report.findings.append(
                AuditFinding(
                    match_id=report.match_id,
                    seq=record.seq,
                    rule="knockout.missing_game",
                    message=f"game {event.match_id} is not in the log",
                )
            )
            continue
        players = [names[s] for s in event.seats]
        winners = sorted(names[s] for s in event.winners)
        recorded = sorted(info.players[s] for s in (info.outcome.winners if info.outcome else ()))
        if list(info.players) != players or (info.outcome is not None and recorded != winners):
            report.findings.append(
                AuditFinding(
                    match_id=report.match_id,
                    seq=record.seq,
                    rule="knockout.wrong_game",
                    message=f"game {event.match_id} does not have the players or winners the knockout records",
                    evidence={
                        "players": players,
                        "winners": winners,
                        "game_players": list(info.players),
                        "game_winners": recorded,
                    },
                )
            )


# -- one disputed event ----------------------------------------------------------------------


class Dispute(msgspec.Struct, kw_only=True):
    """The evidence about one recorded event: what was asked, what was answered, how it was ruled
    and under which rule, what else was legal, and the hashes that prove the record unchanged."""

    match_id: str
    game: str
    seq: int
    event: dict[str, Any]
    said: str  # the event in words
    seat: int | None  # the seat it concerns
    seat_name: str | None
    decision: str | None  # what that seat was asked for, if it was its turn
    ruling: str  # accepted | rejected | removed | chance | referee | undo | lifecycle
    rule: str | None
    rule_says: str | None
    before: str  # the state before, as the referee saw it
    before_as_seat: str | None  # ... and as the seat saw it
    alternatives: list[str]
    alternatives_total: int
    findings: list[AuditFinding]
    hash: str | None  # None: withheld (a seat's view of a game with hidden information)
    previous_hash: str | None
    head_seq: int
    head_hash: str | None
    chain_verified: bool


def dispute(store: Store, match_id: UUID | str, seq: int) -> Dispute:
    """The evidence about the event at `seq` of a match.

    Raises:
        UnknownMatch: no such match.
        UsageError: no such seq.
    """
    records = store.read(match_id)
    return dispute_records(records, seq, chain_verified=not store.verify([records[0].match_id]))


def dispute_records(records: Sequence[Record], seq: int, *, chain_verified: bool) -> Dispute:
    """The evidence about the event at `seq` of a match's records (whose chain the caller checked).

    Raises:
        UsageError: no such seq.
    """
    if not 0 <= seq < len(records):
        raise UsageError(
            f"seq {seq} is not in match {records[0].match_id} (seqs 0 to {len(records) - 1})", code="usage.seq"
        )
    captured: dict[str, Any] = {}

    def at(record: Record, before: Any, findings: list[AuditFinding]) -> None:
        if record.seq == seq:
            captured.update(before=before, findings=findings)

    report = audit_records(records, on_record=at)
    engine = engine_of(records)
    record = records[seq]
    event = record.event
    before = captured.get("before", engine.start(records[0].event))  # type: ignore[arg-type]
    names = tuple(s.name for s in records[0].event.seats)  # type: ignore[attr-defined]
    turn = engine.to_act(before) if seq else None
    seat = getattr(event, "seat", record.actor)
    seat = seat if isinstance(seat, int) and 0 <= seat < len(names) else None
    ruling, rule, says = _ruling(engine, before, record)
    alternatives: list[str] = []
    total = 0
    if turn is not None and turn.seat not in (CHANCE,) and seat == turn.seat:
        legal = engine.legal(before, turn.seat)
        total = len(legal)
        for option in legal[:ALTERNATIVES_SHOWN]:
            try:
                alternatives.append(engine.describe(before, option, engine.apply(before, option)))
            except Exception:  # pragma: no cover - an option the engine lists but cannot apply
                alternatives.append(option.tag)
    return Dispute(
        match_id=str(records[0].match_id),
        game=engine.spec.name,
        seq=seq,
        event=msgspec.to_builtins(event),
        said=engine.describe(before, event, engine.apply(before, event))
        if seq and not isinstance(event, ActionsUndone)
        else event.tag,
        seat=seat,
        seat_name=names[seat] if seat is not None else None,
        decision=turn.decision if turn is not None and seat is not None and turn.seat == seat else None,
        ruling=ruling,
        rule=rule,
        rule_says=says,
        before=engine.render(before),
        before_as_seat=engine.render(shown_state(engine, before, seat))
        if seat is not None and engine.spec.hidden
        else None,
        alternatives=alternatives,
        alternatives_total=total,
        findings=list(captured.get("findings", [])) + [f for f in report.findings if f.seq is None],
        hash=record.hash.hex(),
        previous_hash=records[seq - 1].hash.hex() if seq else None,
        head_seq=records[-1].seq,
        head_hash=records[-1].hash.hex(),
        chain_verified=chain_verified,
    )


def _ruling(engine: Engine[Any], before: Any, record: Record) -> tuple[str, str | None, str | None]:
    """How the event was ruled, the rule behind it, and what the rules say of it now."""
    event = record.event
    match event:
        case AnswerRejected(seat=seat, answer=answer, code=code, message=message):
            value = _literal(answer)
            if value is _NOT_A_LITERAL:
                return "rejected", code, f"{message} (the recorded answer is cut short: not re-judged)"
            try:
                engine.check(before, seat, engine.parse(before, seat, value))
            except IllegalAction as error:
                return "rejected", code, error.message
            return "rejected", code, "the rules allow this answer: it should not have been rejected"
        case PlayerRemoved(code=code, reason=reason):
            return "removed", code, reason
        case ActionsUndone(reason=reason):
            return "undo", None, reason or None
        case MatchStarted() | MatchResumed() | MatchEnded() | ChanceCommitted() | ChanceRevealed():
            return "lifecycle", None, None
    turn = engine.to_act(before)
    if record.actor is not None:
        try:
            engine.check(before, record.actor, event)
        except IllegalAction as error:
            return "accepted", error.code, f"the rules forbid it: {error.message}"
        return "accepted", None, "legal: the rules allow it here"
    if turn is not None and turn.seat == CHANCE:
        try:
            engine.check_chance(before, event)
        except IllegalAction as error:
            return "chance", error.code, error.message
        return "chance", None, "possible here"
    return "referee", None, None
