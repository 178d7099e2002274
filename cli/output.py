"""How the CLI shows things: JSON for programs, rich tables and plain lines for people."""

from __future__ import annotations

import sys
from typing import Any
from uuid import UUID

import msgspec
from rich.console import Console
from rich.table import Table

from matchlog.engines import ordinal
from matchlog.events import MatchlogError, us_to_datetime
from matchlog.store import Finding, MatchInfo

__all__ = [
    "console",
    "emit_json",
    "error_line",
    "finding_dict",
    "match_dict",
    "matches_table",
    "short",
    "when",
]

#: Output to a pipe or file is not folded at 80 columns: programs and people grep it.
_PIPE_WIDTH = 200

console = Console(highlight=False, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)


def fit_to_output() -> None:
    """Use the terminal's width on a terminal, and a wide page anywhere else."""
    console.width = console.size.width if console.is_terminal else _PIPE_WIDTH


def _hook(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def emit_json(value: Any) -> None:
    """Print `value` as indented JSON on stdout (bytes as hex)."""
    data = msgspec.json.encode(msgspec.to_builtins(value, enc_hook=_hook, builtin_types=(UUID,)), enc_hook=_hook)
    sys.stdout.write(msgspec.json.format(data, indent=2).decode() + "\n")


def error_line(error: MatchlogError | str, code: str | None = None) -> None:
    """Print `error[code]: message` on stderr."""
    if isinstance(error, MatchlogError):
        code, message = error.code, error.message
    else:
        message = error
    errors.out(f"error[{code}]: {message}")


def short(match_id: UUID | str) -> str:
    """The first 18 characters of an id, accepted as a prefix: the time to the millisecond and the
    counter that orders ids made in the same millisecond (as a tournament's are)."""
    return str(match_id)[:18]


def short_spec(spec: str) -> str:
    """A player spec without its folders: `/long/path/my_ai.py:Player` -> `my_ai.py:Player`."""
    where, colon, name = spec.rpartition(":")
    return (
        f"{where.replace(chr(92), '/').rsplit('/', 1)[-1]}:{name}"
        if colon and "/" in where.replace(chr(92), "/")
        else spec
    )


def when(at_us: int | None) -> str:
    """A UTC time a person reads."""
    return "" if at_us is None else us_to_datetime(at_us).strftime("%Y-%m-%d %H:%M:%SZ")


def match_dict(info: MatchInfo) -> dict[str, Any]:
    """A catalogue row for --json."""
    outcome = info.outcome
    return {
        "match_id": str(info.match_id),
        "game": info.game,
        "status": info.status,
        "created_at": when(info.created_us),
        "ended_at": when(info.ended_us) or None,
        "players": list(info.players),
        "strategies": list(info.strategies),
        "options": msgspec.json.decode(info.options),
        "events": info.last_seq + 1,
        "head_hash": info.head_hash.hex(),
        "outcome": msgspec.to_builtins(outcome) if outcome is not None else None,
        "origin": {"match_id": str(info.origin_match), "seq": info.origin_seq} if info.origin_match else None,
        "series": {"id": info.series_id, "game": info.series_game} if info.series_id else None,
    }


def finding_dict(finding: Finding) -> dict[str, Any]:
    return {
        "match_id": str(finding.match_id),
        "seq": finding.seq,
        "code": finding.code,
        "message": finding.message,
    }


def result_text(info: MatchInfo) -> str:
    """Who placed where, briefly."""
    outcome = info.outcome
    if outcome is None:
        return ""
    if outcome.result == "abandoned":
        return "abandoned"
    return ", ".join(f"{ordinal(outcome.places[s])} {info.players[s]}" for s in outcome.ranking[:3]) + (
        ", …" if len(outcome.ranking) > 3 else ""
    )


def matches_table(matches: list[MatchInfo]) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("match", "game", "status", "started", "events", "players", "result"):
        table.add_column(column, justify="right" if column == "events" else "left", no_wrap=column == "match")
    for info in matches:
        origin = f" (fork of {short(info.origin_match)}@{info.origin_seq})" if info.origin_match else ""
        table.add_row(
            short(info.match_id) + origin,
            info.game,
            info.status,
            when(info.created_us),
            str(info.last_seq + 1),
            ", ".join(info.players),
            result_text(info),
        )
    return table
