"""The archive's one Delta Lake table: what a row holds, how it is partitioned, and how a match's
place in it is kept.

One row per event, with the log's own columns (`events`), partitioned by `game` and `month` (the
UTC month the match started: all of a match's events sit in one partition). The row of a match's
last archived event also carries what the log keeps beside the events, so that the archive alone
answers every question the log does:

    match     the catalogue row (`matches`: status, times, players, strategies, options, last_seq,
              head_hash, result, winners, fork origin, series)
    seats     the `seats` projection of the match (name, strategy, place, score, winner, removed)
    figures   the `figures` projection (seat, figure, value), as `matchlog stats` reads them
    sealed    when and from which log it was archived, the figures' version, and the checkpoint
              that covers the match (the proofs' signed note; null until a log keeps checkpoints)

On every other row these four are null, so how far each match is archived is read from its
head rows (`archived_heads`). Every commit also carries one Delta application transaction per match
it archives (`txn`: app id `matchlog:MATCH_ID`, version = the match's last archived seq), which is
what makes archiving safe from several logs at once: Delta refuses a commit that races another
commit of the same match, whichever process or machine made it. (Those transactions guard the
race; they are not read to find what is archived, since Delta gives them out one by one.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import pyarrow as pa

from matchlog.events import StoreError, UsageError
from matchlog.store.schema import FIGURE_ROWS, MATCH_ROWS, SEAT_ROWS

__all__ = [
    "FIGURE",
    "MATCH",
    "PARTITIONS",
    "ROWS",
    "SEALED",
    "SEAT",
    "app_id",
    "archived_heads",
    "archived_seq",
    "deltalake",
    "is_archive",
    "open_table",
]

_UTC = pa.timestamp("us", tz="UTC")


def _catalogue(rows: pa.Schema) -> pa.StructType:
    """A catalogue table's row (`store.schema`) as the archive keeps it beside each match: without
    the match's id and game (the row's own columns), its times in UTC."""
    return pa.struct(
        [
            field.with_type(_UTC) if pa.types.is_timestamp(field.type) else field
            for field in rows
            if field.name not in ("match_id", "game")
        ]
    )


# The catalogue's rows of a match, as the log keeps them: one column set, written once (store.schema).
MATCH = _catalogue(MATCH_ROWS)
SEAT = _catalogue(SEAT_ROWS)
FIGURE = _catalogue(FIGURE_ROWS)
SEALED = pa.struct(
    [
        ("at", _UTC),
        ("source", pa.string()),
        ("figures_version", pa.int32()),
        ("checkpoint", pa.string()),
    ]
)

ROWS = pa.schema(
    [
        ("game", pa.string()),
        ("month", pa.string()),
        ("match_id", pa.string()),
        ("seq", pa.int64()),
        ("event_id", pa.string()),
        ("recorded_at", _UTC),
        ("actor", pa.int16()),
        ("type", pa.string()),
        ("version", pa.int16()),
        ("seat", pa.int16()),
        ("payload", pa.string()),
        ("hash", pa.binary()),
        ("leaf", pa.int64()),  # the event's leaf in the Merkle tree of the log it was sealed from
        ("match", MATCH),
        ("seats", pa.list_(SEAT)),
        ("figures", pa.list_(FIGURE)),
        ("sealed", SEALED),
    ]
)
PARTITIONS = ["game", "month"]


def deltalake() -> Any:
    """The `deltalake` package.

    Raises:
        UsageError: it is not installed (`usage.archive`).
    """
    try:
        import deltalake
    except ImportError:
        raise UsageError(
            "the archive needs the deltalake package: pip install 'matchlog[archive]'", code="usage.archive"
        ) from None
    return deltalake


def app_id(match_id: UUID | str) -> str:
    """The Delta application id under which a match's archiving is recorded."""
    return f"matchlog:{match_id}"


def archived_heads(table: Any, match_ids: Sequence[UUID] | None = None) -> dict[UUID, int]:
    """The last seq each match (of `match_ids`, or every match) is archived up to, as of `table`'s
    version, from the head rows (the range of the ids is handed to the dataset, so only the files
    that can hold them are read)."""
    if table is None or (match_ids is not None and not match_ids):
        return {}
    import duckdb

    where = ""
    if match_ids is not None:
        texts = sorted(str(m) for m in match_ids)
        listed = ", ".join(f"'{text}'" for text in texts)
        where = f"AND match_id BETWEEN '{texts[0]}' AND '{texts[-1]}' AND match_id IN ({listed})"
    connection = duckdb.connect()
    try:
        connection.register("archived", table.to_pyarrow_dataset())
        rows = connection.execute(
            f"SELECT match_id, max(match.last_seq) FROM archived WHERE match IS NOT NULL {where} GROUP BY match_id"
        ).fetchall()
    finally:
        connection.close()
    return {UUID(match_id): int(last_seq) for match_id, last_seq in rows}


def archived_seq(table: Any, match_id: UUID | str) -> int:
    """The last seq of a match that Delta's application transactions say is archived (-1: none)."""
    version = table.transaction_version(app_id(match_id))
    return -1 if version is None else int(version)


def is_archive(path: str | Path) -> bool:
    """Whether `path` looks like a Delta table (a directory with a `_delta_log`)."""
    return (Path(path) / "_delta_log").is_dir()


def open_table(path: str | Path, *, create: bool = False) -> Any:
    """The archive's Delta table at `path`; None when there is none yet and `create` is set.

    Raises:
        UsageError: deltalake is not installed.
        StoreError: no table there (`archive.missing`), or one that is not a matchlog archive
            (`archive.not_matchlog`).
    """
    delta = deltalake()
    if not is_archive(path):
        if create:
            return None
        raise StoreError(
            f"there is no archive at {path} (matchlog archive --to {path} makes one)", code="archive.missing"
        )
    try:
        table = delta.DeltaTable(str(path))
    except delta.exceptions.DeltaError as error:
        raise StoreError(f"cannot read the archive at {path}: {error}", code="archive.unreadable") from None
    names = {field.name for field in table.schema().fields}
    missing = [name for name in ROWS.names if name not in names]
    if missing:
        raise StoreError(
            f"{path} is a Delta table, but not a matchlog archive (it has no {', '.join(missing)})",
            code="archive.not_matchlog",
        )
    return table
