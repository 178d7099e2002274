"""`ServerLog`: the `Log` interface over a running `matchlog serve`, through its HTTP API.

Every method is one request (or a few, paging); answers decode into the same Structs a `FileLog`
returns, and the service's errors come back as the same exceptions with the same codes, so a
command or a notebook cannot tell which it talks to, except that a server shows each caller only
what its token allows.
"""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import IO, Any
from urllib.parse import quote
from uuid import UUID

import httpx
import msgspec

from matchlog.engines import get as get_engine
from matchlog.events import (
    ConcurrencyError,
    DecodeError,
    Draft,
    Event,
    Forbidden,
    IllegalAction,
    ImportRejected,
    MatchlogError,
    ProofError,
    Record,
    RemoteError,
    SqlError,
    StoreBusy,
    StoreError,
    UnknownMatch,
    UsageError,
    decode,
    draft,
)
from matchlog.proofs.verifier import Problem
from matchlog.replay.audit import Dispute, MatchAudit
from matchlog.replay.duels import DuelReport
from matchlog.replay.frames import Frame
from matchlog.replay.ratings import RatingTable
from matchlog.replay.stats import Statistics
from matchlog.store import Appended, Figures, Finding, MatchInfo

from .annotating import ServerAnnotating
from .locate import TOKEN_CHARACTERS, well_formed_token
from .log import Line, Log, Position, SqlResult, Verification

__all__ = ["ServerLog"]

#: How many catalogue rows one request asks for when paging through them all.
_PAGE = 10_000
#: Reads that are posted (their questions are too long for a URL): a read-only log still asks them.
_READS_POSTED = frozenset({"/api/verify", "/api/sql", "/api/verify/against"})
#: Matches one request for their events names (they travel in its URL).
_MATCHES_A_REQUEST = 250
_TIMEOUT = httpx.Timeout(connect=5.0, read=600.0, write=600.0, pool=600.0)


class _Error(msgspec.Struct):
    code: str
    message: str
    status: int = 0


class _SentLine(Line, frozen=True, kw_only=True):
    """A line as the service sends it, its event still JSON: the codec decodes it with the games
    installed now, where a type resolved once would keep the games known when it was first used
    (a game installed, or `registering`, since would not read)."""

    event: msgspec.Raw  # type: ignore[assignment]


def _line(sent: _SentLine) -> Line:
    """The line, its event decoded.

    Raises:
        DecodeError: the event is none this matchlog knows.
    """
    fields = {name: getattr(sent, name) for name in Line.__struct_fields__}
    return Line(**{**fields, "event": decode(bytes(sent.event))})


class _Appended(msgspec.Struct):
    match_id: UUID
    first_seq: int
    last_seq: int
    head_hash: str
    written: int
    ended: bool = False
    receipt: str | None = None

    def appended(self) -> Appended:
        return Appended(self.match_id, self.first_seq, self.last_seq, bytes.fromhex(self.head_hash), self.written)


class _Verification(msgspec.Struct):
    ok: bool
    matches: int
    events: int
    findings: list[Finding]
    deep: bool = False


class _Position(msgspec.Struct):
    match_id: UUID
    game: str
    seq: int
    last_seq: int
    as_seat: int | None
    state: Any
    to_act: Any = None
    outcome: Any = None
    text: str = ""


class _Forked(msgspec.Struct):
    match_id: UUID


class _Health(msgspec.Struct):
    ok: bool
    version: str
    matches: int
    events: int


#: The exception a service's error code comes back as.
_BY_PREFIX: tuple[tuple[str, type[MatchlogError]], ...] = (
    ("store.concurrency", ConcurrencyError),
    ("store.unknown_match", UnknownMatch),
    ("store.busy", StoreBusy),
    ("store.import_rejected", ImportRejected),
    ("store.", StoreError),
    ("auth.", Forbidden),
    ("sql.", SqlError),
    ("usage", UsageError),
    ("event.decode", DecodeError),
    ("proof.", ProofError),
)


def _exception(error: _Error) -> MatchlogError:
    if error.status == 422:
        return IllegalAction(error.code, error.message)
    for prefix, cls in _BY_PREFIX:
        if error.code.startswith(prefix):
            made = cls.__new__(cls)
            MatchlogError.__init__(made, error.message, code=error.code)
            return made
    return MatchlogError(error.message, code=error.code)


class ServerLog(ServerAnnotating, Log):
    """A log served by `matchlog serve` at `url`; `token` decides what this client may see and do,
    and `read_only` keeps it from writing whatever the token allows (as a file opened to read).

    Raises:
        UsageError: a token no server gives (not printable ASCII, or too long to be one).
    """

    def __init__(self, url: str, *, token: str | None = None, read_only: bool = False) -> None:
        if token and not well_formed_token(token):
            raise UsageError(
                f"the token is not one a matchlog server gives: printable ASCII of at most {TOKEN_CHARACTERS} "
                "characters (check $MATCHLOG_TOKEN or --token)",
                code="usage.token",
            )
        self.location = url.rstrip("/")
        self.token = token
        self.read_only = read_only
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        # Nagle's algorithm off: a request's head and body go out as they are written, instead of
        # the body waiting for the server's delayed ACK of the head (~40 ms a POST on loopback).
        transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        self._http = httpx.Client(base_url=self.location, headers=headers, timeout=_TIMEOUT, transport=transport)
        self._sender: _Sender | None = None

    # -- requests ------------------------------------------------------------------------------

    def _request(self, method: str, path: str, *, decode: Any = None, **options: Any) -> Any:
        """One request; its answer decoded as `decode`; an error answer raised as our exception.

        Raises:
            MatchlogError: the service's error, as the exception of its code.
            RemoteError: the service cannot be reached or did not answer as a matchlog service.
        """
        if self.read_only and method != "GET" and not (path in _READS_POSTED or path.endswith("/proof")):
            raise StoreError(
                f"the log at {self.location} is open read-only: matchlog.open(..., write=True) writes through it",
                code="store.read_only",
            )
        try:
            response = self._http.request(method, path, **options)
        except httpx.HTTPError as error:
            raise RemoteError(
                f"cannot reach the matchlog server at {self.location}: {error}", code="remote.unreachable"
            ) from None
        if response.status_code >= 400:
            try:
                error = msgspec.json.decode(response.content, type=_Error)
            except (msgspec.DecodeError, msgspec.ValidationError):
                raise RemoteError(
                    f"{self.location}{path} answered {response.status_code}: {response.text[:200]}", code="remote.http"
                ) from None
            raise _exception(error)
        if decode is None or response.status_code == 204:
            return response
        try:
            return msgspec.json.decode(response.content, type=decode)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            raise RemoteError(f"{self.location}{path}: an answer matchlog cannot read: {error}") from None

    def _id(self, match: UUID | str) -> str:
        return str(match).strip()

    # -- the log as a whole -------------------------------------------------------------------

    @property
    def writable(self) -> bool:
        return self.token is not None and not self.read_only

    def close(self) -> None:
        if self._sender is not None:
            self._sender.close()
            self._sender = None
        self._http.close()

    def health(self) -> _Health:
        """The service's own account of itself.

        Raises:
            RemoteError: it cannot be reached.
        """
        return self._request("GET", "/api/health", decode=_Health)

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
        params: dict[str, Any] = {
            key: value for key, value in (("game", game), ("player", player), ("status", status)) if value is not None
        }
        if since is not None:
            params["since"] = since.isoformat()
        found: list[MatchInfo] = []
        while limit is None or len(found) < limit:
            page = _PAGE if limit is None else min(_PAGE, limit - len(found))
            rows = self._request(
                "GET",
                "/api/matches",
                params={**params, "limit": page, "offset": offset + len(found)},
                decode=list[MatchInfo],
            )
            found += rows
            if len(rows) < page:
                break
        return found

    def info(self, match: UUID | str, *, as_seat: int | None = None) -> MatchInfo:
        params = {} if as_seat is None else {"as_seat": as_seat}
        return self._request("GET", f"/api/matches/{self._id(match)}", params=params, decode=MatchInfo)

    def count(self) -> int:
        return self.health().events

    # -- one match ----------------------------------------------------------------------------

    def lines(
        self, match: UUID | str, *, start: int = 0, stop: int | None = None, as_seat: int | None = None
    ) -> list[Line]:
        params: dict[str, Any] = {"start": start}
        if stop is not None:
            params["stop"] = stop
        if as_seat is not None:
            params["as_seat"] = as_seat
        sent = self._request("GET", f"/api/matches/{self._id(match)}/events", params=params, decode=list[_SentLine])
        return [_line(line) for line in sent]

    def state(self, match: UUID | str, seq: int | None = None, *, as_seat: int | None = None) -> Position:
        params: dict[str, Any] = {}
        if seq is not None:
            params["seq"] = seq
        if as_seat is not None:
            params["as_seat"] = as_seat
        got = self._request("GET", f"/api/matches/{self._id(match)}/state", params=params, decode=_Position)
        engine = get_engine(got.game)
        return Position(
            match_id=got.match_id,
            game=got.game,
            seq=got.seq,
            last_seq=got.last_seq,
            as_seat=got.as_seat,
            state=msgspec.convert(got.state, engine.spec.state),
            to_act=msgspec.convert(got.to_act, type(None) | _turn_type()),
            outcome=msgspec.convert(got.outcome, type(None) | _outcome_type()),
            text=got.text,
        )

    def read(self, match: UUID | str, *, start: int = 0, stop: int | None = None) -> list[Record]:
        lines = self.lines(match, start=start, stop=stop)
        if any(line.hash is None or line.event_id is None for line in lines):
            raise Forbidden("the whole record needs the admin or the match's referee token", code="auth.view")
        return [
            Record(
                match_id=line.match_id,
                seq=line.seq,
                event_id=line.event_id,  # type: ignore[arg-type]
                at_us=line.at_us,
                actor=line.actor,
                version=line.event.version,
                event=line.event,
                hash=line.hash,  # type: ignore[arg-type]
            )
            for line in lines
        ]

    def frames(
        self, match: UUID | str, *, start: int = 0, stop: int | None = None, as_seat: int | None = None
    ) -> list[Frame]:
        last = self.info(match).last_seq if stop is None else stop
        got: list[Frame] = []
        while start <= last:  # the service answers at most a page of frames a request
            params: dict[str, Any] = {"start": start, "stop": last}
            if as_seat is not None:
                params["as_seat"] = as_seat
            page = self._request("GET", f"/api/matches/{self._id(match)}/frames", params=params, decode=list[Frame])
            if not page:
                break
            got += page
            start = page[-1].seq + 1
        return got

    # -- checking -----------------------------------------------------------------------------

    def verify(self, matches: UUID | str | Sequence[UUID] | None = None, *, deep: bool = False) -> Verification:
        if matches is None or isinstance(matches, UUID | str):
            params: dict[str, Any] = {} if matches is None else {"match": self._id(matches)}
            if deep:
                params["deep"] = "true"
            got = self._request("GET", "/api/verify", params=params, decode=_Verification)
        else:
            body = msgspec.json.encode({"matches": [str(m) for m in matches], "deep": deep})
            got = self._request("POST", "/api/verify", content=body, decode=_Verification, headers=_JSON)
        return Verification(ok=got.ok, matches=got.matches, events=got.events, findings=got.findings, deep=got.deep)

    def audit(self, matches: Sequence[UUID | str] | None = None, *, as_seat: int | None = None) -> Iterator[MatchAudit]:
        if matches is None and as_seat is None:
            yield from self._request("GET", "/api/audit", decode=list[MatchAudit])
            return
        params = {} if as_seat is None else {"as_seat": as_seat}
        chosen = matches if matches is not None else [info.match_id for info in self.matches()]
        for match in chosen:
            yield self._request("GET", f"/api/matches/{self._id(match)}/audit", params=params, decode=MatchAudit)

    def dispute(self, match: UUID | str, seq: int, *, as_seat: int | None = None) -> Dispute:
        params: dict[str, Any] = {"seq": seq}
        if as_seat is not None:
            params["as_seat"] = as_seat
        return self._request("GET", f"/api/matches/{self._id(match)}/audit", params=params, decode=Dispute)

    # -- across matches -----------------------------------------------------------------------

    def stats(
        self, game: str | None = None, *, by: str = "player", since: datetime | None = None, as_seat: int | None = None
    ) -> Statistics:
        params: dict[str, Any] = {"by": by}
        if as_seat is not None:
            params["as_seat"] = as_seat
        if game is not None:
            params["game"] = game
        if since is not None:
            params["since"] = since.isoformat()
        return self._request("GET", "/api/stats", params=params, decode=Statistics)

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
        params: list[tuple[str, Any]] = [] if game is None else [("game", game)]
        if since is not None:
            params.append(("since", since.isoformat()))
        for key, value in (("series", series), ("anchor", anchor)):
            if value is not None:
                params.append((key, value))
        params.extend(("player", player) for player in players)
        params.extend(("alias", f"{old}={new}") for old, new in (aliases or {}).items())
        return self._request("GET", "/api/ratings", params=params, decode=RatingTable)

    def duel(self, duel: str) -> DuelReport:
        return self._request("GET", f"/api/duels/{quote(duel.strip(), safe='')}", decode=DuelReport)

    def sql(self, query: str, *, timeout: float | None = None, max_rows: int | None = None) -> SqlResult:
        body: dict[str, Any] = {"query": query}
        if timeout is not None:
            body["timeout"] = timeout
        if max_rows is not None:
            body["max_rows"] = max_rows
        return self._request("POST", "/api/sql", content=msgspec.json.encode(body), headers=_JSON, decode=SqlResult)

    def export(
        self,
        out: IO[bytes],
        matches: Sequence[UUID | str] | None = None,
        *,
        format: str = "jsonl",
        as_seat: int | None = None,
        on_skip: Callable[[UUID, MatchlogError], None] | None = None,
    ) -> int:
        params: list[tuple[str, Any]] = [("format", format)]
        params += [("match", self._id(m)) for m in matches or ()]
        if as_seat is not None:
            params.append(("as_seat", as_seat))
        try:
            with self._http.stream("GET", "/api/export", params=params) as response:
                if response.status_code >= 400:
                    response.read()
                    raise _exception(msgspec.json.decode(response.content, type=_Error))
                count = 0
                if as_seat is not None:  # a seat's lines, and a line for each match left out
                    count = _seat_lines(response.iter_bytes(), out, on_skip)
                else:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
                        if format == "jsonl":
                            count += chunk.count(b"\n")
        except httpx.HTTPError as error:
            raise RemoteError(
                f"the export from {self.location} broke off: {error}", code="remote.unreachable"
            ) from None
        if format == "parquet":
            return self.count() if not matches else sum(self.info(m).last_seq + 1 for m in matches)
        return count

    # -- frames for analysis ------------------------------------------------------------------

    def _frame(self, kind: str, params: list[tuple[str, Any]]) -> Any:
        import pyarrow as pa

        response = self._request("GET", f"/api/frames/{kind}", params=params)
        return pa.ipc.open_stream(response.content).read_all()

    def events_frame(
        self, *, game: str | None = None, matches: Sequence[UUID | str] | None = None, flatten: bool = False
    ) -> Any:
        ids = [self._id(m) for m in matches or ()]
        if len(ids) > _MATCHES_A_REQUEST:  # a request carries its matches in its URL: ask in parts
            import pyarrow as pa

            parts = [ids[at : at + _MATCHES_A_REQUEST] for at in range(0, len(ids), _MATCHES_A_REQUEST)]
            frames = [self.events_frame(game=game, matches=part, flatten=flatten) for part in parts]
            return pa.concat_tables(frames, promote_options="default")
        params: list[tuple[str, Any]] = [("flatten", "true" if flatten else "false")]
        params += [("game", game)] if game is not None else []
        params += [("match", match) for match in ids]
        return self._frame("events", params)

    def results_frame(
        self, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None
    ) -> Any:
        return self._frame("results", _view_params(game, since, as_seat))

    def seats_frame(self, *, game: str | None = None, since: datetime | None = None, as_seat: int | None = None) -> Any:
        return self._frame("seats", _view_params(game, since, as_seat))

    # -- appending ----------------------------------------------------------------------------

    def append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> Appended:
        return self._append(match_id, events, expected_seq).appended()

    def _append(self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int) -> _Appended:
        items = [item if isinstance(item, Draft) else draft(item) for item in events]
        body = msgspec.json.encode(
            {
                "expected_seq": expected_seq,
                "events": [{"event": d.event, "event_id": d.event_id, "at_us": d.at_us} for d in items],
            }
        )
        return self._request("POST", f"/api/matches/{match_id}/events", content=body, headers=_JSON, decode=_Appended)

    def append_async(
        self, match_id: UUID, events: Sequence[Event | Draft], expected_seq: int, *, figures: Any = None
    ) -> Future[Appended]:
        if self._sender is None:
            self._sender = _Sender(self)
        return self._sender.submit(match_id, list(events), expected_seq, figures)

    def append_bulk_encoded(
        self, batches: Iterable[tuple[UUID, Sequence[tuple[str, int, bytes]], int]]
    ) -> list[Appended]:
        body = msgspec.json.encode(
            [
                {
                    "match_id": match_id,
                    "expected_seq": expected,
                    "events": [{"event_id": e, "at_us": at, "payload": p.decode()} for e, at, p in encoded],
                }
                for match_id, encoded, expected in batches
            ]
        )
        got = self._request("POST", "/api/batches", content=body, headers=_JSON, decode=list[_Appended])
        return [a.appended() for a in got]

    def put_figures(self, sets: Sequence[Figures], *, wait: bool = True) -> Future[None] | None:
        self._request("POST", "/api/figures", content=msgspec.json.encode(list(sets)), headers=_JSON)
        if wait:
            return None
        done: Future[None] = Future()
        done.set_result(None)
        return done

    def import_jsonl(self, lines: Iterable[bytes]) -> list[Appended]:
        body = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
        headers = {"content-type": "application/x-ndjson"}
        got = self._request("POST", "/api/import", content=body, headers=headers, decode=list[_Appended])
        return [a.appended() for a in got]

    def undo(self, match: UUID | str, *, reason: str = "") -> Appended:
        body = msgspec.json.encode({"reason": reason})
        return self._request(
            "POST", f"/api/matches/{self._id(match)}/undo", content=body, headers=_JSON, decode=_Appended
        ).appended()

    def abandon(self, match: UUID | str, *, reason: str) -> Appended:
        body = msgspec.json.encode({"reason": reason})
        return self._request(
            "POST", f"/api/matches/{self._id(match)}/abandon", content=body, headers=_JSON, decode=_Appended
        ).appended()

    def fork(self, match: UUID | str, at: int) -> UUID:
        body = msgspec.json.encode({"at": at})
        return self._request(
            "POST", f"/api/matches/{self._id(match)}/fork", content=body, headers=_JSON, decode=_Forked
        ).match_id

    # -- proofs -------------------------------------------------------------------------------

    def key(self) -> str:
        return self._request("GET", "/api/key").text.strip()

    def checkpoint(self, *, new: bool = True) -> str:
        if new:
            try:
                return self._request("POST", "/api/checkpoint").text
            except Forbidden:  # only the admin signs on demand; everyone gets the latest
                pass
        return self._request("GET", "/api/checkpoint").text

    def receipt(self, match: UUID | str) -> str:
        return self._request("GET", f"/api/matches/{self._id(match)}/receipt").text

    def prove(
        self,
        match: UUID | str,
        *,
        seq: int | None = None,
        against: str | None = None,
        as_seat: int | None = None,
    ) -> dict[str, Any]:
        body = msgspec.json.encode({"seq": seq, "against": against, "as_seat": as_seat})
        return self._request(
            "POST", f"/api/matches/{self._id(match)}/proof", content=body, headers=_JSON, decode=dict[str, Any]
        )

    def verify_against(self, notes: Sequence[str], *, key: str | None = None) -> list[Problem]:
        body = msgspec.json.encode({"notes": list(notes), "key": key})
        return self._request("POST", "/api/verify/against", content=body, headers=_JSON, decode=list[Problem])


_JSON = {"content-type": "application/json"}


class _SkippedMatch(msgspec.Struct):
    match_id: UUID
    code: str
    message: str


class _Skipped(msgspec.Struct):
    skipped: _SkippedMatch


_SKIPPED = b'{"skipped":'


def _seat_lines(chunks: Iterable[bytes], out: IO[bytes], on_skip: Callable[[UUID, MatchlogError], None] | None) -> int:
    """Write a seat's export as it streams in, but for the lines that name a match the service left
    out, which go to `on_skip` (without one, the first is raised); returns the lines written.

    Raises:
        MatchlogError: a match was left out and there is no `on_skip`.
    """
    count = 0
    pending = b""
    for chunk in chunks:
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            if line.startswith(_SKIPPED):
                left_out = msgspec.json.decode(line, type=_Skipped).skipped
                error = _exception(_Error(left_out.code, left_out.message))
                if on_skip is None:
                    raise error
                on_skip(left_out.match_id, error)
                continue
            out.write(line + b"\n")
            count += 1
    if pending:
        out.write(pending)
    return count


def _view_params(game: str | None, since: datetime | None, as_seat: int | None) -> list[tuple[str, Any]]:
    given = (("game", game), ("since", since.isoformat() if since else None), ("as_seat", as_seat))
    return [(k, v) for k, v in given if v is not None]


def _turn_type() -> Any:
    from matchlog.engines import Turn

    return Turn


def _outcome_type() -> Any:
    from matchlog.events import Outcome

    return Outcome


class _Sender:
    """Sends a ServerLog's asynchronous appends in the order they were asked for, on one thread
    (a match's batches must arrive in order), resolving each future with the service's answer."""

    def __init__(self, log: ServerLog) -> None:
        self._log = log
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="matchlog-sender", daemon=True)
        self._thread.start()

    def submit(self, match_id: UUID, events: list[Event | Draft], expected: int, figures: Any) -> Future[Appended]:
        future: Future[Appended] = Future()
        self._jobs.put((match_id, events, expected, figures, future))
        return future

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            match_id, events, expected, figures, future = job
            try:
                appended = self._log.append(match_id, events, expected)
                if figures is not None:
                    self._log.put_figures([figures])
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(appended)
