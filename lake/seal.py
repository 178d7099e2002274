"""`matchlog archive --to PATH`: seal a log's ended matches into the archive's Delta table.

The log is only read, through what `Source` names of it (`matchlog.Log`, a file or the service that
owns it, is one; the archive does not know the Python API that serves it back): its chains are
verified first, and a match whose chain does not verify is refused, not archived. The
matches go in batches, each one Delta commit: a batch is in the table whole or not at all, so a
kill at any moment leaves the table as it was after its last commit (files of a batch that was
never committed are not part of the table; `DeltaTable.vacuum` removes them) and the log as it
was. Each commit records, per match, the last seq it archived as a Delta application transaction
(see `table`); a run skips what the table already holds, so archiving again archives only what is
new, and a match that went on after it was archived (an undo of its end, then more play) has its
new events added after the ones archived.

Several logs may archive into one table at the same moment, from one machine or many: Delta's
commit protocol orders the commits (each is the atomic creation of the next entry of the table's
log); commits of different matches never conflict, and a commit that races another commit of the
same match is refused by Delta, after which the batch is read again without what the other
process archived, and retried. No lock of ours is involved.
"""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from matchlog.engines.figures import FIGURES_VERSION
from matchlog.events import StoreError, now_us
from matchlog.replay.projections import figures_of
from matchlog.store import Finding, MatchInfo

from .heads import head_rows, save_heads
from .table import FIGURE, MATCH, PARTITIONS, ROWS, SEALED, SEAT, app_id, archived_heads, deltalake, open_table

__all__ = ["Sealed", "Source", "archive_log", "covering_checkpoints"]


class Source(Protocol):
    """What archiving reads of a log (`matchlog.Log` is one, a file or the server that owns it)."""

    location: str

    def matches(self) -> Iterable[MatchInfo]: ...
    def verify(self, matches: Sequence[UUID]) -> Any: ...
    def events_frame(self, *, matches: Sequence[UUID]) -> pa.Table: ...
    def read(self, match: UUID, *, start: int = 0, stop: int | None = None) -> Sequence[Any]: ...
    def sql(self, query: str, *, max_rows: int | None = None) -> Any: ...


#: Events a batch holds (about; whole matches); matches whose figures are asked at once (a server
#: answers SQL with at most 100,000 rows).
BATCH_EVENTS = 250_000
_ASK_FIGURES = 2_000
#: Commits of one batch that Delta may refuse (another process archived some of its matches)
#: before the run gives up.
_ATTEMPTS = 8
_EPOCH_US = datetime(1970, 1, 1)


class Sealed(msgspec.Struct, frozen=True):
    """What one archiving run did."""

    archive: str
    matches: int  # matches archived now (whole, or the events they gained since)
    events: int  # events archived now
    already: int  # ended matches the archive already held up to their last seq
    refused: tuple[Finding, ...]  # matches not archived: their chain does not verify, or disagrees
    commits: int
    retries: int  # commits Delta refused because another process archived the same matches meanwhile
    seconds: float

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def covering_checkpoints(log: Source, infos: Sequence[MatchInfo]) -> dict[UUID, str]:
    """The signed checkpoint covering each match's head, as signed-note text (`sealed.checkpoint`).

    The hook for the proofs (a Merkle tree over the log and signed checkpoints): once a log keeps
    checkpoints, this returns, for each match, the latest checkpoint whose tree includes the
    match's head, and the archive stores it beside the match. Until then there is none to store.
    """
    return {}


def archive_log(
    log: Source,
    to: str,
    *,
    before: datetime | None = None,
    batch_events: int = BATCH_EVENTS,
    source: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Sealed:
    """Seal every ended match of `log` (that ended before `before`, naive UTC, if given) into the
    archive at `to`, creating it if need be; `on_progress(events done, events to do)`.

    Raises:
        UsageError: deltalake is not installed.
        StoreError: `to` holds something that is not a matchlog archive (`archive.not_matchlog`), or
            the table cannot be written (`archive.write`); what was committed before stays.
    """
    began = time.monotonic()
    limit = None if before is None else int((before - _EPOCH_US).total_seconds() * 1_000_000)
    ended = sorted(
        (
            info
            for info in log.matches()
            if info.status != "running" and (limit is None or (info.ended_us is not None and info.ended_us < limit))
        ),
        key=lambda info: info.match_id,
    )
    table = open_table(to, create=True)
    heads = _archived(to, table)
    done = {info.match_id: heads.get(info.match_id, -1) for info in ended}
    todo = [info for info in ended if done[info.match_id] < info.last_seq]
    source = source or f"{socket.gethostname()}:{log.location}"
    total = sum(info.last_seq - done[info.match_id] for info in todo)
    events = commits = retries = 0
    mine: set[UUID] = set()
    refused: list[Finding] = []
    for planned in _batches(todo, done, batch_events):
        for attempt in range(_ATTEMPTS):
            # The snapshot the commit is checked against: what it holds of these matches is not
            # written again, and Delta refuses the commit if another one archives any of them
            # after this snapshot (the same application transaction ids).
            table = _latest(table) if table is not None else _create(to)
            heads = archived_heads(table, [info.match_id for info in planned])
            for info in planned:
                done[info.match_id] = heads.get(info.match_id, -1)
            batch = [info for info in planned if done[info.match_id] < info.last_seq]
            rows, sealed, found = _rows(log, to, table, batch, done, source)
            if not sealed:
                refused += found
                break
            try:
                _commit(to, table, rows, sealed)
            except _Raced:
                retries += 1
                time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))  # let the other commit land
                continue
            refused += found
            commits += 1
            events += rows.num_rows
            for info in sealed:
                done[info.match_id] = info.last_seq
                mine.add(info.match_id)
            break
        else:
            raise StoreError(
                f"the archive at {to}: {_ATTEMPTS} commits in a row were refused because other processes archived "
                "the same matches; nothing of this batch was written, the batches before it were",
                code="archive.conflict",
            )
        if on_progress is not None:
            on_progress(events, total)
    if commits or table is not None:
        _save_heads(to)
    already = sum(1 for info in ended if info.match_id not in mine and done[info.match_id] >= info.last_seq)
    matches = len(mine)
    return Sealed(str(to), matches, events, already, tuple(refused), commits, retries, time.monotonic() - began)


def _batches(todo: list[MatchInfo], done: dict[UUID, int], batch_events: int) -> list[list[MatchInfo]]:
    """Whole matches in match id order, about `batch_events` events a batch."""
    batches: list[list[MatchInfo]] = [[]]
    size = 0
    for info in todo:
        if batches[-1] and size >= batch_events:
            batches.append([])
            size = 0
        batches[-1].append(info)
        size += info.last_seq - done[info.match_id]
    return [batch for batch in batches if batch]


class _Raced(Exception):
    """Delta refused the commit: another process committed some of the same matches meanwhile."""


def _rows(
    log: Source, to: str, table: Any, batch: list[MatchInfo], done: dict[UUID, int], source: str
) -> tuple[pa.Table, list[MatchInfo], list[Finding]]:
    """The rows that archive a batch, the matches they seal, and the matches refused."""
    ids = [info.match_id for info in batch]
    findings = list(log.verify(ids).findings) if ids else []
    bad = {finding.match_id for finding in findings}
    for info in batch:
        archived = done[info.match_id]
        if archived >= 0 and info.match_id not in bad and not _continues(log, to, table, info, archived):
            message = (
                f"the log's seq {archived} is not the one the archive holds: the match changed after it was archived"
            )
            findings.append(Finding(info.match_id, archived, "archive.diverged", message))
            bad.add(info.match_id)
    sealed = [info for info in batch if info.match_id not in bad]
    if not sealed:
        return pa.table({}), [], findings
    frame = log.events_frame(matches=[info.match_id for info in sealed])
    figures = _figures(log, sealed)
    checkpoints = covering_checkpoints(log, sealed)
    return _assemble(frame, sealed, done, figures, checkpoints, source), sealed, findings


def _continues(log: Source, to: str, table: Any, info: MatchInfo, archived: int) -> bool:
    """Whether the log's event at seq `archived` is the one the archive holds there (so the match
    only went on since it was archived)."""
    import duckdb

    rows = (
        duckdb.connect()
        .from_arrow(table.to_pyarrow_dataset())
        .filter(f"match_id = '{info.match_id}' AND seq = {archived}")
        .select("hash")
        .fetchall()
    )
    in_log = log.read(info.match_id, start=archived, stop=archived)
    return bool(rows) and bool(in_log) and bytes(rows[0][0]) == in_log[0].hash


def _figures(log: Source, infos: list[MatchInfo]) -> dict[UUID, list[tuple[int | None, str, float]]]:
    """Each match's figures: the log's projection where it is current, else worked out from its
    events here (the log itself is not changed)."""
    found: dict[str, list[tuple[int | None, str, float]]] = {str(info.match_id): [] for info in infos}
    heads = {str(info.match_id): info.last_seq for info in infos}
    current: set[str] = set()
    for start in range(0, len(infos), _ASK_FIGURES):
        listed = ", ".join(f"'{info.match_id}'" for info in infos[start : start + _ASK_FIGURES])
        projected = log.sql(
            f"SELECT match_id::VARCHAR, last_seq, version FROM projected WHERE match_id IN ({listed})", max_rows=100_000
        )
        rows = log.sql(
            f"SELECT match_id::VARCHAR, seat, figure, value FROM figures WHERE match_id IN ({listed})"
            " ORDER BY match_id, seat NULLS FIRST, figure",
            max_rows=100_000,
        )
        if rows.truncated or projected.truncated:
            continue  # more rows than a query returns: these matches' figures are worked out below
        current |= {
            match_id
            for match_id, last_seq, version in projected.rows
            if version == FIGURES_VERSION and last_seq == heads[match_id]
        }
        for match_id, seat, figure, value in rows.rows:
            found[match_id].append((seat, figure, float(value)))
    figures = {}
    for info in infos:
        key = str(info.match_id)
        if key in current:
            figures[info.match_id] = found[key]
        else:
            figures[info.match_id] = [tuple(row) for row in figures_of(log.read(info.match_id))]  # type: ignore[misc]
    return figures


def _assemble(
    frame: pa.Table,
    infos: list[MatchInfo],
    done: dict[UUID, int],
    figures: dict[UUID, list[tuple[int | None, str, float]]],
    checkpoints: dict[UUID, str],
    source: str,
) -> pa.Table:
    """The archive's rows for a batch: its events after what is archived, up to each match's
    head, the head row carrying the match's catalogue row, seats, figures and seal."""
    ids = pa.array([str(info.match_id) for info in infos], pa.string())
    index = pc.index_in(frame.column("match_id"), value_set=ids)
    seq = frame.column("seq")
    low = pa.array([done[info.match_id] for info in infos], pa.int64()).take(index)
    high = pa.array([info.last_seq for info in infos], pa.int64()).take(index)
    keep = pc.and_(pc.greater(seq, low), pc.less_equal(seq, high))
    frame, index, seq, high = frame.filter(keep), index.filter(keep), seq.filter(keep), high.filter(keep)
    head = pc.if_else(pc.equal(seq, high), index, pa.nulls(len(index), pa.int32()))
    at = now_us()
    months = pa.array([_month(info.created_us) for info in infos], pa.string())
    catalogue = pa.array([_match(info) for info in infos], MATCH)
    seats = pa.array([[_seat(row) for row in info.seat_rows()] for info in infos], pa.list_(SEAT))
    counted = pa.array(
        [
            [{"seat": seat, "figure": figure, "value": value} for seat, figure, value in figures[info.match_id]]
            for info in infos
        ],
        pa.list_(FIGURE),
    )
    seal = pa.array(
        [
            {
                "at": at,
                "source": source,
                "figures_version": FIGURES_VERSION,
                "checkpoint": checkpoints.get(info.match_id),
            }
            for info in infos
        ],
        SEALED,
    )
    columns = {
        "game": frame.column("game"),
        "month": months.take(index),
        "match_id": frame.column("match_id"),
        "seq": seq,
        "event_id": frame.column("event_id"),
        "recorded_at": frame.column("recorded_at").cast(pa.timestamp("us", tz="UTC")),
        "actor": frame.column("actor").cast(pa.int16()),
        "type": frame.column("type"),
        "version": frame.column("version").cast(pa.int16()),
        "seat": frame.column("seat").cast(pa.int16()),
        "payload": frame.column("payload"),
        "hash": pa.array([bytes.fromhex(text) for text in frame.column("hash").to_pylist()], pa.binary()),
        "leaf": frame.column("leaf").cast(pa.int64()),
        "match": catalogue.take(head),
        "seats": seats.take(head),
        "figures": counted.take(head),
        "sealed": seal.take(head),
    }
    return pa.table(columns, schema=ROWS)


def _month(at_us: int) -> str:
    return time.strftime("%Y-%m", time.gmtime(at_us / 1_000_000))


def _seat(row: Any) -> dict[str, Any]:
    """A seat of the `seats` projection as the archive's `seats` column holds it."""
    return {name: getattr(row, name) for name in ("seat", "name", "player", "place", "score", "winner", "removed")}


def _match(info: MatchInfo) -> dict[str, Any]:
    """A match's catalogue row as the archive's `match` column holds it."""
    outcome = info.outcome
    return {
        "status": info.status,
        "created_at": info.created_us,
        "ended_at": info.ended_us,
        "players": list(info.players),
        "strategies": list(info.strategies),
        "options": info.options,
        "last_seq": info.last_seq,
        "head_hash": info.head_hash,
        "ended_seq": info.ended_seq,
        "result": msgspec.json.encode(outcome).decode() if outcome is not None else None,
        "winners": list(outcome.winners) if outcome is not None else None,
        "origin_match": str(info.origin_match) if info.origin_match is not None else None,
        "origin_seq": info.origin_seq,
        "series_id": info.series_id,
        "series_game": info.series_game,
    }


def _archived(to: str, table: Any) -> dict[UUID, int]:
    """The last seq each match is archived up to (the saved head rows, and the files added since)."""
    if table is None:
        return {}
    rows, _ = head_rows(to, table, table.to_pyarrow_dataset())
    lasts = pc.struct_field(rows.column("match"), "last_seq").to_pylist()
    return {UUID(match_id): last for match_id, last in zip(rows.column("match_id").to_pylist(), lasts, strict=True)}


def _save_heads(to: str) -> None:
    """Save the head rows as of the table's latest version, for readers (a cache: see `heads`)."""
    table = open_table(to)
    heads, files = head_rows(to, table, table.to_pyarrow_dataset())
    save_heads(to, table.version(), heads, files)


def _latest(table: Any) -> Any:
    """The table as of its latest commit."""
    table.update_incremental()
    return table


def _commit(to: str, table: Any, rows: pa.Table, sealed: list[MatchInfo]) -> None:
    """Append `rows` to the table (as of the snapshot `table`) in one commit that records each
    sealed match's last seq.

    Raises:
        _Raced: Delta refused the commit (a commit after the snapshot archived some of these matches).
        StoreError: the table cannot be written (`archive.write`).
    """
    delta = deltalake()
    properties = delta.CommitProperties(
        app_transactions=[delta.Transaction(app_id(info.match_id), info.last_seq) for info in sealed],
        custom_metadata={"matchlog.operation": "archive", "matchlog.matches": str(len(sealed))},
    )
    try:
        delta.write_deltalake(
            table,
            rows,
            mode="append",
            partition_by=PARTITIONS,
            writer_properties=delta.WriterProperties(compression="ZSTD", max_row_group_size=64 * 1024),
            commit_properties=properties,
        )
    except delta.exceptions.CommitFailedError as error:
        raise _Raced(str(error)) from None
    except (delta.exceptions.DeltaError, OSError) as error:
        raise StoreError(f"cannot write the archive at {to}: {error}", code="archive.write") from None


def _create(to: str) -> Any:
    """The table at `to`, made empty if there is none.

    It is made empty, never with a batch in it: Delta checks a commit against the commits made
    since its snapshot, and the commit that makes a table has no snapshot, so two processes making
    the table at once could both commit their first batch (as versions 0 and 1) with nothing
    refused. Made empty, every batch is an append checked like any other; two empty creations
    racing are harmless.

    Raises:
        StoreError: as `open_table`, or the table cannot be made (`archive.write`).
    """
    delta = deltalake()
    try:
        delta.DeltaTable.create(
            str(to),
            ROWS,
            mode="ignore",
            partition_by=PARTITIONS,
            # Nothing of an archive is ever rewritten: Delta itself refuses deletes and updates.
            configuration={"delta.appendOnly": "true"},
        )
    except delta.exceptions.DeltaError as error:
        if "exist" not in str(error).lower():  # (one made meanwhile is another process's)
            raise StoreError(f"cannot make the archive at {to}: {error}", code="archive.write") from None
    except OSError as error:
        raise StoreError(f"cannot make the archive at {to}: {error}", code="archive.write") from None
    return open_table(to)
