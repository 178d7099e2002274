"""What the referee ruled in the matches a command played: who (the seat), what (an answer rejected,
a player removed) and why (the rule's code and the referee's words), as `play` and `tournament`
print them and report them in `--json`, so that a player that was removed is never seen only as a
last place."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from matchlog.events import AnswerRejected, PlayerRemoved, Record, Seat

from .output import console

__all__ = ["match_rulings", "print_match_rulings", "print_series_rulings", "series_rulings"]

#: Rulings a match's lines show one by one; beyond, a line per seat and kind says how many more.
_SHOWN = 3


def match_rulings(records: Sequence[Record], seats: Sequence[Seat]) -> list[dict[str, Any]]:
    """Each ruling of one match, in order: its seq, the seat and its name, what was ruled, and why."""
    found = []
    for record in records:
        event = record.event
        if isinstance(event, AnswerRejected | PlayerRemoved):
            removed = isinstance(event, PlayerRemoved)
            found.append(
                {
                    "seq": record.seq,
                    "seat": event.seat,
                    "name": seats[event.seat].name if 0 <= event.seat < len(seats) else None,
                    "ruling": "removed" if removed else "rejected",
                    "decision": None if removed else event.decision,
                    "code": event.code,
                    "why": event.reason if removed else event.message,
                }
            )
    return found


def _line(ruling: dict[str, Any]) -> str:
    what = "removed" if ruling["ruling"] == "removed" else f"{ruling['decision']} answer rejected"
    return f"  seq {ruling['seq']}: {ruling['name']} {what}: {ruling['code']}: {ruling['why']}"


def print_match_rulings(rulings: Sequence[dict[str, Any]]) -> None:
    """Under a match's line: its removals, and its first rejected answers (then how many more)."""
    removals = [r for r in rulings if r["ruling"] == "removed"]
    rejections = [r for r in rulings if r["ruling"] == "rejected"]
    for ruling in sorted([*removals, *rejections[:_SHOWN]], key=lambda r: r["seq"]):
        console.out(_line(ruling), highlight=False)
    if len(rejections) > _SHOWN:
        console.out(f"  ... and {len(rejections) - _SHOWN} more rejected answers (--json lists them)", highlight=False)


def series_rulings(log: Any, series: str | None = None, matches: Sequence[UUID] = ()) -> list[dict[str, Any]]:
    """The rulings of a series (or of `matches`) by player, kind and code: how many, in how many
    matches, and the referee's words the first time."""
    if series is not None:
        where = f"m.series_id = '{series.replace(chr(39), '')}'"
    else:
        where = "r.match_id IN ({})".format(", ".join(f"'{m}'" for m in matches) or "NULL")
    query = f"""
        SELECT s.name, s.player, r.type = 'match.player_removed' AS removed, r.code,
               count(*) AS times, count(DISTINCT r.match_id) AS matches, arg_min(r.message, r.recorded_at) AS why
        FROM rulings r JOIN matches m USING (match_id) LEFT JOIN seats s USING (match_id, seat)
        WHERE {where}
        GROUP BY ALL ORDER BY removed DESC, times DESC, s.name, r.code"""
    result = log.sql(query, max_rows=1_000)
    return [
        {
            "name": name,
            "player": player,
            "ruling": "removed" if removed else "rejected",
            "code": code,
            "times": times,
            "matches": in_matches,
            "why": why,
        }
        for name, player, removed, code, times, in_matches, why in result.rows
    ]


def print_series_rulings(rulings: Sequence[dict[str, Any]], matches: int) -> None:
    """After a series or tournament: each player's rulings by code, with the referee's words once."""
    if not rulings:
        return
    console.out("rulings:", highlight=False)
    for ruling in rulings:
        what = (
            f"removed in {ruling['matches']} of {matches} matches"
            if ruling["ruling"] == "removed"
            else f"{ruling['times']} answers rejected in {ruling['matches']} of {matches} matches"
        )
        console.out(f"  {ruling['name']}: {what}: {ruling['code']} ({ruling['why']})", highlight=False)
