"""matchlog's vocabulary: every event type, the envelope, the codec, schema versions and errors.

Events are facts, never requests: a proposed move that the referee refuses is recorded as
`AnswerRejected` (with the raw answer and the rule), so every player response is in the log and a
replay never has to refuse anything.

Schema evolution, the rules every change to an event follows:

1. A new field gets a default, so older stored events still decode. An event's bytes are hashed
   as written and an import takes only the one way matchlog writes an event, so a field added to
   an event that is already stored must also leave the old bytes that one way, in one of two ways:
   the struct omits defaults (`omit_defaults=True`: the field is written only when it is not its
   default, as `Seat.unconfined` and `MatchResumed.unconfined` are), or, where every field must be
   written, the class's `version` is bumped with an upcaster that returns the old form as it is
   (`MatchStarted` v2 added `duel`): the old bytes keep their version and decode through it.
2. A field's type never changes, and a field is never renamed in place.
3. A tag is never reused, even after its event type is retired.
4. Anything else is a breaking change: bump the class's `version`, and register an upcaster
   (`@upcaster(tag, from_version)`) that turns the old stored form (a dict) into the new one. The
   store keeps each event's version next to its bytes, and `decode` runs the upcasters in order.
5. Encoded samples of every version of every event live in `tests/fixtures/events/`; CI decodes
   them all, so an incompatible change fails a test rather than a replay. A game from another
   package keeps its samples in its own tests (`matchlog.testing` decodes them the same way).

Every game's event types are its own: each tag is under the game's name (`fish.penguin_moved`),
and the vocabulary the codec decodes is the events every game shares (`lifecycle`) and those of the
games registered through the `matchlog.games` entry point (`events.plugins`), built at first use.
"""

from typing import Any

from .annotations import COMMENT_MARKS, AnyNote, Choice, Comment, Decision, Luck, Note, decode_note, encode_note
from .backgammon import (
    CheckerMoved,
    DiceRolled,
    DoubleDropped,
    DoubleOffered,
    DoubleTaken,
    OpeningRolled,
    ResignationAccepted,
    ResignationDeclined,
    ResignationOffered,
    RollChosen,
)
from .base import Event, Outcome, Seat, control_character, seat_problem
from .codec import (
    canonical,
    current_version,
    decode,
    decode_lines,
    encode,
    encode_texts,
    event_type,
    json_schema,
    upcaster,
)
from .davinci import (
    GuessStopped,
    JokerPlaced,
    TileDrawn,
    TileDrawnHidden,
    TileGuessed,
    TilePlacedHidden,
    TileRevealed,
    TileSorted,
    TilesShuffled,
    TilesShuffledHidden,
)
from .duel import Duel, Sprt
from .envelope import (
    Draft,
    Record,
    draft,
    drafts,
    now_us,
    us_to_datetime,
    uuid7,
    uuid7_text,
    uuid7_texts,
    uuid_from_int,
)
from .errors import (
    ConcurrencyError,
    DecodeError,
    EventConflict,
    Forbidden,
    IllegalAction,
    ImportRejected,
    MatchlogError,
    ProofError,
    RemoteError,
    SqlError,
    StoreBusy,
    StoreError,
    UnknownMatch,
    UsageError,
)
from .fish import AgeGiven, BoardGenerated, PenguinMoved, PenguinPlaced
from .knockout import KnockoutGamePlayed
from .lifecycle import (
    ActionsUndone,
    AnswerRejected,
    AnswerWithheld,
    ChanceCommitted,
    ChanceRevealed,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Origin,
    PlayerRemoved,
    Series,
    Withheld,
)
from .openspiel import ActionHidden, ActionTaken, ChanceDrawn, ChanceHidden
from .porrinha import GuessMade, GuessVoided, HandChosen, HandHidden, HandReset

#: Every event type the log may hold: the lifecycle's and those of every game installed (their
#: plugins', `plugins`), found at first use.
EVENT_TYPES: tuple[type[Event], ...]
#: The tagged union of `EVENT_TYPES` (what a field holding any event decodes to), built at first use.
AnyEvent: Any


def __getattr__(name: str) -> object:
    # The vocabulary is the games' (see `codec`): built at first use, never while games import this.
    if name in ("EVENT_TYPES", "AnyEvent"):
        from . import codec

        return getattr(codec, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "COMMENT_MARKS",
    "EVENT_TYPES",
    "ActionHidden",
    "ActionTaken",
    "ActionsUndone",
    "AgeGiven",
    "AnswerRejected",
    "AnswerWithheld",
    "AnyEvent",
    "AnyNote",
    "BoardGenerated",
    "ChanceCommitted",
    "ChanceDrawn",
    "ChanceHidden",
    "ChanceRevealed",
    "CheckerMoved",
    "Choice",
    "Comment",
    "ConcurrencyError",
    "Decision",
    "DecodeError",
    "DiceRolled",
    "DoubleDropped",
    "DoubleOffered",
    "DoubleTaken",
    "Draft",
    "Duel",
    "Event",
    "EventConflict",
    "Forbidden",
    "GuessMade",
    "GuessStopped",
    "GuessVoided",
    "HandChosen",
    "HandHidden",
    "HandReset",
    "IllegalAction",
    "ImportRejected",
    "JokerPlaced",
    "KnockoutGamePlayed",
    "Luck",
    "MatchEnded",
    "MatchResumed",
    "MatchStarted",
    "MatchlogError",
    "Note",
    "OpeningRolled",
    "Origin",
    "Outcome",
    "PenguinMoved",
    "PenguinPlaced",
    "PlayerRemoved",
    "ProofError",
    "Record",
    "RemoteError",
    "ResignationAccepted",
    "ResignationDeclined",
    "ResignationOffered",
    "RollChosen",
    "Seat",
    "Series",
    "Sprt",
    "SqlError",
    "StoreBusy",
    "StoreError",
    "TileDrawn",
    "TileDrawnHidden",
    "TileGuessed",
    "TilePlacedHidden",
    "TileRevealed",
    "TileSorted",
    "TilesShuffled",
    "TilesShuffledHidden",
    "UnknownMatch",
    "UsageError",
    "Withheld",
    "canonical",
    "control_character",
    "current_version",
    "decode",
    "decode_lines",
    "decode_note",
    "draft",
    "drafts",
    "encode",
    "encode_note",
    "encode_texts",
    "event_type",
    "json_schema",
    "now_us",
    "seat_problem",
    "upcaster",
    "us_to_datetime",
    "uuid7",
    "uuid7_text",
    "uuid7_texts",
    "uuid_from_int",
]
