"""Calling into a player: whatever it does (returns, raises, hangs), the referee gets a Reply.

Each game's referee talks to its players through a `Channel`: `call(method, *args)` returns a
`Reply` whatever the player does, `has(method)` says whether it has an optional method, and
`close()` ends the match for it. `PlayerCalls` is the channel to a player object in this process
(built-in players, and user code run `--in-process`); `channel.ProcessChannel` is the channel to a
player in a process of its own, one JSON line per call (docs/protocol.md).

With a timeout, each in-process player's calls run on a daemon thread of its own; a call that
overruns is abandoned (Python cannot kill a thread) and the player is never called again, so a hung
player stalls the match for at most its timeout and never keeps the process from exiting.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

__all__ = ["DEFAULT_TIMEOUT", "Channel", "PlayerCalls", "PlayerFailed", "PlayerLeft", "Reply"]

#: Seconds a player may take to answer one call, unless told otherwise.
DEFAULT_TIMEOUT = 10.0

#: How much of a player's exception text a record keeps.
_DETAIL_LIMIT = 300


class Reply(msgspec.Struct, frozen=True):
    """What a call to a player produced: a value, or a failure code ("player.exception",
    "player.timeout", "player.missing_method") with its detail."""

    value: Any = None
    failure: str | None = None
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.failure is not None


class Channel(Protocol):
    """How a game's referee calls one player, wherever the player runs."""

    def call(self, method: str, *args: Any, required: bool = True) -> Reply:
        """Call `method` of the player; a missing optional method answers None."""
        ...

    def has(self, method: str) -> bool:
        """Whether the player may have `method` (so an optional call is worth making)."""
        ...

    def close(self) -> None:
        """The match is over for this player."""
        ...


class PlayerCalls:
    """Runs one player's method calls in this process under a timeout (None: no limit, called inline)."""

    def __init__(self, player: object, timeout: float | None) -> None:
        self.player = player
        self.timeout = timeout
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], list[Reply], threading.Event] | None] | None = None
        self._hung = False

    def has(self, method: str) -> bool:
        return callable(getattr(self.player, method, None))

    def call(self, method: str, *args: Any, required: bool = True) -> Reply:
        """Call `player.method(*args)`; a missing optional method answers None."""
        function = getattr(self.player, method, None)
        if not callable(function):
            if required:
                return Reply(failure="player.missing_method", detail=f"the player has no method {method}()")
            return Reply()
        if self.timeout is None:
            return _run(function, args, method)
        if self._hung:
            return Reply(failure="player.timeout", detail=f"an earlier call is still running; {method}() not made")
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(self._jobs,), name=f"player-{method}", daemon=True).start()
        box: list[Reply] = []
        done = threading.Event()
        self._jobs.put((lambda: _run(function, args, method), box, done))
        if not done.wait(self.timeout):
            self._hung = True
            return Reply(failure="player.timeout", detail=f"{method}() gave no answer within {self.timeout:g} s")
        return box[0]

    def close(self) -> None:
        """Let the player's thread end (a hung one ends when its call returns, if ever)."""
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None


def _serve(jobs: queue.SimpleQueue[tuple[Callable[[], Any], list[Reply], threading.Event] | None]) -> None:
    while (job := jobs.get()) is not None:
        work, box, done = job
        box.append(work())
        done.set()


def _run(function: Callable[..., Any], args: tuple[Any, ...], method: str) -> Reply:
    try:
        return Reply(value=function(*args))
    except KeyboardInterrupt:
        raise
    except PlayerFailed as error:
        return Reply(failure=error.code, detail=f"{method}(): {error}")
    except BaseException as error:  # a player's SystemExit must not end the referee either
        text = f"{type(error).__name__}: {error}"
        if len(text) > _DETAIL_LIMIT:
            text = text[: _DETAIL_LIMIT - 1] + "…"
        return Reply(failure="player.exception", detail=f"{method}() raised {text}")


class PlayerFailed(Exception):
    """Raised by a player (or the proxy of a remote one) that cannot go on: the player is removed
    with the class's `code` (instead of "player.exception") and the message as the reason."""

    code = "player.failed"


class PlayerLeft(PlayerFailed):
    """Raised by a player to leave the match (a human who quits): recorded as `player.left`."""

    code = "player.left"
