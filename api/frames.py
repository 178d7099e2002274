"""Frames for analysis: the log's events, match results and seat results as Arrow tables.

An Arrow table goes to pandas with `.to_pandas()` and to polars with `polars.from_arrow(...)`
(install `matchlog[frames]` for both). Columns are typed: ids and hashes as text, times as
timestamps, counts as integers. `events_frame(game=..., flatten=True)` also spreads each event's
payload into columns of their own, typed from the game's event types (a field that no Arrow type
fits stays JSON text), so a question such as "how often does each die face come up" is a
group-by on a column rather than JSON parsing.

The results and seats frames are views like any other: read whole, or (`as_seat` -1) as every
reader may know them. Each column says what it is derived from (`RESULT_COLUMNS`, `SEAT_COLUMNS`):
a public column of the catalogue, or a figure, which a spectator gets as `replay.aggregates` gives
it (its own count of a figure some reader may not see whole); a column not declared is empty for
every reader but the whole record's. The events frame is the whole record's only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec
import pyarrow as pa

from matchlog.engines import get as get_engine
from matchlog.engines.views import Derived
from matchlog.events import EVENT_TYPES, UsageError
from matchlog.replay.aggregates import across_matches, shown_figures
from matchlog.store import Store

__all__ = ["RESULT_COLUMNS", "SEAT_COLUMNS", "events_frame", "results_frame", "seats_frame"]

#: What each column of the results frame (the `match_results` view) is derived from: the
#: catalogue's public columns, or (a name) the sum of that figure of the match.
RESULT_COLUMNS: dict[str, Derived | str] = {
    **dict.fromkeys(("match_id", "game", "status", "created_at", "ended_at", "seconds", "events"), Derived.PUBLIC),
    "turns": "turns",
    **dict.fromkeys(("result", "players", "strategies", "winners", "series_id"), Derived.PUBLIC),
}
#: What each column of the seats frame (the `seat_results` view) is derived from: the catalogue's
#: and the seats' public columns (a place, a score and a removal are how the match ended, which
#: every seat sees), or (a name) the sum of that figure of the seat.
SEAT_COLUMNS: dict[str, Derived | str] = {
    **dict.fromkeys(
        ("match_id", "game", "status", "created_at", "seat", "name", "player", "place", "score", "winner", "removed"),
        Derived.PUBLIC,
    ),
    "answers": "answers",
    "rejected": "rejected",
}

_EVENT_COLUMNS = (
    "match_id::VARCHAR AS match_id, seq, event_id::VARCHAR AS event_id, recorded_at, actor, game, type, version,"
    " seat, payload, lower(hex(hash)) AS hash, leaf"
)


def events_frame(
    store: Store,
    *,
    game: str | None = None,
    matches: Sequence[UUID] | None = None,
    flatten: bool = False,
) -> pa.Table:
    """Every event (of one game, or of some matches), one row each, in match and seq order.

    Raises:
        UsageError: no such game, or `flatten` without a game.
    """
    if game is not None:
        get_engine(game)
    if flatten and game is None:
        raise UsageError("flattening payloads needs a game: their fields differ from game to game", code="usage.frame")
    clauses, params = [], []
    if game is not None:
        clauses.append("game = ?")
        params.append(game)
    if matches is not None:
        clauses.append("match_id IN (SELECT unnest(?::UUID[]))")
        params.append([str(m) for m in matches])
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    table = store.arrow(f"SELECT {_EVENT_COLUMNS} FROM events {where} ORDER BY match_id, seq", params)
    return _flattened(table, game) if flatten else table  # type: ignore[arg-type]


def results_frame(
    store: Store, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None
) -> pa.Table:
    """One row per match: the `match_results` view (game, status, times, length, result, players,
    winners, series), whole or (`as_seat` -1) as every reader may know it.

    Raises:
        UsageError: no such game, or a seat's view.
    """
    return _view(store, "match_results", RESULT_COLUMNS, game, since, as_seat)


def seats_frame(
    store: Store, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None
) -> pa.Table:
    """One row per seat of every match: the `seat_results` view (name, strategy, place, score,
    winner, removed, answers, rejected), whole or (`as_seat` -1) as every reader may know it.

    Raises:
        UsageError: no such game, or a seat's view.
    """
    return _view(store, "seat_results", SEAT_COLUMNS, game, since, as_seat, seated=True)


def _view(
    store: Store,
    view: str,
    columns: dict[str, Derived | str],
    game: str | None,
    since: datetime | None,
    as_seat: int | None,
    *,
    seated: bool = False,
) -> pa.Table:
    if game is not None:
        get_engine(game)
    where = "WHERE (? IS NULL OR v.game = ?) AND (? IS NULL OR v.created_at >= ?)"
    order = "ORDER BY v.created_at, v.match_id" + (", v.seat" if seated else "")  # a match's seats in order
    if across_matches(as_seat) is None:
        query = f"SELECT v.* REPLACE (v.match_id::VARCHAR AS match_id) FROM {view} v {where} {order}"
        return store.arrow(query, [game, game, since, since])
    # As every reader may know it: each column from what it is derived from, none undeclared.
    figures, shown = shown_figures(as_seat)
    names = store.arrow(f"SELECT * FROM {view} LIMIT 0").column_names
    counted = sorted({str(columns[name]) for name in names if _figure(columns.get(name))})
    key = "match_id, seat" if seated else "match_id"
    # A seat with figures but none of one counted none of it (0), not an unknown (NULL, NaN in a frame).
    sums = ", ".join(f"coalesce(sum(value) FILTER (WHERE figure = '{name}'), 0) AS \"{name}\"" for name in counted)
    chosen = []
    for name in names:
        derived = columns.get(name)
        if name == "match_id":
            chosen.append("v.match_id::VARCHAR AS match_id")
        elif derived is Derived.PUBLIC:
            chosen.append(f'v."{name}"')
        elif _figure(derived):
            chosen.append(f'p."{derived}" AS "{name}"')
        else:
            chosen.append(f'CAST(NULL AS {_sql_type(store, view, name)}) AS "{name}"')
    pivot = (
        f"(SELECT {key}, {sums} FROM fig WHERE seat IS {'NOT ' if seated else ''}NULL GROUP BY ALL)"
        if counted
        else f"(SELECT NULL::UUID AS match_id{', NULL::SMALLINT AS seat' if seated else ''} LIMIT 0)"
    )
    query = (
        f"WITH fig AS ({figures}) SELECT {', '.join(chosen)} FROM {view} v LEFT JOIN {pivot} p USING ({key}) "
        f"{where} {order}"
    )
    return store.arrow(query, [*shown, game, game, since, since])


def _figure(derived: Derived | str | None) -> bool:
    """Whether a column is derived from a figure (its name) rather than declared `Derived`."""
    return derived is not None and not isinstance(derived, Derived)


def _sql_type(store: Store, view: str, column: str) -> str:
    """The SQL type of a view's column (an empty column keeps its type)."""
    rows = store.query(
        "SELECT data_type FROM information_schema.columns WHERE table_name = ? AND column_name = ?", [view, column]
    )
    return str(rows[0][0])


# -- flattening payloads ------------------------------------------------------------------------

_JSON = "json"


def _arrow_type(info: Any) -> pa.DataType | str:
    """The Arrow type of a msgspec field type, or "json" where none fits simply."""
    from msgspec import inspect

    if isinstance(info, inspect.UnionType):
        kinds = [t for t in info.types if not isinstance(t, inspect.NoneType)]
        return _arrow_type(kinds[0]) if len(kinds) == 1 else _JSON
    if isinstance(info, inspect.BoolType):
        return pa.bool_()
    if isinstance(info, inspect.IntType):
        return pa.int64()
    if isinstance(info, inspect.FloatType):
        return pa.float64()
    if isinstance(info, inspect.StrType | inspect.UUIDType):
        return pa.string()
    if isinstance(info, inspect.ListType | inspect.VarTupleType | inspect.FrozenSetType | inspect.SetType):
        inner = _arrow_type(info.item_type)
        return _JSON if inner == _JSON else pa.list_(inner)
    if isinstance(info, inspect.TupleType):  # a fixed tuple of one type (two dice) is a list of it
        kinds = {str(_arrow_type(item)) for item in info.item_types}
        inner = _arrow_type(info.item_types[0]) if len(kinds) == 1 and info.item_types else _JSON
        return _JSON if inner == _JSON else pa.list_(inner)
    return _JSON


def _game_fields(game: str) -> dict[str, pa.DataType | str]:
    """The payload fields of the events a game's log holds, each with its Arrow type."""
    from msgspec import inspect

    fields: dict[str, pa.DataType | str] = {}
    for cls in EVENT_TYPES:
        tag = cls.__struct_config__.tag  # type: ignore[attr-defined]
        if not (tag.startswith(f"{game}.") or tag.startswith("match.")):
            continue
        for field in inspect.type_info(cls).fields:  # type: ignore[attr-defined]
            kind = _arrow_type(field.type)
            if fields.get(field.name, kind) != kind:
                kind = _JSON  # the same name with two types: kept as JSON text
            fields[field.name] = kind
    return fields


def _flattened(table: pa.Table, game: str) -> pa.Table:
    fields = _game_fields(game)
    decoded = [msgspec.json.decode(payload) for payload in table.column("payload").to_pylist()]
    columns = {}
    for name, kind in fields.items():
        values = [row.get(name) for row in decoded]
        if kind == _JSON:
            columns[name] = pa.array(
                [None if v is None else msgspec.json.encode(v).decode() for v in values], pa.string()
            )
        else:
            columns[name] = pa.array(values, kind)  # type: ignore[arg-type]
    taken = set(table.column_names)
    for name, column in columns.items():
        table = table.append_column(f"payload_{name}" if name in taken else name, column)
    return table
