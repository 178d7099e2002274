"""What every part of the service shares: the one dependency handlers take (`Service`), the error
body, who is calling (`authenticated`, `caller`), and `route`, which names each handler in the
OpenAPI document, describes its errors and says who may call it.

Who is calling is decided first, by guards that run before anything of the request is read (its
path, query and body are parsed after them): a token this log did not give is refused (401) on
every route, and a write the caller may not make is refused (403) whatever its body holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar.connection import ASGIConnection
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter

from matchlog.events import Forbidden
from matchlog.file import FileLog
from matchlog.replay.ratings import RatingCache
from matchlog.store import MatchInfo

from .auth import Access, Keys
from .follow import Hub
from .live import LiveMatches
from .reads import ReadCache

__all__ = ["ERRORS", "SEQ_MAX", "Error", "IfNoneMatch", "Service", "authenticated", "caller", "header", "route"]

#: The largest seq (or count of events) a request may name: the log keeps seqs as BIGINT.
SEQ_MAX = 2**63 - 1


class Error(msgspec.Struct, frozen=True):
    """Every error: the stable code (as the CLI prints it), what happened, and the HTTP status."""

    code: str
    message: str
    status: int


ERRORS = {
    400: "A request that cannot be carried out as given: a bad parameter or body (`usage.*`), or an event, "
    "import or query the log refuses (`store.*`, `sql.*`, `event.decode`)",
    401: "A token this log did not give (`auth.token`)",
    403: "A token that does not allow it (`auth.admin`, `auth.view`, `auth.write`)",
    404: "No such match, or an id prefix that names more than one (`store.unknown_match`)",
    409: "A stale `expected_seq` (`store.concurrency`): nothing was written",
    422: "An event the rules refuse; the code names the rule: nothing was written",
    503: "The log cannot take this write now (`store.*`)",
}


#: Where the caller's `Access` is kept in a request's ASGI scope, from the first guard on.
_ACCESS = "matchlog.access"


def _token(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The caller's token: the bearer token in `Authorization`, or a `token` query parameter (for
    links and EventSource, which cannot set headers)."""
    header = connection.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else connection.query_params.get("token")


def authenticated(connection: ASGIConnection[Any, Any, Any, Any], _: Any) -> None:
    """The guard of every route: who is calling, before anything else of the request is read.

    Raises:
        Forbidden: a token this log did not give (`auth.token`, 401).
    """
    service: Service = connection.app.state.service
    connection.scope[_ACCESS] = service.keys.access(_token(connection))  # type: ignore[literal-required]


def caller(connection: ASGIConnection[Any, Any, Any, Any]) -> Access:
    """Who is calling, as `authenticated` found (the `access` every handler takes)."""
    return connection.scope[_ACCESS]  # type: ignore[literal-required,no-any-return]


def _admin_only(what: str) -> Callable[..., None]:
    """A guard that refuses (403, `auth.admin`) everyone but the admin, saying `what` needs it."""

    def guard(connection: ASGIConnection[Any, Any, Any, Any], _: Any) -> None:
        caller(connection).require_admin(what)

    return guard


async def _named_match(connection: ASGIConnection[Any, Any, Any, Any]) -> UUID:
    """The match the path names (a prefix is looked up; an unknown one is a 404)."""
    named = connection.path_params["match_id"]
    if not isinstance(named, UUID):
        try:
            named = UUID(named) if len(named) == 36 else None
        except ValueError:
            named = None
        if named is None:  # a prefix: the catalogue says which match it names
            service: Service = connection.app.state.service
            named = (await asyncio.to_thread(service.log.info, connection.path_params["match_id"])).match_id
    return named


def _writer_only(what: str) -> Callable[..., Any]:
    """A guard that refuses (403, `auth.write`) everyone but the admin and the referee of the match
    the path names, saying `what` needs them (a prefix is looked up; an unknown one is a 404)."""

    async def guard(connection: ASGIConnection[Any, Any, Any, Any], _: Any) -> None:
        access = caller(connection)
        if access.is_admin:
            return
        if access.role != "referee":  # a reader: refused before the match is even looked up
            raise Forbidden(f"{what} needs the admin token or the match's referee token", code="auth.write")
        access.require_writer(await _named_match(connection), what)

    return guard


def _seat_or_admin(what: str) -> Callable[..., Any]:
    """A guard that refuses (403, `auth.write`) everyone but the admin and the seats of the match the
    path names, saying `what` needs them; the handler decides what a seat may write."""

    async def guard(connection: ASGIConnection[Any, Any, Any, Any], _: Any) -> None:
        access = caller(connection)
        if access.is_admin:
            return
        if access.role != "seat" or access.match_id != await _named_match(connection):
            raise Forbidden(f"{what} needs the admin token or one of the match's seats' tokens", code="auth.write")

    return guard


def route(
    method: type,
    path: str,
    *,
    errors: tuple[int, ...] = (),
    admin: str | None = None,
    writer: str | None = None,
    seat: str | None = None,
    **options: Any,
) -> Callable[[Any], Any]:
    """A route handler named after its function in the OpenAPI document, summarised by its
    docstring's first sentence, with its error answers (400, 401 and `errors`) described. `admin`
    (what it does, for the refusal) makes it the admin's only; `writer`, the admin's and the
    referee's of the match its path names; `seat`, the admin's and the seats' of that match; each
    refuses everyone else before the request is read."""
    guards = (
        [_admin_only(admin)] if admin else [_writer_only(writer)] if writer else [_seat_or_admin(seat)] if seat else []
    )
    if guards:
        errors = (*errors, 403)
        options["guards"] = guards

    def make(function: Callable[..., Any]) -> Any:
        words = function.__name__.split("_")
        doc = " ".join((function.__doc__ or "").split())
        summary = doc.split(". ")[0].split(": ")[0].rstrip(".")
        responses = {
            status: ResponseSpec(Error, description=ERRORS[status], generate_examples=False)
            for status in sorted({400, 401, *errors})
        }
        operation = words[0] + "".join(word.title() for word in words[1:])
        return method(path, operation_id=operation, summary=summary, responses=responses, **options)(function)

    return make


def header(name: str, description: str) -> Any:
    """A request header a handler takes, as its Litestar declares one (HeaderParameter from 2.25,
    where Parameter(header=...) is deprecated)."""
    try:
        from litestar.params import HeaderParameter
    except ImportError:  # Litestar before 2.25
        return Parameter(header=name, description=description)
    return HeaderParameter(name=name, description=description)


#: The header a reader names the answers it has in (RFC 9110's If-None-Match).
IfNoneMatch = Annotated[
    str | None, header("if-none-match", "The ETag of an answer the client has: 304 while it still holds.")
]


class Service:
    """What the handlers work with: the log, the matches recorded through the service, the keys
    that make and check tokens, the hub of the follow streams, the rating tables computed at the
    log's recent heads and the answers about single matches kept by theirs. One dependency rather
    than several: Litestar resolves a handler's independent dependencies side by side, in a task group per
    request, which cost a third of an append's time on the event loop."""

    def __init__(self, log: FileLog, admin_token: str) -> None:
        self.log = log
        self.keys = Keys(admin_token)
        self.hub = Hub()
        self.live = LiveMatches(log, admin_token.encode())
        self.ratings = RatingCache()
        # Answers about one match, tagged with a key of this log's own (reads.py says why keyed).
        self.reads = ReadCache(hashlib.sha256(b"matchlog entity tags\0" + admin_token.encode()).digest())
        self._catch_up: Callable[[], None] = getattr(log.store, "catch_up", lambda: None)

    def info(self, match_id: str) -> MatchInfo:
        """The catalogue row of the match a path names: a whole id as the reads keep it (until the
        match commits again), a prefix through the catalogue.

        Raises:
            UnknownMatch: no match, or more than one, has that prefix.
        """
        if len(match_id) == 36:
            # A front of several (fronts.py) first hears every commit announced before this request,
            # so no row it keeps is older than an append acknowledged before the request came.
            self._catch_up()
            with contextlib.suppress(ValueError):
                return self.reads.info(UUID(match_id), self.log.info)  # (a prefix costs a search)
        return self.log.info(match_id)
