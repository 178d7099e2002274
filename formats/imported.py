"""A match read from another tool's record, judged as it is built by the judge every referee's event
goes through.

Every format's reader turns its text into events through `Recording`, which hands each to the
match's `replay.Judge` as our referee does: a chance event only where chance acts and possible
there, each answer in its turn and allowed, each ruling, removal and end where a referee could have
recorded it. The finished list of events is audited once more (`replay.audit_records`: the same
judge, knowing the seed a record reveals at its end), so nothing the rules forbid reaches the log.
A refusal is a `FormatError` (an `ImportRejected`) whose code names the format (`import.mat`, ...)
and whose message names the place in the file.

An imported match has no chance commitment unless its record carries one: its dice, boards and
shuffles are facts the file states, and the audit says so ("checked for possibility only").

Ids are derived from the file: the match id is a UUIDv7 whose time is the record's own date (the
import's time when the record has none) and whose random bits come from the SHA-256 of the text, and
each event id from the match id and the seq. Importing the same dated file twice therefore stores
it once: the second import re-sends events the log already holds, which is a no-op.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import Engine
from matchlog.events import (
    Draft,
    Event,
    ImportRejected,
    MatchEnded,
    MatchlogError,
    MatchStarted,
    Record,
    now_us,
    uuid_from_int,
)
from matchlog.replay import Judge, audit_records

__all__ = ["FormatError", "ImportedMatch", "Recording", "derived_id", "judged", "match_key"]


class FormatError(ImportRejected):
    """A record in another tool's format that cannot be imported; nothing from its file was written.

    `code` is `import.<format>`; the message says where in the file (line, game, move or state).
    """

    def __init__(self, format: str, message: str) -> None:
        super().__init__(message, code=f"import.{format}")
        self.format = format


class ImportedMatch(msgspec.Struct, frozen=True):
    """One match read from a file: its id and its events, ready to append at seq 0."""

    match_id: UUID
    drafts: tuple[Draft, ...]

    @property
    def events(self) -> list[Event]:
        return [draft.event for draft in self.drafts]

    def records(self) -> list[Record]:
        """The drafts as the log's records (unhashed), to fold, audit or export without a log."""
        return [
            Record(
                match_id=self.match_id,
                seq=seq,
                event_id=draft.event_id,
                at_us=draft.at_us,
                actor=draft.event.actor,
                version=draft.event.version,
                event=draft.event,
                hash=b"",
            )
            for seq, draft in enumerate(self.drafts)
        ]


def match_key(format: str, text: str, index: int = 0) -> bytes:
    """The digest an imported match's ids come from: the format, the whole text, and which match of it."""
    return hashlib.sha256(f"{format}\0{index}\0".encode() + text.encode()).digest()


def derived_id(ms: int, digest: bytes) -> UUID:
    """A UUIDv7 with the given time (unix ms) and the digest's bits where uuid7 puts random ones."""
    rand = int.from_bytes(digest[:10], "big")
    rand_a = rand >> 68 & 0xFFF
    rand_b = rand & ((1 << 62) - 1)
    return uuid_from_int((ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b)


class Recording:
    """One match being read: its judge (and the state it holds), and where in the file each event came from."""

    def __init__(self, format: str, started: MatchStarted, where: str, *, at_us: int | None = None) -> None:
        """Start the match `started` describes (the record's own time `at_us`, if it has one).

        Raises:
            FormatError: the game cannot start as described (its options or table size).
        """
        self.format = format
        self.at_us = at_us
        try:
            self.judge = Judge(started)
        except MatchlogError as error:
            raise self.error(where, error.message) from None
        self.engine: Engine[Any] = self.judge.engine
        self.events: list[Event] = [started]
        self.places: list[str] = [where]

    def error(self, where: str, message: str) -> FormatError:
        """A refusal of this file, at `where`."""
        return FormatError(self.format, f"{where}: {message}")

    @property
    def state(self) -> Any:
        """The state after the events read so far."""
        return self.judge.state

    @property
    def over(self) -> bool:
        return self.engine.to_act(self.judge.state) is None

    def chance(self, event: Event, where: str) -> None:
        """Record a chance event (a roll, a board, a shuffle) if chance could have recorded it here.

        Raises:
            FormatError: chance is not to act here, or could not have given `event` (the rule's code in brackets).
        """
        self._take(event, where)

    def answer(self, event: Event, where: str) -> None:
        """Record a seat's answer if the rules allow it here, judged as the referee judges answers.

        Raises:
            FormatError: it is not that seat's turn, or the rules forbid the answer (the rule's code in brackets).
        """
        self._take(event, where)

    def record(self, event: Event, where: str) -> None:
        """Record an event of the referee's (a commitment, a removal, the end, a revealed seed).

        Raises:
            FormatError: no referee could have recorded it here (the rule's code in brackets).
        """
        self._take(event, where)

    def end(self, where: str) -> None:
        """Record the end with the outcome the rules give, if the game is over and not ended yet."""
        if self.over and not any(isinstance(event, MatchEnded) for event in self.events):
            outcome = self.engine.outcome(self.state)
            if outcome is not None:
                self._take(MatchEnded(outcome=outcome), where)

    def _take(self, event: Event, where: str) -> None:
        found = self.judge.take_all([event])
        if found:
            raise self.error(where, f"{found[0].message} [{found[0].rule}]")
        self.events.append(event)
        self.places.append(where)

    def finish(self, key: bytes) -> ImportedMatch:
        """The match's drafts, after one more audit of the whole record.

        Raises:
            FormatError: the audit finds something the rules do not allow (it names the place).
        """
        return judged(self.format, self.events, self.places, key, self.at_us)


def judged(format: str, events: Sequence[Event], places: Sequence[str], key: bytes, at_us: int | None) -> ImportedMatch:
    """Drafts of `events` (a whole match from seq 0), with ids from `key`, once the audit passes them.

    Raises:
        FormatError: an audit finding, at the place in the file of the event it concerns.
    """
    at_us = now_us() if at_us is None else at_us
    match_id = derived_id(at_us // 1000, key)
    drafts = tuple(
        Draft(event, derived_id(at_us // 1000, hashlib.sha256(match_id.bytes + seq.to_bytes(8, "big")).digest()), at_us)
        for seq, event in enumerate(events)
    )
    imported = ImportedMatch(match_id, drafts)
    report = audit_records(imported.records())
    if report.findings:
        finding = report.findings[0]
        place = places[finding.seq] if finding.seq is not None and finding.seq < len(places) else "the record"
        raise FormatError(format, f"{place}: {finding.message} [{finding.rule}]")
    return imported
