"""The Merkle tree over the log, as the file keeps it: which event each leaf is (`tree_leaves`), the
complete subtrees kept for proofs (`tree_nodes`), and reading any subtree's hash back from them.

The hashing itself (the frontier, the proofs) is `matchlog.proofs.tree`; this module only knows
where the leaves and kept subtrees are. A leaf's hash is read from its event's chain hash, so the
file holds each event's hash once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import duckdb

from matchlog.events import ProofError
from matchlog.proofs.tree import STRIDE, Frontier, consistency_proof, inclusion_proof, subtree_root
from matchlog.proofs.verifier import leaf_hash

__all__ = ["TILE", "TreeReader", "build_tree", "leaf_runs", "tree_hashes"]

#: Leaves (and kept subtrees of one level) are read 256 at a time: a proof needs at most a few tiles.
TILE = 1 << STRIDE

_TILE_LEAVES = """
WITH runs AS (
    SELECT first_leaf, match_id, first_seq,
           unnest(range(greatest(0, $1 - first_leaf), least(count, $2 - first_leaf))) AS i
    FROM tree_leaves WHERE first_leaf < $2 AND first_leaf + count > $1
)
SELECT r.first_leaf + r.i AS leaf, e.hash
FROM runs r JOIN events e ON e.match_id = r.match_id AND e.seq = r.first_seq + r.i
"""

#: Every leaf in order with its event's chain hash (and the event, to name it).
ALL_LEAVES = """
WITH leaves AS (
    SELECT unnest(range(first_leaf, first_leaf + count)) AS leaf, match_id, first_seq - first_leaf AS shift
    FROM tree_leaves
)
SELECT l.leaf, l.match_id::VARCHAR AS match_id, l.leaf + l.shift AS seq, e.hash
FROM leaves l LEFT JOIN events e ON e.match_id = l.match_id AND e.seq = l.leaf + l.shift
ORDER BY l.leaf
"""


class TreeReader:
    """Reads the committed tree on one connection; a reader for one question (its tiles are cached)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self._leaves: dict[int, dict[int, bytes]] = {}
        self._kept: dict[tuple[int, int], dict[int, bytes]] = {}
        self._subtrees: dict[tuple[int, int], bytes] = {}  # the proofs of one match share most of theirs

    def size(self) -> int:
        """How many leaves the file's tree has."""
        return int(self._con.execute("SELECT coalesce(max(first_leaf + count), 0) FROM tree_leaves").fetchall()[0][0])

    def leaf(self, index: int) -> bytes:
        """The hash of leaf `index` (RFC 9162's leaf hash of its event's chain hash)."""
        tile = index // TILE
        found = self._leaves.get(tile)
        if found is None:
            rows = self._con.execute(_TILE_LEAVES, [tile * TILE, tile * TILE + TILE]).fetchall()
            found = self._leaves[tile] = {leaf: leaf_hash(bytes(digest)) for leaf, digest in rows}
        try:
            return found[index]
        except KeyError:
            raise ProofError(
                f"leaf {index} of the tree names an event the log does not have: run `matchlog verify`",
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
            "SELECT first_leaf, first_seq, count FROM tree_leaves WHERE match_id = ?", [match_id]
        ).fetchall()
        return {first_seq + i: first_leaf + i for first_leaf, first_seq, count in rows for i in range(count)}


def leaf_runs(first_leaf: int, rows: list[tuple[Any, ...]]) -> list[tuple[int, str, int, int]]:
    """The `tree_leaves` rows of event rows (match id text, seq, ...) that become leaves from `first_leaf`."""
    runs: list[tuple[int, str, int, int]] = []
    leaf = first_leaf
    for row in rows:
        match, seq = row[0], row[1]
        if runs:
            start, last_match, first_seq, count = runs[-1]
            if last_match == match and first_seq + count == seq:
                runs[-1] = (start, last_match, first_seq, count + 1)
                leaf += 1
                continue
        runs.append((leaf, match, seq, 1))
        leaf += 1
    return runs


def tree_hashes(
    con: duckdb.DuckDBPyConnection, batch_rows: int = 200_000
) -> Iterator[tuple[list[int], list[str], list[int], list[bytes | None]]]:
    """Every leaf in order, in batches of columns: leaf index, match id, seq, and its event's chain
    hash (None when the leaf names an event the log does not have)."""
    cursor = con.cursor()
    try:
        for batch in cursor.sql(ALL_LEAVES).to_arrow_reader(batch_rows):
            columns = batch.to_pydict()
            yield columns["leaf"], columns["match_id"], columns["seq"], columns["hash"]
    finally:
        cursor.close()


def build_tree(con: duckdb.DuckDBPyConnection, insert: Any, batch_rows: int = 200_000) -> int:
    """Build the tree of a log that has none (schema version 1), in the order the file holds its events
    (for a log only ever appended to, the order they were committed); returns how many leaves.
    `insert(runs, kept)` writes rows; the caller holds the transaction."""
    frontier = Frontier()
    cursor = con.cursor()
    try:
        reader = cursor.sql("SELECT match_id::VARCHAR AS m, seq, hash FROM events ORDER BY rowid").to_arrow_reader(
            batch_rows
        )
        for batch in reader:
            columns = batch.to_pydict()
            rows = list(zip(columns["m"], columns["seq"], strict=True))
            runs = leaf_runs(frontier.size, rows)
            kept = frontier.extend(columns["hash"])
            insert(runs, kept)
    finally:
        cursor.close()
    return frontier.size
