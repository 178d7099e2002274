"""The service in several processes: `matchlog serve --fronts N`.

The process `matchlog serve` starts owns the log (DuckDB allows one process to write a file and no
other to open it meanwhile) and does nothing else: it serves its Store to the fronts over a Unix
socket in a private folder (store/remote.py). Each of the N fronts is a process of its own that
takes connections on the one listening socket the owner bound and runs the whole service (HTTP,
tokens, decoding, judging, folding, the read caches) with the owner's Store, so no one process's
GIL bounds it. Every guarantee is the owner's Store's: it is the one writer, answers an append only
once it is durable, and announces each commit to every front before it answers, so a front's
caches (catalogue rows, kept answers, ETags) never answer a request made after an acknowledgement
with what came before it.

Stopping: Ctrl-C or SIGTERM stops the fronts first (each finishes what it has begun, its appends
answered by the owner meanwhile), then the owner commits what is queued and lets the file go. A
front dies with its owner (the kernel kills it, should the owner be killed), and the owner stops the
service when a front dies, as one process dying would.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import secrets
import shutil
import signal
import socket
import tempfile
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

__all__ = ["serve_fronts"]

#: How long a front may take to start (import, connect, build its app) before the service gives up.
START_SECONDS = 120.0
#: How long a front may take to finish what it has begun once told to stop.
STOP_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1


def serve_fronts(
    log: Any,
    token: str,
    sock: socket.socket,
    fronts: int,
    *,
    access_log: bool,
    checkpoint_every: float | None,
    listening: Callable[[], None],
    stopped: Callable[[], bool],
) -> None:
    """Serve `log` (a FileLog opened for writing, owned here) through `fronts` processes taking
    connections on `sock`; `listening()` once every front is ready; until `stopped()` or a front
    dies.

    Raises:
        StoreError: (`store.fronts`) a front did not start, or stopped while serving.
    """
    from matchlog.events import StoreError
    from matchlog.store.remote import StoreServer

    folder = tempfile.mkdtemp(prefix="matchlog-fronts-")  # (0700: only this user reaches the socket)
    key = secrets.token_bytes(32)
    server = StoreServer(log.store, os.path.join(folder, "store"), key)
    context = multiprocessing.get_context("spawn")
    pipes = [context.Pipe(duplex=False) for _ in range(fronts)]
    processes = [
        context.Process(
            target=_front,
            args=(
                sock,
                server.address,
                key,
                token,
                log.location,
                access_log,
                checkpoint_every if number == 0 else None,  # one front signs the checkpoints
                pipes[number][1],
            ),
            name=f"matchlog-front-{number}",
            daemon=False,
        )
        for number in range(fronts)
    ]
    try:
        for process, (_, said) in zip(processes, pipes, strict=True):
            process.start()
            said.close()  # (the front's end)
        waiting = [heard for heard, _ in pipes]
        while waiting:
            if not wait(waiting, timeout=START_SECONDS) or any(p.exitcode is not None for p in processes):
                raise StoreError("a front of the service did not start", code="store.fronts")
            waiting = [heard for heard in waiting if not heard.poll()]
        listening()
        sentinels = [process.sentinel for process in processes]
        while not stopped() and not wait(sentinels, timeout=0.2):
            pass
        if not stopped():
            raise StoreError("a front of the service stopped unexpectedly; the service stopped", code="store.fronts")
    finally:
        _stop(processes)
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def _stop(processes: list[Any]) -> None:
    """Tell every front to stop (SIGTERM: it finishes what it has begun), then wait for it."""
    for process in processes:
        if process.exitcode is None and process.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
    for process in processes:
        if process.pid is None:
            continue
        process.join(STOP_SECONDS)
        if process.exitcode is None:
            process.kill()
            process.join()


def _die_with_the_owner() -> None:
    """Have the kernel kill this process when the owner dies (however it dies)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _front(
    sock: socket.socket,
    address: str,
    key: bytes,
    token: str,
    location: str,
    access_log: bool,
    checkpoint_every: float | None,
    ready: Any,
) -> None:
    """One front: the whole service, over the owner's Store."""
    _die_with_the_owner()
    if os.getppid() == 1:  # the owner died before the line above took effect
        return
    from matchlog.file import FileLog
    from matchlog.store.remote import RemoteStore

    from .app import create_app
    from .run import run_app

    store = RemoteStore(address, key, on_lost=lambda: os.kill(os.getpid(), signal.SIGTERM))
    log = FileLog.over(store, location)
    app = create_app(log, token, checkpoint_every=checkpoint_every)
    try:
        run_app(app, sock, access_log=access_log, on_started=lambda: ready.send(os.getpid()))
    finally:
        store.close()
