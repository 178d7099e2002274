"""Players in processes of their own: how they are started, confined, talked to and ended.

The referee's side of every process concern of a child player lives here: what may be used
(`Limits`), what this machine allows (`confinement()`, found once per process), starting a child,
talking to it under deadlines and caps, and ending it with everything it started. A child starts as
`python -I -S referee/host.py CONFIG`, which confines itself (`host.confine`) before anything of the
player runs, then runs the program (`cmd:`) or loads the user's Python class. What confines it,
where the machine allows it (docs/protocol.md says what holds where):

- a session and process group of its own, and a parent-death signal: when the referee dies, it dies;
- as root, a PID namespace of its own, so the kernel ends everything it started when it ends, and no
  capabilities, so it cannot read the referee's memory through /proc;
- a cgroup with a pids limit (cgroup v2 if its pids controller is delegated, else v1), which bounds
  a fork bomb even as root, and a cgroup v2 whose `cgroup.kill` ends every process in it; without a
  writable cgroup, RLIMIT_NPROC bounds a player that is not root (root ignores it);
- RLIMIT_DATA for its memory, no core dumps, and an environment with nothing of the referee's but
  PATH, HOME, TMPDIR, TZ and the locale.

The referee talks to a child one line at a time (`Child.exchange`) under a deadline, reading its
answer and its stderr together so that no pipe can fill and stall either side, and caps both.
`Child.close` ends every process the player started and removes its cgroups; a child nobody closed
is closed when it is garbage, or when the interpreter exits.

Above all, the operating system confines it (`jail`): the host, once it has joined its cgroups and
set its limits, becomes a bubblewrap sandbox in which the player sees only what running it needs,
no other process, no network and no file of the log's folder. A machine where bubblewrap cannot
make one refuses to start a child player (`usage.confinement`, with the reason), unless the player
is asked for unconfined (`Limits.unconfined`, `--unconfined`): then only the mechanisms above hold,
and its seat records that it was unconfined.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any

import msgspec

from . import host
from .jail import find_jail, jail_argv

__all__ = [
    "EXITED",
    "MALFORMED",
    "OUTPUT",
    "START",
    "TIMEOUT",
    "UNCONFINED",
    "Child",
    "ChildFailed",
    "Confinement",
    "Limits",
    "confinement",
]

#: Why a child player failed: the codes of the rulings that remove it.
TIMEOUT = "player.timeout"
EXITED = "player.exited"
OUTPUT = "player.output"
MALFORMED = "player.malformed"
START = "player.start"
#: Why a child player was not started: this machine cannot confine it, and nobody said --unconfined.
UNCONFINED = "player.unconfined"

#: How much of a child's stderr a ruling quotes (its last bytes).
_TAIL = 600
_READ = 1 << 16
#: How long `close` waits for a player's processes to be gone.
_CLOSE_SECONDS = 5.0


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """What one player in a child process may use (None: no limit)."""

    #: Seconds it may spend answering over one match, all calls together (a chess clock).
    match_seconds: float | None = 600.0
    #: Bytes of data memory (heap and anonymous mappings) each of its processes may hold.
    memory: int | None = 1 << 30
    #: Bytes it may write to stderr in one match; also the longest answer line.
    output: int = 1 << 20
    #: Processes (and threads) it may run at once.
    processes: int | None = 64
    #: Seconds a Python player has to load and say it is ready.
    start_seconds: float = 30.0
    #: Run it outside the operating system's confinement (`jail`): it can then read whatever this
    #: user can. Only when asked for (`--unconfined`); its seat records it.
    unconfined: bool = False


class ChildFailed(Exception):
    """A child player cannot go on: `code` is the ruling's code, `detail` says what happened."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


# -- what this machine allows ------------------------------------------------------------------


class Confinement(msgspec.Struct, frozen=True):
    """What bounds a child player here: found once per process by `confinement()`."""

    #: Whether the referee runs as root (then players get a PID namespace and no capabilities).
    root: bool
    #: The cgroup under which each player gets a cgroup with pids.max (None: none is writable).
    pids_cgroup: str | None
    #: The cgroup v2 under which each player gets a cgroup that `cgroup.kill` ends (None: none).
    kill_cgroup: str | None
    #: The bubblewrap that confines players here (None: none can, and `why_not` says why).
    jail: str | None = None
    why_not: str = ""

    def lines(self) -> list[str]:
        """What holds here, one line each, in words."""
        processes = (
            f"a pids cgroup under {self.pids_cgroup}"
            if self.pids_cgroup
            else "nothing (root ignores RLIMIT_NPROC and no cgroup is writable)"
            if self.root
            else "RLIMIT_NPROC (counted over all of this user's processes)"
        )
        ended = f"cgroup.kill under {self.kill_cgroup}" if self.kill_cgroup else "their process group"
        jail = (
            f"a sandbox of {self.jail} (namespaces, only their own files, no network)"
            if self.jail
            else f"nothing: {self.why_not} (players run only if --unconfined is said)"
        )
        return [
            f"confined by: {jail}",
            f"process count bounded by: {processes}",
            f"processes ended by: {ended}" + (", and their PID namespace" if self.root or self.jail else ""),
            "capabilities: "
            + (
                "none (a user namespace of its own, all dropped)"
                if self.jail
                else "none (dropped)"
                if self.root
                else "none (not root)"
            ),
        ]


@functools.cache
def confinement() -> Confinement:
    """What this machine lets the referee do to bound and end its child players."""
    root = os.geteuid() == 0
    v2, v1_pids = _cgroup_dirs()
    pids = kill = None
    if v2 is not None and (found := _probe(v2)):
        kill = str(v2) if "cgroup.kill" in found else None
        pids = str(v2) if "pids.max" in found else None
    if pids is None and v1_pids is not None and "pids.max" in _probe(v1_pids):
        pids = str(v1_pids)
    jail, why_not = find_jail()
    return Confinement(root=root, pids_cgroup=pids, kill_cgroup=kill, jail=jail, why_not=why_not)


def _cgroup_dirs() -> tuple[Path | None, Path | None]:
    """This process's cgroup v2 directory, and its cgroup v1 pids directory, where mounted."""
    try:
        memberships = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None, None
    paths: dict[str, str] = {}
    for line in memberships:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    v2 = v1 = None
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point, fstype, options = fields[3], fields[4], tail[0], tail[2].split(",")
        if fstype == "cgroup2" and "" in paths and v2 is None:
            v2 = _inside(point, root, paths[""])
        elif fstype == "cgroup" and "pids" in options and "pids" in paths and v1 is None:
            v1 = _inside(point, root, paths["pids"])
    return v2, v1


def _inside(point: str, root: str, path: str) -> Path | None:
    """Where `path` (a cgroup path) is under a mount of cgroup `root` at `point`."""
    relative = os.path.relpath(path, root)
    if relative.startswith(".."):
        return None
    return Path(point) / relative if relative != "." else Path(point)


def _probe(parent: Path) -> set[str]:
    """The files a cgroup made under `parent` has (empty when none can be made); it clears away
    cgroups of referees that died, ending what is left in them."""
    _sweep(parent)
    probe = parent / f"matchlog-{os.getpid()}-probe"
    try:
        probe.mkdir()
    except OSError:
        return set()
    try:
        return {entry.name for entry in probe.iterdir()}
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _sweep(parent: Path) -> None:
    with contextlib.suppress(OSError):
        for entry in parent.glob("matchlog-*-*"):
            owner = entry.name.split("-")[1]
            if owner.isdigit() and not _alive(int(owner)):
                _empty(entry, time.monotonic() + 1.0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _empty(cgroup: Path, deadline: float) -> bool:
    """End every process in `cgroup` and remove it; False if it could not be emptied in time."""
    kill = cgroup / "cgroup.kill"
    if kill.exists():
        with contextlib.suppress(OSError):
            kill.write_text("1")
    while True:
        try:
            pids = [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return False
        if not pids:
            try:
                cgroup.rmdir()
            except OSError as error:
                if error.errno != errno.EBUSY:
                    return False  # gone already, or not ours to remove
            else:
                return True
        for pid in pids:  # a process that forks meanwhile is caught on the next pass
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)


# -- the referee's side: one child ---------------------------------------------------------------

_numbers = itertools.count()
_ENVIRONMENT = ("PATH", "HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE")


def _environment() -> dict[str, str]:
    """What a child may know of the referee's environment: where programs are, and the locale."""
    return {k: v for k, v in os.environ.items() if k in _ENVIRONMENT or k.startswith("LC_")}


class Child:
    """One child player: its process, the processes it starts, and the pipes to it.

    `run` says what the host runs once confined: {"exec": argv} or {"python": {...}} (see `host`).
    The process is started from the calling thread, and its parent-death signal follows that
    thread: start children from a thread that lives as long as they do. A child nobody closes is
    closed when it is garbage or when the interpreter exits.

    Raises:
        ChildFailed: the process could not be started (player.start), or this machine cannot confine
            it and it was not asked for unconfined (player.unconfined).
    """

    def __init__(self, run: dict[str, Any], limits: Limits) -> None:
        self.limits = limits
        self.cgroups: list[Path] = []
        self.closed = False
        self._answer = bytearray()
        self._tail = bytearray()
        self.errors_written = 0
        found = confinement()
        if not limits.unconfined:
            if found.jail is None:
                raise ChildFailed(UNCONFINED, found.why_not)
            run = {"exec": jail_argv(found.jail, run, limits.memory)}
        label = f"matchlog-{os.getpid()}-{next(_numbers)}"
        for parent in dict.fromkeys(p for p in (found.pids_cgroup, found.kill_cgroup) if p):
            cgroup = Path(parent) / label
            try:
                cgroup.mkdir()
                if parent == found.pids_cgroup and limits.processes is not None:
                    (cgroup / "pids.max").write_text(str(limits.processes))
            except OSError as error:
                self._remove_cgroups()
                raise ChildFailed(START, f"cannot make the player's cgroup {cgroup}: {error}") from None
            self.cgroups.append(cgroup)
        jail = {
            "parent": os.getpid(),
            "cgroups": [str(c) for c in self.cgroups],
            "memory": limits.memory,
            "processes": None if found.root or found.pids_cgroup else limits.processes,
            # Unconfined, root's player gets a PID namespace and loses its capabilities; a sandbox
            # has both already.
            "root": found.root and limits.unconfined,
        }
        if not found.root:
            _undumpable()
        # Isolated and without site: the host confines itself before anything else is imported.
        argv = [sys.executable, "-I", "-S", host.__file__, json.dumps({"jail": jail, "run": run})]
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=_environment(),
                close_fds=True,
            )
        except OSError as error:
            self._remove_cgroups()
            raise ChildFailed(START, f"cannot start {sys.executable}: {error}") from None
        self._end = weakref.finalize(self, _end, self.process, self.cgroups)
        pipes = (self.process.stdin, self.process.stdout, self.process.stderr)
        self._in, self._out, self._err = (pipe.fileno() for pipe in pipes if pipe is not None)
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def new_match(self) -> None:
        """Start counting its output afresh (the cap is per match)."""
        self.errors_written = 0

    def exchange(self, line: bytes | None, deadline: float | None) -> bytes:
        """Send `line` (one line, newline included; None: send nothing) and return the next line the
        child writes, without its newline, waiting until `deadline` (time.monotonic; None: forever).

        Raises:
            ChildFailed: it ended (player.exited), overran the deadline (player.timeout), wrote more
                than its output cap (player.output), or spoke before it was asked (player.malformed).
        """
        if self.closed:
            raise ChildFailed(EXITED, "its process has been ended")
        if line is not None and (self._answer or self._readable(self._out)):
            self._read(self._out)
            if self._answer:
                raise ChildFailed(MALFORMED, f"it wrote {_quote(bytes(self._answer))} before it was asked")
        pending = memoryview(line) if line is not None else memoryview(b"")
        poller = select.poll()
        if pending:
            poller.register(self._in, select.POLLOUT)
        poller.register(self._out, select.POLLIN)
        poller.register(self._err, select.POLLIN)
        while True:
            newline = self._answer.find(b"\n")
            if newline >= 0 and not pending:
                answer = bytes(self._answer[:newline])
                del self._answer[: newline + 1]
                return answer
            if len(self._answer) > self.limits.output:
                raise ChildFailed(OUTPUT, f"an answer longer than {self.limits.output} bytes")
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                raise ChildFailed(TIMEOUT, "no answer in time")
            for fd, events in poller.poll(None if wait is None else max(1, int(wait * 1000) + 1)):
                if fd == self._in:
                    if events & (select.POLLERR | select.POLLHUP):
                        raise self._ended("closed its input")
                    try:
                        sent = os.write(self._in, pending[:_READ])
                    except BrokenPipeError:
                        raise self._ended("closed its input") from None
                    except BlockingIOError:
                        continue
                    pending = pending[sent:]
                    if not pending:
                        poller.unregister(self._in)
                elif fd == self._err:
                    if not self._read(self._err):
                        poller.unregister(self._err)
                elif not self._read(self._out):
                    raise self._ended("closed its output")

    def _readable(self, fd: int) -> bool:
        poller = select.poll()  # not select(): it cannot watch a descriptor numbered 1024 or more
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))

    def _read(self, fd: int) -> bool:
        """Take what `fd` holds; False at its end."""
        try:
            chunk = os.read(fd, _READ)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        if fd == self._out:
            self._answer += chunk
            return True
        self.errors_written += len(chunk)
        self._tail += chunk
        del self._tail[:-_TAIL]
        if self.errors_written > self.limits.output:
            raise ChildFailed(OUTPUT, f"it wrote more than {self.limits.output} bytes to stderr in one match")
        return True

    def _drain(self) -> None:
        """Read what is left on its stderr, for the tail a ruling quotes."""
        with contextlib.suppress(OSError, ChildFailed):
            while self._readable(self._err) and self._read(self._err):
                pass

    def _ended(self, how: str) -> ChildFailed:
        """The failure of a child that stopped talking: how it ended, and the last of its stderr."""
        self._drain()
        try:
            self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            status = f"{how} and is still running"
        else:
            status = f"{how}: {self.status()}"
        tail = self.stderr_tail()
        return ChildFailed(EXITED, status + (f"; its stderr ends: {tail}" if tail else ""))

    def status(self) -> str:
        """How the process ended, in words ("" while it runs)."""
        code = self.process.poll()
        if code is None:
            return ""
        if code < 0:
            return f"killed by {_signal_name(-code)}"
        # A sandbox, and root's host, end as their player ended: a signal n as status 128 + n.
        if code > 128 and (confinement().root or not self.limits.unconfined):
            return f"killed by {_signal_name(code - 128)}"
        return f"exited with status {code}"

    def stderr_tail(self) -> str:
        """The last bytes it wrote to stderr, as text on one line."""
        text = self._tail.decode("utf-8", "replace").strip()
        return " | ".join(line.strip() for line in text.splitlines() if line.strip())[-_TAIL:]

    def close(self) -> None:
        """End the player and every process it started; remove its cgroups. Safe to call twice."""
        self.closed = True
        self._end()

    def _remove_cgroups(self) -> None:
        _remove(self.cgroups)


def _end(process: subprocess.Popen[bytes], cgroups: list[Path]) -> None:
    """End a child's processes: its cgroups first (nothing escapes them), then its process group and
    itself; wait for it, close the pipes, and remove the cgroups once empty."""
    for cgroup in cgroups:
        with contextlib.suppress(OSError):
            if (cgroup / "cgroup.kill").exists():
                (cgroup / "cgroup.kill").write_text("1")
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_CLOSE_SECONDS)
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    _remove(cgroups)


def _remove(cgroups: list[Path]) -> None:
    deadline = time.monotonic() + _CLOSE_SECONDS
    for cgroup in cgroups:
        _empty(cgroup, deadline)
    cgroups.clear()


def _quote(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= 60 else text[:59] + "…")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@functools.cache
def _undumpable() -> None:
    """Make this process undumpable, so that a child of the same user cannot read its memory
    through /proc (root's children lose their capabilities instead: `host.confine`)."""
    with contextlib.suppress(OSError):
        host.prctl(host.PR_SET_DUMPABLE, 0)
