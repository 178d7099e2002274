"""The deep check: everything derived from the events is derived again, and compared.

`verify` proves the events unchanged (the hash chains, the catalogue's heads). The tables beside
them are projections of the events that commands read instead of folding every match: the
catalogue (`matches`: status, result, winners, players...), `seats` (places, scores), `figures`
(what `stats` sums) and the snapshot cache (what time travel folds from). Each can be edited
without touching a hash. `verify_deep` derives each again from the events and names every row
that disagrees, column by column; it folds a sample of the cached snapshots again too, and drops
one that does not match (it is only a cache).

What no check of the file alone can find: a match deleted from every table, or a match cut short
with its catalogue head moved back to match. The chain of what remains is whole. Finding those
needs a record kept elsewhere (a copy of the heads, or the signed checkpoints of the proofs issue).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines.figures import FIGURES_VERSION
from matchlog.events import ActionsUndone, DecodeError, MatchEnded, MatchStarted, Record, canonical, decode
from matchlog.store import Finding, MatchInfo, Store

from .fold import by_match
from .projections import figures_of
from .travel import state_at

__all__ = ["SNAPSHOTS_SAMPLED", "verify_deep"]

#: How many cached snapshots one deep check folds again.
SNAPSHOTS_SAMPLED = 32

_MATCH_COLUMNS = (
    "game",
    "status",
    "created_at",
    "ended_at",
    "players",
    "strategies",
    "options",
    "last_seq",
    "head_hash",
    "ended_seq",
    "result",
    "winners",
    "origin_match",
    "origin_seq",
    "series_id",
    "series_game",
)
_SEAT_COLUMNS = ("name", "player", "place", "score", "winner", "removed")


def verify_deep(
    store: Store, match_ids: Sequence[UUID] | None = None, *, snapshots: int = SNAPSHOTS_SAMPLED, seed: int = 0
) -> list[Finding]:
    """The hash chains (`Store.verify`), then every derived row of the given matches (default:
    all) against the events: one finding per row that disagrees, and per sampled snapshot that
    does not fold to the state it holds (which is dropped).

    Raises:
        UnknownMatch: a single match was asked for and there is no such match.
    """
    findings = list(store.verify(match_ids))
    store.sync()
    wanted = None if match_ids is None else {str(m) for m in match_ids}
    catalogue = _rows(store, "matches", _MATCH_COLUMNS, wanted)
    seats = _seat_rows(store, wanted)
    figures, projected = _figure_rows(store, wanted)
    for records in _matches(store, match_ids, findings):
        match_id = records[0].match_id
        stored = catalogue.get(str(match_id))
        if stored is None:
            continue  # verify has said so (chain.no_catalogue)
        try:
            derived = _catalogue_row(records, stored["last_seq"])
        except Exception as error:  # not a match a referee could record: say so, and go on
            findings.append(Finding(match_id, None, "derived.unreadable", f"the events cannot be read back: {error}"))
            continue
        findings += _compare_match(match_id, stored, derived)
        findings += _compare_seats(match_id, seats.get(str(match_id), {}), derived)
        if derived.status == "running":
            continue  # figures are a finished match's
        try:
            derived_figures = figures_of(records)
        except Exception as error:  # a game this matchlog does not know, events its rules cannot fold
            message = f"its figures cannot be derived from its events: {getattr(error, 'message', None) or error}"
            findings.append(Finding(match_id, None, "derived.unreadable", message))
            continue
        if projected.get(str(match_id)) == (derived.last_seq, FIGURES_VERSION):  # else stats projects it first
            findings += _compare_figures(match_id, figures.get(str(match_id), {}), derived_figures)
    findings += _not_canonical(store, match_ids)
    findings += _check_snapshots(store, wanted, snapshots, seed)
    return findings


def _not_canonical(store: Store, match_ids: Sequence[UUID] | None) -> list[Finding]:
    """Events whose stored bytes are not the one way matchlog writes them (a log written before the
    store held every append to that): readers may read them differently (a repeated key is one
    value to the rules and another to SQL), and the log's own export of them is refused by import."""
    found = []
    for matches, seqs, types, versions, payloads in store.event_columns(match_ids):
        for match, seq, tag, version, payload in zip(matches, seqs, types, versions, payloads, strict=True):
            raw = payload.encode()
            try:
                event = decode(raw, tag=tag, version=version)
            except DecodeError:
                continue  # (named as derived.unreadable)
            if not canonical(raw, event, version):
                message = (
                    f"the {tag} event is not written the one way matchlog writes it: not every reader reads "
                    "the same event from it (SQL and the rules may disagree), and import refuses it"
                )
                found.append(Finding(UUID(match), seq, "derived.not_canonical", message))
    return found


def _matches(store: Store, match_ids: Sequence[UUID] | None, findings: list[Finding]) -> Iterator[list[Record]]:
    """Each match's records; one whose events do not decode is a finding (when verify has none)."""
    try:
        yield from list(by_match(store.records(match_ids)))
        return
    except DecodeError:
        pass
    ids = (
        match_ids
        if match_ids is not None
        else [UUID(str(row[0])) for row in store.query("SELECT match_id FROM matches")]
    )
    for match_id in ids:
        try:
            yield store.read(match_id)
        except DecodeError as error:
            findings.append(Finding(match_id, None, "derived.unreadable", error.message))


def _catalogue_row(records: Sequence[Record], upto: int) -> MatchInfo:
    """The catalogue row of a match as its events up to seq `upto` give it (as the writer derives it)."""
    first = records[0]
    if not isinstance(first.event, MatchStarted):
        raise DecodeError("seq 0 is not match.started")
    info = MatchInfo.started(first.match_id, first.event, first.at_us)
    for record in records[1 : upto + 1]:
        if isinstance(record.event, MatchEnded | ActionsUndone):
            info = info.after(record.seq, record.event, record.at_us, record.hash)
    last = records[min(upto, len(records) - 1)]
    return msgspec.structs.replace(info, last_seq=last.seq, head_hash=last.hash)


def _rows(store: Store, table: str, columns: Sequence[str], wanted: set[str] | None) -> dict[str, dict[str, Any]]:
    rows = store.query(f"SELECT match_id::VARCHAR, {', '.join(columns)} FROM {table}")
    return {row[0]: dict(zip(columns, row[1:], strict=True)) for row in rows if wanted is None or row[0] in wanted}


def _seat_rows(store: Store, wanted: set[str] | None) -> dict[str, dict[int, dict[str, Any]]]:
    found: dict[str, dict[int, dict[str, Any]]] = {}
    for row in store.query(f"SELECT match_id::VARCHAR, seat, {', '.join(_SEAT_COLUMNS)} FROM seats"):
        if wanted is None or row[0] in wanted:
            found.setdefault(row[0], {})[row[1]] = dict(zip(_SEAT_COLUMNS, row[2:], strict=True))
    return found


def _figure_rows(
    store: Store, wanted: set[str] | None
) -> tuple[dict[str, dict[tuple[int | None, str], list[float]]], dict[str, tuple[int, int]]]:
    figures: dict[str, dict[tuple[int | None, str], list[float]]] = {}
    for match_id, seat, figure, value in store.query("SELECT match_id::VARCHAR, seat, figure, value FROM figures"):
        if wanted is None or match_id in wanted:
            figures.setdefault(match_id, {}).setdefault((seat, figure), []).append(value)
    projected = {
        match_id: (last_seq, version)
        for match_id, last_seq, version in store.query("SELECT match_id::VARCHAR, last_seq, version FROM projected")
        if wanted is None or match_id in wanted
    }
    return figures, projected


def _derived_columns(info: MatchInfo) -> dict[str, Any]:
    (_, *values) = info.row()
    derived = dict(zip(_MATCH_COLUMNS, values, strict=True))
    derived["head_hash"] = bytes(info.head_hash)
    return derived


def _shown(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()[:16] + "…"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _same(stored: Any, derived: Any) -> bool:
    if isinstance(stored, bytes | bytearray) or isinstance(derived, bytes | bytearray):
        return stored is not None and derived is not None and bytes(stored) == bytes(derived)
    if isinstance(stored, list | tuple) and isinstance(derived, list | tuple):
        return list(stored) == list(derived)
    if isinstance(stored, UUID) or isinstance(derived, UUID):
        return str(stored) == str(derived)
    return stored == derived


def _compare_match(match_id: UUID, stored: dict[str, Any], derived_info: MatchInfo) -> list[Finding]:
    derived = _derived_columns(derived_info)
    return [
        Finding(
            match_id,
            None,
            "derived.matches",
            f"matches.{column}: the table says {_shown(stored[column])}, the events say {_shown(derived[column])}",
        )
        for column in _MATCH_COLUMNS
        if not _same(stored[column], derived[column])
    ]


def _compare_seats(match_id: UUID, stored: dict[int, dict[str, Any]], info: MatchInfo) -> list[Finding]:
    findings = []
    derived = {row.seat: row for row in info.seat_rows()}
    for seat in sorted(set(stored) | set(derived)):
        if seat not in derived:
            findings.append(Finding(match_id, None, "derived.seats", f"seats: seat {seat} is no seat of the match"))
            continue
        if seat not in stored:
            findings.append(Finding(match_id, None, "derived.seats", f"seats: seat {seat} has no row"))
            continue
        for column in _SEAT_COLUMNS:
            want = getattr(derived[seat], column)
            if not _same(stored[seat][column], want):
                findings.append(
                    Finding(
                        match_id,
                        None,
                        "derived.seats",
                        f"seats (seat {seat}).{column}: the table says {_shown(stored[seat][column])}, "
                        f"the events say {_shown(want)}",
                    )
                )
    return findings


def _compare_figures(
    match_id: UUID, stored: dict[tuple[int | None, str], list[float]], figures: Sequence[tuple[int | None, str, float]]
) -> list[Finding]:
    derived = {(seat, figure): [value] for seat, figure, value in figures}
    findings = []
    for key in sorted(set(stored) | set(derived), key=lambda k: (-1 if k[0] is None else k[0], k[1])):
        have, want = stored.get(key), derived.get(key)
        if have != want:
            who = "the match" if key[0] is None else f"seat {key[0]}"
            findings.append(
                Finding(
                    match_id,
                    None,
                    "derived.figures",
                    f"figures ({who}, {key[1]}): the table says {_shown(have and sum(have))}, "
                    f"the events say {_shown(want and want[0])}",
                )
            )
    return findings


def _check_snapshots(store: Store, wanted: set[str] | None, count: int, seed: int) -> list[Finding]:
    """Fold a sample of the cached snapshots again; a snapshot that does not hold that state, or
    whose digest does not match the log, is a finding and is dropped."""
    keys = [key for key in store.snapshot_keys() if wanted is None or str(key[0]) in wanted]
    findings = []
    for match_id, seq, engine in random.Random(seed).sample(keys, min(count, len(keys))):
        cached = store.snapshot_at(match_id, seq, engine)
        if cached is None:
            continue
        state, digest_matches = cached
        try:
            folded = msgspec.msgpack.encode(
                state_at(store, match_id, seq, cache_snapshots=False, use_snapshots=False).state
            )
        except Exception as error:
            folded, note = None, f" (the events cannot be folded to seq {seq}: {error})"
        else:
            note = ""
        if not digest_matches or folded != state:
            why = (
                "its digest does not match the log" if not digest_matches else "it is not the state the events fold to"
            )
            findings.append(
                Finding(
                    match_id, seq, "derived.snapshot", f"snapshot ({engine}): {why}{note}; dropped, to be folded again"
                )
            )
            store.drop_snapshot(match_id, seq, engine)
    return findings
