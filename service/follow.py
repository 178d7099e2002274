"""Follow streams: a match's new events pushed to whoever watches it, as Server-Sent Events.

The store calls `Hub.committed` on its writer thread after every commit; the hub wakes the
streams of those matches on the service's event loop. A stream sends each event once, in seq
order, as its reader may see it, with the seq as the SSE id, so a client that reconnects with
`Last-Event-ID` picks up exactly after the last event it got.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import msgspec

__all__ = ["Hub"]

#: Seconds between keep-alive comments on a quiet stream (proxies close silent connections).
KEEP_ALIVE = 15.0


class Hub:
    """Wakes the follow streams of matches that were appended to."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[UUID, set[asyncio.Event]] = {}
        self.closing = asyncio.Event()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def committed(self, heads: list[tuple[UUID, int]]) -> None:
        """Called by the store's writer thread after a commit: wake those matches' streams."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake, [match_id for match_id, _ in heads])

    def _wake(self, match_ids: list[UUID]) -> None:
        for match_id in match_ids:
            for waiter in self._waiting.get(match_id, ()):
                waiter.set()

    def close(self) -> None:
        """End every stream (the service is stopping)."""
        self.closing.set()
        for waiters in self._waiting.values():
            for waiter in waiters:
                waiter.set()

    async def stream(self, log: Any, match_id: UUID, start: int, as_seat: int | None) -> AsyncIterator[dict[str, str]]:
        """SSE messages: every event from seq `start` on as `as_seat` sees it, then `end` once the
        match has ended; keep-alive comments while it is quiet."""
        waiter = asyncio.Event()
        self._waiting.setdefault(match_id, set()).add(waiter)
        encoder = msgspec.json.Encoder()
        try:
            next_seq = start
            while not self.closing.is_set():
                waiter.clear()
                info = await asyncio.to_thread(log.info, match_id)
                if info.last_seq >= next_seq:
                    lines = await asyncio.to_thread(log.lines, match_id, start=next_seq, as_seat=as_seat)
                    for line in lines:
                        yield {"id": str(line.seq), "event": "line", "data": encoder.encode(line).decode()}
                    next_seq = info.last_seq + 1 if not lines else lines[-1].seq + 1
                    continue
                if info.status != "running":
                    yield {"event": "end", "data": encoder.encode({"status": info.status}).decode()}
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), KEEP_ALIVE)
                    continue
                yield {"comment": "keep-alive"}
        finally:
            waiters = self._waiting.get(match_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiting[match_id]
