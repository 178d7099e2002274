"""The one interface to a match log, whether it is a DuckDB file opened here or a running
`matchlog serve`: every command of the CLI, every handler of the service and every notebook
talks to a log through `Log`, so a command is written once and works on both.

A `Log` answers in msgspec Structs (the same ones the service sends as JSON), and takes a
reader's view as `as_seat`: None for the whole record (the referee's view), -1 for a spectator,
or a seat number for what that seat could see at each point. A server decides which views a
caller may ask for from its token; a file opened here holds everything and gives any view.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import IO, Any
from uuid import UUID

import msgspec

from matchlog.engines import Turn
from matchlog.events import AnyEvent, Draft, Event, MatchlogError, Outcome

from .annotating import Annotating

__all__ = [
    "SPECTATOR",
    "Line",
    "Log",
    "Match",
    "Position",
    "SqlResult",
    "Verification",
]

#: `as_seat` for a spectator: what every seat may see.
SPECTATOR = -1


class Line(msgspec.Struct, frozen=True, kw_only=True):
    """One event of a match as one reader sees it, and what it did in words (a `replay` line).

    `as_seat` is the view (None: the whole record; -1: a spectator; k: seat k). A redacted event
    carries no hash or id: they are the record's, and a hash over hidden values would let a reader
    test guesses of them."""

    match_id: UUID
    seq: int
    at_us: int
    actor: int | None
    type: str
    event: AnyEvent  # type: ignore[valid-type]
    text: str
    undone_by: int | None = None
    as_seat: int | None = None
    event_id: UUID | None = None
    hash: bytes | None = None
    #: It goes on the line before it (a backgammon turn's next checker): `replay` and the viewer
    #: show the two as one line, with this one's text.
    joins: bool = False


class Position(msgspec.Struct, frozen=True, kw_only=True):
    """A match's state after one seq, as one reader sees it: the state itself (the engine's own
    type), whose decision is awaited, how it ended, and the state drawn as text."""

    match_id: UUID
    game: str
    seq: int
    last_seq: int
    as_seat: int | None
    state: Any
    to_act: Turn | None = None  # whose decision, as the reader may know it
    outcome: Outcome | None = None
    text: str = ""


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    """What `verify` found: nothing (ok), or each problem at its match and seq."""

    ok: bool
    matches: int
    events: int
    findings: list[Any]  # store.Finding
    deep: bool = False


class SqlResult(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to a read-only query: column names and rows (at most the row limit)."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False


class Log(Annotating, abc.ABC):
    """A match log: read, check, query, and append to it, whether a file opened here or a server.

    Answers are msgspec Structs, the same ones the service sends as JSON. A reader's view is
    `as_seat`: None for the whole record (the referee's view), -1 for a spectator, or a seat number
    for what that seat could see at each point. A server decides from the caller's token which
    views it may have; a file opened here holds everything and gives any view."""

    #: Where the log is: a file path, or a server's URL.
    location: str

    # -- the log as a whole -------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def writable(self) -> bool:
        """Whether this log takes appends (a file opened read-only, or a reader's token, does not)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Let go of the log (commit what is queued, release the file or the connection)."""

    def __enter__(self) -> Log:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @abc.abstractmethod
    def matches(
        self,
        *,
        game: str | None = None,
        player: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Any]:
        """Catalogue rows (`store.MatchInfo`), newest first, filtered by game, a player's name or
        strategy, status and start time; `limit` and `offset` page through them.

        Raises:
            UsageError: no such game, or a limit out of range.
        """

    @abc.abstractmethod
    def info(self, match: UUID | str, *, as_seat: int | None = None) -> Any:
        """The catalogue row (`store.MatchInfo`) of one match, given its id or a unique prefix, as
        `as_seat` may know it (a spectator or a seat gets no head hash of a game that hides anything).

        Raises:
            UnknownMatch: no match, or more than one, has that id or prefix.
            UsageError: a seat the match does not have.
        """

    def match(self, match: UUID | str) -> Match:
        """A handle on one match, for reading it step by step.

        Raises:
            UnknownMatch: as for `info`.
        """
        return Match(self, self.info(match))

    @abc.abstractmethod
    def count(self) -> int:
        """How many events the log holds."""

    # -- one match ----------------------------------------------------------------------------

    @abc.abstractmethod
    def lines(
        self, match: UUID | str, *, start: int = 0, stop: int | None = None, as_seat: int | None = None
    ) -> list[Line]:
        """The events of one match from `start` to `stop` (inclusive), as `as_seat` sees them.

        Raises:
            UnknownMatch: no such match.
            UsageError: a seat the match does not have.
        """

    @abc.abstractmethod
    def state(self, match: UUID | str, seq: int | None = None, *, as_seat: int | None = None) -> Position:
        """The state after `seq` (default: the last), as `as_seat` sees it.

        Raises:
            UnknownMatch: no such match.
            UsageError: the seq or the seat is not in the match.
        """

    @abc.abstractmethod
    def read(self, match: UUID | str, *, start: int = 0, stop: int | None = None) -> list[Any]:
        """The whole record of one match from `start` to `stop` (`events.Record`: every event with
        its id and hash), for the referee's view: folding, audits, proofs. (`Store.read` too.)

        Raises:
            UnknownMatch: no such match.
            Forbidden: (a server) the caller may not see the whole record.
        """

    @abc.abstractmethod
    def frames(
        self, match: UUID | str, *, start: int = 0, stop: int | None = None, as_seat: int | None = None
    ) -> list[Any]:
        """What the viewer draws after each seq from `start` to `stop` (`replay.Frame`: the board's
        drawing model, whose turn, the outcome), as `as_seat` sees it.

        Raises:
            UnknownMatch: no such match.
            UsageError: the seq or the seat is not in the match.
        """

    # -- checking -----------------------------------------------------------------------------

    @abc.abstractmethod
    def verify(self, matches: UUID | str | Sequence[UUID] | None = None, *, deep: bool = False) -> Verification:
        """Check the hash chains of one match, some, or all; `deep` also re-derives what is kept
        beside the events.

        Raises:
            UnknownMatch: a single match was asked for and there is no such match.
        """

    @abc.abstractmethod
    def audit(self, matches: Sequence[UUID | str] | None = None, *, as_seat: int | None = None) -> Iterator[Any]:
        """Re-judge matches by the rules (all by default): one `replay.MatchAudit` each; with
        `as_seat`, each report as that seat may see it (every finding's seq and rule, its evidence
        only about what the seat saw whole).

        Raises:
            UsageError: a seat the match does not have.
        """

    @abc.abstractmethod
    def dispute(self, match: UUID | str, seq: int, *, as_seat: int | None = None) -> Any:
        """The evidence about one event (`replay.Dispute`), as `matchlog audit MATCH --seq N`;
        with `as_seat`, as that seat may see it.

        Raises:
            UnknownMatch, UsageError: no such match, seq or seat.
        """

    # -- across matches -----------------------------------------------------------------------

    @abc.abstractmethod
    def stats(
        self, game: str | None = None, *, by: str = "player", since: datetime | None = None, as_seat: int | None = None
    ) -> Any:
        """Statistics across matches (`replay.Statistics`), as `matchlog stats`: whole, or (`as_seat`
        -1) as every reader may know them (a server gives a caller who may not see every match whole
        that view whatever it asks).

        Raises:
            UsageError: no such game, `by` is not player or seat, or a seat's view.
        """

    @abc.abstractmethod
    def rating_table(
        self,
        game: str | None = None,
        *,
        since: datetime | None = None,
        series: str | None = None,
        players: Sequence[str] = (),
        aliases: dict[str, str] | None = None,
        anchor: str | None = None,
    ) -> Any:
        """The players' ratings (`replay.RatingTable`), computed again from the ended matches of
        the log, as `matchlog ratings`.

        Raises:
            UsageError: no such game, a bad alias, or an anchor that did not play.
        """

    def ratings(self, game: str | None = None, **filters: Any) -> Any:
        """The ratings (`rating_table`'s, with the same filters) as an Arrow table, one row per
        player (`.to_pandas()`; polars.from_arrow).

        Raises:
            UsageError: no such game, a bad alias, or an anchor that did not play.
        """
        from matchlog.replay.ratings import ratings_frame

        return ratings_frame(self.rating_table(game, **filters))

    @abc.abstractmethod
    def duel(self, duel: str) -> Any:
        """A duel's report (`replay.DuelReport`), computed again from its games in the log.

        Raises:
            UnknownMatch: no game of the log belongs to that duel.
        """

    @abc.abstractmethod
    def sql(self, query: str, *, timeout: float | None = None, max_rows: int | None = None) -> SqlResult:
        """One SELECT over the log's tables and views, where nothing can change the log (a read-only
        transaction, always rolled back: docs/log.md), stopped after `timeout` seconds, with at most
        `max_rows` rows and 64 MB of them.

        Raises:
            SqlError: not one SELECT, refused, failed, out of time or memory, or a result past 64 MB
                (`sql.too_large`).
        """

    @abc.abstractmethod
    def export(
        self,
        out: IO[bytes],
        matches: Sequence[UUID | str] | None = None,
        *,
        format: str = "jsonl",
        as_seat: int | None = None,
        on_skip: Callable[[UUID, MatchlogError], None] | None = None,
    ) -> int:
        """Write matches (all by default) to `out`: `jsonl` (the importable record with its hash
        chain, or with `as_seat` that seat's lines) or `parquet`; returns how many events. A match
        a seat's export cannot read back (a game this matchlog does not know) is left out and given
        to `on_skip` (without one, it is raised).

        Raises:
            UsageError: a format or view that cannot be exported.
        """

    # -- frames for analysis ------------------------------------------------------------------

    @abc.abstractmethod
    def events_frame(
        self, *, game: str | None = None, matches: Sequence[UUID | str] | None = None, flatten: bool = False
    ) -> Any:
        """The events (of one game, or some matches) as an Arrow table, one row each; `flatten`
        spreads a game's payload fields into typed columns. (`.to_pandas()`; polars.from_arrow.)

        Raises:
            UsageError: no such game, or `flatten` without one.
            Forbidden: (a server) the events need the admin token (they hold every hidden value).
        """

    @abc.abstractmethod
    def results_frame(
        self, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None
    ) -> Any:
        """One row per match (the `match_results` view) as an Arrow table, whole or (`as_seat` -1) as
        every reader may know it (see `stats`).

        Raises:
            UsageError: no such game, or a seat's view.
        """

    @abc.abstractmethod
    def seats_frame(self, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None) -> Any:
        """One row per seat of every match (the `seat_results` view) as an Arrow table, whole or
        (`as_seat` -1) as every reader may know it (see `stats`).

        Raises:
            UsageError: no such game, or a seat's view.
        """

    # -- appending ----------------------------------------------------------------------------

    @abc.abstractmethod
    def append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> Any:
        """Append events at `expected_seq` (how many the match already has); returns
        `store.Appended` once durable. Re-sending stored events is a no-op.

        Raises:
            ConcurrencyError: the match has another number of events; nothing was written.
            IllegalAction: (a server) the rules refuse an event; nothing was written.
            StoreError: the log cannot take them.
        """

    @abc.abstractmethod
    def append_async(
        self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int, *, figures: Any = None
    ) -> Future[Any]:
        """`append` without waiting: the future resolves once the events are durable. Appends to
        one match are made in the order they are asked for."""

    @abc.abstractmethod
    def append_bulk_encoded(self, batches: Iterable[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]) -> list[Any]:
        """Many matches' events, each already canonical JSON with its id and time, all or none.

        Raises:
            ConcurrencyError, StoreError: as for `append`; nothing at all was written.
        """

    @abc.abstractmethod
    def put_figures(self, sets: Sequence[Any], *, wait: bool = True) -> Future[None] | None:
        """Record ended matches' figures (the statistics' projection) after their events."""

    @abc.abstractmethod
    def import_jsonl(self, lines: Iterable[bytes]) -> list[Any]:
        """Import a JSON Lines export: every chain checked, all of it or none.

        Raises:
            ImportRejected: a line, an event or a chain is not acceptable; nothing was written.
        """

    @abc.abstractmethod
    def undo(self, match: UUID | str, *, reason: str = "") -> Any:
        """Take back a match's latest effective answer, as its arbiter; returns `store.Appended`.

        Raises:
            UnknownMatch, UsageError: no such match, or nothing to undo.
        """

    @abc.abstractmethod
    def abandon(self, match: UUID | str, *, reason: str) -> Any:
        """End an unfinished match as abandoned, with why; returns `store.Appended`.

        Raises:
            UnknownMatch, UsageError: no such match, or it has already ended.
        """

    @abc.abstractmethod
    def fork(self, match: UUID | str, at: int) -> UUID:
        """Copy a match up to seq `at` into a new match (which records its origin); returns its id.

        Raises:
            UnknownMatch, UsageError: no such match or seq.
        """

    # -- proofs (docs/proofs.md) --------------------------------------------------------------

    @abc.abstractmethod
    def key(self) -> str:
        """The log's verifier key (C2SP signed-note format): what checks everything the log signs.
        A log that may write makes its key on first use.

        Raises:
            ProofError: the log has no key and cannot make one (`proof.no_key`).
        """

    @abc.abstractmethod
    def checkpoint(self, *, new: bool = True) -> str:
        """A signed checkpoint of the log's Merkle tree (C2SP tlog-checkpoint), kept in the log: signed
        now with `new` (where this caller may sign; the latest if the tree has not grown), else the
        latest kept.

        Raises:
            ProofError: there is none and none may be made (`proof.no_checkpoint`), or no tree yet.
        """

    @abc.abstractmethod
    def receipt(self, match: UUID | str) -> str:
        """The signed receipt of an ended match: its last seq and chain head, the tree they are in with
        the inclusion proof, and every event's leaf and hash. A referee hands it to every seat.

        Raises:
            UnknownMatch: no such match.
            ProofError: the match is still in play (`proof.running`), or the log cannot sign.
        """

    @abc.abstractmethod
    def prove(
        self,
        match: UUID | str,
        *,
        seq: int | None = None,
        against: str | None = None,
        as_seat: int | None = None,
    ) -> dict[str, Any]:
        """A proof bundle of a match or of its event `seq` (JSON-ready; docs/proofs.md), for
        `matchlog check`: the events (sealed where `as_seat` may not see them), their inclusion in a
        signed checkpoint, and with `against` (a checkpoint or receipt held) the consistency proof.

        Raises:
            UnknownMatch, UsageError: no such match, seq or seat.
            Forbidden: the view may not see the event whole.
            ProofError: a whole match in play for a seat, no checkpoint, or `against` unreadable.
        """

    @abc.abstractmethod
    def verify_against(self, notes: Sequence[str], *, key: str | None = None) -> list[Any]:
        """Check the log against checkpoints and receipts held elsewhere, signed by `key` (default: the
        log's own key): one `proofs.verifier.Problem` for each thing that does not hold, naming the
        match and seq where it can ([] when all holds).

        Raises:
            ProofError: no key to check the notes with, or a key that is not one.
        """


class Match:
    """One match of a log, for a notebook: its events, its states, its replay and its audit."""

    def __init__(self, log: Log, info: Any) -> None:
        self.log = log
        self.info = info

    @property
    def id(self) -> UUID:
        return self.info.match_id

    def __repr__(self) -> str:
        return f"<Match {self.id} {self.info.game} {self.info.status}, {self.info.last_seq + 1} events>"

    def events(self, *, as_seat: int | None = None, start: int = 0, stop: int | None = None) -> list[Line]:
        """The match's events as `as_seat` sees them (every event, with ids and hashes, by default)."""
        return self.log.lines(self.id, start=start, stop=stop, as_seat=as_seat)

    def state_at(self, seq: int | None = None, *, as_seat: int | None = None) -> Position:
        """The state after `seq` (default: the last), as `as_seat` sees it."""
        return self.log.state(self.id, seq, as_seat=as_seat)

    def replay(self, *, as_seat: int | None = None) -> Iterator[str]:
        """The match as `matchlog replay` tells it: one line of text an event."""
        for line in self.events(as_seat=as_seat):
            yield f"{line.seq:>5}  {line.text}"

    def audit(self) -> Any:
        """The audit of this match (`replay.MatchAudit`)."""
        return next(iter(self.log.audit([self.id])))

    def dispute(self, seq: int) -> Any:
        """The evidence about one event (`replay.Dispute`)."""
        return self.log.dispute(self.id, seq)

    def annotations(self, *, as_seat: int | None = None) -> list[Any]:
        """The match's annotations (`replay.annotations.Annotation`) as `as_seat` sees them."""
        return self.log.annotations_of(self.id, as_seat=as_seat)
