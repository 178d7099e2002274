"""Reading the archive as a log: a `Store` over the Delta table, so that every reader of a log
(statistics, SQL, time travel, replay, audit, verify) reads an archive unchanged.

The table is read through DuckDB over the Arrow dataset the `deltalake` package gives (no DuckDB
extension is needed): the events stay in the table's Parquet files and are read on demand (the
`events` view; reads of one match or a batch of matches filter on the match id as text, which
DuckDB hands down to the dataset, so only the files and row groups that hold them are read),
while the catalogue, `seats` and `figures`, small beside the events, are built in memory once,
from the head rows (`heads`), as the log's own tables with the log's own types and views. The connection is
sandboxed as a log's is: `sql` can read the archive and nothing else.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator, Sequence
from typing import Any
from uuid import UUID

import duckdb

from matchlog.events import DecodeError, Record, StoreError, decode, uuid_from_int
from matchlog.store import Finding, Store, is_interrupt
from matchlog.store.catalogue import ChainWords, chain_findings
from matchlog.store.chain import verify_sql
from matchlog.store.log import _SANDBOX, _memory_limit  # a log's own sandbox and memory limit
from matchlog.store.schema import DDL

from .heads import head_rows
from .table import open_table

#: How the archive's verify names its head rows and chains.
_ARCHIVE_WORDS = ChainWords(
    no_catalogue="events with no head row in the archive",
    no_events="a head row with no events",
    cut="the head row says the match goes on to seq {cat_last}; the archive stops at seq {last_seq}",
    head="the head row's hash for seq {cat_last} ({head}…) is not the chain's",
)

__all__ = ["ArchiveStore"]

#: The log's tables, filled from the archive: the events as a view over the table, the rest from
#: each match's latest head row.
_LOAD = """
DROP TABLE events;
CREATE VIEW events AS
SELECT match_id::UUID AS match_id, seq, event_id::UUID AS event_id,
       make_timestamp(epoch_us(recorded_at)) AS recorded_at, actor, game, type, version, seat, payload, hash, leaf
FROM archived;
CREATE VIEW heads AS SELECT match_id, game, match, seats, figures, sealed FROM head_rows;
INSERT INTO matches
SELECT match_id::UUID, game, match.status, make_timestamp(epoch_us(match.created_at)),
       make_timestamp(epoch_us(match.ended_at)), match.players, match.strategies, match.options, match.last_seq,
       match.head_hash, match.ended_seq, match.result, match.winners, match.origin_match::UUID, match.origin_seq,
       match.series_id, match.series_game
FROM heads;
INSERT INTO seats
SELECT match_id::UUID, s.seat, s.name, s.player, s.place, s.score, s.winner, s.removed
FROM (SELECT match_id, unnest(seats) AS s FROM heads);
INSERT INTO figures
SELECT match_id::UUID, f.seat, f.figure, f.value FROM (SELECT match_id, unnest(figures) AS f FROM heads);
INSERT INTO projected SELECT match_id::UUID, match.last_seq, sealed.figures_version FROM heads;
DROP VIEW heads;
"""

_COLUMNS = "seq, event_id, epoch_us(recorded_at), actor, type, version, payload, hash"

#: `Store.verify`'s checks over the archive's rows (its match ids are text).
_VERIFY = verify_sql("archived", heads_in="chained", catalogue_id="match_id::VARCHAR")


class _Connection:
    """A DuckDB connection whose every cursor sees the archive's dataset as `archived` (DuckDB
    keeps a registered Arrow object per connection, and the store takes a cursor per thread and
    per streaming query)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, dataset: Any) -> None:
        self._connection = connection
        self._dataset = dataset

    def cursor(self) -> duckdb.DuckDBPyConnection:
        cursor = self._connection.cursor()
        cursor.register("archived", self._dataset)
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


class ArchiveStore(Store):
    """The archive at `path` as a read-only `Store` (see the module docstring).

    Raises:
        UsageError: deltalake is not installed.
        StoreError: no archive there (`archive.missing`), or not one of matchlog's.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path, read_only=True)

    def _open(self) -> None:
        import pyarrow as pa

        self.table = open_table(self.path)
        dataset = self.table.to_pyarrow_dataset()
        # The head rows: saved beside the table, and read by Arrow from the files added since.
        try:
            heads, _ = head_rows(self.path, self.table, dataset)
            self._heads = heads
        except (OSError, pa.ArrowException) as error:
            raise StoreError(f"cannot read the archive at {self.path}: {error}", code="archive.unreadable") from None
        connection = duckdb.connect(
            ":memory:",
            config={**_SANDBOX, "memory_limit": _memory_limit()},
        )
        try:
            # No progress bar on a long scan (a setting of the session: cursors inherit it), then the
            # configuration is locked, as a log's is.
            connection.execute("SET enable_progress_bar = false; SET lock_configuration = true")
            connection.register("archived", dataset)
            connection.register("head_rows", heads)
            connection.execute(DDL)
            connection.execute(_LOAD)
            connection.unregister("head_rows")
            # Where each match's rows are: its partition, so that reading it opens one file or two.
            self._places = {
                _uuid(match_id): (game, month)
                for match_id, game, month in zip(
                    *(heads.column(name).to_pylist() for name in ("match_id", "game", "month")), strict=True
                )
            }
        except duckdb.Error as error:
            connection.close()
            raise StoreError(f"cannot read the archive at {self.path}: {error}", code="archive.unreadable") from None
        self._db = _Connection(connection, dataset)  # type: ignore[assignment]
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        self._games: dict[UUID, str] = {}
        self._writer = None
        self._digests = False  # an archive keeps no snapshot cache
        self.has_tree = False  # nor a Merkle tree: its matches were sealed from logs that have one
        self._closed = False
        atexit.register(self.close)

    @property
    def version(self) -> int:
        """The version of the Delta table this store reads (it reads that version throughout)."""
        return int(self.table.version())

    # -- the events, read by match id as text (so the dataset is filtered, not scanned) --------

    def read(self, match_id: UUID | str, *, start: int = 0, stop: int | None = None) -> list[Record]:
        resolved = match_id if isinstance(match_id, UUID) else self.resolve(match_id)
        rows = self._fetch(
            f"SELECT {_COLUMNS} FROM archived WHERE {self._one(resolved)} AND seq >= ? AND seq <= ? ORDER BY seq",
            [start, stop if stop is not None else 2**62],
        )
        if not rows:
            self.resolve(resolved)  # raises UnknownMatch when there is no such match
        return [_record(resolved, row) for row in rows]

    def read_events(self, match_id: UUID, *, start: int = 0, stop: int | None = None) -> list[tuple[int, Any]]:
        rows = self._fetch(
            f"SELECT seq, type, version, payload FROM archived WHERE {self._one(match_id)} AND seq >= ?"
            " AND seq <= ? ORDER BY seq",
            [start, stop if stop is not None else 2**62],
        )
        try:
            return [(seq, decode(payload, tag=tag, version=version)) for seq, tag, version, payload in rows]
        except DecodeError as error:
            raise DecodeError(f"match {match_id}: {error.message}") from None

    def records(self, match_ids: Sequence[UUID] | None = None, *, batch_rows: int = 100_000) -> Iterator[Record]:
        query = f"SELECT match_id, {_COLUMNS} FROM archived {self._where(match_ids)} ORDER BY match_id, seq"
        match_text, match_id = "", None
        for columns in self._stream(query, [], batch_rows):
            for row in zip(*columns.values(), strict=True):
                if row[0] != match_text:
                    match_text, match_id = row[0], _uuid(row[0])
                yield _record(match_id, row[1:])  # type: ignore[arg-type]

    def event_columns(
        self, match_ids: Sequence[UUID] | None = None, *, batch_rows: int = 100_000
    ) -> Iterator[tuple[list[str], list[int], list[str], list[int], list[str]]]:
        where = self._where(match_ids)
        query = f"SELECT match_id AS m, seq, type, version, payload FROM archived {where} ORDER BY m, seq"
        for columns in self._stream(query, [], batch_rows):
            yield columns["m"], columns["seq"], columns["type"], columns["version"], columns["payload"]

    def _check_saved_heads(self) -> list[Finding]:
        """The head rows this store read (partly saved beside the table) against the same read from
        every data file: a match whose saved head row differs, or is missing or extra, is a finding.

        Raises:
            StoreError: a file of the table cannot be read (`archive.unreadable`).
        """
        import pyarrow as pa

        try:
            fresh, _ = head_rows(self.path, self.table, self.table.to_pyarrow_dataset(), saved=False)
        except (OSError, pa.ArrowException) as error:
            raise StoreError(f"cannot read the archive at {self.path}: {error}", code="archive.unreadable") from None
        read = {row["match_id"]: row for row in self._heads.to_pylist()}
        found = {row["match_id"]: row for row in fresh.to_pylist()}
        return [
            Finding(
                _uuid(match_id),
                None,
                "archive.saved_heads",
                "the head row saved in _matchlog/ is not the table's (delete _matchlog/: it is a cache)",
            )
            for match_id in sorted(read.keys() | found.keys())
            if read.get(match_id) != found.get(match_id)
        ]

    def _fetch(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A query's rows; the table's files unreadable is a StoreError.

        Raises:
            StoreError: a file of the table cannot be read (`archive.unreadable`).
        """
        try:
            return self._read().execute(query, list(params)).fetchall()
        except duckdb.Error as error:
            raise self._unreadable(error) from None

    def _stream(self, query: str, params: list[Any], batch_rows: int) -> Iterator[dict[str, list[Any]]]:
        try:
            yield from super()._stream(query, params, batch_rows)
        except duckdb.Error as error:
            raise self._unreadable(error) from None

    def _unreadable(self, error: duckdb.Error) -> BaseException:
        if is_interrupt(error):
            return KeyboardInterrupt()
        text = str(error).strip().splitlines()
        return StoreError(
            f"cannot read the archive at {self.path}: {text[0] if text else error}", code="archive.unreadable"
        )

    def events_frame_rows(self, match_ids: Sequence[UUID] | None) -> Any:
        """`frames.events_frame`'s rows (ids and hashes as text) for some matches or all, read by
        match id as text.

        Raises:
            StoreError: a file of the table cannot be read (`archive.unreadable`).
        """
        try:
            return self._frame_rows(match_ids)
        except duckdb.Error as error:
            raise self._unreadable(error) from None

    def _frame_rows(self, match_ids: Sequence[UUID] | None) -> Any:
        return (
            self._read()
            .sql(
                "SELECT match_id, seq, event_id, make_timestamp(epoch_us(recorded_at)) AS recorded_at, actor, game,"
                f" type, version, seat, payload, lower(hex(hash)) AS hash, leaf FROM archived {self._where(match_ids)}"
                " ORDER BY match_id, seq"
            )
            .to_arrow_table()
        )

    def verify(self, matches: UUID | str | Sequence[UUID] | None = None) -> list[Finding]:
        """Every archived chain re-hashed (the chain of store/chain.py), and each catalogue head
        checked against it; [] when all is well.

        Raises:
            UnknownMatch: a single match was asked for and there is no such match.
        """
        if matches is None:
            ids = None
        elif isinstance(matches, UUID | str):
            ids = [self.resolve(matches)]
        else:
            ids = list(matches)
        rows = self._fetch(_VERIFY.format(events_where=self._where(ids), matches_where=_where(ids)))
        findings = [] if ids is not None else self._check_saved_heads()
        return findings + chain_findings(((_uuid(row[0]), *row[1:]) for row in rows), _ARCHIVE_WORDS)

    def _one(self, match_id: UUID) -> str:
        """The filter on one match's rows: its partition (game and month) and its id."""
        game, month = self._places.get(match_id, (None, None))
        if game is None:
            return f"match_id = '{match_id}'"
        return f"game = '{game}' AND month = '{month}' AND match_id = '{match_id}'"

    def _where(self, match_ids: Sequence[UUID] | None) -> str:
        """`_where`, with the partitions (games and months) the matches are in."""
        where = _where(match_ids)
        if not match_ids:
            return where
        places = {self._places.get(m) for m in match_ids}
        if None in places:
            return where
        games = ", ".join(sorted({f"'{game}'" for game, _ in places}))  # type: ignore[misc]
        months = ", ".join(sorted({f"'{month}'" for _, month in places}))  # type: ignore[misc]
        return f"{where} AND game IN ({games}) AND month IN ({months})"


def _where(match_ids: Sequence[UUID] | None) -> str:
    """A filter on `match_id` as text (ids are UUIDs, so they are safe to write into the query);
    the range first, which DuckDB hands down to the dataset to skip files and row groups."""
    if match_ids is None:
        return ""
    if not match_ids:
        return "WHERE false"
    texts = sorted(str(m) for m in match_ids)
    listed = ", ".join(f"'{text}'" for text in texts)
    return f"WHERE match_id BETWEEN '{texts[0]}' AND '{texts[-1]}' AND match_id IN ({listed})"


def _record(match_id: UUID, row: Sequence[Any]) -> Record:
    seq, event_id, at_us, actor, type_, version, payload, digest = row
    try:
        event = decode(payload, tag=type_, version=version)
    except DecodeError as error:
        raise DecodeError(f"match {match_id} seq {seq}: {error.message}") from None
    return Record(
        match_id=match_id,
        seq=seq,
        event_id=_uuid(event_id),
        at_us=at_us,
        actor=actor,
        version=version,
        event=event,
        hash=bytes(digest),
    )


def _uuid(text: str) -> UUID:
    return uuid_from_int(int(text.replace("-", ""), 16))
