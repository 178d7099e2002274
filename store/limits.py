"""The bounds a reader of the log gets unless it asks otherwise: what `select` (ad-hoc SQL) lets a
query take. Apart from the log's module so that the command line's options name them without
loading DuckDB."""

__all__ = ["DEFAULT_SQL_ROWS", "DEFAULT_SQL_TIMEOUT"]

#: How long `select` lets a query run, and how many rows it returns, unless told otherwise.
DEFAULT_SQL_TIMEOUT = 30.0
DEFAULT_SQL_ROWS = 10_000
