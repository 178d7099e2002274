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
same text. The CLI appends what `read` returns in one transaction, all of it or none, but for a
match the log holds already from another record of the same game (`recorded_already`): one game is
one match, whichever tool's record brought it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import CHANCE
from matchlog.events import ActionsUndone, Draft, MatchEnded, MatchStarted, PlayerRemoved, Record, UsageError, encode
from matchlog.replay.fold import engine_of, walk

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
    "recorded_already",
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


def recorded_already(log: Any, match: ImportedMatch) -> UUID | None:
    """The match of `log` that is `match` already, recorded from another record of the same game (a
    `.mat` and an `.sgf` of it carry the same game, but not its time, nor the order in which a turn's
    dice were used), or None: the same start, every chance event from the same position, and the
    same end (`_course`). (A file imported twice has the same ids: the log takes it as a re-sent no-op.)"""
    records = match.records()
    started = records[0].event
    assert isinstance(started, MatchStarted)
    course = _course(records)
    for info in log.matches(game=started.game, player=started.seats[0].name):
        if info.match_id != match.match_id and _course(log.read(info.match_id)) == course:
            return info.match_id
    return None


def _course(records: Sequence[Record]) -> list[bytes]:
    """What makes a match the game it is, whichever record carries it: how it started, the position
    each time the turn passes (so each turn's result, in whatever order its moves were recorded),
    every chance event, and each ruling, undo and the end."""
    engine = engine_of(records)
    course = [encode(records[0].event)]
    for record, before, after, _ in walk(engine, records, engine.start(records[0].event)):  # type: ignore[arg-type]
        event = record.event
        turn, then = engine.to_act(before), engine.to_act(after)
        if (turn is not None and turn.seat == CHANCE) or isinstance(event, MatchEnded | PlayerRemoved | ActionsUndone):
            course.append(encode(event))
        if then is None or turn is None or then.seat != turn.seat:
            course.append(msgspec.msgpack.encode(after))
    return course


def batches(matches: Sequence[ImportedMatch]) -> list[tuple[UUID, Sequence[Draft], int]]:
    """What `Store.append_bulk` takes to record `matches`: each from seq 0, all in one transaction."""
    return [(match.match_id, match.drafts, 0) for match in matches]
