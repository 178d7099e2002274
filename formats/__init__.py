"""Records other tools read: a match out to another format, and another tool's record in as matches.

| format       | games              | file            | module                 |
|--------------|--------------------|-----------------|------------------------|
| `mat`        | backgammon         | `.mat`          | `formats.mat`          |
| `sgf`        | backgammon         | `.sgf`          | `formats.sgf`          |
| `fish-state` | fish               | `.json`         | `formats.fish_state`   |
| `text`       | porrinha, davinci  | `.txt`          | `formats.text`         |

Every format is a pair of pure functions: a match's records in, text out (`export`); text in, the
matches' events out as drafts ready to append at seq 0 (`read`), each judged by the engine and
audited on the way, or a `FormatError` (an `ImportRejected`, code `import.<format>`) naming the
line, game, move or state it could not take. Exporting, importing and exporting again gives the
same text. The CLI appends what `read` returns in one transaction, all of it or none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from uuid import UUID

from matchlog.events import Draft, MatchStarted, Record, UsageError

from .bounds import MAX_RECORD_BYTES, bounded_lines
from .fish_state import export_fish_state, read_fish_state
from .imported import FormatError, ImportedMatch
from .mat import export_mat, read_mat
from .sgf import export_sgf, read_sgf
from .text import export_text, read_text

__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "MAX_RECORD_BYTES",
    "FormatError",
    "ImportedMatch",
    "batches",
    "bounded_lines",
    "export",
    "export_fish_state",
    "export_mat",
    "export_sgf",
    "export_text",
    "format_of",
    "read",
    "read_fish_state",
    "read_mat",
    "read_sgf",
    "read_text",
]

#: Each format's games.
FORMATS: dict[str, tuple[str, ...]] = {
    "mat": ("backgammon",),
    "sgf": ("backgammon",),
    "fish-state": ("fish",),
    "text": ("porrinha", "davinci"),
}
#: The format a file is read as, by its extension (`--format` overrides it).
EXTENSIONS = {".mat": "mat", ".sgf": "sgf", ".json": "fish-state", ".txt": "text"}

_EXPORT: dict[str, Callable[[list[Record]], str]] = {"mat": export_mat, "sgf": export_sgf, "text": export_text}
_READ: dict[str, Callable[[str], list[ImportedMatch]]] = {
    "mat": read_mat,
    "sgf": read_sgf,
    "fish-state": read_fish_state,
    "text": read_text,
}


def format_of(path: str | Path) -> str | None:
    """The format a file's extension names (None: not one of these)."""
    return EXTENSIONS.get(Path(path).suffix.lower())


def export(records: Sequence[Record], format: str, *, at: int | None = None) -> str:
    """One match (all its records, from seq 0) as text in `format`; `at`: a seq (fish-state only).

    Raises:
        UsageError: an unknown format, a game the format does not hold, or `at` where it means nothing.
    """
    games = FORMATS.get(format)
    if games is None:
        raise UsageError(f"no format {format!r} (one of {', '.join(FORMATS)})", code="usage.format")
    started = records[0].event if records else None
    game = started.game if isinstance(started, MatchStarted) else "?"
    if game not in games:
        raise UsageError(f"{format} holds {' and '.join(games)}, not {game}", code="usage.export")
    if format == "fish-state":
        return export_fish_state(list(records), at)
    if at is not None:
        raise UsageError(f"--at is for fish-state; {format} holds the whole match", code="usage.export")
    return _EXPORT[format](list(records))


def read(data: bytes, format: str) -> list[ImportedMatch]:
    """The matches a file in `format` holds (UTF-8 text), judged and ready to append; every reader is
    linear in the file and bounded (`formats.bounds`).

    Raises:
        UsageError: an unknown format.
        FormatError: the file cannot be imported; the message says where.
    """
    reader = _READ.get(format)
    if reader is None:
        raise UsageError(f"no format {format!r} to import (one of {', '.join(_READ)})", code="usage.format")
    if len(data) > MAX_RECORD_BYTES:
        raise FormatError(format, f"the file: {len(data):,} bytes, more than a record is ({MAX_RECORD_BYTES:,})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(format, f"byte {error.start}: the file is not UTF-8 text") from None
    return reader(text)


def batches(matches: Sequence[ImportedMatch]) -> list[tuple[UUID, Sequence[Draft], int]]:
    """What `Store.append_bulk` takes to record `matches`: each from seq 0, all in one transaction."""
    return [(match.match_id, match.drafts, 0) for match in matches]
