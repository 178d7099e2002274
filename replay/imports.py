"""Imports judged by the rules: a log takes only what a referee of matchlog could have recorded.

The store checks each imported line on its own (its bytes, its hash chain, its time, its names);
it knows no game. `check_match` adds what needs the rules: the game is one this matchlog knows and
it can start with those options and that many seats; then the judge every referee's event goes
through (`replay.judge`) takes the match event by event, as the audit runs it (knowing the seeds
the match reveals), by its one set of rules for every writer: every event one of the game's own
types and no second start (`match.wrong_game`, `audit.restarted`), every seat an event names at
the table and the outcome placing every seat (`match.no_such_seat`), each answer in its turn and
allowed, each rejection and ruling explained, chance only where chance acts, the outcome the rules
give. So a log never holds a match
that `audit` would fault, or that would break `replay`, `stats` or `export` later.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from uuid import UUID

from matchlog.engines import get as get_engine
from matchlog.engines import names as game_names
from matchlog.events import (
    Event,
    ImportRejected,
    MatchlogError,
    MatchStarted,
    Record,
    UsageError,
)
from matchlog.store import Appended, Store

from .audit import audit_records

__all__ = ["check_match", "import_jsonl"]


def import_jsonl(store: Store, lines: Iterable[bytes]) -> list[Appended]:
    """Import a JSON Lines export into `store`, each match checked by its game's rules too: all of
    it lands, or none.

    Raises:
        ImportRejected: a line or a match fails a check (naming the line); nothing was written.
    """
    return store.import_jsonl(lines, check=check_match)


def check_match(match_id: UUID, events: Sequence[tuple[int, Event]]) -> None:
    """Refuse a match (its events from seq 0, each with its line) that its rules could not have
    recorded.

    Raises:
        ImportRejected: naming the line and what is wrong.
    """
    line, started = events[0]
    if not isinstance(started, MatchStarted):
        raise ImportRejected(f"line {line}: match {match_id} starts with {started.tag}, not match.started")
    try:
        engine = get_engine(started.game)
    except UsageError:
        raise ImportRejected(
            f"line {line}: {started.game!r} is not a game this matchlog knows ({', '.join(game_names())})"
        ) from None
    try:
        engine.start(started)
    except MatchlogError as error:
        raise ImportRejected(f"line {line}: match {match_id} cannot start as recorded: {error.message}") from None
    records = [
        Record(match_id=match_id, seq=seq, event_id=match_id, at_us=0, actor=event.actor, version=event.version,
               event=event, hash=b"")
        for seq, (_, event) in enumerate(events)
    ]  # fmt: skip
    report = audit_records(records)
    if report.findings:
        finding = report.findings[0]
        seq = finding.seq if finding.seq is not None else 0
        line = events[seq][0] if 0 <= seq < len(events) else events[-1][0]
        raise ImportRejected(f"line {line}: {finding.message} [{finding.rule}]")
