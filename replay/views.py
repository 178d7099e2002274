"""What one seat saw: every read-back output of a match through that seat's eyes.

These are the one way a seat's outputs are made (the CLI's `--as-seat`, and the service for a
seat's token): a timeline or replay (`seat_lines`), an export (`export_seat_jsonl`), a state at a
seq (`seat_state`, `seat_state_at`), a dispute report (`seat_dispute`) and an audit report
(`seat_audit`); its catalogue row is `aggregates.catalogue_row`. Each is built from what
`engines.views` shows that seat (seat None: a spectator), so it holds nothing the seat could not
have seen at that point. A seat never gets a hash of a match with hidden information: a hash over
a hidden value of few possibilities (a hand of 0 to 3) can be searched for that value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any
from uuid import UUID

import msgspec

from matchlog.engines import Engine
from matchlog.engines.views import shown_outcome, shown_state, shown_turn
from matchlog.events import Event, MatchlogError, Outcome, Record, UsageError
from matchlog.store import Store

from .audit import ALTERNATIVES_SHOWN, AuditFinding, Dispute, MatchAudit, audit, dispute
from .fold import engine_of, timeline
from .travel import state_at

__all__ = [
    "SeatLine",
    "SeatState",
    "check_seat",
    "export_seat_jsonl",
    "seat_audit",
    "seat_audit_report",
    "seat_dispute",
    "seat_dispute_report",
    "seat_lines",
    "seat_state",
    "seat_state_at",
    "seen_whole",
]


class SeatLine(msgspec.Struct, frozen=True):
    """One event of a match as one seat saw it. Not importable: a shown event has no hash."""

    match_id: UUID
    seq: int
    at_us: int
    actor: int | None  # the shown event's actor
    view_of: int | None  # the seat (None: a spectator)
    type: str
    event: Event
    text: str
    undone_by: int | None = None
    joins: bool = False  # it goes on the line before it (`replay.fold.Step.joins`)


class SeatState(msgspec.Struct, frozen=True, kw_only=True):
    """A match's state at a seq as one seat saw it: the state, whose decision it was, how it ended."""

    match_id: UUID
    seq: int
    view_of: int | None
    state: Any
    to_act: Any
    outcome: Outcome | None
    text: str


def check_seat(seat: int | None, seats: int) -> int | None:
    """`seat` if the match has it (None, and -1, mean a spectator).

    Raises:
        UsageError: the match has no such seat.
    """
    if seat is None or seat == -1:
        return None
    if not 0 <= seat < seats:
        raise UsageError(f"seat {seat}: the match has seats 0 to {seats - 1}", code="usage.seat")
    return seat


def seat_lines(records: Sequence[Record], seat: int | None) -> Iterator[SeatLine]:
    """The records of one match as `seat` saw them (seat None: a spectator)."""
    for step in timeline(records, seat, as_seat=True):
        record = step.record
        yield SeatLine(
            record.match_id,
            record.seq,
            record.at_us,
            step.event.actor,
            seat,
            step.event.tag,
            step.event,
            step.text,
            step.undone_by,
            step.joins,
        )


def seat_state(engine: Engine[Any], match_id: UUID, seq: int, state: Any, seat: int | None) -> SeatState:
    """A state (the referee's, at `seq`) as `seat` sees it."""
    shown = shown_state(engine, state, seat)
    return SeatState(
        match_id=match_id,
        seq=seq,
        view_of=seat,
        state=shown,
        to_act=shown_turn(engine, state, seat),
        outcome=shown_outcome(engine, state, seat),
        text=engine.render(shown),
    )


def seat_state_at(store: Store, match_id: UUID | str, seq: int | None, seat: int | None) -> SeatState:
    """A match's state after `seq` (default: its last) as `seat` sees it.

    Raises:
        UnknownMatch: no such match.
        UsageError: no such seq, or no such seat.
    """
    info = store.match(match_id)
    seat = check_seat(seat, len(info.players))
    current = state_at(store, info.match_id, seq)
    return seat_state(current.engine, info.match_id, current.seq, current.state, seat)


_encoder = msgspec.json.Encoder()


def export_seat_jsonl(
    store: Store,
    out: IO[bytes],
    match_ids: Sequence[UUID],
    seat: int | None,
    *,
    on_skip: Callable[[UUID, MatchlogError], None] | None = None,
) -> int:
    """Write the given matches as `seat` saw them, one JSON line an event; returns the count. A
    match without that seat is written as a spectator saw it. A match that cannot be read back
    (a game this matchlog does not know, an event it cannot fold) is left out and given to
    `on_skip`, or, without one, raised.

    Raises:
        MatchlogError: a match cannot be read back, and there is no `on_skip`.
    """
    count = 0
    for match_id in match_ids:
        try:
            records = store.read(match_id)
            seats = len(records[0].event.seats)  # type: ignore[attr-defined]
            viewer = seat if seat is not None and 0 <= seat < seats else None
            lines = [_encoder.encode(line) + b"\n" for line in seat_lines(records, viewer)]
        except MatchlogError as error:
            if on_skip is None:
                raise
            on_skip(match_id, error)
            continue
        except Exception as error:  # the rules cannot fold what the log holds
            if on_skip is None:
                raise
            on_skip(match_id, MatchlogError(f"cannot be read back: {type(error).__name__}: {error}"))
            continue
        out.writelines(lines)
        count += len(lines)
    return count


# -- reports -----------------------------------------------------------------------------------


def seen_whole(records: Sequence[Record], seat: int | None) -> set[int]:
    """The seqs whose events `seat` (None: a spectator) sees whole: its view of them is the event."""
    return {
        record.seq
        for record, step in zip(records, timeline(records, seat, as_seat=True), strict=True)
        if step.event == record.event
    }


def _finding(finding: AuditFinding, whole: set[int], seat: int | None) -> AuditFinding:
    """A finding as `seat` sees it: about an event it sees whole, all of it; else its rule only."""
    if finding.seq is not None and finding.seq in whole:
        return finding
    who = "a spectator" if seat is None else f"seat {seat}"
    return AuditFinding(
        match_id=finding.match_id,
        seq=finding.seq,
        rule=finding.rule,
        message=f"withheld from {who}: it concerns what {who} may not see",
    )


def seat_audit(store: Store, match_id: UUID | str, seat: int | None) -> MatchAudit:
    """The audit of one match as `seat` sees it (see `seat_audit_report`).

    Raises:
        UnknownMatch: no such match.
        UsageError: no such seat.
    """
    records = store.read(match_id)
    check_seat(seat, len(records[0].event.seats))  # type: ignore[attr-defined]
    return seat_audit_report(records, next(iter(audit(store, [records[0].match_id]))), seat)


def seat_audit_report(records: Sequence[Record], report: MatchAudit, seat: int | None) -> MatchAudit:
    """The audit `report` of a match's `records` as `seat` sees it: every finding's seq and rule,
    its words and evidence only where the seat sees the event whole; in a game with hidden
    information no counts of what was re-judged (answers against rulings would tell a rejected
    hand from a valid one).

    Raises:
        UsageError: no such seat.
    """
    seat = check_seat(seat, len(records[0].event.seats))  # type: ignore[attr-defined]
    whole = seen_whole(records, seat)
    return MatchAudit(
        match_id=report.match_id,
        game=report.game,
        events=report.events,
        findings=[_finding(f, whole, seat) for f in report.findings],
        notes=list(report.notes),
        checked={} if engine_of(records).spec.hidden else dict(report.checked),
    )


def seat_dispute(store: Store, match_id: UUID | str, seq: int, seat: int | None) -> Dispute:
    """The evidence about the event at `seq` as `seat` sees it (see `seat_dispute_report`).

    Raises:
        UnknownMatch: no such match.
        UsageError: no such seq, or no such seat.
    """
    records = store.read(match_id)
    check_seat(seat, len(records[0].event.seats))  # type: ignore[attr-defined]
    return seat_dispute_report(records, dispute(store, records[0].match_id, seq), seat)


def seat_dispute_report(records: Sequence[Record], full: Dispute, seat: int | None) -> Dispute:
    """The dispute report `full` about an event of `records` as `seat` sees it: the event as
    shown, the state before as the seat saw it, the ruling and its rule only where the seat sees
    the event whole, the legal alternatives only of its own decisions, and no hashes where the
    game hides anything.

    Raises:
        UsageError: no such seat.
    """
    seats = records[0].event.seats  # type: ignore[attr-defined]
    seat = check_seat(seat, len(seats))
    seq = full.seq
    engine = engine_of(records)
    before = list(timeline(records[: seq + 1]))[seq].before
    step = list(timeline(records[: seq + 1], seat, as_seat=True))[seq]
    event: Event = step.event
    sees_whole = event == records[seq].event
    concerned = getattr(event, "seat", event.actor)
    concerned = concerned if isinstance(concerned, int) and 0 <= concerned < len(seats) else None
    turn = shown_turn(engine, before, seat) if seq else None
    hidden = engine.spec.hidden
    own = sees_whole and seat is not None and concerned == seat
    # A seat's own legal answers, as answers: their results (a guess right or wrong) may depend on
    # what it may not see.
    legal = engine.legal(before, concerned) if own and turn is not None and turn.seat == concerned else ()
    whole = seen_whole(records, seat)
    return Dispute(
        match_id=full.match_id,
        game=full.game,
        seq=seq,
        event=msgspec.to_builtins(event),
        said=step.text,
        seat=concerned,
        seat_name=seats[concerned].name if concerned is not None else None,
        decision=turn.decision if turn is not None and concerned is not None and turn.seat == concerned else None,
        ruling=full.ruling if sees_whole else "not yours to see",
        rule=full.rule if sees_whole else None,
        rule_says=full.rule_says if sees_whole else None,
        before=engine.render(step.before),
        before_as_seat=None,
        alternatives=[_answer(option) for option in legal[:ALTERNATIVES_SHOWN]] if hidden else full.alternatives,
        alternatives_total=len(legal) if hidden else full.alternatives_total,
        findings=[_finding(f, whole, seat) for f in full.findings],
        hash=None if hidden else full.hash,
        previous_hash=None if hidden else full.previous_hash,
        head_seq=full.head_seq,
        head_hash=None if hidden else full.head_hash,
        chain_verified=full.chain_verified,
    )


def _answer(event: Event) -> str:
    """An answer in words that say nothing of its result: its type and fields."""
    fields = msgspec.structs.asdict(event)
    return event.tag + " " + " ".join(f"{name}={value}" for name, value in fields.items())
