"""The DuckDB log: append with optimistic concurrency, idempotency and a hash chain; read, verify,
snapshot, export and import. It imports nothing of matchlog but `matchlog.events`."""

from .catalogue import Appended, Figures, Finding, MatchInfo, SeatRow
from .chain import GENESIS, chain_hash
from .log import MatchCheck, Store, is_interrupt
from .sql import DEFAULT_SQL_BYTES, DEFAULT_SQL_ROWS, DEFAULT_SQL_TIMEOUT

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
    "chain_hash",
    "is_interrupt",
]
