"""Audit: re-judge a recorded match from its log alone, and the evidence for one disputed event.

The audit verifies the hash chain, then runs the judge that decides every event before it is
written (`replay.judge`) again over the match, the way the referee lived it (undo included),
knowing what the record tells only at its end: the chance seeds revealed, so every draw of a
segment whose seed is revealed is re-derived from it. It reports every finding (where the judge
refuses the first), and what it counted and could not check:

- every accepted answer was the acting seat's turn and legal there (`engine.check`);
- every rejected answer is really against the rules, with the recorded code (its recorded text is
  read back as a Python literal; one cut short or not a literal cannot be re-judged, and is counted,
  as are a protocol's own rulings on answers that are not a decision of the game, such as
  pygammon's undo); every ruling on a rejection follows one;
- every removal for breaking a rule follows a rejection of that seat with that code, and a removal
  for too many rejected answers follows at least that many in a row;
- every undo takes back the latest effective events, and nothing follows the end;
- every chance event is chance's to record there and possible (`engine.check_chance`), and, when
  the referee committed to a seed and revealed it, is exactly what that seed draws
  (`engines.chance`); a resumed match (`match.resumed`) starts a new segment with its own
  commitment (`chance.uncommitted` without one), and each segment's draws are re-derived from its
  own seed;
- the recorded outcome is the one the rules give (unless the match was abandoned);
- a knockout's games are matches in the same log with the players and winners it says;
- a duplicate duel's pair drew the same chance in each game (`replay.pairs`).

A finding names the match, the seq, the rule and the evidence. A check across matches (a
knockout's games, a duel's pair) runs beside the per-match audit in `audit`, as `_check_knockout` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import CHANCE, Engine
from matchlog.engines.chance import ALGORITHM
from matchlog.engines.contract import shown
from matchlog.engines.views import shown_state
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    DecodeError,
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
from .judge import NOT_A_LITERAL, AuditFinding, Judge, literal
from .pairs import check_pair

__all__ = ["AuditFinding", "Dispute", "MatchAudit", "audit", "audit_records", "dispute", "dispute_records"]

#: How many legal alternatives a dispute report lists.
ALTERNATIVES_SHOWN = 40


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


def audit_records(
    records: Sequence[Record], on_record: Callable[[Record, Any, list[AuditFinding]], None] | None = None
) -> MatchAudit:
    """Audit one match from its records (seq 0 onwards; the chain is the store's to check): the
    judge that took them, run again over them, knowing the chance seeds revealed at the end.

    `on_record(record, state_before, findings_at_that_seq)` is called for every record after the first.
    """
    match_id = str(records[0].match_id) if records else "?"
    try:
        engine = engine_of(records)
    except (DecodeError, UsageError) as error:
        report = MatchAudit(match_id=match_id, game="?", events=len(records))
        report.findings.append(AuditFinding(match_id=match_id, seq=0, rule="audit.bad_start", message=error.message))
        return report
    report = MatchAudit(match_id=match_id, game=engine.spec.name, events=len(records))
    try:
        judge = Judge(records[0].event, match_id=match_id, seeds=_revealed(records))  # type: ignore[arg-type]
    except MatchlogError as error:
        report.findings.append(
            AuditFinding(
                match_id=match_id,
                seq=0,
                rule="audit.bad_start",
                message=f"the match cannot start as recorded: {error.message}",
            )
        )
        return report
    for record in records[1:]:
        before = judge.state
        found, counts = judge.verdict(record.seq, record.event)
        report.findings.extend(found)
        if not judge.apply(record.seq, record.event, counts):  # a log the rules cannot fold any further
            report.findings.append(
                AuditFinding(
                    match_id=match_id,
                    seq=record.seq,
                    rule="audit.cannot_apply",
                    message=f"the rules cannot apply {record.event.tag} here",
                )
            )
            break
        if on_record is not None:
            on_record(record, before, found)
    report.findings.extend(judge.finish())
    if judge.ended is None:
        report.notes.append("the match has not ended")
    report.notes.extend(_chance_notes(judge))
    report.checked = judge.counts
    return report


def _revealed(records: Sequence[Record]) -> list[bytes]:
    """Every chance seed the match reveals (the judge matches each to its commitment)."""
    seeds = []
    for record in records:
        if isinstance(record.event, ChanceRevealed):
            try:
                seeds.append(bytes.fromhex(record.event.seed))
            except ValueError:
                continue  # the judge finds it
    return seeds


def _chance_notes(judge: Judge) -> list[str]:
    """What the audit could not check of the match's chance, and why."""
    spec = judge.engine.spec
    committed = [segment for segment in judge.segments if segment.committed is not None]
    if not committed:
        if spec.chance and not spec.tournament:
            return ["no chance commitment recorded: chance is checked for possibility only"]
        return []
    notes = []
    for segment in committed:
        event = segment.committed
        assert event is not None
        later = segment is not judge.segment  # another referee picked the match up after this one
        start = segment.start
        where = f" of the segment resumed at seq {start}" if start else " of the first segment" if later else ""
        if event.algorithm != ALGORITHM:
            notes.append(f"chance{where} committed under {event.algorithm!r}, which this matchlog cannot re-derive")
        elif event.commitment not in judge.seeds:
            why = (
                "was never revealed (its referee stopped first)"
                if later
                else "is not revealed (the match has not ended)"
            )
            notes.append(f"the chance seed{where} {why}: draws checked for possibility only")
    return notes


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
            report = _audited(store, records)
            report.findings[:0] = chain.pop(report.match_id, [])
            yield report
        for match_id, findings in chain.items():  # a match whose rows are gone altogether
            yield MatchAudit(match_id=match_id, game="?", events=0, findings=findings)


def _audited(store: Store, records: Sequence[Record]) -> MatchAudit:
    """One match's audit; an error nobody expected while auditing it (a bug, a log no rule foresaw)
    is a finding of that match (`audit.internal`), never the end of the audit of the others."""
    try:
        report = audit_records(records)
        if report.game == "knockout":
            _check_knockout(store, records, report)
        check_pair(store, records, report)
    except Exception as error:  # whatever it is, it is this match's, and said as its finding
        match_id = str(records[0].match_id)
        report = MatchAudit(match_id=match_id, game=_game(records), events=len(records))
        report.findings.append(
            AuditFinding(
                match_id=match_id,
                seq=None,
                rule="audit.internal",
                message=f"the audit of this match failed: {type(error).__name__}: {shown(str(error), 200)}",
            )
        )
    return report


def _game(records: Sequence[Record]) -> str:
    started = records[0].event
    return started.game if isinstance(started, MatchStarted) else "?"


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
            value = literal(answer)
            if value is NOT_A_LITERAL:
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
