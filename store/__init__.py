"""The DuckDB log: append with optimistic concurrency, idempotency and a hash chain; read, verify,
snapshot, export and import. It imports nothing of matchlog but `matchlog.events`.

The names below load on first use, so that what only names the log's limits (the command line's
options) does not load DuckDB and pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .catalogue import Appended, Figures, Finding, MatchInfo, SeatRow
    from .chain import GENESIS, chain_hash
    from .limits import DEFAULT_SQL_BYTES, DEFAULT_SQL_ROWS, DEFAULT_SQL_TIMEOUT
    from .log import Store, is_interrupt
    from .transfer import MatchCheck
    from .writer import WalCheckpoints

_WHERE = {
    "Appended": ".catalogue",
    "Figures": ".catalogue",
    "Finding": ".catalogue",
    "MatchInfo": ".catalogue",
    "SeatRow": ".catalogue",
    "GENESIS": ".chain",
    "chain_hash": ".chain",
    "DEFAULT_SQL_BYTES": ".limits",
    "DEFAULT_SQL_ROWS": ".limits",
    "DEFAULT_SQL_TIMEOUT": ".limits",
    "MatchCheck": ".transfer",
    "Store": ".log",
    "is_interrupt": ".log",
    "WalCheckpoints": ".writer",
}

__all__ = [
    "DEFAULT_SQL_BYTES",
    "DEFAULT_SQL_ROWS",
    "DEFAULT_SQL_TIMEOUT",
    "GENESIS",
    "Appended",
    "Figures",
    "Finding",
    "MatchCheck",
    "MatchInfo",
    "SeatRow",
    "Store",
    "WalCheckpoints",
    "chain_hash",
    "is_interrupt",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
