"""Training datasets: recorded matches as Parquet tables a learner loads, each row provable.

`write_dataset` writes a directory that the Hugging Face `datasets` library
(`load_dataset("parquet", data_dir=DIR)`), polars, pandas and DuckDB read as it is:

    DIR/data/{split}-00000-of-00001.parquet      steps: one row per decision, as the seat saw it
    DIR/matches/{split}-00000-of-00001.parquet   matches: one row per match
    DIR/checkpoint                               the signed checkpoint every row is proven against
    DIR/README.md                                the dataset card: features, filter, counts, encodings

A step row is what its seat saw (`replay.steps`): the observation through the game's view, the legal
actions, the action, the reward, and, where the seat sees the event whole (its own answers), the
event's chain hash and Merkle leaf, so `matchlog prove MATCH --seq SEQ --as-seat SEAT --against
DIR/checkpoint` and `matchlog check` prove it came from the audited log. Matches are split by match,
never by step: a match's id decides its split, the same one on every export with the same fractions.
The directory is written beside its place and moved there whole, so a failed export leaves nothing.
"""

from __future__ import annotations

import hashlib
import inspect
import shutil
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from matchlog.engines import game as registered
from matchlog.engines import get as get_engine
from matchlog.engines.encodings import encoding
from matchlog.events import ChanceCommitted, ChanceRevealed, ProofError, Record, UsageError
from matchlog.replay.fold import by_match
from matchlog.replay.steps import Decision, decisions
from matchlog.store import MatchInfo

from .file import FileLog
from .log import Log

__all__ = ["MATCH_SCHEMA", "STEP_SCHEMA", "DatasetSummary", "parse_split", "split_of", "write_dataset"]

#: Matches read (and folded) at a time: one query for their events, one for their leaves.
_BATCH = 500

STEP_SCHEMA = pa.schema(
    [
        ("match_id", pa.string()),
        ("game", pa.string()),
        ("seq", pa.int64()),
        ("seat", pa.int32()),
        ("decision", pa.string()),
        ("observation", pa.list_(pa.float32())),
        ("view", pa.string()),
        ("legal_actions", pa.list_(pa.int32())),
        ("action_count", pa.int32()),
        ("action", pa.int32()),
        ("event", pa.string()),
        ("rejected", pa.bool_()),
        ("undone", pa.bool_()),
        ("reward", pa.float32()),
        ("terminal", pa.bool_()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("took_us", pa.int64()),
        ("hash", pa.string()),
        ("leaf", pa.int64()),
    ]
)

MATCH_SCHEMA = pa.schema(
    [
        ("match_id", pa.string()),
        ("game", pa.string()),
        ("options", pa.string()),
        ("players", pa.list_(pa.string())),
        ("strategies", pa.list_(pa.string())),
        ("status", pa.string()),
        ("result", pa.string()),
        ("places", pa.list_(pa.int32())),
        ("winners", pa.list_(pa.int32())),
        ("scores", pa.list_(pa.float64())),
        ("removed", pa.list_(pa.int32())),
        ("series_id", pa.string()),
        ("series_game", pa.int32()),
        ("duel_id", pa.string()),
        ("duel_pair", pa.int32()),
        ("duel_game", pa.int32()),
        ("origin_match", pa.string()),
        ("origin_seq", pa.int64()),
        ("started_at", pa.timestamp("us", tz="UTC")),
        ("ended_at", pa.timestamp("us", tz="UTC")),
        ("events", pa.int64()),
        ("decisions", pa.int64()),
        ("chance_commitments", pa.list_(pa.string())),
        ("chance_seeds", pa.list_(pa.string())),
        ("observation_shape", pa.list_(pa.int32())),
        ("action_count", pa.int32()),
        ("view_of", pa.int32()),
        ("checkpoint_size", pa.int64()),
        ("checkpoint_root", pa.string()),
        ("split", pa.string()),
    ]
)


class DatasetSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What an export wrote: where, how many matches and steps per split, the games, the view, the
    checkpoint its rows are proven against, and the matches left out (with why)."""

    path: str
    matches: dict[str, int]
    steps: dict[str, int]
    games: list[str]
    view_of: int | None
    checkpoint_size: int
    skipped: list[tuple[str, str]] = []


def parse_split(text: str | None) -> dict[str, float]:
    """Split fractions from `train=0.8,test=0.2` (normalised to add up to 1); one `train` without.

    Raises:
        UsageError: not NAME=FRACTION pairs of positive numbers (`usage.split`).
    """
    if text is None or not text.strip():
        return {"train": 1.0}
    parts: dict[str, float] = {}
    for part in text.split(","):
        name, _, number = part.partition("=")
        name = name.strip()
        try:
            fraction = float(number)
        except ValueError:
            fraction = -1.0
        if not name.isidentifier() or not name.islower() or not 0 < fraction < float("inf") or name in parts:
            raise UsageError(
                f"--split takes NAME=FRACTION pairs, e.g. train=0.8,test=0.2; not {text[:60]!r}", code="usage.split"
            )
        parts[name] = fraction
    total = sum(parts.values())
    return {name: fraction / total for name, fraction in parts.items()}


def split_of(match_id: UUID | str, splits: dict[str, float]) -> str:
    """The split a match goes to: a point in [0, 1) drawn from its id (SHA-256), so a match always
    lands in the same split for the same fractions, whatever else is exported with it."""
    point = int.from_bytes(hashlib.sha256(str(match_id).encode()).digest()[:8], "big") / 2**64
    reached = 0.0
    for name, fraction in splits.items():
        reached += fraction
        if point < reached:
            return name
    return next(reversed(splits))


def write_dataset(
    log: Log,
    out: Path,
    *,
    game: str | None = None,
    player: str | None = None,
    series: str | None = None,
    since: datetime | None = None,
    as_seat: int | None = None,
    split: dict[str, float] | None = None,
    command: str = "",
) -> DatasetSummary:
    """Write the ended matches the filter chooses (a game, a player's name or strategy, a series,
    a start date) as a dataset at `out` (see the module docstring): every seat's decisions each as
    its seat saw them, or with `as_seat` only that seat's (matches without it are left out).
    `command` is written on the card as the filter that chose the matches.

    Raises:
        UsageError: `out` is not an empty or new directory, no game of the filter has an encoding,
            no match is chosen (`usage.empty`), or the log is not a file opened here.
        ProofError: no checkpoint covers the rows, and this log cannot sign one.
    """
    if not isinstance(log, FileLog):
        raise UsageError(
            "a dataset is written from the log file itself (its events, leaves and key): run it where the file "
            "is, with the server stopped",
            code="usage.dataset",
        )
    if game is not None:
        get_engine(game)
        encoding(game)
    if as_seat is not None and as_seat < 0:
        raise UsageError("--as-seat takes a seat (0, 1, ...): a dataset's rows are decisions", code="usage.seat")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not an empty directory: give a new one", code="usage.output")
    splits = split or {"train": 1.0}
    chosen, skipped = _chosen(log, game, player, series, since, as_seat)
    if not chosen:
        raise UsageError("no ended match of a game with an encoding fits the filter", code="usage.empty")

    # The checkpoint every row is proven against: signed now where this log may, else the latest.
    note = log.checkpoint(new=True)
    from matchlog.proofs.verifier import parse_verifier_key, read_note

    signed = read_note(note, parse_verifier_key(log.key()))

    partial = out.with_name(out.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    (partial / "data").mkdir(parents=True)
    (partial / "matches").mkdir()
    # A split's files are made with its first match: `datasets` refuses a split that has no rows.
    writers: dict[str, tuple[pq.ParquetWriter, pq.ParquetWriter]] = {}
    matches = dict.fromkeys(splits, 0)
    steps = dict.fromkeys(splits, 0)
    games: set[str] = set()
    try:
        store = log.store
        for batch in _batches(chosen, _BATCH):
            ids = [info.match_id for info in batch]
            leaves = _leaves(store, ids)
            infos = {info.match_id: info for info in batch}
            step_rows: dict[str, list[Decision]] = {name: [] for name in splits}
            match_rows: dict[str, list[dict[str, Any]]] = {name: [] for name in splits}
            for records in by_match(store.records(ids)):
                info = infos[records[0].match_id]
                rows = decisions(records, seat=as_seat, leaves=leaves.get(str(info.match_id), {}))
                beyond = [row for row in rows if row.leaf is not None and row.leaf >= signed.size]
                if beyond:
                    raise ProofError(
                        f"match {info.match_id} seq {beyond[0].seq} is not in the latest checkpoint the log has "
                        "signed, and this log cannot sign one: its owner runs `matchlog checkpoint`",
                        code="proof.no_checkpoint",
                    )
                name = split_of(info.match_id, splits)
                step_rows[name].extend(rows)
                match_rows[name].append(_match_row(info, records, rows, as_seat, signed, name))
                games.add(info.game)
            for name in splits:
                if match_rows[name]:
                    if name not in writers:
                        writers[name] = (
                            pq.ParquetWriter(partial / "data" / f"{name}-00000-of-00001.parquet", STEP_SCHEMA),
                            pq.ParquetWriter(partial / "matches" / f"{name}-00000-of-00001.parquet", MATCH_SCHEMA),
                        )
                    writers[name][0].write_table(_step_table(step_rows[name]))
                    writers[name][1].write_table(pa.Table.from_pylist(match_rows[name], schema=MATCH_SCHEMA))
                    matches[name] += len(match_rows[name])
                    steps[name] += len(step_rows[name])
    finally:
        for step_writer, match_writer in writers.values():
            step_writer.close()
            match_writer.close()
    summary = DatasetSummary(
        path=str(out),
        matches=matches,
        steps=steps,
        games=sorted(games),
        view_of=as_seat,
        checkpoint_size=signed.size,
        skipped=skipped,
    )
    (partial / "checkpoint").write_text(note)
    (partial / "README.md").write_text(_card(summary, note, log.key(), command))
    if out.exists():
        out.rmdir()
    partial.replace(out)
    return summary


def _encoding_of(game: str) -> Any:
    """The encoding the game's plugin brings, or None: a tournament's record, a game that brings
    none, or one not installed here."""
    try:
        return registered(game).encoding()
    except UsageError:
        return None


def _chosen(
    log: FileLog,
    game: str | None,
    player: str | None,
    series: str | None,
    since: datetime | None,
    as_seat: int | None,
) -> tuple[list[MatchInfo], list[tuple[str, str]]]:
    """The matches the filter chooses, oldest first, and those left out with why."""
    chosen, skipped = [], []
    for info in reversed(log.matches(game=game, player=player, since=since)):
        if series is not None and (info.series_id is None or not info.series_id.startswith(series)):
            continue
        if _encoding_of(info.game) is None:
            continue  # a tournament's record (its moves are games, not decisions), a game without one
        if info.status == "running":
            skipped.append((str(info.match_id), "still in play: its rewards and its split come at its end"))
            continue
        if as_seat is not None and as_seat >= len(info.players):
            skipped.append((str(info.match_id), f"has no seat {as_seat}"))
            continue
        chosen.append(info)
    return chosen, skipped


def _batches(items: Sequence[MatchInfo], size: int) -> Iterator[Sequence[MatchInfo]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _leaves(store: Any, match_ids: list[UUID]) -> dict[str, dict[int, int]]:
    """Each event's leaf in the log's Merkle tree, by match id text and seq."""
    table = store.arrow(
        "SELECT match_id::VARCHAR AS m, seq, leaf FROM events"
        " WHERE match_id IN (SELECT unnest(?::UUID[])) AND leaf IS NOT NULL",
        [[str(m) for m in match_ids]],
    )
    found: dict[str, dict[int, int]] = {}
    for match_id, seq, leaf in zip(*(table.column(c).to_pylist() for c in ("m", "seq", "leaf")), strict=True):
        found.setdefault(match_id, {})[seq] = leaf
    return found


_encode = msgspec.json.Encoder(order="deterministic").encode


def _step_table(rows: list[Decision]) -> pa.Table:
    """Step rows as columns of STEP_SCHEMA."""
    return pa.Table.from_pydict(
        {
            "match_id": [str(r.match_id) for r in rows],
            "game": [r.game for r in rows],
            "seq": [r.seq for r in rows],
            "seat": [r.seat for r in rows],
            "decision": [r.decision for r in rows],
            "observation": [r.observation for r in rows],
            "view": [_encode(r.view).decode() for r in rows],
            "legal_actions": [r.legal for r in rows],
            "action_count": [r.actions for r in rows],
            "action": [r.action for r in rows],
            "event": [_encode(r.event).decode() for r in rows],
            "rejected": [r.rejected for r in rows],
            "undone": [r.undone for r in rows],
            "reward": [r.reward for r in rows],
            "terminal": [r.terminal for r in rows],
            "at": [r.at_us for r in rows],
            "took_us": [r.took_us for r in rows],
            "hash": [r.hash.hex() if r.hash else None for r in rows],
            "leaf": [r.leaf for r in rows],
        },
        schema=STEP_SCHEMA,
    )


def _match_row(
    info: MatchInfo, records: list[Record], rows: list[Decision], as_seat: int | None, signed: Any, split: str
) -> dict[str, Any]:
    """A match's row: what its catalogue and public events say (no head hash: a seat may not have
    one of a match with hidden information), its encoding's sizes, and where its rows are proven."""
    engine = get_engine(info.game)
    code = encoding(info.game)
    start = engine.start(records[0].event)  # type: ignore[arg-type]
    duel = records[0].event.duel  # type: ignore[union-attr]
    outcome = info.outcome
    return {
        "match_id": str(info.match_id),
        "game": info.game,
        "options": info.options,
        "players": list(info.players),
        "strategies": list(info.strategies),
        "status": info.status,
        "result": outcome.result if outcome is not None else None,
        "places": list(outcome.places) if outcome is not None else None,
        "winners": list(outcome.winners) if outcome is not None else None,
        "scores": list(outcome.scores) if outcome is not None else None,
        "removed": list(outcome.removed) if outcome is not None else None,
        "series_id": info.series_id,
        "series_game": info.series_game,
        "duel_id": duel.id if duel is not None else None,
        "duel_pair": duel.pair if duel is not None else None,
        "duel_game": duel.game if duel is not None else None,
        "origin_match": str(info.origin_match) if info.origin_match is not None else None,
        "origin_seq": info.origin_seq,
        "started_at": info.created_us,
        "ended_at": info.ended_us,
        "events": len(records),
        "decisions": len(rows),
        "chance_commitments": [r.event.commitment for r in records if isinstance(r.event, ChanceCommitted)],
        "chance_seeds": [r.event.seed for r in records if isinstance(r.event, ChanceRevealed)],
        "observation_shape": list(code.shape(start)),
        "action_count": code.actions(start),
        "view_of": as_seat,
        "checkpoint_size": signed.size,
        "checkpoint_root": signed.root.hex(),
        "split": split,
    }


# -- the card ----------------------------------------------------------------------------------

_STEP_FEATURES = (
    ("match_id", "string", "the match (a UUIDv7); its row in `matches` has the rest"),
    ("game", "string", "porrinha, backgammon, davinci or fish"),
    ("seq", "int64", "the decision's place in its match's log"),
    ("seat", "int32", "the seat that decided; the row holds only what it saw"),
    ("decision", "string", "what it decided, in the game's words (hand, guess, move, place, ...)"),
    ("observation", "list<float32>", "the state before it, as the seat saw it, encoded (shape in `matches`)"),
    ("view", "string", "the same state as JSON: the engine's own state type, through the seat's view"),
    ("legal_actions", "list<int32>", "indices of the legal answers, ascending (a mask: `action_count` zeros, 1 there)"),
    ("action_count", "int32", "the size of the game's action space for this match"),
    ("action", "int32", "the index of the answer given; -1 for one the space has no place for (a rejected answer)"),
    ("event", "string", "the answer as recorded, JSON"),
    ("rejected", "bool", "the rules refused the answer (the ruling follows in the log)"),
    ("undone", "bool", "an undo later took the answer back"),
    ("reward", "float32", "on the seat's last decision of the match: the outcome's worth to it; else 0"),
    ("terminal", "bool", "the seat's last decision of the match"),
    ("at", "timestamp[us, UTC]", "when the answer was recorded"),
    ("took_us", "int64", "microseconds since the event before it: how long the decision took"),
    ("hash", "string", "the event's chain hash (hex), where the seat sees the event whole; else null"),
    ("leaf", "int64", "the event's leaf in the log's Merkle tree, where `hash` is given; else null"),
)


def _card(summary: DatasetSummary, note: str, key: str, command: str) -> str:
    """The README.md of a dataset: YAML for the `datasets` library, then what a reader needs."""
    names = [name for name, count in summary.matches.items() if count]
    configs = ["configs:", "- config_name: steps", "  default: true", "  data_files:"]
    configs += [f"  - split: {n}\n    path: data/{n}-*.parquet" for n in names]
    configs += ["- config_name: matches", "  data_files:"]
    configs += [f"  - split: {n}\n    path: matches/{n}-*.parquet" for n in names]
    view = (
        f"seat {summary.view_of}'s decisions only, as that seat saw them"
        if summary.view_of is not None
        else "every seat's decisions, each as the seat that made it saw it"
    )
    counts = "\n".join(f"| {n} | {summary.matches[n]:,} | {summary.steps[n]:,} |" for n in names)
    features = "\n".join(f"| `{name}` | {kind} | {what} |" for name, kind, what in _STEP_FEATURES)
    encodings = "\n\n".join(
        f"### {game}\n\n{inspect.cleandoc(type(_encoding_of(game)).__doc__ or '')}" for game in summary.games
    )
    first = names[0]
    return f"""---
{chr(10).join(configs)}
tags:
- games
- reinforcement-learning
- matchlog
---

# A matchlog dataset

Decisions from matches recorded, referee'd and audited by matchlog: {view}.

- Games: {", ".join(summary.games)}
- Chosen by: `{command or "matchlog dataset"}` (ended matches only; split by match, never by step)
- Proven against: the checkpoint in `checkpoint` (a tree of {summary.checkpoint_size:,} events)
- Licence: left to whoever publishes this dataset; matchlog sets none.

| split | matches | steps |
|---|---|---|
{counts}

```python
import datasets, polars
steps = datasets.load_dataset("parquet", data_dir="DIR")["{first}"]   # the steps, by split
matches = polars.read_parquet("DIR/matches/*.parquet")               # one row per match
```

## Steps (`data/`)

| feature | type | what |
|---|---|---|
{features}

## Matches (`matches/`)

One row per match: its id, game and options (JSON), players and strategies by seat, status,
result, places, winners, scores and removed seats, its series (id and game number) or fork origin,
its duel (id, pair and game in the pair, the seats rotated that many places; null outside a duel),
when it started and ended, how many events and decisions it has, its chance commitments and the
seeds revealed at its end (every die, shuffle and board can be drawn again from them), the shape of
its observations and the size of its action space, the seat whose view the rows are (null: each
row's own seat), the checkpoint's size and root, and its split.

## Encodings

{encodings}

## Provenance

Each step row whose seat sees its event whole (its own answers always) carries the event's chain
hash and its leaf in the log's Merkle tree; `checkpoint` is the log's signed tree head that every
such leaf is in, and the log's public key is

    {key}

Whoever holds the log proves a row, and anyone checks the proof with the key alone:

    matchlog prove MATCH --seq SEQ --as-seat SEAT --against checkpoint -o row.proof
    matchlog check row.proof --key KEY     # or: python verifier.py row.proof --key KEY

The bundle's event for that seq has the row's hash and leaf. A row carries no hash of an event its
seat could not see whole: a hash over a hidden value with few possibilities (a Porrinha hand of 0 to
3) could be searched for that value, so such provenance stays sealed in the seat's proof bundle.
"""
