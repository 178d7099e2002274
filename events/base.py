"""The event base class and the value objects events carry.

An event is a fact that already happened, frozen and tagged with a stable string. The tag, not the
class name, is what the log stores, so classes can be renamed freely; a tag is never reused.
"""

from __future__ import annotations

import re
from typing import ClassVar

import msgspec

__all__ = ["NAME_MAX", "PLAYER_MAX", "Event", "Outcome", "Seat", "control_character", "seat_problem"]

#: Characters a terminal may act on (escape sequences, bells, bidirectional overrides) or that
#: break a line where none is expected: a name never holds one.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def control_character(text: str) -> str | None:
    """The first control character in `text` as U+XXXX, or None when it holds none."""
    found = _CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


#: Each event class's tag (reading it from the struct config costs more than a dict lookup).
_TAGS: dict[type, str] = {}


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """A recorded fact. Never mutated, never deleted."""

    #: Schema version of this event type; bump it (and add an upcaster) on a breaking change.
    version: ClassVar[int] = 1
    #: Whether only views contain this type (what a seat sees in place of an event it may not
    #: see whole): the log never holds one, and the store refuses to append or import it.
    view_only: ClassVar[bool] = False

    @property
    def tag(self) -> str:
        """The stable string this event is stored under."""
        kind = type(self)
        tag = _TAGS.get(kind)
        if tag is None:
            tag = _TAGS[kind] = kind.__struct_config__.tag  # type: ignore[assignment]
        return tag  # type: ignore[return-value]

    @property
    def actor(self) -> int | None:
        """The seat whose answer this event records, or None for the referee."""
        return None


class Seat(msgspec.Struct, frozen=True, omit_defaults=True):
    """One place at the table: the name shown for it and the player (strategy) that sat there.

    `unconfined` says that the player was user code the operating system did not confine (asked
    for with `--unconfined`, or a class `--in-process`): it could read what the referee's user can.
    Omitted when False, so seats recorded before it existed keep their bytes.
    """

    name: str
    player: str
    unconfined: bool = False


#: The longest seat name and player a match may name (characters): a table, a report or a rating
#: prints them; the longest of a real player (a program's path and arguments) fits easily.
NAME_MAX = 100
PLAYER_MAX = 1000


def seat_problem(seat: Seat) -> str | None:
    """What is wrong with a seat a match names (an empty name, an overlong name or player, a control
    character in either), or None when it may sit at a table."""
    for what, text, longest in (("name", seat.name, NAME_MAX), ("player", seat.player, PLAYER_MAX)):
        if what == "name" and not text.strip():
            return "the name is empty"
        if len(text) > longest:
            return f"the {what} has {len(text)} characters, more than {longest}"
        found = control_character(text)
        if found is not None:
            return f"the {what} holds a control character ({found})"
    return None


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """How a match ended, in terms every game shares.

    `places[seat]` is 1 for the best; seats that tie share a place. `winners` are the seats that won
    (several where the game allows ties). `scores` holds the game's own score per seat where it has
    one. `result` names the kind of ending ("normal", or a game's own word such as "gammon").
    """

    places: tuple[int, ...]
    winners: tuple[int, ...]
    scores: tuple[float, ...] = ()
    result: str = "normal"
    removed: tuple[int, ...] = ()

    @property
    def ranking(self) -> tuple[int, ...]:
        """Seats from best to worst (ties in seat order)."""
        return tuple(sorted(range(len(self.places)), key=lambda seat: (self.places[seat], seat)))
