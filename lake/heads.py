"""The archive's head rows (each match's catalogue row, seats, figures and seal), kept beside the
table so that opening an archive reads them from one small file instead of scanning every file.

`matchlog archive` saves, after its last commit, the head rows as of the table's version into
`_matchlog/heads-VERSION.parquet` with the list of the table's data files at that version (Delta
readers and `VACUUM` leave a directory whose name starts with `_` alone). A reader takes the
newest saved version not newer than the one it reads, and reads head rows only from the data
files added since; without any saved file (a table another tool appended to, or a run killed
before it saved) it reads them from every file. It is a cache: deleting `_matchlog` loses nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.parquet as pq

__all__ = ["HEAD_COLUMNS", "head_rows", "save_heads"]

HEAD_COLUMNS = ["match_id", "game", "month", "seq", "match", "seats", "figures", "sealed"]
_CACHE = "_matchlog"
_FILES_KEY = b"matchlog.files"
#: Saved versions kept (older ones are deleted when a newer one is saved).
_KEPT = 2


def head_rows(path: str | Path, table: Any, dataset: Any, *, saved: bool = True) -> tuple[pa.Table, list[str]]:
    """Every head row of the table as of `table`'s version (one per match: the latest), and the
    table's data files then; without `saved`, all of them read from the data files.

    Raises:
        OSError, pyarrow.ArrowException: a data file cannot be read.
    """
    fragments = {fragment.path: fragment for fragment in dataset.get_fragments()}
    cached, known = _saved(Path(path), table.version()) if saved else (None, set())
    fresh = [fragment for name, fragment in fragments.items() if name not in known]
    parts = [cached] if cached is not None else []
    if fresh or not parts:
        scanned = pds.FileSystemDataset(fresh, dataset.schema, dataset.format, dataset.filesystem)
        parts.append(scanned.to_table(columns=HEAD_COLUMNS, filter=pc.field("match").is_valid()))
    heads = pa.concat_tables([part.select(HEAD_COLUMNS).cast(parts[-1].select(HEAD_COLUMNS).schema) for part in parts])
    heads = heads.combine_chunks()
    if pc.count_distinct(heads.column("match_id")).as_py() < heads.num_rows:
        heads = _latest(heads)  # a match that went on after it was archived has two (or a file was compacted)
    return heads, sorted(fragments)


def save_heads(path: str | Path, version: int, heads: pa.Table, files: list[str]) -> None:
    """Save the head rows as of `version` (written whole, then renamed into place)."""
    directory = Path(path) / _CACHE
    directory.mkdir(exist_ok=True)
    target = directory / f"heads-{version:020d}.parquet"
    scratch = directory / f".{target.name}.{os.getpid()}"
    table = heads.replace_schema_metadata({_FILES_KEY: json.dumps(files).encode()})
    pq.write_table(table, scratch, compression="zstd")
    os.replace(scratch, target)
    for older in sorted(directory.glob("heads-*.parquet"))[:-_KEPT]:
        with contextlib.suppress(OSError):  # another process may be reading or removing it
            older.unlink()


def _saved(path: Path, version: int) -> tuple[pa.Table | None, set[str]]:
    """The newest saved head rows not newer than `version`, and the data files they cover."""
    directory = path / _CACHE
    candidates = sorted(
        (int(found.stem.removeprefix("heads-")), found)
        for found in directory.glob("heads-*.parquet")
        if found.stem.removeprefix("heads-").isdigit()
    )
    for saved_version, found in reversed(candidates):
        if saved_version > version:
            continue
        try:
            table = pq.read_table(found)
            files = json.loads((table.schema.metadata or {})[_FILES_KEY])
        except (OSError, pa.ArrowException, KeyError, ValueError):
            continue  # removed meanwhile, or not ours: the files are read instead
        return table.replace_schema_metadata(None), set(files)
    return None, set()


def _latest(heads: pa.Table) -> pa.Table:
    """Each match's head row with the highest seq."""
    order = pc.sort_indices(heads, sort_keys=[("match_id", "ascending"), ("seq", "descending")]).to_pylist()
    seen: set[str] = set()
    keep = []
    for index, match_id in zip(order, heads.column("match_id").take(order).to_pylist(), strict=True):
        if match_id not in seen:
            seen.add(match_id)
            keep.append(index)
    return heads.take(pa.array(keep, pa.int64()))
