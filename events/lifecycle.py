"""Events every game shares: a match starts, answers are rejected, players removed, actions undone,
and the match ends."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec

from .base import Event, Outcome, Seat
from .duel import Duel

__all__ = [
    "EVENTS",
    "ActionsUndone",
    "AnswerRejected",
    "AnswerWithheld",
    "MatchEnded",
    "MatchResumed",
    "MatchStarted",
    "Origin",
    "PlayerRemoved",
    "Series",
    "Withheld",
]


class Origin(msgspec.Struct, frozen=True):
    """Where a forked match came from: the source match and the last seq copied."""

    match_id: UUID
    seq: int


class Series(msgspec.Struct, frozen=True):
    """A match's place in a series of games played by the same player objects: game `game` of
    `games` (0 when the count is not known ahead, as in a knockout, whose match id is the `id`)."""

    id: str
    game: int
    games: int


class MatchStarted(Event, tag="match.started"):
    """The referee opened a match: which game, under which options, and who sits where.

    `options` holds every option of the game, defaults included, so the match replays under the
    rules it was played with even after the defaults change. `position`, when given, is the
    position the match starts from instead of the game's own start, in the game's notation (a GNU
    Backgammon position ID, Fish's State JSON, ...: see each engine's `start`). It is kept apart
    from the options because it may hold what seats may not see (Da Vinci Code's hidden tiles).
    `duel`, when given, is the match's place in a duel (`matchlog duel`).

    Version 2 added `duel`. It has a default, but every MatchStarted matchlog writes holds every
    field, so a version 1 event (stored, or in an export) is not the one way version 2 writes it:
    its stored bytes stay as they are, and it decodes through an upcaster.
    """

    version = 2

    game: str
    options: dict[str, Any]
    seats: tuple[Seat, ...]
    series: Series | None = None
    origin: Origin | None = None
    position: str | None = None
    duel: Duel | None = None


class AnswerRejected(Event, tag="match.answer_rejected"):
    """A player's answer broke a rule; `answer` is its repr, `code` the rule it broke."""

    seat: int
    decision: str
    answer: str
    code: str
    message: str

    @property
    def actor(self) -> int | None:
        return self.seat


class PlayerRemoved(Event, tag="match.player_removed"):
    """The referee took a player out of the match; `code` says why (a rule, a timeout, an exception)."""

    seat: int
    code: str
    reason: str


class ActionsUndone(Event, tag="match.undone"):
    """The events at `seqs` (the latest effective ones) no longer count; the log still keeps them.

    `by` is the seat that asked, or None for an arbiter.
    """

    seqs: tuple[int, ...]
    reason: str = ""
    by: int | None = None

    @property
    def actor(self) -> int | None:
        return self.by


class MatchEnded(Event, tag="match.ended"):
    """The match is over, with its outcome (and, when it did not end by the rules, why)."""

    outcome: Outcome
    reason: str = ""


class ChanceCommitted(Event, tag="match.chance_committed"):
    """Before any chance, the referee committed to the seed of its random source: `commitment` is
    the hex SHA-256 of the seed (under `algorithm`), so the seed cannot change once play begins."""

    algorithm: str
    commitment: str


class ChanceRevealed(Event, tag="match.chance_revealed"):
    """At the end, the referee revealed the seed it committed to (hex): anyone can check it against
    the commitment and re-derive every die, shuffle and board of the match from it."""

    seed: str


class MatchResumed(Event, tag="match.resumed", omit_defaults=True):
    """A referee picked up a match that had not ended (after an undo, in a fork, after a crash) from
    the state its log folds to, with `players[seat]` playing each seat from here on; seats keep
    their names. Chance starts a new segment here: the referee commits to a fresh seed right after
    this event and reveals it at the end, so every draw after it is re-derived from that seed.
    `unconfined` lists the seats whose players are user code the operating system does not confine
    (as `Seat.unconfined`; omitted when none, so events recorded before it keep their bytes)."""

    players: tuple[str, ...]
    unconfined: tuple[int, ...] = ()


class AnswerWithheld(Event, tag="match.answer_withheld"):
    """What the other seats see of a rejected answer to a decision they may not see: that `seat`
    answered, and nothing of what. Only views contain it, never the log."""

    view_only = True

    seat: int


class Withheld(Event, tag="match.withheld"):
    """What a seat sees of an event whose type its game does not declare: nothing (views are
    default-deny). Only views contain it, never the log."""

    view_only = True


EVENTS: tuple[type[Event], ...] = (
    MatchStarted,
    AnswerRejected,
    PlayerRemoved,
    ActionsUndone,
    MatchEnded,
    ChanceCommitted,
    ChanceRevealed,
    MatchResumed,
    AnswerWithheld,
    Withheld,
)
