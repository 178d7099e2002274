"""Where a log's server and its admin token are found: files beside the log.

`matchlog serve --db X` writes `X.server` (its URL and pid) while it runs and keeps its admin
token in `X.token`, readable by its owner only. Any command given `--db X` finds the server
through the first file and, if it may read the second, acts with the admin's rights; everyone
else reads as the server's tokens allow.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

import msgspec

__all__ = [
    "TOKEN_CHARACTERS",
    "ServerFile",
    "admin_token",
    "read_server_file",
    "remove_server_file",
    "token_path",
    "well_formed_token",
    "write_server_file",
]

#: The longest token a client may send: ours are 43 (the admin's) and 64 (a match's) characters.
TOKEN_CHARACTERS = 256


def well_formed_token(token: str) -> bool:
    """Whether `token` could be a token at all: printable ASCII, at most `TOKEN_CHARACTERS` long.
    The service refuses anything else before comparing it (hmac compares ASCII text only), and a
    client cannot send it in a header."""
    return len(token) <= TOKEN_CHARACTERS and token.isascii() and token.isprintable()


class ServerFile(msgspec.Struct, frozen=True):
    """What a running server says about itself beside its log."""

    url: str
    pid: int
    db: str


def _server_path(db: str | Path) -> Path:
    return Path(f"{db}.server")


def token_path(db: str | Path) -> Path:
    """The file that holds a log's admin token."""
    return Path(f"{db}.token")


def write_server_file(db: str | Path, url: str) -> Path:
    """Say that this process serves `db` at `url` (written whole, then renamed into place)."""
    path = _server_path(db)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(msgspec.json.encode(ServerFile(url=url, pid=os.getpid(), db=str(Path(db).resolve()))))
    partial.replace(path)
    return path


def remove_server_file(db: str | Path) -> None:
    """Take the server file away (the server stops), if it is this process's."""
    found = read_server_file(db, check_alive=False)
    if found is not None and found.pid == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            _server_path(db).unlink()


def read_server_file(db: str | Path, *, check_alive: bool = True) -> ServerFile | None:
    """The server that owns `db`, or None: no file, a file that does not parse, or (checked by
    default) a server whose process is gone."""
    try:
        found = msgspec.json.decode(_server_path(db).read_bytes(), type=ServerFile)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if check_alive and not _alive(found.pid):
        return None
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def admin_token(db: str | Path, *, create: bool = False) -> str | None:
    """The admin token of the log at `db`: read from its token file (None if there is none or this
    user may not read it), or, with `create`, made on first use in a file only its owner can read."""
    path = token_path(db)
    try:
        token = path.read_text().strip()
    except FileNotFoundError:
        token = ""
    except OSError:
        return None
    if token or not create:
        return token or None
    token = secrets.token_urlsafe(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(token + "\n")
    return token
