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
import logging
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Litestar, Request, Response, get, post
from litestar.di import Provide
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import YamlRenderPlugin
from litestar.params import Parameter
from litestar.response import ServerSentEvent, Stream

from matchlog import __version__
from matchlog.engines import get as get_engine
from matchlog.events import (
    ConcurrencyError,
    DecodeError,
    Forbidden,
    IllegalAction,
    ImportRejected,
    MatchlogError,
    ProofError,
    SqlError,
    StoreBusy,
    StoreError,
    UnknownMatch,
    UsageError,
)
from matchlog.file import FileLog
from matchlog.log import Line, Position, SqlResult, Verification
from matchlog.replay.audit import Dispute, MatchAudit
from matchlog.replay.stats import Statistics
from matchlog.replay.views import seat_catalogue
from matchlog.store import Appended, Figures, MatchInfo

from .auth import Access, Keys, MatchTokens
from .follow import Hub
from .live import Appending, LiveMatches, NewMatch
from .pages import VIEWER_ROUTES
from .proofs import ROUTES as PROOF_ROUTES
from .proofs import receipt_if_ended, sign_every

__all__ = ["create_app"]

_logger = logging.getLogger("matchlog.service")

#: The longest `POST /api/sql` may run, and the most rows it returns, whatever is asked.
SQL_TIMEOUT = 30.0
SQL_ROWS = 100_000
#: How large an import may be.
IMPORT_BYTES = 1 << 30


# -- wire types ---------------------------------------------------------------------------------


class Error(msgspec.Struct, frozen=True):
    """Every error: the stable code (as the CLI prints it), what happened, and the HTTP status."""

    code: str
    message: str
    status: int


class Health(msgspec.Struct, frozen=True):
    ok: bool
    version: str
    matches: int
    events: int


class Created(msgspec.Struct, frozen=True):
    """A match started through the service: its id, its last seq, and its tokens (keep the
    referee's; hand each seat its own)."""

    match_id: UUID
    last_seq: int
    tokens: MatchTokens


class AppendBatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Events to append after the first `expected_seq` events of the match."""

    expected_seq: Annotated[int, msgspec.Meta(ge=0)]
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
    event_id: str
    at_us: int
    payload: str


class EncodedBatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A match's events, already canonical JSON (a tournament's workers make them)."""

    match_id: UUID
    expected_seq: Annotated[int, msgspec.Meta(ge=0)]
    events: list[EncodedEvent]


class Reason(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    reason: Annotated[str, msgspec.Meta(max_length=2_000)] = ""


class ForkAt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    at: Annotated[int, msgspec.Meta(ge=0)]


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


def status_of(error: MatchlogError) -> int:
    """The HTTP status of one of our errors."""
    match error:
        case Forbidden():
            return 401 if error.code == "auth.token" else 403
        case UnknownMatch():
            return 404
        case ConcurrencyError():
            return 409
        case IllegalAction():
            return 422
        case StoreBusy():
            return 503
        case UsageError() | DecodeError() | ImportRejected() | SqlError():
            return 400
        case StoreError() if error.code in ("store.read_only", "store.closed"):
            return 503
        case ProofError():
            return 400 if error.code in ("proof.note", "proof.key") else 409
    return 500


def _error(request: Request, error: Exception) -> Response[Error]:
    if isinstance(error, MatchlogError):
        status = status_of(error)
        body = Error(error.code, error.message, status)
    elif isinstance(error, ValidationException):
        body = Error("usage.request", _validation_message(error), 400)
    elif isinstance(error, HTTPException):
        body = Error(f"http.{error.status_code}", str(error.detail), error.status_code)
    else:  # a bug: say so without a traceback in the body
        body = Error("internal", f"{type(error).__name__} (see the server's log)", 500)
        _logger.error("internal error on %s %s", request.method, request.url.path, exc_info=error)
    return Response(body, status_code=body.status)


def _validation_message(error: ValidationException) -> str:
    extra = error.extra
    if isinstance(extra, list) and extra:
        first = extra[0]
        if isinstance(first, dict):
            return f"{error.detail}: {first.get('key', '')} {first.get('message', '')}".strip()
    return str(error.detail)


# -- dependencies -------------------------------------------------------------------------------


def _token(request: Any) -> str | None:
    """The caller's token: the bearer token in `Authorization`, or a `token` query parameter (for
    links and EventSource, which cannot set headers)."""
    header = request.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else request.query_params.get("token")


# -- the log as a whole -------------------------------------------------------------------------


@get("/api/health", sync_to_thread=True)
def health(log: FileLog) -> Health:
    """Whether the service is up, and how much its log holds."""
    return Health(ok=True, version=__version__, matches=len(log.matches()), events=log.count())


@get("/api/matches", sync_to_thread=True)
def list_matches(
    log: FileLog,
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
    if since is not None and since.tzinfo is not None:
        since = since.astimezone(tz=None).replace(tzinfo=None)
    found = log.matches(game=game, status=status, player=player, since=since, limit=limit, offset=offset)
    return [_catalogue(info, access) for info in found]


def _catalogue(info: MatchInfo, access: Access) -> MatchInfo:
    """A catalogue row as the caller may see it: in a game with hidden information, a reader who
    may not see the whole record gets no head hash (a hash over a hidden value tests guesses)."""
    return info if access.sees_all_of(info.match_id) else seat_catalogue(info, get_engine(info.game))


@post("/api/matches", sync_to_thread=True, status_code=201)
def create_match(data: NewMatch, access: Access, live: LiveMatches, keys: Keys) -> Created:
    """Start a match for a referee elsewhere: returns its id, a referee token (to append, draw
    chance, undo and abandon) and one token per seat (each sees what its seat may)."""
    access.require_admin("starting a match")
    match_id, appended = live.start(data)
    return Created(match_id=match_id, last_seq=appended.last_seq, tokens=keys.tokens(match_id, len(data.seats)))


@get("/api/matches/{match_id:str}", sync_to_thread=True)
def match_info(match_id: str, log: FileLog, access: Access) -> MatchInfo:
    """One match's catalogue row (an id or a unique prefix of one)."""
    return _catalogue(log.info(match_id), access)


@get("/api/matches/{match_id:str}/tokens", sync_to_thread=True)
def match_tokens(match_id: str, log: FileLog, access: Access, keys: Keys) -> MatchTokens:
    """The tokens of a match (the admin's to hand out)."""
    access.require_admin("a match's tokens")
    info = log.info(match_id)
    return keys.tokens(info.match_id, len(info.players))


@get("/api/matches/{match_id:str}/events", sync_to_thread=True)
def match_events(
    match_id: str,
    log: FileLog,
    access: Access,
    start: Annotated[int, Parameter(ge=0)] = 0,
    stop: Annotated[int | None, Parameter(ge=0)] = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> list[Line]:
    """The events from `start` to `stop`, as the caller may see them (`as_seat`: -1 a spectator,
    K a seat; by default the fullest view the token allows)."""
    info = log.info(match_id)
    return log.lines(info.match_id, start=start, stop=stop, as_seat=access.view(info.match_id, as_seat))


@get("/api/matches/{match_id:str}/state", sync_to_thread=True)
def match_state(
    match_id: str,
    log: FileLog,
    access: Access,
    seq: Annotated[int | None, Parameter(ge=0)] = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> Position:
    """The state after `seq` (default: the last) as the caller may see it."""
    info = log.info(match_id)
    return log.state(info.match_id, seq, as_seat=access.view(info.match_id, as_seat))


@get("/api/matches/{match_id:str}/audit", sync_to_thread=True)
def match_audit(
    match_id: str,
    log: FileLog,
    access: Access,
    seq: Annotated[int | None, Parameter(ge=0)] = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> MatchAudit | Dispute:
    """The audit of a match, or with `seq` the dispute report about that event, as the caller may
    see it (`as_seat` as for `events`): a seat's or a spectator's report holds every finding's seq
    and rule, and evidence only about what that view saw whole."""
    info = log.info(match_id)
    view = access.view(info.match_id, as_seat)
    if seq is not None:
        return log.dispute(info.match_id, seq, as_seat=view)
    return next(iter(log.audit([info.match_id], as_seat=view)))


@get("/api/matches/{match_id:str}/follow")
async def follow(
    match_id: str,
    log: FileLog,
    access: Access,
    hub: Hub,
    request: Request,
    from_seq: Annotated[int, Parameter(query="from", ge=0)] = 0,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> ServerSentEvent:
    """A live stream (Server-Sent Events) of the match's events from seq `from` as the caller may
    see them, each with its seq as the event id; a client reconnecting with `Last-Event-ID` gets
    everything after it. An `end` event closes the stream when the match has ended."""
    info = await asyncio.to_thread(log.info, match_id)
    view = access.view(info.match_id, as_seat)
    last = request.headers.get("last-event-id")
    start = from_seq
    if last is not None and last.strip().isdigit():
        start = max(start, int(last) + 1)
    return ServerSentEvent(hub.stream(log, info.match_id, start, view))


# -- appending ----------------------------------------------------------------------------------


@post("/api/matches/{match_id:uuid}/events", status_code=200)
async def append_events(
    match_id: UUID, data: AppendBatch, access: Access, live: LiveMatches, log: FileLog
) -> AppendResult:
    """Append a referee's batch after the first `expected_seq` events (the whole match id, please).
    Each event is judged as the audit would judge it; a batch the rules refuse (422, with the
    rule's code) or a stale `expected_seq` (409) writes nothing. Re-sending events by their ids is
    a no-op. A batch at `expected_seq` 0 that starts with match.started starts a new match (the
    admin's to do; `POST /api/matches` also makes its tokens). A batch that ends the match is
    answered with its signed receipt."""
    if data.expected_seq == 0:
        access.require_admin("starting a match")
    access.require_writer(match_id, "appending")
    appended, ended = await live.append(match_id, data.expected_seq, data.events)
    return _result(appended, ended, await asyncio.to_thread(receipt_if_ended, log, match_id, ended))


@post("/api/matches/{match_id:str}/chance", status_code=200)
async def draw_chance(match_id: str, access: Access, log: FileLog, live: LiveMatches) -> AppendResult:
    """Draw the chance the match waits for (a roll, a shuffle, a board) from the seed the service
    committed to, and record it; read it back from `events`."""
    resolved = (await asyncio.to_thread(log.info, match_id)).match_id
    access.require_writer(resolved, "drawing chance")
    appended, ended = await live.draw(resolved)
    return _result(appended, ended, await asyncio.to_thread(receipt_if_ended, log, resolved, ended))


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


@post("/api/batches", sync_to_thread=True, status_code=200)
def append_batches(data: list[EncodedBatch], access: Access, log: FileLog) -> list[AppendResult]:
    """Many matches' events at once, already canonical JSON (a tournament's writer): all or none."""
    access.require_admin("appending batches")
    appended = log.append_bulk_encoded(
        (b.match_id, [(e.event_id, e.at_us, e.payload.encode()) for e in b.events], b.expected_seq) for b in data
    )
    return [_result(a, False) for a in appended]


@post("/api/figures", sync_to_thread=True, status_code=204)
def put_figures(data: list[Figures], access: Access, log: FileLog) -> None:
    """Record ended matches' figures (the statistics' projection), replacing what they had."""
    access.require_admin("recording figures")
    log.put_figures(data)


@post("/api/matches/{match_id:str}/undo", sync_to_thread=True, status_code=200)
def undo(match_id: str, data: Reason, access: Access, log: FileLog, live: LiveMatches) -> AppendResult:
    """Take back the latest effective answer, as the match's arbiter."""
    info = log.info(match_id)
    access.require_writer(info.match_id, "undoing")
    live.forget(info.match_id)
    return _result(log.undo(info.match_id, reason=data.reason), False)


@post("/api/matches/{match_id:str}/abandon", sync_to_thread=True, status_code=200)
def abandon(match_id: str, data: Reason, access: Access, log: FileLog, live: LiveMatches) -> AppendResult:
    """End an unfinished match as abandoned, with the reason."""
    info = log.info(match_id)
    access.require_writer(info.match_id, "abandoning")
    live.forget(info.match_id)
    appended = log.abandon(info.match_id, reason=data.reason or "abandoned through the service")
    return _result(appended, True, receipt_if_ended(log, info.match_id, True))


@post("/api/matches/{match_id:str}/fork", sync_to_thread=True, status_code=201)
def fork(match_id: str, data: ForkAt, access: Access, log: FileLog) -> Forked:
    """Copy a match up to seq `at` into a new match (which records its origin)."""
    access.require_admin("forking")
    info = log.info(match_id)
    return Forked(match_id=log.fork(info.match_id, data.at), origin=info.match_id, origin_seq=data.at)


# -- checking and questions ---------------------------------------------------------------------


@get("/api/verify", sync_to_thread=True)
def verify(log: FileLog, access: Access, match: str | None = None, deep: bool = False) -> Verification:
    """Check the hash chains of every match (or of `match`), and each catalogue head; `deep` (the
    admin's: it folds every match again) also derives the catalogue, seats and figures again."""
    if deep:
        access.require_admin("a deep verify")
    return log.verify(match, deep=deep)


@post("/api/verify", sync_to_thread=True, status_code=200)
def verify_some(data: VerifyRequest, log: FileLog, access: Access) -> Verification:
    """Check the hash chains of the matches given (`deep`: as for GET)."""
    if data.deep:
        access.require_admin("a deep verify")
    return log.verify(data.matches, deep=data.deep)


@get("/api/audit", sync_to_thread=True)
def audit_all(log: FileLog, access: Access) -> list[MatchAudit]:
    """The audit of every match, as the caller may see each."""
    if access.is_admin:
        return list(log.audit())
    return [next(iter(log.audit([info.match_id], as_seat=access.view(info.match_id, None)))) for info in log.matches()]


@get("/api/stats", sync_to_thread=True)
def stats(log: FileLog, game: str | None = None, by: str = "player", since: datetime | None = None) -> Statistics:
    """Statistics across matches, as `matchlog stats`."""
    if since is not None and since.tzinfo is not None:
        since = since.astimezone(tz=None).replace(tzinfo=None)
    return log.stats(game, by=by, since=since)


@post("/api/sql", sync_to_thread=True, status_code=200)
def sql(data: SqlRequest, access: Access, log: FileLog) -> SqlResult:
    """One read-only SELECT over the log (the admin's: the tables hold every hidden value), within
    a time and a row limit."""
    access.require_admin("SQL")
    result = log.sql(data.query, timeout=data.timeout, max_rows=data.max_rows)
    rows = [[_plain(value) for value in row] for row in result.rows]
    return SqlResult(columns=result.columns, rows=rows, truncated=result.truncated)


def _plain(value: Any) -> Any:
    """A SQL value as JSON carries it: bytes (hashes) as hex, as the CLI prints them."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return value


@get("/api/export")
async def export(
    log: FileLog,
    access: Access,
    match: list[str] | None = None,
    format: str = "jsonl",
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> Stream:
    """Matches (all, or each `match` given) as JSON Lines (the importable record; with `as_seat`,
    that seat's view) or Parquet, streamed."""
    if format not in ("jsonl", "parquet"):
        raise UsageError(f"format is jsonl or parquet, not {format!r}", code="usage.export")
    ids = None if not match else [(await asyncio.to_thread(log.info, m)).match_id for m in match]
    if as_seat is None or as_seat != -1:
        # The importable record (or a seat's view) of every match asked for must be the caller's to see.
        for match_id in ids if ids is not None else [i.match_id for i in await asyncio.to_thread(log.matches)]:
            if as_seat is None:
                if not access.sees_all_of(match_id):
                    raise Forbidden("exporting the whole record needs the admin token", code="auth.view")
            else:
                access.view(match_id, as_seat)
    media = "application/vnd.apache.parquet" if format == "parquet" else "application/x-ndjson"
    return Stream(_export_chunks(log, ids, format, as_seat), media_type=media)


class _Pipe:
    """A file object for the exporting thread whose writes become the response's chunks."""

    def __init__(self) -> None:
        self.chunks: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=64)

    def write(self, data: bytes) -> int:
        self.chunks.put(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def tell(self) -> int:  # pyarrow asks where it is
        return 0


async def _export_chunks(log: FileLog, ids: Any, format: str, as_seat: int | None) -> AsyncIterator[bytes]:
    pipe = _Pipe()

    def run() -> None:
        try:
            log.export(pipe, ids, format=format, as_seat=as_seat)  # type: ignore[arg-type]
            pipe.chunks.put(None)
        except BaseException as error:
            pipe.chunks.put(error)

    threading.Thread(target=run, name="matchlog-export", daemon=True).start()
    buffered: list[bytes] = []
    while True:
        chunk = await asyncio.to_thread(pipe.chunks.get)
        if chunk is None:
            break
        if isinstance(chunk, BaseException):
            raise chunk
        buffered.append(chunk)
        if sum(map(len, buffered)) >= 1 << 16:
            yield b"".join(buffered)
            buffered = []
    if buffered:
        yield b"".join(buffered)


@post("/api/import", status_code=200, request_max_body_size=IMPORT_BYTES)
async def import_jsonl(request: Request, access: Access, log: FileLog) -> list[AppendResult]:
    """Import a JSON Lines export (the request body): every chain checked, all of it or none; what
    each match took (`written` 0: it was in the log already)."""
    access.require_admin("importing")
    body = await request.body()
    appended = await asyncio.to_thread(log.import_jsonl, _lines(body))
    return [_result(a, False) for a in appended]


def _lines(body: bytes) -> Iterator[bytes]:
    return iter(body.splitlines())


@get("/api/frames/{kind:str}", sync_to_thread=True, media_type="application/vnd.apache.arrow.stream")
def frame(
    kind: str,
    log: FileLog,
    access: Access,
    game: str | None = None,
    since: datetime | None = None,
    match: list[str] | None = None,
    flatten: bool = False,
) -> Response[bytes]:
    """A frame for analysis as an Arrow IPC stream: `events` (the admin's: payloads hold every
    hidden value), `results` (one row per match) or `seats` (one row per seat)."""
    import pyarrow as pa

    if since is not None and since.tzinfo is not None:
        since = since.astimezone(tz=None).replace(tzinfo=None)
    if kind == "events":
        access.require_admin("the events frame")
        table = log.events_frame(game=game, matches=match or None, flatten=flatten)
    elif kind == "results":
        table = log.results_frame(game=game, since=since)
    elif kind == "seats":
        table = log.seats_frame(game=game, since=since)
    else:
        raise UsageError(f"frames are events, results or seats, not {kind!r}", code="usage.frame")
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return Response(sink.getvalue().to_pybytes(), media_type="application/vnd.apache.arrow.stream")


# -- the application ----------------------------------------------------------------------------


def create_app(
    log: FileLog, admin_token: str, *, debug: bool = False, checkpoint_every: float | None = None
) -> Litestar:
    """The service over `log` (a FileLog opened for writing), with `admin_token` as the admin's;
    it signs a checkpoint every `checkpoint_every` seconds (when its tree has grown)."""
    keys = Keys(admin_token)
    hub = Hub()
    live = LiveMatches(log, admin_token.encode())

    def caller(request: Request) -> Access:
        return keys.access(_token(request))

    def known_token(connection: Any, handler: Any) -> None:
        """Every request: a token that is not one this log gave out is refused (401), on any route."""
        keys.access(_token(connection))

    async def started(app: Litestar) -> None:
        hub.bind(asyncio.get_running_loop())
        if log.writable:
            log.store.on_commit(hub.committed)
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
        ],
        dependencies={
            "access": Provide(caller, sync_to_thread=False),
            "log": Provide(lambda: log, use_cache=True, sync_to_thread=False),
            "live": Provide(lambda: live, use_cache=True, sync_to_thread=False),
            "keys": Provide(lambda: keys, use_cache=True, sync_to_thread=False),
            "hub": Provide(lambda: hub, use_cache=True, sync_to_thread=False),
        },
        guards=[known_token],
        exception_handlers={Exception: _error},
        openapi_config=OpenAPIConfig(
            title="matchlog",
            version=__version__,
            description=__doc__,
            path="/api",
            render_plugins=[YamlRenderPlugin(path="/openapi.yaml")],
        ),
        on_startup=[started],
        on_shutdown=[stopping],
        debug=debug,
        logging_config=None,
    )
    app.state.hub = hub  # run.py ends the follow streams through it when the service stops
    return app
