"""The bounds a reader of the log gets unless it asks otherwise: what `select` (ad-hoc SQL) lets a
query take (store/sql.py holds it to them). Apart from the log's modules so that the command line's
options name them without loading DuckDB."""

__all__ = ["DEFAULT_SQL_BYTES", "DEFAULT_SQL_ROWS", "DEFAULT_SQL_TIMEOUT"]

#: How long `select` lets a query run, how many rows it returns and how many bytes of them are
#: fetched, unless told otherwise.
DEFAULT_SQL_TIMEOUT = 30.0
DEFAULT_SQL_ROWS = 10_000
DEFAULT_SQL_BYTES = 64 * 2**20
