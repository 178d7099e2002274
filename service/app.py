"""The HTTP API: everything matchlog can read or do, for many clients at once, over one log.

Handlers are thin: decode (msgspec, through Litestar), ask the caller's token what it may see or
do (`auth`), call the same `Log` method the CLI calls, encode. Errors are JSON with the CLI's
stable codes: `{"code": ..., "message": ..., "status": ...}`, with 400 for a bad request, 401 for a
token this log did not give, 403 for a token that does not allow it, 404 for an unknown match,
409 for a stale `expected_seq`, 422 for an answer the rules refuse, 503 for a log that cannot
take writes. The OpenAPI document is at /api/openapi.json.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Litestar, Request, Response, get, post
from litestar.di import Provide
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import YamlRenderPlugin
from litestar.openapi.spec import Components, OpenAPI, Schema, SecurityScheme
from litestar.params import Parameter
from litestar.response import ServerSentEvent, Stream

from matchlog import __version__
from matchlog.events import (
    ConcurrencyError,
    DecodeError,
    EventConflict,
    Forbidden,
    IllegalAction,
    ImportRejected,
    MatchlogError,
    ProofError,
    SqlError,
    StoreError,
    UnknownMatch,
    UsageError,
)
from matchlog.file import FileLog, seat_for
from matchlog.formats.bounds import bounded_lines
from matchlog.log import SPECTATOR, Line, Position, SqlResult, Verification
from matchlog.replay.aggregates import catalogue_row
from matchlog.replay.audit import Dispute, MatchAudit
from matchlog.replay.results import log_head
from matchlog.replay.stats import Statistics
from matchlog.store import Appended, Figures, MatchInfo, WalCheckpoints
from matchlog.store.writer import AT_US_MAX, AT_US_MIN

from .annotations import ROUTES as ANNOTATION_ROUTES
from .auth import Access, MatchTokens
from .core import SEQ_MAX, Error, IfNoneMatch, Service, authenticated, caller, route
from .live import Appending, NewMatch
from .pages import VIEWER_ROUTES
from .proofs import ROUTES as PROOF_ROUTES
from .proofs import receipt_if_ended, sign_every
from .ratings import ROUTES as RATING_ROUTES
from .reads import ReadCache
from .views import catalogue_for

__all__ = ["create_app"]

_logger = logging.getLogger("matchlog.service")

#: The longest `POST /api/sql` may run, and the most rows it returns, whatever is asked.
SQL_TIMEOUT = 30.0
SQL_ROWS = 100_000
#: How large an import may be.
IMPORT_BYTES = 1 << 30


# -- wire types ---------------------------------------------------------------------------------


class SkippedMatch(msgspec.Struct, frozen=True):
    """A match an export across matches left out, and why (its code; its words where the caller
    may see the whole match)."""

    match_id: UUID
    code: str
    message: str


class Skipped(msgspec.Struct, frozen=True):
    """The line of a seat's JSON Lines export that stands for a match it left out."""

    skipped: SkippedMatch


_encoder = msgspec.json.Encoder()


class Health(msgspec.Struct, frozen=True):
    """Whether the service is up, what its log holds, and (to the admin) what folding the log's WAL
    into its file has cost the writer so far (None: the log is read-only, or the caller not the admin)."""

    ok: bool
    version: str
    matches: int
    events: int
    wal_checkpoints: WalCheckpoints | None = None


class Created(msgspec.Struct, frozen=True):
    """A match started through the service: its id, its last seq, and its tokens (keep the
    referee's; hand each seat its own)."""

    match_id: UUID
    last_seq: int
    tokens: MatchTokens


class AppendBatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Events to append after the first `expected_seq` events of the match."""

    expected_seq: Annotated[int, msgspec.Meta(ge=0, le=SEQ_MAX)]
    events: Annotated[list[Appending], msgspec.Meta(min_length=1, max_length=10_000)]


class AppendResult(msgspec.Struct, frozen=True):
    """What an append did: the seqs written (`written` 0 for a re-send), the head, whether the match
    has ended, and then its signed receipt (docs/proofs.md)."""

    match_id: UUID
    first_seq: int
    last_seq: int
    head_hash: str
    written: int
    ended: bool
    receipt: str | None = None


class EncodedEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One event in canonical JSON, with its id (canonical UUID text) and its time (us since 1970)."""

    event_id: str
    at_us: Annotated[int, msgspec.Meta(ge=AT_US_MIN, lt=AT_US_MAX)]
    payload: str


class EncodedBatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A match's events, already canonical JSON (a tournament's workers make them)."""

    match_id: UUID
    expected_seq: Annotated[int, msgspec.Meta(ge=0, le=SEQ_MAX)]
    events: list[EncodedEvent]


#: A seat number as the log keeps it (a SMALLINT).
SeatNumber = Annotated[int, msgspec.Meta(ge=0, le=32_767)]


class FigureSet(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The figures of one ended match (`store.Figures`), as of its event `last_seq`, under figures
    `version`: one (seat or null for the match, figure, value) a row."""

    match_id: UUID
    last_seq: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
    version: Annotated[int, msgspec.Meta(ge=0, lt=2**31)]
    rows: list[tuple[SeatNumber | None, str, float]]


class Reason(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    reason: Annotated[str, msgspec.Meta(max_length=2_000)] = ""


class ForkAt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    at: Annotated[int, msgspec.Meta(ge=0, le=SEQ_MAX)]


class Forked(msgspec.Struct, frozen=True):
    match_id: UUID
    origin: UUID
    origin_seq: int


class VerifyRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    matches: Annotated[list[UUID], msgspec.Meta(max_length=1_000_000)]
    deep: bool = False


class SqlRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    query: Annotated[str, msgspec.Meta(max_length=100_000)]
    timeout: Annotated[float, msgspec.Meta(gt=0, le=SQL_TIMEOUT)] = SQL_TIMEOUT
    max_rows: Annotated[int, msgspec.Meta(ge=1, le=SQL_ROWS)] = 10_000


# -- errors -------------------------------------------------------------------------------------


#: Store errors that mean the request itself cannot be written (the rest mean the log cannot write).
_REFUSED_WRITES = (
    "annotation.author",
    "annotation.note",
    "annotation.seat",
    "annotation.stale",
    "store.bad_event",
    "store.bad_start",
    "store.duplicate_id",
    "store.empty_append",
    "store.not_an_event",
)


def status_of(error: MatchlogError) -> int:
    """The HTTP status of one of our errors."""
    match error:
        case Forbidden():
            return 401 if error.code == "auth.token" else 403
        case UnknownMatch():
            return 404
        case ConcurrencyError() | EventConflict():
            return 409
        case ProofError():
            return 400 if error.code in ("proof.note", "proof.key") else 409
        case IllegalAction():
            return 422
        case UsageError() | DecodeError() | ImportRejected() | SqlError():
            return 400
        case StoreError() if error.code in _REFUSED_WRITES:
            return 400
        case StoreError():  # busy, read-only, closed, a failed commit: the log cannot do it now
            return 503
    return 500


def _error(request: Request, error: Exception) -> Response[Error]:
    if isinstance(error, MatchlogError):
        status = status_of(error)
        body = Error(error.code, _unplaced(request, error.message), status)
    elif isinstance(error, ValidationException):
        body = Error("usage.request", _validation_message(error), 400)
    elif isinstance(error, HTTPException):
        body = Error(f"http.{error.status_code}", str(error.detail), error.status_code)
    else:  # a bug: say so without a traceback in the body
        body = Error("internal", f"{type(error).__name__} (see the server's log)", 500)
        _logger.error("internal error on %s %s", request.method, request.url.path, exc_info=error)
    return Response(body, status_code=body.status)


def _unplaced(request: Request, message: str) -> str:
    """`message` without where the log is kept on the server's disk (`_unplaced_in`)."""
    service: Service | None = request.app.state.get("service")
    return message if service is None else _unplaced_in(service, message)


def _unplaced_in(service: Service, message: str) -> str:
    """`message` without where the log is kept on the server's disk: the store names its file for
    the CLI's user, which no caller of the service needs (or should learn)."""
    if service.log.location == ":memory:":
        return message
    where = Path(service.log.location)
    for place in sorted({str(where.resolve()), str(where), where.name}, key=len, reverse=True):
        message = message.replace(place, "the log")
    return message


def _validation_message(error: ValidationException) -> str:
    extra = error.extra
    if isinstance(extra, list) and extra:
        first = extra[0]
        if isinstance(first, dict):
            return f"{error.detail}: {first.get('key', '')} {first.get('message', '')}".strip()
    return str(error.detail)


#: What each error status means, as the OpenAPI document describes it (every one has an `Error` body).
def _utc(moment: datetime | None) -> datetime | None:
    """A time as the log keeps it: UTC without a zone (a time given without one is taken as UTC)."""
    if moment is None or moment.tzinfo is None:
        return moment
    try:
        return moment.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:  # an offset that moves it past year 1 or 9999: before or after everything
        return datetime.min if moment.year == 1 else datetime.max


# -- dependencies -------------------------------------------------------------------------------


# -- the log as a whole -------------------------------------------------------------------------


@route(get, "/api/health", sync_to_thread=True)
def health(service: Service, access: Access) -> Health:
    """Whether the service is up, and how much its log holds."""
    log = service.log
    return Health(
        ok=True,
        version=__version__,
        matches=len(log.matches()),
        events=log.count(),
        # The admin's only: the WAL's size follows the bytes of values a reader may not know.
        wal_checkpoints=log.store.wal_checkpoints if access.is_admin else None,
    )


@route(get, "/api/matches", sync_to_thread=True)
def list_matches(
    service: Service,
    access: Access,
    game: str | None = None,
    status: str | None = None,
    player: str | None = None,
    since: datetime | None = None,
    limit: Annotated[int, Parameter(ge=1, le=10_000)] = 100,
    offset: Annotated[int, Parameter(ge=0, le=1_000_000_000)] = 0,
) -> list[MatchInfo]:
    """Matches, newest first: filter by game, status, player (a seat's name or strategy) and start
    time; page with limit and offset."""
    found = service.log.matches(game=game, status=status, player=player, since=_utc(since), limit=limit, offset=offset)
    return [catalogue_for(info, access) for info in found]


@route(post, "/api/matches", sync_to_thread=True, status_code=201, errors=(503,), admin="starting a match")
def create_match(data: NewMatch, service: Service) -> Created:
    """Start a match for a referee elsewhere: returns its id, a referee token (to append, draw
    chance, undo and abandon) and one token per seat (each sees what its seat may)."""
    match_id, appended = service.live.start(data)
    return Created(match_id=match_id, last_seq=appended.last_seq, tokens=service.keys.tokens(match_id, len(data.seats)))


@route(get, "/api/matches/{match_id:str}", sync_to_thread=True, errors=(404,))
def match_info(
    match_id: str,
    service: Service,
    access: Access,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> MatchInfo:
    """One match's catalogue row (an id or a unique prefix of one), as the caller may know it
    (`as_seat` as for `events`): a reader who may not see the whole record of a match of a game that
    hides anything gets no head hash of it."""
    info = service.log.info(match_id)
    view = access.view(info.match_id, as_seat)
    seat_for(view, len(info.players))
    return catalogue_row(info, view)


@route(get, "/api/matches/{match_id:str}/tokens", sync_to_thread=True, errors=(404,), admin="a match's tokens")
def match_tokens(match_id: str, service: Service) -> MatchTokens:
    """The tokens of a match (the admin's to hand out)."""
    info = service.log.info(match_id)
    return service.keys.tokens(info.match_id, len(info.players))


@route(get, "/api/matches/{match_id:str}/events", sync_to_thread=True, errors=(403, 404))
def match_events(
    match_id: str,
    service: Service,
    access: Access,
    start: Annotated[int, Parameter(ge=0, le=SEQ_MAX)] = 0,
    stop: Annotated[int | None, Parameter(ge=0, le=SEQ_MAX)] = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
    if_none_match: IfNoneMatch = None,
) -> Response[list[Line]]:
    """The events from `start` to `stop`, as the caller may see them (`as_seat`: -1 a spectator,
    K a seat; by default the fullest view the token allows). Tagged (ETag) by the match's head
    and the view; events up to a `stop` already stored never change, and are cached as such."""
    info = service.info(match_id)
    view = access.view(info.match_id, as_seat)
    last = info.last_seq if stop is None else min(stop, info.last_seq)  # (what the head holds, no more)
    return service.reads.answer(
        info,
        view,
        ("events", start, last),
        lambda: service.log.lines(info.match_id, start=start, stop=last, as_seat=view),
        private=access.role != "public",
        if_none_match=if_none_match,
        pinned=stop is not None and stop <= info.last_seq,
    )


@route(get, "/api/matches/{match_id:str}/state", sync_to_thread=True, errors=(403, 404))
def match_state(
    match_id: str,
    service: Service,
    access: Access,
    seq: Annotated[int | None, Parameter(ge=0, le=SEQ_MAX)] = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
    if_none_match: IfNoneMatch = None,
) -> Response[Position]:
    """The state after `seq` (default: the last) as the caller may see it, tagged (ETag) by the
    match's head and the view."""
    info = service.info(match_id)
    view = access.view(info.match_id, as_seat)
    at = info.last_seq if seq is None else seq

    def position() -> Position:
        found = service.log.state(info.match_id, at, as_seat=view)
        return msgspec.structs.replace(found, last_seq=info.last_seq)  # as of the head it is tagged with

    return service.reads.answer(
        info, view, ("state", at), position, private=access.role != "public", if_none_match=if_none_match
    )


@route(get, "/api/matches/{match_id:str}/audit", sync_to_thread=True, errors=(403, 404))
def match_audit(
    match_id: str,
    service: Service,
    access: Access,
    seq: Annotated[int | None, Parameter(ge=0, le=SEQ_MAX)] = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
    if_none_match: IfNoneMatch = None,
) -> Response[MatchAudit | Dispute]:
    """The audit of a match, or with `seq` the dispute report about that event, as the caller may
    see it (`as_seat` as for `events`): a seat's or a spectator's report holds every finding's seq
    and rule, and evidence only about what that view saw whole. Tagged (ETag) by the match's head
    and the view."""
    info = service.info(match_id)
    view = access.view(info.match_id, as_seat)

    def report() -> MatchAudit | Dispute:
        if seq is not None:
            return service.log.dispute(info.match_id, seq, as_seat=view)
        return next(iter(service.log.audit([info.match_id], as_seat=view)))

    return service.reads.answer(
        info,
        view,
        ("audit", seq),
        report,
        private=access.role != "public",
        if_none_match=if_none_match,
        also=service.log.store.committed,  # a knockout's or a duel pair's audit reads other matches too
    )


@route(get, "/api/matches/{match_id:str}/follow", errors=(403, 404))
async def follow(
    match_id: str,
    service: Service,
    access: Access,
    request: Request,
    from_seq: Annotated[int, Parameter(query="from", ge=0, le=SEQ_MAX)] = 0,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
    last_event_id: Annotated[
        str | None,
        Parameter(header="last-event-id", description="The seq of the last event the client got: digits only."),
    ] = None,
) -> ServerSentEvent:
    """A live stream (Server-Sent Events) of the match's events from seq `from` as the caller may
    see them, each with its seq as the event id; a client reconnecting with `Last-Event-ID` gets
    everything after it. An `end` event closes the stream when the match has ended."""
    start = from_seq
    if last_event_id is not None:
        start = max(start, _last_event_id(last_event_id) + 1)
    info = await asyncio.to_thread(service.log.info, match_id)
    view = access.view(info.match_id, as_seat)
    seat_for(view, len(info.players))  # a seat the match does not have is refused before the stream starts
    return ServerSentEvent(service.hub.stream(service.log, info.match_id, start, view))


def _last_event_id(text: str) -> int:
    """The seq a `Last-Event-ID` header names: a seq as this service sends it, and nothing else.

    Raises:
        UsageError: anything but 1 to 19 ASCII digits of a seq (a sign, a superscript, 5,000 digits).
    """
    if not (text.isascii() and text.isdigit() and len(text) <= 19 and int(text) <= SEQ_MAX):
        raise UsageError(
            f"Last-Event-ID is the seq of the last event received, not {text[:40]!r}", code="usage.last_event_id"
        )
    return int(text)


# -- appending ----------------------------------------------------------------------------------


@route(post, "/api/matches/{match_id:uuid}/events", status_code=200, errors=(404, 409, 422, 503), writer="appending")
async def append_events(match_id: UUID, data: AppendBatch, access: Access, service: Service) -> AppendResult:
    """Append a referee's batch after the first `expected_seq` events (the whole match id, please).
    Each event is judged as the audit would judge it; a batch the rules refuse (422, with the
    rule's code) or a stale `expected_seq` (409) writes nothing. Re-sending events by their ids is
    a no-op. A batch at `expected_seq` 0 that starts with match.started starts a new match (the
    admin's to do; `POST /api/matches` also makes its tokens)."""
    if data.expected_seq == 0:
        access.require_admin("starting a match")
    access.require_writer(match_id, "appending")
    appended, ended = await service.live.append(match_id, data.expected_seq, data.events)
    return _result(appended, ended, await asyncio.to_thread(receipt_if_ended, service.log, match_id, ended))


@route(post, "/api/matches/{match_id:str}/chance", status_code=200, errors=(404, 422, 503), writer="drawing chance")
async def draw_chance(match_id: str, access: Access, service: Service) -> AppendResult:
    """Draw the chance the match waits for (a roll, a shuffle, a board) from the seed the service
    committed to, and record it; read it back from `events`."""
    resolved = (await asyncio.to_thread(service.log.info, match_id)).match_id
    access.require_writer(resolved, "drawing chance")
    appended, ended = await service.live.draw(resolved)
    return _result(appended, ended, await asyncio.to_thread(receipt_if_ended, service.log, resolved, ended))


def _result(appended: Appended, ended: bool, receipt: str | None = None) -> AppendResult:
    return AppendResult(
        match_id=appended.match_id,
        first_seq=appended.first_seq,
        last_seq=appended.last_seq,
        head_hash=bytes(appended.head_hash).hex(),
        written=appended.written,
        ended=ended,
        receipt=receipt,
    )


@route(post, "/api/batches", status_code=200, errors=(409, 422, 503), admin="appending batches")
async def append_batches(data: list[EncodedBatch], service: Service) -> list[AppendResult]:
    """Many matches' events at once, already canonical JSON (a tournament's writer): each judged
    as the events endpoint judges it, and all written or none."""
    appended = await service.live.append_encoded(
        [(b.match_id, [(e.event_id, e.at_us, e.payload.encode()) for e in b.events], b.expected_seq) for b in data]
    )
    return [_result(a, False) for a in appended]


@route(post, "/api/figures", sync_to_thread=True, status_code=204, errors=(503,), admin="recording figures")
def put_figures(data: list[FigureSet], service: Service) -> None:
    """Record ended matches' figures (the statistics' projection), replacing what they had."""
    service.log.put_figures([Figures(s.match_id, s.last_seq, s.version, tuple(map(tuple, s.rows))) for s in data])


@route(
    post,
    "/api/matches/{match_id:str}/undo",
    sync_to_thread=True,
    status_code=200,
    errors=(404, 409, 422, 503),
    writer="undoing",
)
def undo(match_id: str, data: Reason, access: Access, service: Service) -> AppendResult:
    """Take back the latest effective answer, as the match's arbiter (judged as every write is: a
    revealed seed stays revealed, and a game with hidden information does not go on after it)."""
    info = service.log.info(match_id)
    access.require_writer(info.match_id, "undoing")
    return _result(service.log.undo(info.match_id, reason=data.reason), False)


@route(
    post,
    "/api/matches/{match_id:str}/abandon",
    sync_to_thread=True,
    status_code=200,
    errors=(404, 409, 422, 503),
    writer="abandoning",
)
def abandon(match_id: str, data: Reason, access: Access, service: Service) -> AppendResult:
    """End an unfinished match as abandoned, with the reason."""
    info = service.log.info(match_id)
    access.require_writer(info.match_id, "abandoning")
    appended = service.log.abandon(info.match_id, reason=data.reason or "abandoned through the service")
    return _result(appended, True, receipt_if_ended(service.log, info.match_id, True))


@route(
    post,
    "/api/matches/{match_id:str}/fork",
    sync_to_thread=True,
    status_code=201,
    errors=(404, 422, 503),
    admin="forking",
)
def fork(match_id: str, data: ForkAt, service: Service) -> Forked:
    """Copy a match up to seq `at` into a new match (which records its origin)."""
    info = service.log.info(match_id)
    return Forked(match_id=service.log.fork(info.match_id, data.at), origin=info.match_id, origin_seq=data.at)


# -- checking and questions ---------------------------------------------------------------------


@route(get, "/api/verify", sync_to_thread=True, errors=(404,))
def verify(service: Service, access: Access, match: str | None = None, deep: bool = False) -> Verification:
    """Check the hash chains of every match (or of `match`), and each catalogue head; `deep` (the
    admin's: it folds every match again) also derives the catalogue, seats and figures again."""
    if deep:
        access.require_admin("a deep verify")
    return service.log.verify(match, deep=deep)


@route(post, "/api/verify", sync_to_thread=True, status_code=200)
def verify_some(data: VerifyRequest, service: Service, access: Access) -> Verification:
    """Check the hash chains of the matches given (`deep`: as for GET)."""
    if data.deep:
        access.require_admin("a deep verify")
    return service.log.verify(data.matches, deep=data.deep)


@route(get, "/api/audit", sync_to_thread=True)
def audit_all(service: Service, access: Access) -> list[MatchAudit]:
    """The audit of every match, as the caller may see each."""
    if access.is_admin:
        return list(service.log.audit())
    log = service.log
    return [next(iter(log.audit([info.match_id], as_seat=access.view(info.match_id, None)))) for info in log.matches()]


@route(get, "/api/stats", sync_to_thread=True, errors=(403,))
def stats(
    service: Service,
    access: Access,
    game: str | None = None,
    by: str = "player",
    since: datetime | None = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=-1)] = None,
) -> Statistics:
    """Statistics across matches, as `matchlog stats`: whole for the admin, and for everyone else
    (or with `as_seat` -1) as every reader may know them: a figure some reader may not see whole
    (a rejected answer, in a game that hides anything) counted as a spectator sees it."""
    return service.log.stats(game, by=by, since=_utc(since), as_seat=access.across_matches(as_seat))


@route(post, "/api/sql", sync_to_thread=True, status_code=200, admin="SQL")
def sql(data: SqlRequest, service: Service) -> SqlResult:
    """One read-only SELECT over the log (the admin's: the tables hold every hidden value), within
    a time and a row limit."""
    result = service.log.sql(data.query, timeout=data.timeout, max_rows=data.max_rows)
    rows = [[_plain(value) for value in row] for row in result.rows]
    return SqlResult(columns=result.columns, rows=rows, truncated=result.truncated)


def _plain(value: Any) -> Any:
    """A SQL value as JSON carries it: bytes (hashes) as hex, as the CLI prints them; lists and
    maps item by item, a map's keys as text (JSON has no other keys: a MAP keyed by booleans would
    not encode at all)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key if isinstance(key, str) else str(_plain(key)): _plain(item) for key, item in value.items()}
    return value


@route(get, "/api/export", errors=(403, 404))
async def export(
    service: Service,
    access: Access,
    match: list[str] | None = None,
    format: str = "jsonl",
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
    if_none_match: IfNoneMatch = None,
) -> Stream:
    """Matches (all, or each `match` given) as JSON Lines (the importable record; with `as_seat`,
    that seat's view) or Parquet, streamed. Tagged (ETag) by the heads of the matches given (of
    the log, for all of them) and the view."""
    if format not in ("jsonl", "parquet"):
        raise UsageError(f"format is jsonl or parquet, not {format!r}", code="usage.export")
    if as_seat is not None and format != "jsonl":
        raise UsageError("a seat's view is exported as JSON Lines only", code="usage.export")
    infos = [await asyncio.to_thread(service.log.info, m) for m in match] if match else None
    if as_seat is None or as_seat != SPECTATOR:
        # The importable record (or a seat's view) of every match asked for must be the caller's to see.
        for info in infos if infos is not None else await asyncio.to_thread(service.log.matches):
            if as_seat is None:
                if not access.sees_all_of(info.match_id):
                    raise Forbidden("exporting the whole record needs the admin token", code="auth.view")
            else:
                access.view(info.match_id, as_seat)
                if infos is not None:
                    seat_for(as_seat, len(info.players))
    ids = None if infos is None else [info.match_id for info in infos]
    if infos is not None:
        heads: Any = [ReadCache.head(info) for info in infos]
    else:
        head = await asyncio.to_thread(log_head, service.log.store)  # every match: the log's own head
        heads = ["log", head.leaf, head.hash]
    private = access.role != "public"
    tag = service.reads.tag(heads, as_seat, ("export", format))
    unchanged = service.reads.unchanged_since(tag, if_none_match, private=private)
    if unchanged is not None:
        return unchanged  # type: ignore[return-value]
    media = "application/vnd.apache.parquet" if format == "parquet" else "application/x-ndjson"
    pipe = _Pipe()

    def skipped(match_id: UUID, error: MatchlogError) -> None:
        """A match a seat's export cannot read back: a line naming it, in place of its lines. Why,
        in words, only to a caller who may see the whole match (the words may quote what it hides)."""
        said = error.message if access.sees_all_of(match_id) else "it cannot be read back as a seat saw it"
        pipe.write(_encoder.encode(Skipped(SkippedMatch(match_id, error.code, _unplaced_in(service, said)))) + b"\n")

    threading.Thread(
        target=pipe.run, args=(service.log.export, ids, format, as_seat, skipped), name="matchlog-export", daemon=True
    ).start()
    first = await pipe.next_chunk()  # an export that fails at once is an error answer, not a broken stream
    return Stream(pipe.chunks_after(first), media_type=media, headers=ReadCache.headers(tag, private=private))


class _Cancelled(Exception):
    """The client went away: the exporting thread stops."""


class _Pipe:
    """A file object for the exporting thread whose writes become the response's chunks, at most
    `AHEAD` chunks ahead of the client; when the client goes away, the next write stops the export.
    The response waits for chunks on the event loop, never in a thread that could be left blocked."""

    CHUNK = 1 << 16
    AHEAD = 16

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._chunks: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()
        self._room = threading.Semaphore(self.AHEAD)
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._cancelled = threading.Event()

    def write(self, data: bytes) -> int:
        self._buffer.append(bytes(data))
        self._buffered += len(data)
        if self._buffered >= self.CHUNK:
            self._put(b"".join(self._buffer))
            self._buffer, self._buffered = [], 0
        return len(data)

    def writelines(self, lines: Iterable[bytes]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def tell(self) -> int:  # pyarrow asks where it is
        return 0

    def _put(self, item: bytes | BaseException | None) -> None:
        while not self._room.acquire(timeout=0.5):
            if self._cancelled.is_set():
                raise _Cancelled
        if self._cancelled.is_set():
            raise _Cancelled
        self._loop.call_soon_threadsafe(self._chunks.put_nowait, item)

    def run(
        self,
        export: Callable[..., int],
        ids: Any,
        format: str,
        as_seat: int | None,
        on_skip: Callable[[UUID, MatchlogError], None],
    ) -> None:
        """The exporting thread: write the export, then its end (or the error that stopped it)."""
        try:
            export(self, ids, format=format, as_seat=as_seat, on_skip=on_skip)
            if self._buffer:
                self._put(b"".join(self._buffer))
            self._put(None)
        except _Cancelled:
            return
        except BaseException as error:
            with contextlib.suppress(_Cancelled, RuntimeError):  # RuntimeError: the loop has closed
                self._put(error)

    async def next_chunk(self) -> bytes | None:
        """The next chunk (None at the end).

        Raises:
            MatchlogError: the export failed.
        """
        chunk = await self._chunks.get()
        self._room.release()
        if isinstance(chunk, BaseException):
            raise chunk
        return chunk

    async def chunks_after(self, first: bytes | None) -> AsyncIterator[bytes]:
        try:
            chunk = first
            while chunk is not None:
                yield chunk
                chunk = await self.next_chunk()
        finally:
            self._cancelled.set()


@route(post, "/api/import", status_code=200, request_max_body_size=IMPORT_BYTES, errors=(503,), admin="importing")
async def import_jsonl(request: Request, service: Service) -> list[AppendResult]:
    """Import a JSON Lines export (the request body): every chain checked, all of it or none; what
    each match took (`written` 0: it was in the log already)."""
    body = await request.body()
    # Read as the command line reads a file: no line past an event's bound (`formats.bounds`).
    lines = bounded_lines(io.BytesIO(body))
    appended = await asyncio.to_thread(service.log.import_jsonl, lines)
    return [_result(a, False) for a in appended]


_ARROW_STREAM = "application/vnd.apache.arrow.stream"


@route(get, "/api/frames/{kind:str}", sync_to_thread=True, media_type=_ARROW_STREAM, errors=(403,))
def frame(
    kind: str,
    service: Service,
    access: Access,
    game: str | None = None,
    since: datetime | None = None,
    match: list[str] | None = None,
    flatten: bool = False,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=-1)] = None,
) -> Response[bytes]:
    """A frame for analysis as an Arrow IPC stream: `events` (the admin's: payloads hold every
    hidden value), `results` (one row per match) or `seats` (one row per seat), these two whole for
    the admin and for everyone else (or with `as_seat` -1) as every reader may know them."""
    import pyarrow as pa

    log = service.log
    if kind == "events":
        access.require_admin("the events frame")
        table = log.events_frame(game=game, matches=match or None, flatten=flatten)
    elif kind == "results":
        table = log.results_frame(game=game, since=_utc(since), as_seat=access.across_matches(as_seat))
    elif kind == "seats":
        table = log.seats_frame(game=game, since=_utc(since), as_seat=access.across_matches(as_seat))
    else:
        raise UsageError(f"frames are events, results or seats, not {kind!r}", code="usage.frame")
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return Response(sink.getvalue().to_pybytes(), media_type=_ARROW_STREAM)


def _tightened(document: OpenAPI) -> OpenAPI:
    """The OpenAPI document with what msgspec enforces and Litestar's generator leaves out: a body
    type that refuses unknown fields says so (`additionalProperties: false`), and a tuple has
    exactly its items (`minItems`/`maxItems`), so clients and generators send what is accepted."""
    structs: dict[str, type[msgspec.Struct]] = {}
    pending = list(msgspec.Struct.__subclasses__())
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        if cls.__module__.startswith("matchlog."):
            structs.setdefault(cls.__name__, cls)

    def walk(schema: Any) -> None:
        if isinstance(schema, list | tuple):
            for item in schema:
                walk(item)
        elif isinstance(schema, dict):
            for item in schema.values():
                walk(item)
        elif isinstance(schema, Schema):
            if schema.prefix_items and schema.items is None:
                schema.min_items = schema.max_items = len(schema.prefix_items)
            for field in fields(schema):
                walk(getattr(schema, field.name))

    for name, component in (document.components.schemas or {}).items():
        cls = structs.get(name)
        if cls is not None and cls.__struct_config__.forbid_unknown_fields:
            component.additional_properties = False
    walk(list((document.components.schemas or {}).values()))
    walk([operation for item in (document.paths or {}).values() for operation in vars(item).values()])
    return document


# -- the application ----------------------------------------------------------------------------


def create_app(
    log: FileLog, admin_token: str, *, debug: bool = False, checkpoint_every: float | None = None
) -> Litestar:
    """The service over `log` (a FileLog opened for writing), with `admin_token` as the admin's;
    it signs a checkpoint every `checkpoint_every` seconds (when its tree has grown)."""
    service = Service(log, admin_token)
    hub = service.hub

    def access(request: Request) -> Access:
        """Who is calling, as the guard every route has (`core.authenticated`) found."""
        return caller(request)

    async def started(app: Litestar) -> None:
        hub.bind(asyncio.get_running_loop())
        if log.writable:
            log.store.on_commit(hub.committed)
            log.store.on_commit(service.reads.committed)  # the catalogue rows it keeps move on
            if checkpoint_every:
                app.state.signing = asyncio.create_task(sign_every(log, checkpoint_every))

    async def stopping(app: Litestar) -> None:
        hub.close()
        signing = app.state.get("signing")
        if signing is not None:
            signing.cancel()

    app = Litestar(
        route_handlers=[
            health,
            list_matches,
            create_match,
            match_info,
            match_tokens,
            match_events,
            match_state,
            match_audit,
            follow,
            append_events,
            draw_chance,
            append_batches,
            put_figures,
            undo,
            abandon,
            fork,
            verify,
            verify_some,
            audit_all,
            stats,
            sql,
            export,
            import_jsonl,
            frame,
            *VIEWER_ROUTES,
            *PROOF_ROUTES,
            *RATING_ROUTES,
            *ANNOTATION_ROUTES,
        ],
        dependencies={
            "service": Provide(lambda: service, use_cache=True, sync_to_thread=False),
            "access": Provide(access, sync_to_thread=False),  # after `service`: one at a time, no task group
        },
        guards=[authenticated],
        exception_handlers={Exception: _error},
        openapi_config=OpenAPIConfig(
            title="matchlog",
            version=__version__,
            description=__doc__,
            path="/api",
            render_plugins=[YamlRenderPlugin(path="/openapi.yaml")],
            use_handler_docstrings=True,
            # A token is optional: without one a caller reads what a spectator may.
            security=[{}, {"token": []}],
            components=Components(
                security_schemes={
                    "token": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="The admin token (in DB.token beside the log), a match's referee token, or "
                        "a seat token; links and EventSource may give it as the `token` query parameter instead.",
                    )
                }
            ),
        ),
        on_startup=[started],
        on_shutdown=[stopping],
        debug=debug,
        logging_config=None,
    )
    _tightened(app.openapi_schema)  # built once here, then served as it is
    app.state.service = service  # the guards find who is calling through it
    app.state.hub = hub  # run.py ends the follow streams through it when the service stops
    return app
