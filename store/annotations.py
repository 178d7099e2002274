"""Annotations: analyses, comments and rulings about recorded events, in a stream of their own
beside the log, never in it.

Each annotation names the match, the seq and the chain hash of the event it speaks of, its author
(an analyser and its version, or whose token wrote it), the seat whose view it belongs to (None:
every reader's) and its note (`events.annotations`). A match's annotations are numbered 0, 1, 2, ...
and hash-chained like its events, and each is a leaf of the log's one Merkle tree, taken in the
order they commit, so a checkpoint covers them and a bundle can prove one. The hash is SHA-256 over
one line of text, its first word telling it from an event's (whose line starts with a hash):

    annotation \\n prev_hex \\n match_id \\n number \\n annotation_id \\n at_us \\n seq \\n event_hash_hex
               \\n author \\n seat \\n type \\n payload

(64 zeros before number 0; a missing seat is the empty string; the author holds no control
character and the payload is JSON, so the line parses one way only; `annotation_hash` is defined
once, in the stand-alone verifier, proofs/verifier.py.) An annotation never touches
a match's events: `verify` of the match is the same with or without any, and checks the
annotations' own chains beside it, naming an edited one at its match and number.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import IO, Any
from uuid import UUID

import duckdb
import msgspec

from matchlog.events import (
    Note,
    StoreError,
    UnknownMatch,
    control_character,
    decode_note,
    encode_note,
    now_us,
    uuid7_texts,
)
from matchlog.proofs.verifier import annotation_hash

from .catalogue import Finding
from .chain import GENESIS

__all__ = [
    "ANNOTATION_LEAVES",
    "MAX_AUTHOR",
    "AnnotationStore",
    "NewAnnotation",
    "StoredAnnotation",
    "annotation_hash",
    "check_author",
    "has_annotations",
]

_EPOCH = datetime(1970, 1, 1)
#: The longest author a log keeps.
MAX_AUTHOR = 200
#: The leaves annotations hold, as store/tree.py reads them beside the events' (a seq is the event's).
ANNOTATION_LEAVES = "SELECT leaf, match_id, seq, hash FROM annotations"


#: The same hash in DuckDB SQL, over a window `w` partitioned by match and ordered by number.
_SQL_EXPECTED = f"""unhex(sha256(concat(
    'annotation', chr(10), coalesce(lower(hex(lag(hash) OVER w)), '{GENESIS.hex()}'), chr(10),
    match_id::VARCHAR, chr(10), number::VARCHAR, chr(10), annotation_id::VARCHAR, chr(10),
    epoch_us(recorded_at)::VARCHAR, chr(10), seq::VARCHAR, chr(10), lower(hex(event_hash)), chr(10),
    author, chr(10), coalesce(seat::VARCHAR, ''), chr(10), type, chr(10), payload)))"""

_VERIFY = f"""
WITH chained AS (
    SELECT match_id, number, seq, event_hash, hash, row_number() OVER w - 1 AS position, {_SQL_EXPECTED} AS expected
    FROM annotations {{where}}
    WINDOW w AS (PARTITION BY match_id ORDER BY number)
), judged AS (
    SELECT c.match_id, c.number, c.seq, c.position,
           CASE WHEN c.number <> c.position THEN 'annotation.gap'
                WHEN c.hash <> c.expected THEN 'annotation.hash'
                WHEN e.hash IS NULL THEN 'annotation.no_event'
                WHEN e.hash <> c.event_hash THEN 'annotation.event_hash' END AS code
    FROM chained c LEFT JOIN events e ON e.match_id = c.match_id AND e.seq = c.seq
)
SELECT match_id, code, min(position), arg_min(seq, position), arg_min(number, position)
FROM judged WHERE code IS NOT NULL GROUP BY match_id, code ORDER BY match_id, code
"""

_COLUMNS = (
    "match_id, number, annotation_id::VARCHAR, epoch_us(recorded_at), seq, event_hash, author, seat, type, payload,"
    " hash, leaf"
)


class NewAnnotation(msgspec.Struct, frozen=True, kw_only=True):
    """An annotation to append: the event it speaks of (and, when the caller read it, that event's
    hash, which must still be the log's), its author, the seat whose view it belongs to, its note."""

    match_id: UUID
    seq: int
    author: str
    note: Note
    seat: int | None = None
    event_hash: bytes | None = None


class StoredAnnotation(msgspec.Struct, frozen=True, kw_only=True):
    """An annotation as the log holds it: the envelope, the note's tag and canonical JSON, its hash
    and its leaf."""

    match_id: UUID
    number: int
    annotation_id: str
    at_us: int
    seq: int
    event_hash: bytes
    author: str
    seat: int | None
    type: str
    payload: str
    hash: bytes
    leaf: int

    @property
    def note(self) -> Note:
        """The note, decoded.

        Raises:
            DecodeError: the stored note is not one (see `matchlog verify`).
        """
        return decode_note(self.payload)

    @classmethod
    def of(cls, row: Sequence[Any]) -> StoredAnnotation:
        match_id, number, annotation_id, at_us, seq, event_hash, author, seat, type_, payload, digest, leaf = row
        return cls(
            match_id=match_id if isinstance(match_id, UUID) else UUID(str(match_id)),
            number=number,
            annotation_id=annotation_id,
            at_us=at_us,
            seq=seq,
            event_hash=bytes(event_hash),
            author=author,
            seat=seat,
            type=type_,
            payload=payload,
            hash=bytes(digest),
            leaf=leaf,
        )


def has_annotations(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the log file has the annotations table (a log of schema version 2 opened read-only has not)."""
    found = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'annotations'").fetchall()
    return bool(found[0][0])


def check_author(author: str) -> None:
    """Refuse an author no annotation may name.

    Raises:
        StoreError: an empty or overlong author, spaces around it, or a control character in it.
    """
    if not author or len(author) > MAX_AUTHOR or author != author.strip():
        raise StoreError(
            f"an annotation's author is 1 to {MAX_AUTHOR} characters without spaces around them, not {author[:40]!r}",
            code="annotation.author",
        )
    found = control_character(author)
    if found is not None:
        raise StoreError(f"an annotation's author holds a control character ({found})", code="annotation.author")


def _check(new: NewAnnotation) -> None:
    """Refuse an annotation no log should keep.

    Raises:
        StoreError: an empty or overlong author, a control character in it, or a seat out of range.
    """
    check_author(new.author)
    if new.seat is not None and (type(new.seat) is not int or not 0 <= new.seat <= 32_767):
        raise StoreError(f"seat {new.seat!r} is not a seat number", code="annotation.seat")
    if not isinstance(new.note, Note):
        raise StoreError(f"an annotation carries a note, not {type(new.note).__name__}", code="annotation.note")


def _append(
    batch: Sequence[NewAnnotation], con: duckdb.DuckDBPyConnection, first_leaf: int
) -> tuple[list[StoredAnnotation], list[bytes]]:
    """Append `batch` on the writer's connection, inside its transaction: each after its match's last
    annotation, at leaves `first_leaf`, ... Returns the stored annotations and their hashes (the
    tree's new leaves, in order).

    Raises:
        UnknownMatch: no event at the seq an annotation names.
        StoreError: the event there is not the one the caller read (`annotation.stale`), or `_check`.
    """
    heads: dict[UUID, tuple[int, bytes]] = {}
    events: dict[tuple[UUID, int], bytes] = {}
    wanted = {(new.match_id, new.seq) for new in batch}
    for match_id in {m for m, _ in wanted}:
        seqs = {seq for m, seq in wanted if m == match_id}
        rows = con.execute(  # a range prunes to the match's rows; the seqs are picked here
            "SELECT seq, hash FROM events WHERE match_id = ? AND seq BETWEEN ? AND ?",
            [str(match_id), min(seqs), max(seqs)],
        ).fetchall()
        events.update(((match_id, seq), bytes(digest)) for seq, digest in rows if seq in seqs)
        head = con.execute(
            "SELECT number, hash FROM annotations WHERE match_id = ? ORDER BY number DESC LIMIT 1", [str(match_id)]
        ).fetchall()
        heads[match_id] = (head[0][0], bytes(head[0][1])) if head else (-1, GENESIS)
    ids = iter(uuid7_texts(len(batch)))
    at_us = now_us()
    stored: list[StoredAnnotation] = []
    for offset, new in enumerate(batch):
        _check(new)
        event_hash = events.get((new.match_id, new.seq))
        if event_hash is None:
            raise UnknownMatch(f"match {new.match_id} has no event at seq {new.seq} to annotate")
        if new.event_hash is not None and new.event_hash != event_hash:
            raise StoreError(
                f"match {new.match_id} seq {new.seq} is not the event the annotation was written about "
                f"(its hash is {event_hash.hex()[:16]}…, the annotation names {new.event_hash.hex()[:16]}…)",
                code="annotation.stale",
            )
        number, prev = heads[new.match_id]
        number += 1
        annotation_id = next(ids)
        payload = encode_note(new.note).decode()
        tag = new.note.__struct_config__.tag  # type: ignore[attr-defined]
        digest = annotation_hash(
            prev, new.match_id, number, annotation_id, at_us, new.seq, event_hash, new.author, new.seat, tag, payload
        )
        heads[new.match_id] = (number, digest)
        stored.append(
            StoredAnnotation(
                match_id=new.match_id,
                number=number,
                annotation_id=annotation_id,
                at_us=at_us,
                seq=new.seq,
                event_hash=event_hash,
                author=new.author,
                seat=new.seat,
                type=tag,
                payload=payload,
                hash=digest,
                leaf=first_leaf + offset,
            )
        )
    if stored:
        # The appender, as the writer inserts a group's events: a statement a row costs ~2 ms each.
        appender = con.appender("annotations")
        appender.append_rows([_row(a) for a in stored])
        appender.flush()
    return stored, [a.hash for a in stored]


def _row(a: StoredAnnotation) -> tuple[Any, ...]:
    """An annotation's row in the table's column order (its time as the appender takes it)."""
    at = _EPOCH + timedelta(microseconds=a.at_us)
    return (str(a.match_id), a.number, a.annotation_id, at, a.seq, a.event_hash, a.author, a.seat, a.type,
            a.payload, a.hash, a.leaf)  # fmt: skip


class _Line(msgspec.Struct, frozen=True):
    """One line of an annotations export: the envelope with its note."""

    match_id: UUID
    number: int
    annotation_id: str
    at_us: int
    seq: int
    event_hash: str
    author: str
    seat: int | None
    type: str
    hash: str
    leaf: int
    note: msgspec.Raw


_line_encoder = msgspec.json.Encoder()


class AnnotationStore:
    """The annotations of a `Store` (mixed into it): append, read, verify, export. A log without the
    table (schema version 2, opened read-only) reads as one with no annotations."""

    #: Whether the file has the annotations table (set when the store opens it).
    has_annotations: bool = False

    def annotate(self, batch: Sequence[NewAnnotation]) -> list[StoredAnnotation]:
        """Append annotations, all or none, each after its match's last one; returns them as stored.

        Raises:
            UnknownMatch: an annotation names an event the log does not have.
            StoreError: the log is read-only (`store.read_only`), an annotation's event is not the one
                its writer read (`annotation.stale`), or its author or seat is not one a log keeps.
        """
        if not batch:
            return []
        writer = self._write()  # type: ignore[attr-defined]
        matches = list(dict.fromkeys(new.match_id for new in batch))
        return writer.submit_leaves(lambda con, first: _append(batch, con, first), matches).result()

    def annotations(self, match_ids: Sequence[UUID] | None = None, *, seq: int | None = None) -> list[StoredAnnotation]:
        """The annotations of some matches (default: all), by match and number; of one seq with `seq`."""
        if not self.has_annotations:
            return []
        clauses, params = [], []
        if match_ids is not None:
            clauses.append("match_id IN (SELECT unnest(?::UUID[]))")
            params.append([str(m) for m in match_ids])
        if seq is not None:
            clauses.append("seq = ?")
            params.append(seq)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._read().execute(  # type: ignore[attr-defined]
            f"SELECT {_COLUMNS} FROM annotations {where} ORDER BY match_id, number", params
        )
        return [StoredAnnotation.of(row) for row in rows.fetchall()]

    def annotated(self, author: str | None = None) -> set[UUID]:
        """The matches that have annotations (by `author`, when given)."""
        if not self.has_annotations:
            return set()
        where, params = ("WHERE author = ?", [author]) if author is not None else ("", [])
        rows = self._read().execute(f"SELECT DISTINCT match_id FROM annotations {where}", params)  # type: ignore[attr-defined]
        return {row[0] for row in rows.fetchall()}

    def verify_annotations(self, match_ids: Sequence[UUID] | None = None) -> list[Finding]:
        """Check the annotations' chains (of some matches, default all): each hash from its row and the
        one before it, numbers without gaps, and each pointing at an event the log holds with the hash
        it names. [] when all is well. (A removed last annotation leaves a gap in the tree's leaves:
        `verify_tree` finds that.)"""
        if not self.has_annotations:
            return []
        where, params = "", []
        if match_ids is not None:
            where, params = "WHERE match_id IN (SELECT unnest(?::UUID[]))", [[str(m) for m in match_ids]]
        findings = []
        rows = self._read().execute(_VERIFY.format(where=where), params).fetchall()  # type: ignore[attr-defined]
        for match_id, code, position, seq, number in rows:
            message = {
                "annotation.gap": f"annotation {position} is missing (the next stored is number {number})",
                "annotation.hash": f"annotation {number} (about seq {seq}): its stored hash is not the hash of "
                "its row and the annotation before it: it was changed",
                "annotation.no_event": f"annotation {number} speaks of seq {seq}, which the match does not have",
                "annotation.event_hash": f"annotation {number} was written about another event at seq {seq} "
                "(the event's hash is not the one it names)",
            }[code]
            findings.append(Finding(match_id, seq, code, message))
        return findings

    def export_annotations(self, out: IO[bytes], match_ids: Sequence[UUID] | None = None) -> int:
        """Write annotations as JSON Lines, one envelope with its note a line; returns the count."""
        count = 0
        for annotation in self.annotations(match_ids):
            line = _Line(
                annotation.match_id,
                annotation.number,
                annotation.annotation_id,
                annotation.at_us,
                annotation.seq,
                annotation.event_hash.hex(),
                annotation.author,
                annotation.seat,
                annotation.type,
                annotation.hash.hex(),
                annotation.leaf,
                msgspec.Raw(annotation.payload.encode()),
            )
            out.write(_line_encoder.encode(line) + b"\n")
            count += 1
        return count
