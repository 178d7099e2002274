"""The Merkle tree over the log, as the file keeps it: each event's leaf (`events.leaf`) and each
annotation's (`annotations.leaf`: leaves of their own kind, in the one order the log committed
both), the complete subtrees kept for proofs (`tree_nodes`), and reading any subtree's hash back
from them.

The hashing itself (the frontier, the proofs) is `matchlog.proofs.tree`; this module only knows
where the leaves and kept subtrees are. A leaf is its event's chain hash, so the file holds each
event's hash once; the leaf numbers grow with the rows, so reading 256 leaves prunes to one block.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import duckdb

from matchlog.events import ProofError
from matchlog.proofs.tree import STRIDE, Frontier, consistency_proof, inclusion_proof, subtree_root
from matchlog.proofs.verifier import leaf_hash

from .annotations import ANNOTATION_LEAVES, has_annotations

__all__ = ["TILE", "TreeReader", "build_tree", "committed_tree", "leaves", "tree_hashes"]

#: Leaves (and kept subtrees of one level) are read 256 at a time: a proof needs at most a few tiles.
TILE = 1 << STRIDE


def leaves(annotations: bool) -> str:
    """The tree's leaves as a relation (leaf, match_id, seq, hash): the events', and the annotations'
    (their seq is the event's they speak of) where the log has them."""
    events = "SELECT leaf, match_id, seq, hash FROM events WHERE leaf IS NOT NULL"
    return f"({events} UNION ALL {ANNOTATION_LEAVES})" if annotations else f"({events})"


class TreeReader:
    """Reads the committed tree on one connection; a reader for one question (its tiles are cached).
    `annotations`: the log has the annotations table, whose rows are leaves too."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, annotations: bool = False) -> None:
        self._con = con
        self._annotations = annotations
        self._leaves: dict[int, dict[int, bytes | None]] = {}
        self._kept: dict[tuple[int, int], dict[int, bytes]] = {}
        self._subtrees: dict[tuple[int, int], bytes] = {}  # the proofs of one match share most of theirs

    def size(self) -> int:
        """How many leaves the file's tree has."""
        query = "SELECT coalesce((SELECT max(leaf)::HUGEINT FROM events), -1)"
        if self._annotations:
            query = f"SELECT greatest(({query}), coalesce((SELECT max(leaf)::HUGEINT FROM annotations), -1))"
        return int(self._con.execute(query).fetchall()[0][0]) + 1

    def leaf(self, index: int) -> bytes:
        """The hash of leaf `index` (RFC 9162's leaf hash of its event's chain hash)."""
        tile = index // TILE
        found = self._leaves.get(tile)
        if found is None:
            query = "SELECT leaf, hash FROM events WHERE leaf >= $1 AND leaf < $2"
            if self._annotations:
                query += " UNION ALL SELECT leaf, hash FROM annotations WHERE leaf >= $1 AND leaf < $2"
            rows = self._con.execute(query, [tile * TILE, tile * TILE + TILE]).fetchall()
            found = {}
            for leaf, digest in rows:
                found[leaf] = None if leaf in found else leaf_hash(bytes(digest))  # None: held twice
            self._leaves[tile] = found
        if index not in found:
            raise ProofError(
                f"leaf {index} of the tree names an entry the log does not have: run `matchlog verify`",
                code="proof.broken_tree",
            )
        digest = found[index]
        if digest is None:
            raise ProofError(f"leaf {index} of the tree is held twice: run `matchlog verify`", code="proof.broken_tree")
        return digest

    def kept(self, level: int, index: int) -> bytes | None:
        """The kept hash of the complete subtree `index` of 2^level leaves, if the file has it."""
        tile = (level, index // TILE)
        found = self._kept.get(tile)
        if found is None:
            rows = self._con.execute(
                "SELECT idx, hash FROM tree_nodes WHERE level = ? AND idx >= ? AND idx < ?",
                [level, tile[1] * TILE, tile[1] * TILE + TILE],
            ).fetchall()
            found = self._kept[tile] = {idx: bytes(digest) for idx, digest in rows}
        return found.get(index)

    def subtree(self, start: int, end: int) -> bytes:
        """The hash of leaves start .. end - 1."""
        found = self._subtrees.get((start, end))
        if found is None:
            found = self._subtrees[(start, end)] = subtree_root(start, end, self.leaf, self.kept)
        return found

    def frontier(self, size: int) -> Frontier:
        """The right edge of the tree of `size` leaves."""
        return Frontier.of(size, self.subtree)

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return inclusion_proof(index, size, self.subtree)

    def consistency(self, old: int, new: int) -> list[bytes]:
        return consistency_proof(old, new, self.subtree)

    def short_matches(self) -> list[tuple[str, int, list[int]]]:
        """The matches whose catalogue row names more events than have leaves (events removed after
        the catalogue was written; a catalogue that lags its events is not one): (match id, the
        catalogue's last seq, the seqs that have leaves)."""
        rows = self._con.execute(
            "SELECT m.match_id::VARCHAR, m.last_seq, list(e.seq ORDER BY e.seq) FILTER (WHERE e.seq IS NOT NULL)"
            " FROM matches m LEFT JOIN events e ON e.match_id = m.match_id AND e.leaf IS NOT NULL"
            " GROUP BY m.match_id, m.last_seq HAVING count(e.seq) < m.last_seq + 1 ORDER BY m.match_id"
        ).fetchall()
        return [(match_id, last, seqs or []) for match_id, last, seqs in rows]

    def leaves_of(self, match_id: UUID) -> dict[int, int]:
        """Seq -> leaf of every event of a match that has a leaf."""
        rows = self._con.execute(
            "SELECT seq, leaf FROM events WHERE match_id = ? AND leaf IS NOT NULL", [match_id]
        ).fetchall()
        return dict(rows)


def committed_tree(con: duckdb.DuckDBPyConnection) -> tuple[Frontier | None, str | None]:
    """The tree's right edge as the file holds it (None when it cannot be computed), and why new
    leaves could not truthfully extend it (None when they could).

    The edge needs the kept subtrees and the leaves after the last of them, so a lost or repeated
    leaf there leaves no edge. Lost leaves at the very end leave no gap at all: what the kept
    subtrees and the log's own checkpoints covered tells, as do events without a leaf. A lost leaf
    further back is none of these: its kept subtree still holds its hash, and the edge is what it was.
    (A tree rewritten whole is extended truthfully too: `verify --against` what it signed finds that.)
    """
    reader = TreeReader(con, annotations=has_annotations(con))
    size = reader.size()
    try:
        frontier = reader.frontier(size)
    except ProofError as error:
        return None, f"the Merkle tree's right edge cannot be computed: {error.message}"
    unleafed = con.execute("SELECT count(*) FROM events WHERE leaf IS NULL").fetchall()[0][0]
    if unleafed:
        return frontier, f"{unleafed} event(s) have no leaf in the Merkle tree: run `matchlog verify`"
    covered = con.execute("SELECT coalesce(max((idx::DOUBLE + 1) * pow(2, level)), 0) FROM tree_nodes").fetchall()[0][0]
    if covered > size:
        return frontier, (
            f"the kept subtrees of the Merkle tree cover {covered} leaves, its events and annotations {size}: "
            "the newest events were removed (run `matchlog verify`)"
        )
    signed = con.execute("SELECT coalesce(max(size), 0) FROM checkpoints").fetchall()[0][0]
    if signed > size:
        return frontier, (
            f"the log signed a checkpoint of {signed} leaves, and its events and annotations hold {size}: "
            "the newest events were removed (run `matchlog verify`)"
        )
    return frontier, None


def tree_hashes(
    con: duckdb.DuckDBPyConnection, batch_rows: int = 200_000, *, annotations: bool = False
) -> Iterator[tuple[list[int], list[str], list[int], list[bytes]]]:
    """Every leaf in order, in batches of columns: leaf index, match id, seq (an annotation's: the
    event's it speaks of), and its chain hash."""
    cursor = con.cursor()
    query = f"SELECT leaf, match_id::VARCHAR AS match_id, seq, hash FROM {leaves(annotations)} ORDER BY leaf"
    try:
        for batch in cursor.sql(query).to_arrow_reader(batch_rows):
            columns = batch.to_pydict()
            yield columns["leaf"], columns["match_id"], columns["seq"], columns["hash"]
    finally:
        cursor.close()


def build_tree(con: duckdb.DuckDBPyConnection, insert: Any, batch_rows: int = 200_000) -> int:
    """Build the tree of a log that has none (schema version 1): number its events' leaves in the
    order the file holds them (for a log only ever appended to, the order they were committed) and
    keep the complete subtrees (`insert(kept)`); returns how many leaves. The caller holds the
    transaction."""
    con.execute("ALTER TABLE events ADD COLUMN leaf BIGINT")
    con.execute(
        "UPDATE events SET leaf = numbered.leaf FROM"
        " (SELECT rowid AS id, row_number() OVER (ORDER BY rowid) - 1 AS leaf FROM events) numbered"
        " WHERE events.rowid = numbered.id"
    )
    frontier, kept = Frontier(), []
    # Read on the caller's connection (the new column is not committed yet), then write.
    for batch in con.sql("SELECT hash FROM events ORDER BY leaf").to_arrow_reader(batch_rows):
        kept += frontier.extend(batch.column(0).to_pylist())
    insert(kept)
    return frontier.size
