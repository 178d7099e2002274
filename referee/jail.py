"""What a confined player sees: a bubblewrap sandbox with nothing in it but what running it needs.

A child player runs inside Debian's `bubblewrap` (`bwrap`), started by its host (`host.py`) once the
host has joined the player's cgroups and set its limits. The sandbox has namespaces of its own
(user, PID, IPC, UTS, network, cgroup), no capabilities, and an empty root in which only these
appear, read-only, at the paths they have outside:

- the system's programs and libraries (/usr and the links or folders /bin, /sbin, /lib* beside it,
  and the linker's files of /etc), but no other file of /etc, /home, /root, /srv, /var, /run or /tmp;
- for a Python class: the interpreter matchlog runs on with its standard library and site packages,
  matchlog's own packages (`packages()`: the host speaks the protocol with them, and a player may use
  them), every installed game's package and metadata wherever it was installed (`games()`: a player
  may use its game's rules, and the registry inside knows the games the referee knows), and the
  player's file (or its module's package);
- for a program: the program (found on PATH, the system's folders first) with the Python installation
  it belongs to if it is a Python interpreter, the interpreter of a script (its `#!` line), and every
  file or folder its command line names;
- a /proc of its own PID namespace (no other process is there to see), a minimal /dev, and a private
  /tmp (HOME and TMPDIR), as large as the player's memory limit.

The working directory is the referee's, holding only what is bound there. No network but a loopback
of its own; no descriptor but the three pipes; a session of its own; it dies with its host.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from matchlog.events.plugins import GROUP

__all__ = ["find_jail", "games", "jail_argv", "packages"]

#: matchlog's packages, which a Python player's host imports to speak the protocol, and a player may
#: use as a library (its code is no secret): all of them, as pyproject.toml declares them (`packages`).


def packages() -> list[str]:
    """The folders matchlog's packages live in. Installed, they are one folder (the `matchlog`
    package's); installed for development (`pip install -e`), each package is a folder of the source
    tree, named by the one list of them, pyproject.toml's, beside it: a package added there is seen
    inside the sandbox with no other change."""
    folders = list(importlib.util.find_spec("matchlog").submodule_search_locations or ())
    declared = Path(folders[0]).parent / "pyproject.toml" if folders else None
    if declared is not None and declared.is_file():
        import tomllib

        names = tomllib.loads(declared.read_text())["tool"]["setuptools"]["packages"]
        for name in names:
            found = importlib.util.find_spec(name)
            folders.extend(found.submodule_search_locations or () if found else ())
    return folders


def games() -> list[str]:
    """The files of every game registered through the `matchlog.games` entry point: its module's top
    package (or module) and its distribution's metadata folder, wherever they were installed. In a
    site-packages they are shown already; a development install (`pip install -e`) or `pip install
    --target` leaves them elsewhere, and a player of the game may import it as the referee does.
    Only these are shown, never the folder they lie in (which may hold a log)."""
    found: list[str] = []
    for point in entry_points(group=GROUP):
        found.append(_code_files(point.module) or "")
        # importlib.metadata names no public path of a distribution's metadata folder; a
        # PathDistribution (every one found on sys.path) keeps it as `_path`.
        metadata = getattr(point.dist, "_path", None)
        if metadata is not None:
            found.append(str(metadata))
    return [path for path in found if path]


#: The system's folders every player sees (links stay links, as on the host).
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: The files of /etc that running a program needs (the dynamic linker's, the system's alternatives).
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")
#: Namespaces, no capabilities, a session of its own, death with its host.
_FLAGS = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--disable-userns",
    "--uid",
    "65534",
    "--gid",
    "65534",
    "--hostname",
    "player",
    "--cap-drop",
    "ALL",
    "--new-session",
    "--die-with-parent",
)
#: The private /tmp's size when the player's memory is not limited.
_TMP_BYTES = 1 << 30


def find_jail(program: str | None = None) -> tuple[str | None, str]:
    """The bwrap that makes sandboxes on this machine (None if none does), and why not, in words."""
    found = shutil.which(program or "bwrap")
    if found is None:
        return None, (
            f"bubblewrap ({program or 'bwrap'}) is not installed: scripts/system-packages installs it "
            "(Debian's package bubblewrap)"
        )
    argv = [found, *_FLAGS, *_system_binds(), "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"{found} cannot run: {error}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
        return None, f"{found} cannot make a sandbox here: {said}"
    return found, ""


def jail_argv(bwrap: str, run: dict[str, Any], memory: int | None) -> list[str]:
    """The command line that runs `run` (a program, or a Python player's host: see `host`) inside
    a sandbox of its own made by `bwrap`, with a private /tmp of `memory` bytes (None: 1 GiB)."""
    binds = _Binds()
    try:
        cwd = os.getcwd()
    except OSError:  # the referee's folder was removed: the player starts in its /tmp
        cwd = "/tmp"
    if "exec" in run:
        command = _program(run["exec"], cwd, binds)
    else:
        # Its host, told that it is confined already (no jail): it only loads and serves the class.
        config = json.dumps({"jail": None, "run": run})
        command = [sys.executable, "-I", "-S", str(Path(__file__).with_name("host.py")), config]
        _python(sys.executable, binds)
        for entry in sys.path:
            if Path(entry).name in ("site-packages", "dist-packages"):
                binds.add(entry)
        binds.add_all(packages())
        binds.add_all(games())
        binds.add(_player_files(run["python"]["spec"]))
    # The private /tmp first: a player's files in the referee's /tmp are bound over it.
    places = ["--proc", "/proc", "--dev", "/dev", "--size", str(memory or _TMP_BYTES), "--tmpfs", "/tmp"]
    home = ["--dir", cwd, "--chdir", cwd, "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    return [bwrap, *_FLAGS, *_system_binds(), *places, *binds.argv(), *home, "--", *command]


class _Binds:
    """The paths a player sees beyond the system's, each read-only at its own path."""

    def __init__(self) -> None:
        self.paths: dict[str, str] = {}  # where inside -> what outside
        self.links: dict[str, str] = {}  # where inside -> the link's text

    def add(self, path: str | Path | None) -> None:
        """Show `path` (what it links to, at its own path), unless the system's folders show it."""
        if path is None:
            return
        where = os.path.abspath(path)
        if where != "/" and not _under(where, _SYSTEM) and os.path.exists(where):  # never the whole root
            self.paths[where] = os.path.realpath(where)

    def add_all(self, paths: Iterable[str | Path]) -> None:
        """Show each of `paths`."""
        for path in paths:
            self.add(path)

    def link(self, where: str | Path, text: str) -> None:
        """Make a link at `where` that reads `text`, as on the host."""
        self.links[os.path.abspath(where)] = text

    def argv(self) -> list[str]:
        """bwrap's arguments for them: read-only binds, outermost first, then the links."""
        argv: list[str] = []
        kept: list[str] = []
        for where in sorted(self.paths):  # a folder before what is in it, which it already shows
            if not _under(where, kept):
                argv += ["--ro-bind", self.paths[where], where]
                kept.append(where)
        for where, text in sorted(self.links.items()):
            if not _under(where, kept):
                argv += ["--symlink", text, where]
        return argv


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _system_binds() -> list[str]:
    """bwrap's arguments that show the system's folders and the linker's files of /etc."""
    argv: list[str] = []
    for path in _SYSTEM:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in _ETC:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    return argv


def _python(executable: str, binds: _Binds) -> None:
    """What a Python interpreter needs: itself, its virtual environment, the installation it is of."""
    binds.add(executable)
    folder = Path(os.path.abspath(executable)).parent.parent
    config = folder / "pyvenv.cfg"
    if config.is_file():
        binds.add(config)
        for name in ("lib", "lib64"):
            _add_folder(folder / name, binds)
        for line in config.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                _prefix(Path(value.strip()).parent, binds)
    _prefix(Path(os.path.realpath(executable)).parent.parent, binds)


def _prefix(prefix: Path, binds: _Binds) -> None:
    """A Python installation's libraries (its standard library, its shared library)."""
    if any((prefix / "lib").glob("python3*")):
        _add_folder(prefix / "lib", binds)
    library = sysconfig.get_config_var("LIBDIR")
    if library and Path(library).parent == prefix:
        binds.add(library)


def _add_folder(folder: Path, binds: _Binds) -> None:
    if folder.is_symlink():
        binds.link(folder, os.readlink(folder))
    elif folder.is_dir():
        binds.add(folder)


def _player_files(spec: str) -> str | None:
    """A Python player's own files: its file, or its module's top package (or module)."""
    where = spec.rpartition(":")[0]
    if where.endswith(".py") or "/" in where:
        return where
    return _code_files(where)


def _code_files(module: str) -> str | None:
    """The folder of `module`'s top package, or the file of a top-level module (None: not found)."""
    try:
        found = importlib.util.find_spec(module.partition(".")[0])
    except (ImportError, ValueError):
        return None
    if found is None:
        return None
    if found.submodule_search_locations:
        return next(iter(found.submodule_search_locations), None)
    return found.origin


def _program(argv: list[str], cwd: str, binds: _Binds) -> list[str]:
    """A program's command line, with its file, its interpreter and the paths it names made visible."""
    program = argv[0]
    path = _on_path(program) if "/" not in program else os.path.join(cwd, program)
    if path is None:
        return argv  # run as given: the sandbox says it cannot find it
    if "/" not in program:
        argv = [path, *argv[1:]]
    _executable(path, binds, depth=0)
    for word in argv[1:]:
        for candidate in {word, word.partition("=")[2]}:
            if candidate and not candidate.startswith("-") and os.path.exists(os.path.join(cwd, candidate)):
                binds.add(os.path.join(cwd, candidate))
    return argv


def _executable(path: str, binds: _Binds, depth: int) -> None:
    """Make a program visible, with the Python installation or the `#!` interpreter it needs."""
    binds.add(path)
    if Path(os.path.realpath(path)).name.startswith("python"):
        _python(path, binds)
    try:
        with open(path, "rb") as program:
            first = program.readline(256)
    except OSError:
        return
    if first.startswith(b"#!") and depth < 4:
        words = shlex.split(first[2:].decode("utf-8", "replace"))
        if words and Path(words[0]).name == "env" and len(words) > 1:
            words = [_on_path(words[1]) or words[1]]
        if words and words[0].startswith("/"):
            _executable(words[0], binds, depth + 1)


def _on_path(name: str) -> str | None:
    """Where PATH finds `name`, the system's folders first (a confined player sees those whole)."""
    folders = os.environ.get("PATH", os.defpath).split(os.pathsep)
    system = [f for f in folders if _under(os.path.abspath(f), _SYSTEM)]
    return shutil.which(name, path=os.pathsep.join(system)) or shutil.which(name)
