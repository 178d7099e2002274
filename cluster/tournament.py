"""A tournament's matches played as Ray tasks across a cluster's nodes.

`RayPool` is a `referee.tournament.Pool`: the writer loop, the log, the progress, the standings
and Ctrl-C are the tournament's own (this process stays the one writer). Each task plays a run of
match numbers with `play_numbered` and streams back every finished match's messages as it goes
(a Ray streaming generator), in batches of a tenth of a second of play. Nodes need only matchlog
installed; a player given as `file.py:Class` must be at that path on every node (a shared file
system), or be an installed module (`package.module:Class`); built-in players run anywhere.

When a node dies, Ray fails the tasks that were running there: the matches they had not sent
are played again elsewhere (a match's seed depends only on its number, so it is the same match
under a new id), up to three times, after which they are reported as failed. Nothing of a match
reaches the log before it has ended, so a lost node leaves nothing half-written. Ctrl-C raises a
stop flag (a small actor) that the tasks look at every quarter second: they send what they have
played, and the writer ends the matches in play as abandoned, as with worker processes.
"""

from __future__ import annotations

import collections
import contextlib
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from matchlog.events import uuid7
from matchlog.referee.tournament import Setup, play_numbered

from .connect import connected, require_ray

__all__ = ["RayPool", "TaskFigures", "ray_pool"]

ray = require_ray()

#: Seconds of play a task gathers before it sends what it finished.
_SEND_EVERY = 0.1
#: How often a task looks at the stop flag, in seconds.
_ASK_EVERY = 0.25
#: How long stopping waits for the tasks to send what they have, in seconds.
_STOP_SECONDS = 15.0
#: How many times a match lost with its node is played again before it is reported as failed.
_REPLAYS = 3
#: Matches one task plays, at most; and tasks queued per CPU of the cluster.
_MOST_PER_TASK = 64
_TASKS_PER_CPU = 2


@ray.remote(num_cpus=0)
class _StopFlag:
    """Raised once, when the writer asks every task to stop."""

    def __init__(self) -> None:
        self.raised = False

    def set(self) -> None:
        self.raised = True

    def is_set(self) -> bool:
        return self.raised


class _Asked:
    """The stop flag as a task sees it: asked at most every `_ASK_EVERY` seconds."""

    def __init__(self, flag: Any) -> None:
        self.flag = flag
        self.asked = 0.0
        self.raised = False

    def is_set(self) -> bool:
        now = time.monotonic()
        if not self.raised and now - self.asked >= _ASK_EVERY:
            self.asked = now
            # A flag that cannot be reached (its node died) stops nothing: the writer ends
            # whatever is still running once its stop deadline passes.
            with contextlib.suppress(ray.exceptions.RayError):
                self.raised = bool(ray.get(self.flag.is_set.remote(), timeout=5))
        return self.raised


class _NodeLost(RuntimeError):
    """Raised in a task whose node is going down, so the writer plays its unfinished matches again."""


class _Messages:
    """What `play_numbered` puts, kept until the task sends it."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def put(self, message: tuple[Any, ...]) -> None:
        self.items.append(message)

    def take(self) -> list[tuple[Any, ...]]:
        items, self.items = self.items, []
        return items


@ray.remote(max_retries=0, num_cpus=1)
def _play(setup: Setup, numbers: list[int], flag: Any) -> Iterator[tuple[float, float, list[tuple[Any, ...]]]]:
    """Play `numbers` in turn; yield (seconds of play, CPU seconds, messages) for what finished,
    every `_SEND_EVERY` seconds of play and at the end. Ray does not retry it: the pool does."""
    stop = _Asked(flag)
    messages = _Messages()
    began = time.perf_counter()
    used = time.process_time()
    for number in numbers:
        if stop.is_set():
            break  # queued behind the stop: nothing of it was played
        going = play_numbered(setup, number, messages, stop)
        if not going:
            if not stop.is_set():
                # Not asked to stop: the worker's parent (its node's raylet) is gone, so the node is
                # going down. What finished is sent; the match cut short is not, so the writer sees
                # a lost task and plays that match again elsewhere instead of keeping half of it.
                messages.items = [m for m in messages.items if m[1] != number]
                yield time.perf_counter() - began, time.process_time() - used, messages.take()
                raise _NodeLost("the worker's node went down mid-match")
            break
        if time.perf_counter() - began >= _SEND_EVERY:
            yield time.perf_counter() - began, time.process_time() - used, messages.take()
            began, used = time.perf_counter(), time.process_time()
    yield time.perf_counter() - began, time.process_time() - used, messages.take()


class TaskFigures:
    """What the tasks of one tournament did: how many, how many matches, seconds of play and CPU
    seconds on the workers (summed), from which per-task figures and projections are worked out."""

    def __init__(self) -> None:
        self.tasks = 0
        self.matches = 0
        self.busy_seconds = 0.0
        self.cpu_seconds = 0.0
        self.replayed = 0
        self.cpus = 0


class _Task:
    """One task in flight: the numbers it plays, and which it has finished."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers
        self.finished: set[int] = set()


class RayPool:
    """Match numbers played as Ray tasks on the cluster at `address` (see the module docstring)."""

    def __init__(self, address: str, setup: Setup) -> None:
        self.address = address
        self.setup = setup
        self.pending: collections.deque[int] = collections.deque(range(setup.total))
        self.replays: collections.Counter[int] = collections.Counter()
        self.running: dict[Any, _Task] = {}
        self.failed: list[tuple[Any, ...]] = []  # messages for matches lost too often
        self.figures = TaskFigures()
        self._connection: contextlib.ExitStack | None = None
        self._flag: Any = None
        self._setup_ref: Any = None
        self._per_task = 1
        self._checked_cpus = 0.0

    # -- the Pool protocol ------------------------------------------------------------------

    def start(self) -> None:
        """Connect to the cluster and raise the flag actor.

        Raises:
            UsageError, RemoteError: as `connected`.
        """
        stack = contextlib.ExitStack()
        stack.enter_context(connected(self.address))
        self._connection = stack
        self.figures.cpus = self._cpus()
        # Enough numbers a task that each plays a while, not so many that the last ones wait alone.
        spread = self.figures.cpus * _TASKS_PER_CPU * 4
        self._per_task = max(1, min(_MOST_PER_TASK, math.ceil(self.setup.total / max(spread, 1))))
        self._flag = _StopFlag.remote()
        self._setup_ref = ray.put(self.setup)

    def hand_out(self, done: int) -> None:
        limit = max(1, self.figures.cpus) * _TASKS_PER_CPU
        while self.pending and len(self.running) < limit:
            numbers = [self.pending.popleft() for _ in range(min(self._per_task, len(self.pending)))]
            task = _play.remote(self._setup_ref, numbers, self._flag)
            self.running[task] = _Task(numbers)
            self.figures.tasks += 1

    def receive(self, timeout: float) -> list[tuple[Any, ...]] | None:
        messages, self.failed = self.failed, []
        if not self.running:
            if self.pending or messages:
                return messages
            return None  # nothing in flight, nothing left: every match was played or reported
        ready, _ = ray.wait(list(self.running), num_returns=1, timeout=timeout)
        if ready:
            more, _ = ray.wait(list(self.running), num_returns=len(self.running), timeout=0)
            ready = list(dict.fromkeys([*ready, *more]))
        elif time.monotonic() - self._checked_cpus > 5:
            self._checked_cpus = time.monotonic()
            if self._cpus() == 0:  # no node with a CPU is left: nothing will play the rest
                self.failed = messages + self.failed  # (stop gives them to the writer)
                return None
        for generator in ready:
            messages.extend(self._next(generator))
        return messages

    def stop(self) -> Iterator[tuple[Any, ...]]:
        try:
            if self._flag is not None:
                self._flag.set.remote()
            self.pending.clear()
            deadline = time.monotonic() + _STOP_SECONDS
            while self.running and time.monotonic() < deadline:
                yield from self.receive(0.05) or ()
            yield from self.failed
        finally:
            for generator in self.running:
                with contextlib.suppress(Exception):  # the task may have ended in the meantime
                    ray.cancel(generator, force=True)
            self.running.clear()
            if self._flag is not None:
                with contextlib.suppress(Exception):
                    ray.kill(self._flag)
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def shortfall(self, missing: int, games: int) -> str:
        return f"the Ray cluster at {self.address} has no CPU left with {missing} of {games} matches not played"

    # -- what the tasks send ----------------------------------------------------------------

    def _next(self, generator: Any) -> list[tuple[Any, ...]]:
        """The next batch of a task that has one ready; a task that ended is forgotten, and one
        that failed (its node died) has its unfinished numbers played again."""
        task = self.running[generator]
        try:
            reference = next(generator)
        except StopIteration:
            del self.running[generator]
            return []
        try:
            seconds, cpu_seconds, messages = ray.get(reference)
        except ray.exceptions.RayError as error:
            del self.running[generator]
            self._lost(task, error)
            return []
        for message in messages:
            if message[0] in ("end", "failed"):
                task.finished.add(message[1])
                self.figures.matches += 1
        self.figures.busy_seconds += seconds
        self.figures.cpu_seconds += cpu_seconds
        return messages

    def _lost(self, task: _Task, error: BaseException) -> None:
        """Play a failed task's unfinished numbers again, first; or report them when lost too often."""
        again = []
        for number in task.numbers:
            if number in task.finished:
                continue
            self.replays[number] += 1
            if self.replays[number] > _REPLAYS:
                reason = f"lost {_REPLAYS + 1} times with its node or worker: {_first_line(error)}"
                self.failed.append(("failed", number, uuid7().bytes, reason))
            else:
                again.append(number)
                self.figures.replayed += 1
        self.pending.extendleft(reversed(again))

    def _cpus(self) -> int:
        return int(ray.cluster_resources().get("CPU", 0))


def ray_pool(address: str, *, figures: Callable[[TaskFigures], None] | None = None) -> Callable[[Setup], RayPool]:
    """A pool factory for `run_tournament(pool=...)`: the matches are played on the Ray cluster at
    `address`; `figures`, if given, gets the pool's task figures when it is made (for benchmarks)."""

    def make(setup: Setup) -> RayPool:
        pool = RayPool(address, setup)
        if figures is not None:
            figures(pool.figures)
        return pool

    return make


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
