"""`FileLog`: the `Log` interface over a DuckDB file opened in this process.

It is the embedded default (the CLI on a log nobody serves, a notebook) and what the service
itself serves: every method is the store's or the replay layer's own function, so the file, the
service and the CLI through the service all answer alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from typing import IO, Any
from uuid import UUID

from matchlog.engines import CHANCE, Turn
from matchlog.engines import get as get_engine
from matchlog.events import Draft, Event, StoreError, UsageError
from matchlog.replay import abandon, dispute, export_seat_jsonl, fork, state_at, statistics, timeline, undo
from matchlog.replay.audit import MatchAudit, audit
from matchlog.store import Appended, Figures, MatchInfo, Store

from .log import SPECTATOR, Line, Log, Position, SqlResult, Verification

__all__ = ["FileLog", "seat_for"]

#: How a FileLog opens its file.
MODES = ("read", "auto", "write", "create")


def seat_for(as_seat: int | None, seats: int) -> int | None:
    """The engine's seat for a view: `as_seat` itself, or None for a spectator (-1).

    Raises:
        UsageError: the match has no such seat.
    """
    if as_seat is None or as_seat == SPECTATOR:
        return None
    if not 0 <= as_seat < seats:
        raise UsageError(
            f"seat {as_seat}: the match has seats 0 to {seats - 1} (or -1, a spectator)", code="usage.seat"
        )
    return as_seat


def _check_game(game: str | None) -> None:
    if game is not None:
        get_engine(game)  # UsageError naming the games there are


class FileLog(Log):
    """A log file opened in this process. `mode`: "read" (read-only), "auto" (for writing where the
    file allows it, else read-only: that rolls the catalogue forward after a crash and lets time
    travel cache its snapshots), "write", or "create" (a new log may be made)."""

    def __init__(self, path: str | Path, *, mode: str = "read") -> None:
        if mode not in MODES:
            raise ValueError(f"mode is one of {MODES}, not {mode!r}")
        self.location = str(path)
        memory = self.location == ":memory:"
        if not memory and mode != "create" and not Path(path).exists():
            raise StoreError(f"there is no log at {path} (play a match first, or give --db)", code="store.missing")
        read_only = mode == "read" or (mode == "auto" and not memory and not _may_write(Path(path)))
        self.store = Store(path, read_only=read_only)

    # -- the log as a whole -------------------------------------------------------------------

    @property
    def writable(self) -> bool:
        return self.store.writable

    def close(self) -> None:
        self.store.close()

    def matches(
        self,
        *,
        game: str | None = None,
        player: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MatchInfo]:
        _check_game(game)
        if status is not None and status not in ("running", "finished", "abandoned"):
            raise UsageError(f"status is running, finished or abandoned, not {status!r}", code="usage.status")
        if (limit is not None and limit < 0) or offset < 0:
            raise UsageError("limit and offset cannot be negative", code="usage.limit")
        return self.store.matches(game=game, status=status, player=player, since=since, limit=limit, offset=offset)

    def info(self, match: UUID | str) -> MatchInfo:
        return self.store.match(match)

    def count(self) -> int:
        return self.store.count()

    # -- one match ----------------------------------------------------------------------------

    def lines(
        self, match: UUID | str, *, start: int = 0, stop: int | None = None, as_seat: int | None = None
    ) -> list[Line]:
        info = self.store.match(match)
        seat = seat_for(as_seat, len(info.players))
        records = self.store.read(info.match_id, stop=stop)
        full = as_seat is None
        return [
            Line(
                match_id=step.record.match_id,
                seq=step.record.seq,
                at_us=step.record.at_us,
                actor=step.record.actor,
                type=step.event.tag,
                event=step.event,
                text=step.text,
                undone_by=step.undone_by,
                as_seat=as_seat,
                event_id=step.record.event_id if full else None,
                hash=step.record.hash if full else None,
            )
            for step in timeline(records, seat, as_seat=not full)
            if step.record.seq >= start
        ]

    def state(self, match: UUID | str, seq: int | None = None, *, as_seat: int | None = None) -> Position:
        info = self.store.match(match)
        seat = seat_for(as_seat, len(info.players))
        current = state_at(self.store, info.match_id, seq)
        engine, state = current.engine, current.state
        turn = engine.to_act(state)
        if as_seat is not None:
            state = engine.view(state, seat)
            if turn is not None and turn.seat not in (seat, CHANCE):
                # Whose turn it is everyone sees; what that seat must decide may tell what it holds.
                turn = Turn(seat=turn.seat, decision="turn")
        return Position(
            match_id=info.match_id,
            game=info.game,
            seq=current.seq,
            last_seq=info.last_seq,
            as_seat=as_seat,
            state=state,
            to_act=turn,
            outcome=engine.outcome(current.state),
            text=engine.render(state),
        )

    def read(self, match: UUID | str, *, start: int = 0, stop: int | None = None) -> list[Any]:
        return self.store.read(match, start=start, stop=stop)

    # -- checking -----------------------------------------------------------------------------

    def verify(self, matches: UUID | str | Sequence[UUID] | None = None, *, deep: bool = False) -> Verification:
        findings = self.store.verify(matches)
        if matches is None:
            count, events = len(self.store.matches()), self.store.count()
        elif isinstance(matches, UUID | str):
            count, events = 1, self.store.match(matches).last_seq + 1
        else:
            count, events = self._counted(matches)
        return Verification(ok=not findings, matches=count, events=events, findings=list(findings))

    def _counted(self, matches: Sequence[UUID]) -> tuple[int, int]:
        """How many of `matches` the catalogue holds, and their events: one query, not one a match
        (an archiver verifies thousands at a time)."""
        ids = list(matches)
        if len(ids) <= 8:
            infos = [self.store.match(m) for m in ids]
            return len(infos), sum(i.last_seq + 1 for i in infos)
        rows = self.store.query(
            "SELECT count(*), coalesce(sum(last_seq + 1), 0) FROM matches WHERE match_id IN (SELECT unnest(?::UUID[]))",
            [[str(m) for m in ids]],
        )
        if rows[0][0] < len(set(ids)):
            self._resolved(ids)  # raises UnknownMatch, naming one that is not in the log
        return int(rows[0][0]), int(rows[0][1])

    def _resolved(self, matches: Sequence[UUID | str]) -> list[UUID]:
        """Full ids of `matches` (ids or unique prefixes); ids are checked in one query.

        Raises:
            UnknownMatch: one of them is not in the log.
        """
        given = list(matches)
        if len(given) <= 8 or not all(isinstance(m, UUID) for m in given):
            return [self.store.resolve(m) for m in given]
        # (a list of ids only: checked in one query)
        found = {
            row[0]
            for row in self.store.query(
                "SELECT match_id FROM matches WHERE match_id IN (SELECT unnest(?::UUID[]))", [[str(m) for m in given]]
            )
        }
        for match_id in given:
            if match_id not in found:
                self.store.resolve(match_id)  # raises UnknownMatch
        return given  # type: ignore[return-value]

    def audit(self, matches: Sequence[UUID | str] | None = None) -> Iterator[MatchAudit]:
        ids = None if matches is None else self._resolved(matches)
        return audit(self.store, ids)

    def dispute(self, match: UUID | str, seq: int) -> Any:
        return dispute(self.store, match, seq)

    # -- across matches -----------------------------------------------------------------------

    def stats(self, game: str | None = None, *, by: str = "player", since: datetime | None = None) -> Any:
        _check_game(game)
        if by not in ("player", "seat"):
            raise UsageError(f"statistics go by player or by seat, not {by!r}", code="usage.by")
        return statistics(self.store, game, by=by, since=since)

    def sql(self, query: str, *, timeout: float | None = None, max_rows: int | None = None) -> SqlResult:
        from matchlog.store import DEFAULT_SQL_ROWS, DEFAULT_SQL_TIMEOUT

        columns, rows, cut = self.store.select(
            query,
            timeout=DEFAULT_SQL_TIMEOUT if timeout is None else timeout,
            max_rows=DEFAULT_SQL_ROWS if max_rows is None else max_rows,
        )
        return SqlResult(columns=columns, rows=[list(row) for row in rows], truncated=cut)

    def export(
        self,
        out: IO[bytes],
        matches: Sequence[UUID | str] | None = None,
        *,
        format: str = "jsonl",
        as_seat: int | None = None,
    ) -> int:
        ids = None if matches is None else self._resolved(matches)
        if as_seat is not None:
            if format != "jsonl":
                raise UsageError("a seat's view is exported as JSON Lines only", code="usage.export")
            chosen = ids if ids is not None else [info.match_id for info in self.store.matches()]
            return export_seat_jsonl(self.store, out, chosen, None if as_seat == SPECTATOR else as_seat)
        if format == "parquet":
            return self.store.export_parquet(out, ids)
        if format == "jsonl":
            return self.store.export_jsonl(out, ids)
        raise UsageError(f"no export format {format!r}", code="usage.export")

    # -- frames for analysis ------------------------------------------------------------------

    def events_frame(
        self, *, game: str | None = None, matches: Sequence[UUID | str] | None = None, flatten: bool = False
    ) -> Any:
        from .frames import events_frame

        ids = None if matches is None else self._resolved(matches)
        return events_frame(self.store, game=game, matches=ids, flatten=flatten)

    def results_frame(self, *, game: str | None = None, since: datetime | None = None) -> Any:
        from .frames import results_frame

        return results_frame(self.store, game=game, since=since)

    def seats_frame(self, *, game: str | None = None, since: datetime | None = None) -> Any:
        from .frames import seats_frame

        return seats_frame(self.store, game=game, since=since)

    # -- appending ----------------------------------------------------------------------------

    def append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> Appended:
        return self.store.append(match_id, events, expected_seq)

    def append_async(
        self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int, *, figures: Any = None
    ) -> Future[Appended]:
        return self.store.append_async(match_id, events, expected_seq, figures=figures)

    def append_bulk_encoded(
        self, batches: Iterable[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]
    ) -> list[Appended]:
        return self.store.append_bulk_encoded(batches)

    def put_figures(self, sets: Sequence[Figures], *, wait: bool = True) -> Future[None] | None:
        return self.store.put_figures(sets, wait=wait)

    def import_jsonl(self, lines: Iterable[bytes]) -> list[Appended]:
        return self.store.import_jsonl(lines)

    def undo(self, match: UUID | str, *, reason: str = "") -> Appended:
        return undo(self.store, match, reason=reason)

    def abandon(self, match: UUID | str, *, reason: str) -> Appended:
        return abandon(self.store, match, reason=reason)

    def fork(self, match: UUID | str, at: int) -> UUID:
        return fork(self.store, match, at)


def _may_write(path: Path) -> bool:
    """Whether this process may write the log file (and make its write-ahead log beside it)."""
    return os.access(path, os.W_OK) and os.access(path.parent if str(path.parent) else Path("."), os.W_OK)
