"""The snapshot cache of a log: states folded to a seq, each with a digest tying it to the chain
head it was folded to (store/chain.py), so a state the log no longer vouches for is dropped, never
returned. It is only a cache: losing it costs a fold."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import duckdb

from .chain import snapshot_digest
from .handle import LogHandle

__all__ = ["SnapshotCache"]


class SnapshotCache(LogHandle):
    """The snapshot cache of a `Store` (mixed into it)."""

    def snapshot(self, match_id: UUID, upto: int, engine: str) -> tuple[int, bytes] | None:
        """The latest cached state of `match_id` at a seq <= `upto`, for the engine key given, whose
        digest matches the log as it is now; one that does not is dropped, never returned."""
        if not self._digests:
            return None
        while upto >= 0:  # the nearest first; only a bad one (dropped) sends it further back
            row = (
                self._read()
                .execute(
                    "SELECT s.seq, s.state, s.digest, e.hash FROM snapshots s"
                    " LEFT JOIN events e ON e.match_id = s.match_id AND e.seq = s.seq"
                    " WHERE s.match_id = ? AND s.seq <= ? AND s.engine = ? ORDER BY s.seq DESC LIMIT 1",
                    [match_id, upto, engine],
                )
                .fetchone()
            )
            if row is None:
                return None
            seq, state, digest, head = row
            if head is not None and snapshot_digest(bytes(head), engine, bytes(state)) == bytes(digest):
                return seq, bytes(state)
            self.drop_snapshot(match_id, seq, engine)
            upto = seq - 1
        return None

    def snapshot_keys(self) -> list[tuple[UUID, int, str]]:
        """Every cached state's (match id, seq, engine key)."""
        if not self._digests:
            return []
        return [tuple(row) for row in self._read().execute("SELECT match_id, seq, engine FROM snapshots").fetchall()]  # type: ignore[misc]

    def snapshot_at(self, match_id: UUID, seq: int, engine: str) -> tuple[bytes, bool] | None:
        """The cached state at exactly `seq`, and whether its digest matches the log (not dropped)."""
        rows = (
            self._read()
            .execute(
                "SELECT s.state, s.digest, e.hash FROM snapshots s"
                " LEFT JOIN events e ON e.match_id = s.match_id AND e.seq = s.seq"
                " WHERE s.match_id = ? AND s.seq = ? AND s.engine = ?",
                [match_id, seq, engine],
            )
            .fetchall()
        )
        if not rows:
            return None
        state, digest, head = rows[0]
        matches = head is not None and snapshot_digest(bytes(head), engine, bytes(state)) == bytes(digest)
        return bytes(state), matches

    def drop_snapshot(self, match_id: UUID, seq: int, engine: str) -> None:
        """Drop one cached state (a read-only log keeps its cache as it is)."""
        if self._writer is None:
            return
        self._writer.submit_call(
            lambda con: con.execute(
                "DELETE FROM snapshots WHERE match_id = ? AND seq = ? AND engine = ?", [match_id, seq, engine]
            )
        ).result()

    def put_snapshot(self, match_id: UUID, seq: int, engine: str, state: bytes, *, wait: bool = True) -> None:
        """Cache a state folded to `seq`, with its digest (a read-only log silently keeps no cache);
        without `wait`, return once it is queued (a reader need not wait for a cache, and a lost
        entry costs only a fold)."""
        if self._writer is None:
            return
        found = self._read().execute("SELECT hash FROM events WHERE match_id = ? AND seq = ?", [match_id, seq])
        heads = found.fetchall()
        if len(heads) != 1:
            return  # no single event there to tie it to
        digest = snapshot_digest(bytes(heads[0][0]), engine, state)
        done = self._writer.submit_call(
            lambda con: con.execute(
                "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?, ?)", [match_id, seq, engine, state, digest]
            )
        )
        if wait:
            done.result()

    def put_snapshots(self, match_id: UUID, engine: str, states: Sequence[tuple[int, bytes]]) -> None:
        """Cache several states of one match folded to their seqs, as `put_snapshot` without `wait`
        does one, with one read of their heads and one transaction for all (a long fold caches
        hundreds: one commit each kept the writer busy long after the fold had returned)."""
        if self._writer is None or not states:
            return
        heads = dict(
            self._read()
            .execute(
                "SELECT seq, hash FROM events WHERE match_id = ? AND seq BETWEEN ? AND ? AND list_contains(?, seq)",
                [match_id, min(s for s, _ in states), max(s for s, _ in states), [s for s, _ in states]],
            )
            .fetchall()
        )
        kept = [(seq, state) for seq, state in states if seq in heads]
        if not kept:
            return
        import pyarrow as pa

        table = pa.table(  # one insert of all (executemany runs a statement a row)
            {
                "match_id": pa.array([str(match_id)] * len(kept)),
                "seq": pa.array([seq for seq, _ in kept], pa.int64()),
                "engine": pa.array([engine] * len(kept)),
                "state": pa.array([state for _, state in kept], pa.binary()),
                "digest": pa.array(
                    [snapshot_digest(bytes(heads[seq]), engine, state) for seq, state in kept], pa.binary()
                ),
            }
        )

        def insert(con: duckdb.DuckDBPyConnection) -> None:
            con.register("new_snapshots", table)
            try:
                con.execute(
                    "INSERT OR REPLACE INTO snapshots"
                    " SELECT match_id::UUID, seq, engine, state, digest FROM new_snapshots"
                )
            finally:
                con.unregister("new_snapshots")

        self._writer.submit_call(insert)

    def drop_snapshots(self) -> int:
        """Empty the snapshot cache; returns how many states it held."""
        return self._write().submit_call(lambda con: con.execute("DELETE FROM snapshots").fetchall()[0][0]).result()
