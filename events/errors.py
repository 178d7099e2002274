"""Every error matchlog raises on purpose, each with a stable code.

    MatchlogError                 code: str, the stable name a program can test
    ├── DecodeError               bytes that are not a valid event (ValueError)
    ├── IllegalAction             an answer the rules forbid (ValueError)
    ├── StoreError                the log could not do what was asked
    │   ├── ConcurrencyError      expected_seq was stale; nothing was written
    │   ├── EventConflict         an event id already names another event of the match
    │   ├── StoreBusy             another process holds the log file
    │   ├── UnknownMatch          no match with that id (KeyError)
    │   └── ImportRejected        an import file failed its checks; nothing was written
    ├── RemoteError               a network game could not go on (no server, too few sign-ups)
    ├── SqlError                  a query refused, failed or out of time (nothing was changed)
    ├── Forbidden                 the caller's token does not allow it (or there is no token)
    ├── ProofError                a proof that cannot be made (no tree, no checkpoint, a match in play)
    └── UsageError                a request that makes no sense (bad player spec, bad option)

The CLI prints any of these as `error[code]: message` and exits non-zero.
"""

from __future__ import annotations

__all__ = [
    "ConcurrencyError",
    "DecodeError",
    "EventConflict",
    "Forbidden",
    "IllegalAction",
    "ImportRejected",
    "MatchlogError",
    "ProofError",
    "RemoteError",
    "SqlError",
    "StoreBusy",
    "StoreError",
    "UnknownMatch",
    "UsageError",
]


class MatchlogError(Exception):
    """Base of every error matchlog raises on purpose."""

    code: str = "matchlog.error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class DecodeError(MatchlogError, ValueError):
    """Bytes that do not decode to a known event of a known version."""

    code = "event.decode"


class IllegalAction(MatchlogError, ValueError):
    """A well-formed or malformed answer that the rules forbid; `code` names the rule."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)


class StoreError(MatchlogError):
    """The log could not do what was asked."""

    code = "store.error"


class ConcurrencyError(StoreError):
    """The caller's expected_seq was not the match's next seq; nothing was written."""

    code = "store.concurrency"

    def __init__(self, match_id: object, expected_seq: int, actual_seq: int) -> None:
        super().__init__(
            f"match {match_id}: expected to append at seq {expected_seq}, but the next seq is {actual_seq}"
        )
        self.match_id = match_id
        self.expected_seq = expected_seq
        self.actual_seq = actual_seq


class EventConflict(StoreError):
    """An event id sent again with another event, or at another seq: an id names one event of its
    match, so a re-send must be the event already stored there; nothing was written."""

    code = "store.event_conflict"


class StoreBusy(StoreError):
    """Another process has the log file open."""

    code = "store.busy"


class UnknownMatch(StoreError, KeyError):
    """No match with that id (or id prefix) is in the log."""

    code = "store.unknown_match"

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class ImportRejected(StoreError):
    """An import file failed its checks; nothing from it was written."""

    code = "store.import_rejected"


class UsageError(MatchlogError, ValueError):
    """A request that cannot be carried out as given (a bad option, player or argument)."""

    code = "usage"


class RemoteError(MatchlogError):
    """A game over the network could not go on: no server, too few sign-ups, a broken exchange."""

    code = "remote.error"


class SqlError(MatchlogError):
    """A read-only query that was refused (not one SELECT), failed, or ran out of time."""

    code = "sql.error"


class Forbidden(MatchlogError):
    """The caller may not do or see this: no token, or a token that does not allow it."""

    code = "auth.forbidden"


class ProofError(MatchlogError):
    """A proof, checkpoint or receipt that cannot be made or read as asked: the log has no tree or
    key yet, the match is still in play, or a checkpoint or receipt given is not one."""

    code = "proof.error"
