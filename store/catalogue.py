"""The matches catalogue: one row per match, derived from its events as they are appended.

A new match's row is written in the transaction of its first events; its later changes (head,
ending) are written lazily by the writer (see writer.py), and rolled forward from the events after a
crash. `verify` checks each head against the chain, which is how a deleted last event is found.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from uuid import UUID

import duckdb
import msgspec

from matchlog.events import ActionsUndone, Event, MatchEnded, MatchStarted, Outcome, UnknownMatch

from .handle import LogHandle
from .prefixes import unique_prefix
from .schema import MATCH_COLUMNS

__all__ = [
    "Appended",
    "CatalogueReads",
    "ChainWords",
    "Figures",
    "Finding",
    "MatchInfo",
    "SeatRow",
    "chain_findings",
    "select_matches",
]

_EPOCH = datetime(1970, 1, 1)


class Appended(msgspec.Struct, frozen=True):
    """What an append did: the seqs the events hold and the match's head afterwards."""

    match_id: UUID
    first_seq: int
    last_seq: int
    head_hash: bytes
    written: int  # 0 when every event was already stored (an idempotent re-send)


class Finding(msgspec.Struct, frozen=True):
    """One problem found in the log: which match, from which seq, which check, and the evidence."""

    match_id: UUID
    seq: int | None
    code: str
    message: str


class ChainWords(NamedTuple):
    """How chain findings name the catalogue and the chain: the log's words, or an archive's."""

    no_catalogue: str = "events with no row in the matches catalogue"
    no_events: str = "a catalogue row with no events"
    cut: str = "the catalogue says the match goes on to seq {cat_last}; the log stops at seq {last_seq}"
    head: str = "the catalogue's head for seq {cat_last} ({head}…) is not the log's"


#: The log's own words.
LOG_WORDS = ChainWords()


def chain_findings(rows: Iterable[Sequence[Any]], words: ChainWords = LOG_WORDS) -> list[Finding]:
    """The findings of a chain check's rows, one row a match: (match id, first seq missing, the seq
    found there, first seq whose hash does not chain, whether seq 0 is not match.started, last
    seq, the catalogue's last seq and head hash, the chain's hash at that seq, and "no catalogue" or
    "no events" where one side is missing)."""
    findings: list[Finding] = []
    for mid, gap_at, gap_found, bad_hash_at, bad_start, last_seq, cat_last, cat_head, hash_there, kind in rows:
        if kind == "no catalogue":
            findings.append(Finding(mid, None, "chain.no_catalogue", words.no_catalogue))
            continue
        if kind == "no events":
            findings.append(Finding(mid, None, "chain.no_events", words.no_events))
            continue
        if bad_start:
            findings.append(Finding(mid, 0, "chain.bad_start", "seq 0 is not match.started"))
        if gap_at is not None:
            message = f"expected seq {gap_at} but the next stored seq is {gap_found}"
            findings.append(Finding(mid, gap_at, "chain.seq_gap", message))
        if bad_hash_at is not None:
            message = f"seq {bad_hash_at}: the stored hash is not the hash of its row and the row before"
            findings.append(Finding(mid, bad_hash_at, "chain.hash_mismatch", message))
        if cat_last > last_seq:
            message = words.cut.format(cat_last=cat_last, last_seq=last_seq)
            findings.append(Finding(mid, last_seq + 1, "chain.head_mismatch", message))
        elif hash_there is None or bytes(hash_there) != bytes(cat_head):
            message = words.head.format(cat_last=cat_last, head=bytes(cat_head).hex()[:16])
            findings.append(Finding(mid, cat_last, "chain.head_mismatch", message))
    return findings


class Figures(msgspec.Struct, frozen=True):
    """The figures of one ended match, as of its event `last_seq`, under figures `version`."""

    match_id: UUID
    last_seq: int
    version: int
    rows: tuple[tuple[int | None, str, float], ...]


class SeatRow(msgspec.Struct, frozen=True):
    """One seat of one match in the `seats` projection."""

    match_id: UUID
    seat: int
    name: str
    player: str
    place: int | None = None
    score: float | None = None
    winner: bool | None = None
    removed: bool | None = None


class MatchInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A match as the catalogue describes it."""

    match_id: UUID
    game: str
    status: str  # running | finished | abandoned
    created_us: int
    ended_us: int | None = None
    players: tuple[str, ...]
    strategies: tuple[str, ...]
    options: str  # JSON
    last_seq: int
    head_hash: bytes
    ended_seq: int | None = None
    outcome: Outcome | None = None
    origin_match: UUID | None = None
    origin_seq: int | None = None
    series_id: str | None = None
    series_game: int | None = None

    @classmethod
    def started(cls, match_id: UUID, event: MatchStarted, at_us: int) -> MatchInfo:
        """The catalogue row of a match whose first event is `event`."""
        return cls(
            match_id=match_id,
            game=event.game,
            status="running",
            created_us=at_us,
            players=tuple(seat.name for seat in event.seats),
            strategies=tuple(seat.player for seat in event.seats),
            options=msgspec.json.encode(event.options, order="deterministic").decode(),
            last_seq=-1,
            head_hash=b"",
            origin_match=event.origin.match_id if event.origin else None,
            origin_seq=event.origin.seq if event.origin else None,
            series_id=event.series.id if event.series else None,
            series_game=event.series.game if event.series else None,
        )

    def after(self, seq: int, event: Event, at_us: int, head_hash: bytes) -> MatchInfo:
        """The row once `event` is appended at `seq`."""
        changes: dict[str, object] = {"last_seq": seq, "head_hash": head_hash}
        match event:
            case MatchEnded(outcome=outcome):
                changes |= {
                    "status": "abandoned" if outcome.result == "abandoned" else "finished",
                    "ended_us": at_us,
                    "ended_seq": seq,
                    "outcome": outcome,
                }
            case ActionsUndone(seqs=seqs) if self.ended_seq is not None and self.ended_seq in seqs:
                # The ending itself was taken back: the match is open again.
                changes |= {"status": "running", "ended_us": None, "ended_seq": None, "outcome": None}
        return msgspec.structs.replace(self, **changes)

    def seat_rows(self) -> list[SeatRow]:
        """The `seats` projection rows of this match as it stands."""
        outcome = self.outcome
        rows = []
        # (as long as the shorter list: a row edited by hand may hold lists of two lengths)
        for seat, (name, player) in enumerate(zip(self.players, self.strategies, strict=False)):
            if outcome is None or seat >= len(outcome.places):
                rows.append(SeatRow(self.match_id, seat, name, player))
                continue
            rows.append(
                SeatRow(
                    self.match_id,
                    seat,
                    name,
                    player,
                    place=outcome.places[seat],
                    score=outcome.scores[seat] if seat < len(outcome.scores) else None,
                    winner=seat in outcome.winners,
                    removed=seat in outcome.removed,
                )
            )
        return rows

    def row(self) -> tuple[object, ...]:
        """The `matches` table row, in MATCH_COLUMNS order (ids as text, times as naive UTC datetimes)."""
        outcome = self.outcome
        return (
            str(self.match_id),
            self.game,
            self.status,
            _naive(self.created_us),
            _naive(self.ended_us),
            list(self.players),
            list(self.strategies),
            self.options,
            self.last_seq,
            self.head_hash,
            self.ended_seq,
            msgspec.json.encode(outcome).decode() if outcome is not None else None,
            list(outcome.winners) if outcome is not None else None,
            str(self.origin_match) if self.origin_match is not None else None,
            self.origin_seq,
            self.series_id,
            self.series_game,
        )

    @classmethod
    def from_row(cls, row: tuple) -> MatchInfo:
        """Rebuild from a `SELECT {MATCH_COLUMNS}` row whose timestamps are selected as epoch_us."""
        (
            match_id,
            game,
            status,
            created_us,
            ended_us,
            players,
            strategies,
            options,
            last_seq,
            head_hash,
            ended_seq,
            result,
            _winners,
            origin_match,
            origin_seq,
            series_id,
            series_game,
        ) = row
        return cls(
            match_id=match_id,
            game=game,
            status=status,
            created_us=created_us,
            ended_us=ended_us,
            players=tuple(players),
            strategies=tuple(strategies),
            options=options,
            last_seq=last_seq,
            head_hash=bytes(head_hash),
            ended_seq=ended_seq,
            outcome=_outcome(result, len(players)),
            origin_match=origin_match,
            origin_seq=origin_seq,
            series_id=series_id,
            series_game=series_game,
        )


def _outcome(result: str | None, seats: int) -> Outcome | None:
    """The outcome a catalogue row holds; none when its JSON is not one that places each of `seats`
    seats (a row edited by hand, which `verify --deep` names: the events are the truth)."""
    if result is None:
        return None
    try:
        outcome = msgspec.json.decode(result, type=Outcome)
    except msgspec.MsgspecError:
        return None
    named = (*outcome.winners, *outcome.removed, *outcome.ranking)
    if len(outcome.places) != seats or any(not 0 <= seat < seats for seat in named):
        return None
    return outcome


def _naive(at_us: int | None) -> datetime | None:
    """A naive UTC datetime (what a DuckDB TIMESTAMP holds) from microseconds since the epoch."""
    return None if at_us is None else _EPOCH + timedelta(microseconds=at_us)


_MATCH_SELECT = ", ".join(
    f"epoch_us({column})" if column in ("created_at", "ended_at") else column for column in MATCH_COLUMNS
)


def select_matches(con: duckdb.DuckDBPyConnection, where: str = "", params: Sequence[Any] = ()) -> list[MatchInfo]:
    """Catalogue rows matching a WHERE clause."""
    rows = con.execute(f"SELECT {_MATCH_SELECT} FROM matches {where}", list(params)).fetchall()
    return [MatchInfo.from_row(row) for row in rows]


#: The largest LIMIT or OFFSET DuckDB takes.
_MAX_ROWS = 2**62


class CatalogueReads(LogHandle):
    """The catalogue of a `Store` (mixed into it): its rows as this process knows them, and figures."""

    def match(self, match_id: UUID | str) -> MatchInfo:
        """The catalogue row of one match (a unique id prefix will do).

        Raises:
            UnknownMatch: no such match.
        """
        resolved = match_id if isinstance(match_id, UUID) else self.resolve(match_id)
        # The writer may write the row to its table (and forget it) between our query and our look
        # in its memory: what memory held before the query is as fresh as anything acknowledged then.
        earlier = self._writer.fresh(resolved) if self._writer is not None else None
        found = self._fresh(select_matches(self._read(), "WHERE match_id = ?", [resolved]))
        if not found:
            if earlier is not None:
                return earlier
            raise UnknownMatch(f"no match {resolved} in {self.path}")
        if earlier is not None and earlier.last_seq > found[0].last_seq:
            return earlier
        return found[0]

    def info(self, match_id: UUID | str) -> MatchInfo:
        """`match` under the name the `Log` interface gives it (code that records or reads through
        either, such as the referee, calls this one).

        Raises:
            UnknownMatch: no such match.
        """
        return self.match(match_id)

    def _fresh(self, infos: list[MatchInfo]) -> list[MatchInfo]:
        """Catalogue rows as this process knows them (its writer may hold newer ones in memory)."""
        if self._writer is None:
            return infos
        return [self._writer.fresh(info.match_id) or info for info in infos]

    def matches(
        self,
        *,
        game: str | None = None,
        status: str | None = None,
        player: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MatchInfo]:
        """Catalogue rows, newest first: of one game, status, player (a seat's name or strategy), or
        started at or after `since` (UTC); `limit` and `offset` page through them."""
        self.sync()  # the filters read the table, which may lag what this process has committed
        clauses: list[str] = []
        params: list[Any] = []
        if game is not None:
            clauses.append("game = ?")
            params.append(game)
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if player is not None:
            clauses.append("(list_contains(players, ?) OR list_contains(strategies, ?))")
            params += [player, player]
        if since is not None:
            clauses.append("created_at >= ?")
            params.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        # A limit beyond what the log could hold is no limit (DuckDB takes at most a BIGINT).
        tail = f" LIMIT {int(limit)}" if limit is not None and limit < _MAX_ROWS else ""
        if offset:
            tail += f" OFFSET {min(int(offset), _MAX_ROWS)}"
        return self._fresh(
            select_matches(self._read(), f"{where} ORDER BY created_at DESC, match_id DESC{tail}", params)
        )

    def resolve(self, match_id: UUID | str) -> UUID:
        """The full id of a match given its id or a unique prefix of it.

        Raises:
            UnknownMatch: no match, or more than one, has that prefix.
        """
        if isinstance(match_id, UUID):
            found = self._read().execute("SELECT match_id FROM matches WHERE match_id = ?", [match_id]).fetchall()
            if not found:
                raise UnknownMatch(f"no match {match_id} in {self.path}")
            return match_id
        query = "SELECT match_id FROM matches WHERE match_id::VARCHAR LIKE ? ORDER BY match_id LIMIT 2"
        return unique_prefix(
            match_id, "match", str(self.path), lambda like: self._read().execute(query, [like]).fetchall()
        )
