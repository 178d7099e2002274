"""`FileLog`: the `Log` interface over a DuckDB file opened in this process.

It is the embedded default (the CLI on a log nobody serves, a notebook) and what the service
itself serves: every method is the store's or the replay layer's own function, so the file, the
service and the CLI through the service all answer alike. Every write goes through the log's clerk
(`replay.clerk`): each event is judged by its match's judge before the store writes it, whether it
comes from `append`, a bulk append, an import, an undo, an abandonment or a fork.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from uuid import UUID

from matchlog.engines import get as get_engine
from matchlog.events import DecodeError, Draft, Event, MatchlogError, ProofError, StoreError, UsageError
from matchlog.replay import dispute, export_seat_jsonl, state_at, statistics, timeline
from matchlog.replay.aggregates import catalogue_row
from matchlog.replay.audit import AuditFinding, MatchAudit, audit
from matchlog.replay.clerk import Clerk
from matchlog.replay.deep import verify_deep
from matchlog.replay.duels import DuelReport, duel_report
from matchlog.replay.frames import Frame, frames
from matchlog.replay.ratings import RatingTable, rating_table
from matchlog.replay.views import seat_audit, seat_dispute, seat_lines, seat_state
from matchlog.store import Appended, Figures, MatchInfo, Store

from .annotating import FileAnnotating
from .log import SPECTATOR, Line, Log, Position, SqlResult, Verification

if TYPE_CHECKING:  # the proofs load cryptography: only commands that sign or prove need it
    from matchlog.proofs.notes import Signer
    from matchlog.proofs.verifier import Problem

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


@contextlib.contextmanager
def _folding(match_id: UUID) -> Iterator[None]:
    """Name a match whose events the rules cannot fold (its rows edited by hand, say: `verify` tells)
    rather than fail with whatever the game's code raised.

    Raises:
        DecodeError: `match.unreadable`, naming the match.
    """
    try:
        yield
    except MatchlogError:
        raise
    except Exception as error:
        raise DecodeError(
            f"match {match_id} cannot be read back: its game's rules cannot fold its events "
            f"({type(error).__name__}: {error}); `matchlog verify` says whether its rows were changed",
            code="match.unreadable",
        ) from error


def _check_game(game: str | None) -> None:
    if game is not None:
        get_engine(game)  # UsageError naming the games there are


class FileLog(FileAnnotating, Log):
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
        self._signer: Signer | None = None
        #: The one write path: every event judged before the store writes it.
        self.clerk = Clerk(self.store)

    @classmethod
    def over(cls, store: Any, location: str | Path) -> FileLog:
        """The log at `location` through a store another process holds (`store.remote.RemoteStore`:
        a service's front), judged and read here as if the file were open in this process."""
        log = cls.__new__(cls)
        log.location = str(location)
        log.store = store
        log._signer = None
        log.clerk = Clerk(store)
        return log

    def own_chance(self, key: bytes) -> None:
        """From here on the log's owner (the service) draws the chance of the matches it starts with
        its own chance (`Clerk.start`), from seeds derived from `key` and each match."""
        self.clerk = Clerk(self.store, key=key)

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

    def info(self, match: UUID | str, *, as_seat: int | None = None) -> MatchInfo:
        info = self.store.match(match)
        if as_seat is None:
            return info
        seat_for(as_seat, len(info.players))
        return catalogue_row(info, as_seat)

    def count(self) -> int:
        return self.store.count()

    # -- one match ----------------------------------------------------------------------------

    def lines(
        self, match: UUID | str, *, start: int = 0, stop: int | None = None, as_seat: int | None = None
    ) -> list[Line]:
        if stop is not None and stop < start:
            raise UsageError(
                f"the seqs asked for end at {stop} before they start at {start}: give the first seq first",
                code="usage.range",
            )
        info = self.store.match(match)
        seat = seat_for(as_seat, len(info.players))
        records = self.store.read(info.match_id, stop=stop)
        with _folding(info.match_id):
            if as_seat is not None:  # every seat output goes through the views (replay.views)
                return [
                    Line(
                        match_id=line.match_id,
                        seq=line.seq,
                        at_us=line.at_us,
                        actor=line.actor,
                        type=line.type,
                        event=line.event,
                        text=line.text,
                        undone_by=line.undone_by,
                        as_seat=as_seat,
                        joins=line.joins,
                    )
                    for line in seat_lines(records, seat)
                    if line.seq >= start
                ]
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
                    event_id=step.record.event_id,
                    hash=step.record.hash,
                    joins=step.joins,
                )
                for step in timeline(records)
                if step.record.seq >= start
            ]

    def state(self, match: UUID | str, seq: int | None = None, *, as_seat: int | None = None) -> Position:
        info = self.store.match(match)
        seat = seat_for(as_seat, len(info.players))
        # The catalogue row is read: time travel need not read it again (one query of five saved).
        with _folding(info.match_id):
            current = state_at(self.store, info.match_id, info.last_seq if seq is None else seq)
            engine, state = current.engine, current.state
            if as_seat is not None:  # every seat output goes through the views (replay.views)
                seen = seat_state(engine, info.match_id, current.seq, state, seat)
            else:
                to_act, outcome, text = engine.to_act(state), engine.outcome(state), engine.render(state)
        if as_seat is not None:
            return Position(
                match_id=info.match_id,
                game=info.game,
                seq=seen.seq,
                last_seq=info.last_seq,
                as_seat=as_seat,
                state=seen.state,
                to_act=seen.to_act,
                outcome=seen.outcome,
                text=seen.text,
            )
        return Position(
            match_id=info.match_id,
            game=info.game,
            seq=current.seq,
            last_seq=info.last_seq,
            as_seat=None,
            state=state,
            to_act=to_act,
            outcome=outcome,
            text=text,
        )

    def read(self, match: UUID | str, *, start: int = 0, stop: int | None = None) -> list[Any]:
        return self.store.read(match, start=start, stop=stop)

    def frames(
        self, match: UUID | str, *, start: int = 0, stop: int | None = None, as_seat: int | None = None
    ) -> list[Frame]:
        info = self.store.match(match)
        seat_for(as_seat, len(info.players))
        last = info.last_seq if stop is None else min(stop, info.last_seq)
        if start > last:
            raise UsageError(
                f"seq {start} is not in match {info.match_id} (seqs 0 to {info.last_seq})", code="usage.seq"
            )
        records = self.store.read(info.match_id, stop=last)
        with _folding(info.match_id):
            return frames(records, as_seat, start=start, stop=last)

    # -- checking -----------------------------------------------------------------------------

    def verify(self, matches: UUID | str | Sequence[UUID] | None = None, *, deep: bool = False) -> Verification:
        if deep:
            ids = None if matches is None else [self.store.resolve(m) for m in _as_list(matches)]
            findings = verify_deep(self.store, ids)
        else:
            findings = self.store.verify(matches)
        # The annotations' own chains (never part of a match's): an edited one is named too.
        findings += self.store.verify_annotations(None if matches is None else self._resolved(_as_list(matches)))
        if matches is None:  # the whole log: its tree's leaves are its events and annotations, each once
            findings += self.store.verify_tree()
            count, events = len(self.store.matches()), self.store.count()
        elif isinstance(matches, UUID | str):
            count, events = 1, self.store.match(matches).last_seq + 1
        else:
            count, events = self._counted(matches)
        return Verification(ok=not findings, matches=count, events=events, findings=list(findings), deep=deep)

    def _counted(self, matches: Sequence[UUID]) -> tuple[int, int]:
        """How many of `matches` the catalogue holds, and their events: one query, not one a match
        (an archiver verifies thousands at a time)."""
        ids = list(matches)
        if len(ids) <= 8:
            infos = [self.store.match(m) for m in ids]
            return len(infos), sum(i.last_seq + 1 for i in infos)
        rows = self.store.query(
            "SELECT count(*), coalesce(sum(last_seq) + count(*), 0) FROM matches"
            " WHERE match_id IN (SELECT unnest(?::UUID[]))",
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

    def audit(self, matches: Sequence[UUID | str] | None = None, *, as_seat: int | None = None) -> Iterator[MatchAudit]:
        ids = None if matches is None else self._resolved(matches)
        if as_seat is None:
            return self._whole_audits(ids)
        chosen = ids if ids is not None else [info.match_id for info in self.store.matches()]
        return (self._seat_audit(match_id, _engine_seat(as_seat)) for match_id in chosen)

    def _whole_audits(self, ids: list[UUID] | None) -> Iterator[MatchAudit]:
        """Every audit, in batches; from a match that cannot be read back at all (a game this matchlog
        does not know, a table its rules refuse) on, one at a time, that one a finding of its own."""
        done: set[str] = set()
        try:
            for report in audit(self.store, ids):
                done.add(report.match_id)
                yield report
            return
        except MatchlogError:
            pass
        chosen = ids if ids is not None else [row[0] for row in self.store.query("SELECT match_id FROM matches")]
        for match_id in sorted(m for m in chosen if str(m) not in done):
            try:
                yield from audit(self.store, [match_id])
            except MatchlogError as error:
                yield _unreadable(self.store.match(match_id), error, error.message)

    def _seat_audit(self, match_id: UUID, seat: int | None) -> MatchAudit:
        """One match's audit as `seat` sees it; a match that cannot be read back as a seat saw it is a
        finding of its own, its words withheld (they may quote what the seat may not see).

        Raises:
            UsageError: the match has no such seat.
        """
        try:
            return seat_audit(self.store, match_id, seat)
        except MatchlogError as error:
            if error.code == "usage.seat":
                raise
            return _unreadable(self.store.match(match_id), error, "it cannot be read back as a seat saw it")

    def dispute(self, match: UUID | str, seq: int, *, as_seat: int | None = None) -> Any:
        if as_seat is None:
            return dispute(self.store, match, seq)
        return seat_dispute(self.store, match, seq, _engine_seat(as_seat))

    # -- across matches -----------------------------------------------------------------------

    def stats(
        self, game: str | None = None, *, by: str = "player", since: datetime | None = None, as_seat: int | None = None
    ) -> Any:
        _check_game(game)
        if by not in ("player", "seat"):
            raise UsageError(f"statistics go by player or by seat, not {by!r}", code="usage.by")
        return statistics(self.store, game, by=by, since=since, as_seat=as_seat)

    def rating_table(
        self,
        game: str | None = None,
        *,
        since: datetime | None = None,
        series: str | None = None,
        players: Sequence[str] = (),
        aliases: dict[str, str] | None = None,
        anchor: str | None = None,
    ) -> RatingTable:
        _check_game(game)
        return rating_table(
            self.store, game, since=since, series=series, players=players, aliases=aliases, anchor=anchor
        )

    def duel(self, duel: str) -> DuelReport:
        return duel_report(self.store, duel.strip())

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
        on_skip: Callable[[UUID, MatchlogError], None] | None = None,
    ) -> int:
        ids = None if matches is None else self._resolved(matches)
        if as_seat is not None:
            if format != "jsonl":
                raise UsageError("a seat's view is exported as JSON Lines only", code="usage.export")
            chosen = ids if ids is not None else [info.match_id for info in self.store.matches()]
            return export_seat_jsonl(self.store, out, chosen, _engine_seat(as_seat), on_skip=on_skip)
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

    def results_frame(
        self, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None
    ) -> Any:
        from .frames import results_frame

        return results_frame(self.store, game=game, since=since, as_seat=as_seat)

    def seats_frame(self, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None) -> Any:
        from .frames import seats_frame

        return seats_frame(self.store, game=game, since=since, as_seat=as_seat)

    # -- appending ----------------------------------------------------------------------------

    def append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> Appended:
        return self.clerk.append(match_id, events, expected_seq)

    def append_async(
        self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int, *, figures: Any = None
    ) -> Future[Appended]:
        return self.clerk.submit(match_id, events, expected_seq, figures=figures)[0]

    def append_bulk_encoded(
        self, batches: Iterable[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]
    ) -> list[Appended]:
        return self.clerk.append_bulk_encoded(list(batches))

    def put_figures(self, sets: Sequence[Figures], *, wait: bool = True) -> Future[None] | None:
        return self.store.put_figures(sets, wait=wait)

    def import_jsonl(self, lines: Iterable[bytes]) -> list[Appended]:
        return self.clerk.import_jsonl(lines)  # the chains, and what only a referee could have recorded

    def undo(self, match: UUID | str, *, reason: str = "") -> Appended:
        return self.clerk.undo(match, reason=reason)

    def abandon(self, match: UUID | str, *, reason: str) -> Appended:
        return self.clerk.abandon(match, reason=reason)

    def fork(self, match: UUID | str, at: int) -> UUID:
        return self.clerk.fork(match, at)

    # -- proofs -------------------------------------------------------------------------------

    def signer(self, *, create: bool = True, name: str | None = None) -> Signer | None:
        """The log's signing key (DB.key beside the file; made on first use where the log may write,
        named `name` if given; a log in memory has one of its own), or None when there is none.

        Raises:
            ProofError: the key file is not a key, or is named other than `name`.
        """
        from matchlog.proofs.notes import Signer, default_name, load_signer
        from matchlog.proofs.verifier import NoteError

        if self._signer is None:
            try:
                if self.location == ":memory:":
                    self._signer = Signer.generate(name or default_name("memory"))
                else:
                    self._signer = load_signer(self.location, create=create and self.writable, name=name)
            except NoteError as error:
                raise ProofError(f"{self.location}.key: {error}", code="proof.key") from None
        elif name is not None and name != self._signer.name:
            raise ProofError(f"the log's key is already named {self._signer.name!r}", code="proof.key")
        return self._signer

    def _required_signer(self) -> Signer:
        signer = self.signer()
        if signer is None:
            raise ProofError(
                f"the log {self.location} has no signing key this user may read (its owner makes it: `matchlog key`)",
                code="proof.no_key",
            )
        return signer

    def key(self) -> str:
        return str(self._required_signer().verifier)

    def checkpoint(self, *, new: bool = True) -> str:
        from matchlog.replay import proofs

        if new and self.writable:
            return proofs.checkpoint(self.store, self._required_signer())
        kept = self.store.checkpoints(limit=1)
        if not kept:
            raise ProofError("the log has signed no checkpoint yet: `matchlog checkpoint`", code="proof.no_checkpoint")
        return kept[0][2]

    def receipt(self, match: UUID | str) -> str:
        from matchlog.replay import proofs

        return proofs.receipt(self.store, match, self._required_signer())

    def prove(
        self,
        match: UUID | str,
        *,
        seq: int | None = None,
        against: str | None = None,
        as_seat: int | None = None,
    ) -> dict[str, Any]:
        from matchlog.replay import proofs

        return proofs.prove(self.store, match, seq=seq, against=against, as_seat=as_seat, signer=self.signer())

    def verify_against(self, notes: Sequence[str], *, key: str | None = None) -> list[Problem]:
        from matchlog.proofs.verifier import NoteError, parse_verifier_key
        from matchlog.replay import proofs

        if key is not None:
            try:
                verifier = parse_verifier_key(key)
            except NoteError as error:
                raise ProofError(f"--key: {error}", code="proof.key") from None
        else:
            signer = self.signer(create=False)
            if signer is None:
                raise ProofError(
                    "the log has no key to check with: give the log's public key with --key KEY "
                    "(as `matchlog key` prints it where the log is kept)",
                    code="proof.no_key",
                )
            verifier = signer.verifier
        return proofs.verify_against(self.store, notes, verifier)


def _unreadable(info: MatchInfo, error: MatchlogError, said: str) -> MatchAudit:
    """The audit of a match that cannot be read back: one finding, with the error's code."""
    finding = AuditFinding(match_id=str(info.match_id), seq=None, rule=error.code, message=said)
    return MatchAudit(match_id=str(info.match_id), game=info.game, events=info.last_seq + 1, findings=[finding])


def _engine_seat(as_seat: int) -> int | None:
    """A view's seat as the replay layer takes it (None: a spectator)."""
    return None if as_seat == SPECTATOR else as_seat


def _as_list(matches: UUID | str | Sequence[UUID]) -> list[UUID | str]:
    return [matches] if isinstance(matches, UUID | str) else list(matches)


def _may_write(path: Path) -> bool:
    """Whether this process may write the log file (and make its write-ahead log beside it)."""
    return os.access(path, os.W_OK) and os.access(path.parent if str(path.parent) else Path("."), os.W_OK)
