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

from .annotations import ANNOTATION_LEAVES

__all__ = ["TILE", "TreeReader", "build_tree", "leaves", "tree_hashes"]

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
        self._leaves: dict[int, dict[int, bytes]] = {}
        self._kept: dict[tuple[int, int], dict[int, bytes]] = {}
        self._subtrees: dict[tuple[int, int], bytes] = {}  # the proofs of one match share most of theirs

    def size(self) -> int:
        """How many leaves the file's tree has."""
        query = "SELECT coalesce((SELECT max(leaf) FROM events), -1)"
        if self._annotations:
            query = f"SELECT greatest(({query}), coalesce((SELECT max(leaf) FROM annotations), -1))"
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
            found = self._leaves[tile] = {leaf: leaf_hash(bytes(digest)) for leaf, digest in rows}
        try:
            return found[index]
        except KeyError:
            raise ProofError(
                f"leaf {index} of the tree names an entry the log does not have: run `matchlog verify`",
                code="proof.broken_tree",
            ) from None

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

    def leaves_of(self, match_id: UUID) -> dict[int, int]:
        """Seq -> leaf of every event of a match that has a leaf."""
        rows = self._con.execute(
            "SELECT seq, leaf FROM events WHERE match_id = ? AND leaf IS NOT NULL", [match_id]
        ).fetchall()
        return dict(rows)


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
