"""The hash chain, defined once for Python (append, import) and once for SQL (verify).

Each event's hash is SHA-256 over a line of text: the previous event's hash (hex; 64 zeros before
seq 0), then every stored column of the row, then the canonical event bytes, separated by newlines:

    prev_hex \\n match_id \\n seq \\n event_id \\n at_us \\n actor \\n game \\n type \\n version \\n seat \\n payload

A missing actor or seat is the empty string. The payload comes last and is JSON (which never
contains a raw newline), so the line parses one way only. Because every column is covered, any
edit of a stored row, and any deletion, insertion or reordering of rows, changes some hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from uuid import UUID

__all__ = ["GENESIS", "SQL_EXPECTED_HASH", "chain_hash", "chain_hashes", "snapshot_digest", "verify_sql"]

#: The "previous hash" of seq 0.
GENESIS = bytes(32)


def chain_hash(
    prev: bytes,
    match_id: UUID | str,
    seq: int,
    event_id: UUID | str,
    at_us: int,
    actor: int | None,
    game: str,
    type: str,
    version: int,
    seat: int | None,
    payload: str,
) -> bytes:
    """The hash of one row given the hash of the row before it."""
    line = (
        f"{prev.hex()}\n{match_id}\n{seq}\n{event_id}\n{at_us}\n{'' if actor is None else actor}\n"
        f"{game}\n{type}\n{version}\n{'' if seat is None else seat}\n{payload}"
    )
    return hashlib.sha256(line.encode()).digest()


def chain_hashes(
    prev: bytes,
    match_id: str,
    first_seq: int,
    event_ids: Sequence[str],
    at_us: Sequence[int],
    actors: Sequence[int | None],
    game: str,
    types: Sequence[str],
    versions: Sequence[int],
    seats: Sequence[int | None],
    payloads: Sequence[str],
) -> list[bytes]:
    """The hashes of a run of one match's rows from seq `first_seq` on, each column given whole:
    `chain_hash` row by row (the same line, byte for byte), in one loop with nothing looked up
    per row, since a bulk append hashes every event it writes."""
    sha256 = hashlib.sha256
    hashes: list[bytes] = []
    append = hashes.append
    seq = first_seq
    for event_id, at, actor, type_, version, seat, payload in zip(
        event_ids, at_us, actors, types, versions, seats, payloads, strict=True
    ):
        prev = sha256(
            f"{prev.hex()}\n{match_id}\n{seq}\n{event_id}\n{at}\n{'' if actor is None else actor}\n"
            f"{game}\n{type_}\n{version}\n{'' if seat is None else seat}\n{payload}".encode()
        ).digest()
        append(prev)
        seq += 1
    return hashes


#: The same hash in DuckDB SQL, over a window `w` partitioned by match and ordered by seq.
SQL_EXPECTED_HASH = f"""unhex(sha256(concat(
    coalesce(lower(hex(lag(hash) OVER w)), '{GENESIS.hex()}'), chr(10),
    match_id::VARCHAR, chr(10), seq::VARCHAR, chr(10), event_id::VARCHAR, chr(10),
    epoch_us(recorded_at)::VARCHAR, chr(10), coalesce(actor::VARCHAR, ''), chr(10),
    game, chr(10), type, chr(10), version::VARCHAR, chr(10), coalesce(seat::VARCHAR, ''), chr(10),
    payload)))"""


def verify_sql(events: str, *, heads_in: str, catalogue_id: str = "match_id") -> str:
    """`verify`'s checks of the chains in the rows of `events` (a table or view with the events'
    columns): each chain re-hashed, seqs gapless from 0, seq 0 a match.started, and the head the
    catalogue names the chain's. One row per match that fails one (store/catalogue.py
    `chain_findings` reads them). `heads_in`: where the catalogue's heads are looked up (`chained`,
    the rows checked, or a table of them); `catalogue_id`: the catalogue's match id as the events'
    own reads it (an archive's are text). Left to format: `{events_where}`, `{matches_where}`."""
    return f"""
WITH chained AS (
    SELECT match_id, seq, type, hash, row_number() OVER w - 1 AS position, {SQL_EXPECTED_HASH} AS expected
    FROM {events} {{events_where}}
    WINDOW w AS (PARTITION BY match_id ORDER BY seq)
), per_match AS (
    SELECT match_id,
           min(position) FILTER (WHERE seq <> position) AS gap_at,
           min(seq) FILTER (WHERE seq <> position) AS gap_found,
           min(seq) FILTER (WHERE hash <> expected) AS bad_hash_at,
           bool_or(position = 0 AND type <> 'match.started') AS bad_start,
           max(seq) AS last_seq
    FROM chained GROUP BY match_id
), catalogue AS (
    SELECT {catalogue_id} AS match_id, last_seq, head_hash FROM matches {{matches_where}}
), head_in_log AS (
    SELECT c.match_id, e.hash FROM {heads_in} e JOIN catalogue c ON e.match_id = c.match_id AND e.seq = c.last_seq
)
SELECT coalesce(p.match_id, c.match_id), p.gap_at, p.gap_found, p.bad_hash_at, p.bad_start, p.last_seq,
       c.last_seq, c.head_hash, h.hash,
       CASE WHEN c.match_id IS NULL THEN 'no catalogue' WHEN p.match_id IS NULL THEN 'no events' END
FROM per_match p
FULL OUTER JOIN catalogue c ON p.match_id = c.match_id
LEFT JOIN head_in_log h ON h.match_id = c.match_id
WHERE p.gap_at IS NOT NULL OR p.bad_hash_at IS NOT NULL OR p.bad_start
   OR c.match_id IS NULL OR p.match_id IS NULL
   OR c.last_seq > p.last_seq OR h.hash IS DISTINCT FROM c.head_hash
ORDER BY 1
"""


def snapshot_digest(head: bytes, engine: str, state: bytes) -> bytes:
    """What ties a cached state to the log: SHA-256 over the hash of the event it was folded to
    (so it stops matching if the chain changes there), the engine key and the state's bytes."""
    return hashlib.sha256(head + b"\n" + engine.encode() + b"\n" + state).digest()
