"""Reads of one match, tagged and kept by what cannot change.

A match's events are only ever appended, so an answer about a match (its events, its state, its
frames, its audit, its export) is a function of three things: the match's head (its last seq and
that event's hash), the reader's view (the whole record, a seat's, a spectator's) and the question
(the route and its parameters). `ReadCache` keeps recent answers, encoded, under exactly that key,
bounded in bytes, and gives each an entity tag made from it, so

- a reader that already has the answer (`If-None-Match` with its tag) is answered 304 at the cost of
  one catalogue lookup, and a reader that asks what another asked gets the kept bytes;
- the tag moves with every event appended (the head is in it), so nothing is ever served stale (an
  audit checks other matches too, a knockout's games and a duel's pair, so it is kept by the
  number of events the log has committed as well); and
  one view's tag never equals another's (the view is in it).

The tag is a keyed hash (HMAC under a key of the service's), never the head hash itself: a reader
who may not see the whole record of a match must not get a hash over values it may not know, which
would let it test guesses of them (the catalogue withholds the head hash from it for that reason).

`Cache-Control` says who may keep an answer and for how long. An answer to a token holder is
`private` (a shared cache never holds a seat's view, nor the whole record); a spectator's is
`public`. An answer that stops at a seq already stored can never change (`pinned`: the log below a
seq is fixed) and is `immutable` for a year; any other answer may be kept but is asked about again
each time (`no-cache`), which a 304 answers cheaply. An ended match is no exception: its arbiter may
still undo after the end, so "ended" alone is not "fixed".
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any
from uuid import UUID

import msgspec
from litestar import Response
from litestar.serialization import encode_json

from matchlog.store import MatchInfo

__all__ = ["ReadCache", "cache_control", "names_tag"]

#: How long an answer that can never change may be kept (a year, the longest RFC 9111 expects).
FOREVER_SECONDS = 31_536_000
#: How many matches' catalogue rows are kept.
ROWS = 65_536
#: Every answer depends on the caller's token, whichever way it was given.
_VARY = "Authorization"


def names_tag(tag: str, if_none_match: str | None) -> bool:
    """Whether an If-None-Match header names `tag` (weakly compared, as RFC 9110 asks, or `*`)."""
    if if_none_match is None:
        return False
    given = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in given or tag in given


def cache_control(*, private: bool, pinned: bool) -> str:
    """The Cache-Control of an answer: who may keep it (`private`: a token holder's) and whether it
    can ever change (`pinned`: no)."""
    scope = "private" if private else "public"
    return f"{scope}, max-age={FOREVER_SECONDS}, immutable" if pinned else f"{scope}, no-cache"


class ReadCache:
    """Encoded answers of reads of one match, kept by (head, view, question), bounded in bytes.

    Safe to share between the threads that serve reads: two that compute the same answer at once
    both compute it (the answer is the same), and the one kept is whichever came last."""

    def __init__(self, key: bytes, budget: int = 64 << 20) -> None:
        self._key = key
        self.budget = budget
        self._kept: OrderedDict[tuple[Hashable, ...], bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.computed = 0  # answers computed, not found kept
        self.unchanged = 0  # answers not sent at all: the reader had them (304)
        # The catalogue rows of matches read lately, so that a kept answer or a 304 costs no query:
        # a row is dropped when its match commits, and one read while anything committed is not kept.
        self._rows: OrderedDict[UUID, MatchInfo] = OrderedDict()
        self._commits = 0

    def info(self, match_id: UUID, load: Callable[[UUID], MatchInfo]) -> MatchInfo:
        """The catalogue row of `match_id` as of its last commit: kept, or `load(match_id)`.

        Raises:
            UnknownMatch: as `load`.
        """
        with self._lock:
            row = self._rows.get(match_id)
            if row is not None:
                self._rows.move_to_end(match_id)
                return row
            commits = self._commits
        row = load(match_id)
        with self._lock:
            if commits == self._commits:  # nothing committed since: the row is the match's head
                self._rows[match_id] = row
                while len(self._rows) > ROWS:
                    self._rows.popitem(last=False)
        return row

    def committed(self, heads: list[tuple[UUID, int]]) -> None:
        """The writer's listener: these matches have new events (their rows are no longer heads)."""
        with self._lock:
            self._commits += 1
            for match_id, _ in heads:
                self._rows.pop(match_id, None)

    def tag(self, heads: Any, view: int | None, question: tuple[Hashable, ...]) -> str:
        """The entity tag (quoted, for an ETag header) of the answer to `question`, as `view` sees
        it (None: the whole record), about what `heads` names: a match's `head` (or several), or
        None for an answer that can never change (`pinned`)."""
        said = msgspec.msgpack.encode([heads, view, list(question)])
        mac = hmac.new(self._key, said, hashlib.sha256).hexdigest()[:32]
        return f'"{mac}"'

    @staticmethod
    def head(info: MatchInfo) -> tuple[str, int, bytes]:
        """What an answer about the match `info` describes depends on: its id, last seq and head hash."""
        return (str(info.match_id), info.last_seq, bytes(info.head_hash))

    def answer(
        self,
        info: MatchInfo,
        view: int | None,
        question: tuple[Hashable, ...],
        compute: Callable[[], Any],
        *,
        private: bool,
        if_none_match: str | None,
        pinned: bool = False,
        also: Any = None,
    ) -> Response[Any]:
        """The answer to `question` about `info`'s match as `view` sees it: 304 when the reader has
        it, the kept bytes when another asked it at this head, else `compute()` encoded (and kept).
        `private`: the reader holds a token; `pinned`: the answer stops at a stored seq; `also`:
        whatever else the answer depends on (an audit that checks other matches: the log's size).

        Raises:
            MatchlogError: whatever `compute` raises (nothing is kept).
        """
        # A pinned answer is the same whatever is appended later: its tag and key leave the head out,
        # so a reader that has it is answered 304 for ever.
        heads = (str(info.match_id), None) if pinned else (*self.head(info), also)
        tag = self.tag(heads, view, question)
        headers = self.headers(tag, private=private, pinned=pinned)
        if names_tag(tag, if_none_match):
            with self._lock:
                self.unchanged += 1
            return Response(b"", status_code=304, headers=headers)
        key = (heads, view, *question)
        with self._lock:
            body = self._kept.get(key)
            if body is not None:
                self._kept.move_to_end(key)
        if body is None:
            body = encode_json(compute())
            self._keep(key, body)
        return Response(body, media_type="application/json", headers=headers)

    def unchanged_since(self, tag: str, if_none_match: str | None, *, private: bool) -> Response[Any] | None:
        """A 304 for a reader that has the answer tagged `tag` (None: it has not), for answers
        that are not kept here (an export is streamed)."""
        if not names_tag(tag, if_none_match):
            return None
        with self._lock:
            self.unchanged += 1
        return Response(b"", status_code=304, headers=self.headers(tag, private=private))

    @staticmethod
    def headers(tag: str, *, private: bool, pinned: bool = False) -> dict[str, str]:
        """The headers of an answer tagged `tag`."""
        return {"ETag": tag, "Cache-Control": cache_control(private=private, pinned=pinned), "Vary": _VARY}

    def _keep(self, key: tuple[Hashable, ...], body: bytes) -> None:
        if len(body) > self.budget // 8:  # one answer never crowds out the rest
            with self._lock:
                self.computed += 1
            return
        with self._lock:
            self.computed += 1
            old = self._kept.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._kept[key] = body
            self._bytes += len(body)
            while self._bytes > self.budget:
                _, dropped = self._kept.popitem(last=False)
                self._bytes -= len(dropped)
