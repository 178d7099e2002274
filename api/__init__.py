"""matchlog: record, replay and audit matches of turn-based games.

A log is one DuckDB file, or a running `matchlog serve` that owns one; both are read and written
through the same interface, the one the `matchlog` command itself uses:

```python
import matchlog

with matchlog.open("matches.duckdb") as log:  # read-only unless write=True
    for info in log.matches(game="porrinha", status="finished", limit=5):
        match = log.match(info.match_id)
        print(match.state_at(3, as_seat=0).text)
```

`matchlog.open("http://127.0.0.1:8080", token=...)` opens a server's log the same way (a token
for more than public views), and `matchlog.open("archive/")` an archive (a Delta table), read-only.

Nothing heavy is imported until it is used, so `import matchlog.events` stays quick.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded on first use (below); named here for type checkers and the API reference
    from .file import FileLog
    from .log import Line, Log, Match, Position, SqlResult, Verification
    from .server import ServerLog

__all__ = [
    "ArchiveLog",
    "FileLog",
    "Line",
    "Log",
    "Match",
    "Position",
    "ServerLog",
    "SqlResult",
    "Verification",
    "open",
]

_LAZY = {
    "ArchiveLog": ".archive",
    "FileLog": ".file",
    "ServerLog": ".server",
    "Line": ".log",
    "Log": ".log",
    "Match": ".log",
    "Position": ".log",
    "SqlResult": ".log",
    "Verification": ".log",
}


def open(
    target: str | os.PathLike[str] = "matches.duckdb",
    *,
    write: bool = False,
    token: str | None = None,
    mode: str | None = None,
) -> Log:
    """Open a match log: a DuckDB file path (read-only unless `write`), the URL of a running
    `matchlog serve`, or an archive's directory (a Delta table written by `matchlog archive`,
    always read-only). A file that a server owns is reached through that server, with the admin's
    rights if this user may read the log's token file, else with `token` (or public views).

    `mode` is for the CLI: "auto" opens a file for writing where it may, and "create" may make one.

    Raises:
        StoreError: no log there, or it cannot be opened (`store.busy` names the process holding it).
        UsageError: an archive, and the deltalake package is not installed.
        RemoteError: the server cannot be reached.
    """
    text = os.fspath(target)
    if text.startswith(("http://", "https://")):
        from .server import ServerLog

        return ServerLog(text, token=token or os.environ.get("MATCHLOG_TOKEN"))
    if os.path.isdir(os.path.join(text, "_delta_log")):
        if write:
            from matchlog.events import StoreError

            raise StoreError(f"{text} is an archive: it is read-only", code="archive.read_only")
        from .archive import ArchiveLog

        return ArchiveLog(text)
    from .locate import admin_token, read_server_file

    mode = mode or ("write" if write else "read")
    served = read_server_file(text) if text != ":memory:" else None
    if served is not None:  # read-only unless asked, as the file itself would be
        from .server import ServerLog

        token = token or admin_token(text) or os.environ.get("MATCHLOG_TOKEN")
        return ServerLog(served.url, token=token, read_only=mode == "read")
    from .file import FileLog

    return FileLog(Path(text) if text != ":memory:" else text, mode=mode)


def _version() -> str:
    """matchlog's installed version (read when asked: the package metadata takes a moment to read)."""
    from importlib import metadata

    try:
        return metadata.version("matchlog")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _version()
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
