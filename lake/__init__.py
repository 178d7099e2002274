"""The archive: ended matches sealed into one Delta Lake table that DuckDB, Spark and Ray Data read.

`table` says what a row holds and how the table is partitioned; `seal.archive_log` writes a log's
ended matches into it (idempotent, one Delta commit a batch, safe from several logs at once);
`read.ArchiveStore` reads it back as a `Store`, which `matchlog.ArchiveLog` serves as a `Log`;
`heads` keeps the head rows beside the table so that opening it is quick. `deltalake` (the
`archive` extra) and `pyarrow.dataset` are imported only when one of these is used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ArchiveStore", "Sealed", "archive_log"]

_LAZY = {"ArchiveStore": ".read", "Sealed": ".seal", "archive_log": ".seal"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
