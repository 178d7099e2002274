"""The first thing that runs in a child player's process: `python -I -S .../referee/host.py CONFIG`.

It confines the process (`confine`) before anything of the player runs, and before anything but the
standard library is imported (this module imports nothing else: it starts in milliseconds, with no
site packages, and a program's host never loads more). Then it becomes what the referee asked for
(exec): by default a bubblewrap sandbox (`jail`) that runs the program, or a second host inside it
(CONFIG's jail null: confined already) for a Python class; unconfined, the program itself. For a
program (`cmd:`) that is all; for a user's Python class (`module:Class`, `file.py:Class`)
it loads the class and serves the game's protocol (docs/protocol.md) on behalf of the object: each
message read from the referee is turned into the call the class was written for (a `Table`, a
`Board`, a view, a game tree: `messages`), and what the call returns, or raises, is the answer line.

Before the first message, a Python host says once whether the player loaded: `{"ready": true,
"methods": [...]}` (the methods the object has, so the referee never sends calls it lacks) or
`{"error": message, "code": "usage.player"}`. The player's own prints go to stderr, and its stdin
reads nothing, so nothing it does can garble the protocol.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import signal
import sys
from typing import Any

__all__ = ["PR_SET_DUMPABLE", "confine", "main", "prctl"]

#: How much of an exception's text an error answer keeps.
_DETAIL_LIMIT = 300


def main(argv: list[str]) -> None:
    """Confine this process, then run what the referee asked for."""
    config = json.loads(argv[0])
    if config["jail"] is not None:  # None: inside a sandbox, whose host outside confined it already
        confine(config["jail"])
    run = config["run"]
    if "exec" in run:
        _become(run["exec"])
    else:
        _serve(run["python"])


def _become(argv: list[str]) -> None:
    """Replace this process with the player's program (its stdin and stdout are the protocol)."""
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        _write(1, {"error": f"cannot run {argv[0]}: {error.strerror}", "code": "player.start"})
        os._exit(127)


def _write(fd: int, message: Any) -> None:
    _send(fd, json.dumps(message, separators=(",", ":")).encode())


def _serve(python: dict[str, Any]) -> None:
    """Load the user's class and answer the referee's messages until it closes the pipe."""
    # The protocol keeps private copies of stdin and stdout; the player's prints go to stderr.
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    import site

    site.main()  # the site packages (matchlog's own install among them), only now
    sys.path[:] = python["path"]
    import msgspec

    from matchlog.referee.calls import PlayerFailed
    from matchlog.referee.classes import load_player
    from matchlog.referee.registry import messages_for

    try:
        messages = messages_for(python["game"])
        player = load_player(python["spec"], python["seed"])
    except Exception as error:  # a UsageError, or the game's own modules failing (not the player's)
        _write(protocol_out, {"error": str(error), "code": getattr(error, "code", "usage.player")})
        return
    methods = sorted(name for name in dir(player) if not name.startswith("_") and callable(getattr(player, name, None)))
    _write(protocol_out, {"ready": True, "methods": methods})
    encode = msgspec.json.Encoder(enc_hook=repr).encode
    decode = msgspec.json.Decoder(dict[str, Any]).decode
    with os.fdopen(protocol_in, "rb") as reader:
        for line in reader:
            message = decode(line)
            method = message["call"]
            try:
                answer = messages.reply(method, getattr(player, method)(*messages.arguments(message)))
            except MemoryError:
                reply: Any = {"error": f"{method}() ran out of memory", "code": "player.memory"}
            except PlayerFailed as error:
                reply = {"error": f"{method}(): {error}", "code": error.code}
            except BaseException as error:  # a player's SystemExit is its failure, as in process
                text = f"{type(error).__name__}: {error}"
                if len(text) > _DETAIL_LIMIT:
                    text = text[: _DETAIL_LIMIT - 1] + "…"
                reply = {"error": f"{method}() raised {text}", "code": "player.exception"}
            else:
                try:
                    data = encode(answer)
                except (TypeError, ValueError, OverflowError):
                    data = encode(repr(answer))  # judged as the answer it is, like any malformed one
                _send(protocol_out, data)
                continue
            _send(protocol_out, encode(reply))


def _send(fd: int, data: bytes) -> None:
    data += b"\n"
    while data:
        data = data[os.write(fd, data) :]


# -- confining itself before the player runs ----------------------------------------------------

_PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CLONE_NEWPID = 0x20000000
# Root gets no capabilities back on exec, and cannot change that (SECBIT_NOROOT and friends, locked).
_SECUREBITS = 0b1111_1111
_CAPABILITY_VERSION_3 = 0x20080522


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> None:
    """prctl(2) with one argument.

    Raises:
        OSError: the kernel refused.
    """
    if _libc().prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def confine(jail: dict[str, Any]) -> None:
    """Confine this process (the host, before it runs the player) as `jail` says; see the module
    docstring. As root it becomes, through a fork, the first process of a PID namespace of its own:
    the parent stays behind only to wait for it and pass on how it ended."""
    # Die with the referee; if it died already, go now.
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != jail["parent"]:
        os._exit(1)
    for cgroup in jail["cgroups"]:
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if jail["memory"] is not None:
        resource.setrlimit(resource.RLIMIT_DATA, (jail["memory"], jail["memory"]))
    if jail["processes"] is not None:  # a user's limit counts all its processes: allow this many more
        mine = _processes_of(os.getuid())
        resource.setrlimit(resource.RLIMIT_NPROC, (mine + jail["processes"], mine + jail["processes"]))
    if jail["root"]:
        if _libc().unshare(_CLONE_NEWPID) == 0:
            _wait_for_player(os.fork())  # returns only in the child, the namespace's first process
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        _drop_capabilities()


def _wait_for_player(pid: int) -> None:
    """In the parent: hold nothing of the player's, wait for it, and end as it ended."""
    if pid == 0:
        return
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _drop_capabilities() -> None:
    """Lose every capability for good: root keeps its user id, but not what root may do beyond it
    (read other processes' memory, pass file permissions, raise limits)."""
    prctl(_PR_SET_NO_NEW_PRIVS, 1)
    prctl(_PR_SET_SECUREBITS, _SECUREBITS)
    with open("/proc/sys/kernel/cap_last_cap") as text:
        last = int(text.read())
    for capability in range(last + 1):
        prctl(_PR_CAPBSET_DROP, capability)
    _libc().prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # fails only where none exist
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all empty, twice
    if _libc().capset(header, data) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"capset: {os.strerror(number)}")


def _processes_of(uid: int) -> int:
    """How many processes (threads included, as RLIMIT_NPROC counts) `uid` runs now."""
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return count


if __name__ == "__main__":
    main(sys.argv[1:])
