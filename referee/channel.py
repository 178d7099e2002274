"""Players in processes of their own, behind the same `Channel` as players in this one.

A `ChildPlayer` is a program (`cmd:./my_bot --flag`) or a user's Python class (`module:Class`,
`file.py:Class`, served by `host.py`) running in a confined child process (`sandbox.py`). Each
match talks to it through a `ProcessChannel`: every call of the game's protocol is one JSON line to
its stdin (`messages.py`), its answer one JSON line from its stdout, under the call's timeout and
what is left of its time for the match. Whatever the child does (exits, hangs, floods its output,
answers garbage, runs out of memory), the call returns a failed `Reply` with a stable code, the
referee removes that seat, and the child is ended at once with every process it started.

A child lives as long as its `ChildPlayer`: through a series of matches (the seed's players keep
what they learnt between games), started afresh for the next match when a failure ended it, and
ended by `close` (also a context manager; the garbage collector and interpreter exit close it too).
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from matchlog.events import UsageError

from .calls import Channel, PlayerCalls, Reply
from .messages import Messages
from .registry import messages_for
from .sandbox import MALFORMED, START, TIMEOUT, UNCONFINED, Child, ChildFailed, Limits

__all__ = ["ChildPlayer", "ProcessChannel", "channel_for", "close_players", "program_argv"]

#: The failure of a player whose time for the match is used up.
MATCH_TIME = "player.match_time"
#: How much of a player's error text a reply keeps.
_DETAIL_LIMIT = 300

_decode = msgspec.json.decode
_encode = msgspec.json.Encoder(enc_hook=repr).encode


def program_argv(spec: str) -> list[str]:
    """The command line of a `cmd:` spec.

    Raises:
        UsageError: the command line is empty or cannot be split (an open quote).
    """
    try:
        argv = shlex.split(spec.removeprefix("cmd:"))
    except ValueError as error:
        raise UsageError(f"player {spec}: {error}", code="usage.player") from None
    if not argv:
        raise UsageError(f"player {spec}: give the program to run, e.g. cmd:./my_bot", code="usage.player")
    return argv


class ChildPlayer:
    """A program (`cmd:PROGRAM ARGS`) or a user's Python class (served by `host.py`) in a confined
    child process, for a series of matches: `start` before the first, `channel` for each, `close`
    at the end (also a context manager). A child that failed is started afresh for the next match."""

    def __init__(self, game: str, spec: str, *, seed: int, limits: Limits | None = None) -> None:
        self.game = game
        self.spec = spec
        self.seed = seed
        self.limits = limits or Limits()
        self.child: Child | None = None
        #: The methods a Python player has (None: a program, sent every call).
        self.methods: frozenset[str] | None = None

    def __repr__(self) -> str:
        return f"<ChildPlayer {self.spec} pid {self.child.pid if self.child else '-'}>"

    def _run(self) -> dict[str, Any]:
        if self.spec.startswith("cmd:"):
            return {"exec": program_argv(self.spec)}
        where, _, name = self.spec.rpartition(":")
        if where.endswith(".py") or "/" in where or "\\" in where:
            where = str(Path(where).resolve())  # the child's loader must find it wherever it is
        return {"python": {"game": self.game, "spec": f"{where}:{name}", "seed": self.seed, "path": sys.path}}

    def start(self) -> ChildPlayer:
        """Start its process, unless it runs; a Python player must load and say it is ready.

        Raises:
            UsageError: the process could not start, or the player's class cannot be loaded or built,
                or it ended or stalled before it was ready (usage.player); this machine cannot confine
                it and it was not asked for unconfined (usage.confinement).
        """
        if self.child is not None and not self.child.closed:
            return self
        run = self._run()
        try:
            child = Child(run, self.limits)
        except ChildFailed as failed:
            if failed.code == UNCONFINED:
                raise UsageError(
                    f"player {self.spec}: players cannot be confined on this machine: {failed.detail}; "
                    "or say --unconfined to play it unconfined (it can then read what this user can, and "
                    "the match records that it was unconfined)",
                    code="usage.confinement",
                ) from None
            raise UsageError(f"player {self.spec}: {failed.detail}", code="usage.player") from None
        if "exec" in run:
            self.child = child
            return self
        try:
            line = child.exchange(None, time.monotonic() + self.limits.start_seconds)
            hello = _decode(line)
        except (ChildFailed, msgspec.DecodeError) as error:
            child.close()
            what = error.detail if isinstance(error, ChildFailed) else f"its host said {_shown(line)}"
            raise UsageError(f"player {self.spec} did not start: {what}", code="usage.player") from None
        if not isinstance(hello, dict) or hello.get("ready") is not True:
            child.close()
            message = hello.get("error") if isinstance(hello, dict) else None
            raise UsageError(str(message or f"player {self.spec} did not start: {hello!r}"), code="usage.player")
        self.methods = frozenset(hello.get("methods", ()))
        self.child = child
        return self

    def channel(self, seat: int, timeout: float | None) -> ProcessChannel:
        """The channel of one match at `seat`: a fresh time budget and output cap; the process is
        started again if a failure ended it (and the channel fails every call if it cannot be)."""
        failure = None
        try:
            self.start()
        except UsageError as error:
            failure = Reply(failure=START, detail=error.message)
        if self.child is not None:
            self.child.new_match()
        return ProcessChannel(self, messages_for(self.game, seat), timeout, failure)

    def close(self) -> None:
        """End its process and every process it started."""
        if self.child is not None:
            self.child.close()

    def __enter__(self) -> ChildPlayer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class ProcessChannel:
    """One match's calls to a `ChildPlayer`: a JSON line each way per call (see the module docstring)."""

    def __init__(
        self, player: ChildPlayer, messages: Messages, timeout: float | None, failure: Reply | None = None
    ) -> None:
        self.player = player
        self.messages = messages
        self.timeout = timeout
        #: Seconds left of its time for the match (None: no limit).
        self.left = player.limits.match_seconds
        self.failure = failure

    def has(self, method: str) -> bool:
        methods = self.player.methods
        return methods is None or method in methods

    def call(self, method: str, *args: Any, required: bool = True) -> Reply:
        """Send `method`'s message and wait for the answer; any failure ends the child."""
        if self.failure is not None:
            return self.failure
        if not self.has(method):
            if required:
                return Reply(failure="player.missing_method", detail=f"the player has no method {method}()")
            return Reply()
        message = self.messages.request(method, args)
        if message is None:
            return Reply()
        child = self.player.child
        assert child is not None
        if self.left is not None and self.left <= 0:
            return self._fail(MATCH_TIME, f"{method}() not made: its time for the match is used up")
        waits = [w for w in (self.timeout, self.left) if w is not None]
        began = time.monotonic()
        try:
            line = child.exchange(_encode(message) + b"\n", began + min(waits) if waits else None)
        except BaseException as error:
            if not isinstance(error, ChildFailed):  # Ctrl-C mid-call: the child is out of step for good
                self.player.close()
                raise
            failed = error
            if failed.code != TIMEOUT:
                return self._fail(failed.code, f"{method}(): {failed.detail}")
            if self.timeout is not None and (self.left is None or self.timeout <= self.left):
                return self._fail(TIMEOUT, f"{method}() gave no answer within {self.timeout:g} s")
            return self._fail(
                MATCH_TIME, f"{method}() ran past its {self.player.limits.match_seconds:g} s for the match"
            )
        finally:
            if self.left is not None:
                self.left -= time.monotonic() - began
        try:
            value = _decode(line)
        except msgspec.DecodeError:
            return self._fail(MALFORMED, f"{method}() was answered with {_shown(line)}, which is not JSON")
        if isinstance(value, dict) and "error" in value:
            code = value.get("code")
            code = code if isinstance(code, str) and code.startswith("player.") else "player.failed"
            return self._fail(code, _shown(str(value["error"]).encode()), end=code == START)
        return Reply(value=self.messages.answer(method, value))

    def _fail(self, code: str, detail: str, *, end: bool = True) -> Reply:
        """The failure every later call of this match gets too; the child is ended unless it only
        gave up on this match (an error answer: it may play the next one of a series)."""
        self.failure = Reply(failure=code, detail=detail)
        if end:
            self.player.close()
        return self.failure

    def close(self) -> None:
        """The match is over for this player (its process lives on for the next match of a series)."""


def _shown(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def channel_for(player: object, game: str, seat: int, timeout: float | None) -> Channel:
    """The channel to `player` at `seat` for one match: a child's, or calls in this process."""
    if isinstance(player, ChildPlayer):
        return player.channel(seat, timeout)
    return PlayerCalls(player, timeout)


def close_players(players: Sequence[object]) -> None:
    """End the processes of the players that run in one (the others need nothing)."""
    for player in players:
        if isinstance(player, ChildPlayer):
            player.close()
