"""Running the service: `matchlog serve` opens the log for writing (it owns the file from then on),
makes or reads the admin token, binds to loopback unless told otherwise, says where it listens
(on stdout and in a file beside the log, where every command finds it), and on Ctrl-C or SIGTERM
stops taking requests, ends the follow streams, commits what is queued and lets the file go."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn

from matchlog.events import UsageError
from matchlog.file import FileLog
from matchlog.locate import admin_token, remove_server_file, token_path, write_server_file

from .app import create_app
from .fronts import serve_fronts

__all__ = ["run_app", "serve"]

_STOP = (signal.SIGINT, signal.SIGTERM)


class _Server(uvicorn.Server):
    """uvicorn's server, with our sockets, a hook to end the follow streams when it stops, and one
    for when it has started."""

    def __init__(
        self, config: uvicorn.Config, on_exit: Callable[[], None], on_started: Callable[[], None] | None = None
    ) -> None:
        super().__init__(config)
        self._on_exit = on_exit
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self._on_started is not None and not self.should_exit:
            self._on_started()

    def handle_exit(self, sig: int, frame: Any) -> None:
        self._on_exit()
        super().handle_exit(sig, frame)


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one).

    Raises:
        UsageError: the address cannot be bound (in use, or not this machine's).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP by name: asyncio turns Nagle's algorithm off only on sockets that say they are TCP,
    # and with it on every answer waited ~40 ms for the client's delayed ACK between head and body.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror}", code="usage.address") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(
    db: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    on_listening: Callable[[str, Path], None] | None = None,
    access_log: bool = False,
    checkpoint_every: float | None = None,
    fronts: int = 1,
) -> None:
    """Serve the log at `db` (created if missing) until Ctrl-C or SIGTERM, signing a checkpoint of its
    tree every `checkpoint_every` seconds; with `fronts` > 1, the requests are served by that many
    processes while this one keeps the log (fronts.py).

    Raises:
        StoreBusy: another process holds the log.
        StoreError: (`store.fronts`) a front did not start, or stopped while serving.
        UsageError: the address cannot be bound.
    """
    log = FileLog(db, mode="create")
    try:
        token = admin_token(db, create=True)
        assert token is not None
        sock = _bind(host, port)
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        url = f"http://{shown}:{bound_port}"

        def listening() -> None:
            write_server_file(db, url)
            if on_listening is not None:
                on_listening(url, token_path(db))

        # uvicorn stops gracefully on SIGINT and SIGTERM, then raises the signal again for the
        # handler it found; ours only notes it, so the log is closed and the server file removed.
        stopped_by: list[int] = []
        handlers = {sig: signal.signal(sig, lambda number, frame: stopped_by.append(number)) for sig in _STOP}
        try:
            if fronts > 1:
                serve_fronts(
                    log,
                    token,
                    sock,
                    fronts,
                    access_log=access_log,
                    checkpoint_every=checkpoint_every,
                    listening=listening,
                    stopped=lambda: bool(stopped_by),
                )
            else:
                app = create_app(log, token, checkpoint_every=checkpoint_every)
                listening()
                _settle_the_collector()
                run_app(app, sock, access_log=access_log)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            remove_server_file(db)
            sock.close()
    finally:
        log.close()


def run_app(app: Any, sock: socket.socket, *, access_log: bool, on_started: Callable[[], None] | None = None) -> None:
    """Serve `app` on `sock` with uvicorn until SIGINT or SIGTERM (`on_started()` once it listens)."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=access_log,
        timeout_graceful_shutdown=5,
        lifespan="on",
        ws="none",
    )
    hub = app.state.hub
    server = _Server(config, on_exit=lambda: _close_soon(hub), on_started=on_started)
    if on_started is not None:  # (a front: the owner settled nothing for it)
        _settle_the_collector()
    server.run(sockets=[sock])


def _close_soon(hub: Any) -> None:
    """End the follow streams from the signal handler (on the event loop's thread)."""
    with contextlib.suppress(RuntimeError):
        asyncio.get_running_loop().call_soon(hub.close)


def _settle_the_collector() -> None:
    """Set the garbage collector for a long-running server: what was loaded to start (the modules,
    the app) is frozen out of every later collection, and the youngest generation is collected
    every 20,000 allocations rather than 700. Appends allocate many short-lived objects; with the
    defaults the collector took ~15% of the event loop and paused it up to 300 ms under load."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)
