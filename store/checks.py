"""Verification and the Merkle tree of a log: the hash chains against the catalogue, the tree's
leaves against the events, the committed tree's head and proofs, and its signed checkpoints."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any
from uuid import UUID

import duckdb

from matchlog.events import ProofError, StoreError, now_us

from .catalogue import CatalogueReads, Finding, chain_findings
from .chain import verify_sql
from .tree import TreeReader, leaves, tree_hashes

__all__ = ["Checks"]

#: `verify`'s checks of the chains (a match's events and its catalogue row both filtered alike).
_VERIFY = verify_sql("events", heads_in="events")


#: The tree's leaves against the events (the first few of each kind of disagreement).
_VERIFY_TREE = """
WITH no_leaf AS (
    SELECT 'tree.no_leaf' AS code, match_id, seq, NULL::BIGINT AS leaf
    FROM events WHERE leaf IS NULL ORDER BY match_id, seq LIMIT 10
), gaps AS (
    SELECT 'tree.leaf_gap' AS code, match_id, seq, leaf, before_match, before_seq
    FROM (SELECT match_id, seq, leaf, lag(leaf) OVER (ORDER BY leaf) AS before,
                 lag(match_id) OVER (ORDER BY leaf) AS before_match, lag(seq) OVER (ORDER BY leaf) AS before_seq
          FROM {leaves})
    WHERE leaf <> coalesce(before::HUGEINT + 1, 0)  -- (a leaf edited to the largest BIGINT has no next)
    ORDER BY leaf LIMIT 10
)
SELECT *, NULL, NULL FROM no_leaf UNION ALL SELECT * FROM gaps
"""

#: Whether a match holds an event at a seq, and the seq its catalogue row ends at.
_HOLDS = """
SELECT (SELECT count(*) FROM events WHERE match_id = $1 AND seq = $2) > 0,
       (SELECT last_seq FROM matches WHERE match_id = $1)
"""


_LATEST_CHECKPOINT = "SELECT size, root, note, epoch_us(signed_at) FROM checkpoints ORDER BY signed_at DESC, size DESC"


class Checks(CatalogueReads):
    """The checks of a `Store` (mixed into it): verify, the tree, its head and checkpoints."""

    def verify(self, matches: UUID | str | Sequence[UUID] | None = None) -> list[Finding]:
        """Check the hash chains of one match, some, or all, and their catalogue heads; [] when all is well.

        The catalogue may lag the events (a writer that stopped before writing its last heads);
        that is not a finding as long as the chain holds the head the catalogue names.

        Raises:
            UnknownMatch: a single match was asked for and there is no such match.
        """
        self.sync()
        params: list[Any] = []
        events_where = matches_where = ""
        if matches is not None:
            ids = [self.resolve(matches)] if isinstance(matches, UUID | str) else list(matches)
            events_where = matches_where = "WHERE match_id IN (SELECT unnest(?::UUID[]))"
            params = [[str(m) for m in ids]] * 2
        rows = self._read().execute(_VERIFY.format(events_where=events_where, matches_where=matches_where), params)
        return chain_findings(rows.fetchall())

    def tree(self) -> TreeReader:
        """A reader of the committed Merkle tree (store/tree.py), for one question: a proof, a root.

        Raises:
            ProofError: the log has no tree yet (a version 1 log opened read-only).
        """
        if not self.has_tree:
            raise ProofError(
                f"{self.path} has no Merkle tree yet (a log of schema version 1): open it once for "
                "writing (any matchlog command its owner runs) to build it",
                code="proof.no_tree",
            )
        return TreeReader(self._read(), annotations=self.has_annotations)

    @property
    def committed(self) -> int:
        """How many events this process has seen committed to the log (the tree's size): it grows
        with every commit, so an answer about the whole log can be kept by it (0 when the log is
        open read-only, which nothing changes while it is open; -1 when its tree is damaged, which
        takes no events)."""
        if self._writer is None:
            return 0
        frontier = self._writer.tree
        return -1 if frontier is None else frontier.size

    def tree_head(self) -> tuple[int, bytes]:
        """The committed tree's size and root.

        Raises:
            ProofError: the log has no tree yet, or its right edge cannot be computed (`proof.broken_tree`).
        """
        if self._writer is not None:
            frontier = self._writer.tree  # replaced whole after each commit: read it once
            if frontier is None:
                raise ProofError(f"{self.path}: {self._writer.damage}", code="proof.broken_tree")
            return frontier.size, frontier.root()
        tree = self.tree()
        size = tree.size()
        return size, tree.frontier(size).root()

    def checkpoint(
        self, sign: Callable[[int, bytes], str], reuse: Callable[[str], bool] = lambda note: True
    ) -> tuple[int, bytes, str, int]:
        """Sign the committed tree's size and root (`sign(size, root)` gives the note) and keep the
        checkpoint in the log; the latest one instead when the tree has not changed since it and
        `reuse(note)` (it is signed by the same key). Returns (size, root, note, signed at in us).

        Raises:
            StoreError: the log is read-only or closed, or damaged where its tree is (`store.damaged`:
                a signature would vouch for a tree that may not be the one the log grew).
        """
        writer = self._write()
        if writer.damage is not None:
            raise StoreError(f"no checkpoint is signed: {writer.damage}", code="store.damaged")

        def work(con: duckdb.DuckDBPyConnection) -> tuple[int, bytes, str, int]:
            frontier = writer.tree  # on the writer's thread: exactly what is committed
            assert frontier is not None  # (a tree that cannot be computed is damage: refused above)
            size, root = frontier.size, frontier.root()
            latest = con.execute(_LATEST_CHECKPOINT + " LIMIT 1").fetchall()
            if latest and latest[0][0] == size and bytes(latest[0][1]) == root and reuse(latest[0][2]):
                return size, root, latest[0][2], latest[0][3]
            note, signed_us = sign(size, root), now_us()
            con.execute(
                "INSERT INTO checkpoints VALUES (?, ?, make_timestamp(?::BIGINT), ?)", [size, root, signed_us, note]
            )
            return size, root, note, signed_us

        return writer.submit_call(work).result()

    def rows(self, match_id: UUID) -> list[tuple[int, str, int, int | None, str, str, int, int | None, str, bytes]]:
        """The stored rows of one match exactly as the chain hashes them, in seq order: (seq, event id,
        time in us, actor, game, type, version, seat, payload, hash). What a proof shows of an event."""
        rows = (
            self._read()
            .execute(
                "SELECT seq, event_id::VARCHAR, epoch_us(recorded_at), actor, game, type, version, seat, payload, hash"
                " FROM events WHERE match_id = ? ORDER BY seq",
                [match_id],
            )
            .fetchall()
        )
        return [(*row[:9], bytes(row[9])) for row in rows]  # type: ignore[misc]

    def tree_leaves(self, batch_rows: int = 200_000) -> Iterator[tuple[list[int], list[str], list[int], list[bytes]]]:
        """Every leaf of the tree in order, in batches of columns: leaf index, match id, seq, and its
        event's chain hash.

        Raises:
            ProofError: the log has no tree yet.
        """
        self.tree()
        return tree_hashes(self._db, batch_rows, annotations=self.has_annotations)

    def tree_nodes(self) -> dict[tuple[int, int], bytes]:
        """The kept complete subtrees: (level, index) -> hash.

        Raises:
            ProofError: the log has no tree yet.
        """
        self.tree()
        rows = self._read().execute("SELECT level, idx, hash FROM tree_nodes").fetchall()
        return {(level, idx): bytes(digest) for level, idx, digest in rows}

    def verify_tree(self) -> list[Finding]:
        """Check that every event has its leaf, and the leaves (events' and annotations') are numbered
        0, 1, 2, ... with no gap or repeat (an entry removed leaves a gap, one copied in a repeat). []
        when all is well (or there is no tree)."""
        if not self.has_tree:
            return []
        self.sync()
        findings = []
        rows = self._read().execute(_VERIFY_TREE.format(leaves=leaves(self.has_annotations))).fetchall()
        for code, match_id, seq, leaf, before_match, before_seq in rows:
            if code == "tree.no_leaf":
                message = "the event has no leaf in the tree: it was added without the log"
                findings.append(Finding(match_id, seq, code, message))
                continue
            gone = self._gone_at_gap((before_match, before_seq), (match_id, seq))
            if gone is None:
                message = f"the tree's leaves jump to {leaf}: an event or annotation was removed, or leaves renumbered"
                findings.append(Finding(match_id, seq, code, message))
            else:
                message = f"the event's leaf is gone (the tree's leaves jump to {leaf}): the event was removed"
                findings.append(Finding(*gone, code, message))
        return findings

    def _gone_at_gap(self, before: tuple[Any, Any], after: tuple[Any, Any]) -> tuple[Any, int] | None:
        """The event a gap in the leaves lost, when its neighbours tell: the next of the match whose
        leaf comes before the gap, or the one before the event whose leaf comes after it (matches
        interleave in the tree, so the leaf after a gap can be another match's, which lost nothing).
        None when neither lost one (an annotation went, or leaves were renumbered)."""
        con = self._read()
        match_id, seq = before
        if match_id is not None:
            held, last = con.execute(_HOLDS, [match_id, seq + 1]).fetchone()
            if not held and last is not None and last > seq:
                return match_id, seq + 1
        match_id, seq = after
        if seq > 0 and not con.execute(_HOLDS, [match_id, seq - 1]).fetchone()[0]:
            return match_id, seq - 1
        return None

    def checkpoints(self, *, limit: int | None = None) -> list[tuple[int, bytes, str, int]]:
        """The checkpoints the log keeps, newest first: (size, root, note, signed at in us).

        Raises:
            ProofError: the log has no tree yet.
        """
        self.tree()
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        rows = self._read().execute(_LATEST_CHECKPOINT + tail).fetchall()
        return [(size, bytes(root), note, at) for size, root, note, at in rows]
