"""`ArchiveLog`: the `Log` interface over an archive (the Delta table `matchlog archive` writes),
read-only.

It is a `FileLog` whose store reads the Delta table (`archive.ArchiveStore`), so every answer is
computed by the same functions as on the log the matches came from: statistics, SQL over the same
tables and views, states, replays, audits, verification. Only the writing methods differ: an
archive takes no appends (the archive grows only by `matchlog archive`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any
from uuid import UUID

from matchlog.engines import get as get_engine
from matchlog.events import Draft, Event, StoreError, UsageError
from matchlog.lake.read import ArchiveStore

from .file import FileLog

__all__ = ["ArchiveLog"]


class ArchiveLog(FileLog):
    """The archive at `path` (a directory holding a Delta table), read-only.

    Raises:
        UsageError: the deltalake package is not installed.
        StoreError: no archive there (`archive.missing`), or not one of matchlog's.
    """

    def __init__(self, path: str | Path) -> None:  # (FileLog's own opening is a file's)
        self.location = str(path)
        self.store = ArchiveStore(str(path))
        self._signer = None

    def signer(self, *, create: bool = True, name: str | None = None) -> None:
        """None: an archive signs nothing (its matches' checkpoints are the logs' they came from)."""
        return None

    @property
    def version(self) -> int:
        """The Delta table's version this log reads (it reads one version throughout)."""
        return self.store.version

    def events_frame(
        self, *, game: str | None = None, matches: Sequence[UUID | str] | None = None, flatten: bool = False
    ) -> Any:
        from .frames import _flattened, events_frame

        if matches is None:
            return events_frame(self.store, game=game, flatten=flatten)
        if game is not None:
            get_engine(game)
        if flatten and game is None:
            raise UsageError(
                "flattening payloads needs a game: their fields differ from game to game", code="usage.frame"
            )
        table = self.store.events_frame_rows([self.store.resolve(m) for m in matches])
        if game is not None:
            import pyarrow.compute as pc

            table = table.filter(pc.equal(table.column("game"), game))
        return _flattened(table, game) if flatten else table  # type: ignore[arg-type]

    # -- an archive takes no writes -----------------------------------------------------------

    def _refuse(self) -> StoreError:
        return StoreError(
            f"{self.location} is an archive: it is read-only (it grows by matchlog archive)", code="archive.read_only"
        )

    def append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> Any:
        raise self._refuse()

    def append_async(
        self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int, *, figures: Any = None
    ) -> Future[Any]:
        raise self._refuse()

    def append_bulk_encoded(self, batches: Iterable[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]) -> list[Any]:
        raise self._refuse()

    def put_figures(self, sets: Sequence[Any], *, wait: bool = True) -> Future[None] | None:
        raise self._refuse()

    def import_jsonl(self, lines: Iterable[bytes]) -> list[Any]:
        raise self._refuse()

    def undo(self, match: UUID | str, *, reason: str = "") -> Any:
        raise self._refuse()

    def abandon(self, match: UUID | str, *, reason: str) -> Any:
        raise self._refuse()

    def fork(self, match: UUID | str, at: int) -> UUID:
        raise self._refuse()

    def annotate(self, match: UUID | str, seq: int, text: str, **options: Any) -> Any:
        raise self._refuse()

    def put_annotations(self, match: UUID | str, author: str, notes: Sequence[Any], **options: Any) -> int:
        raise self._refuse()
