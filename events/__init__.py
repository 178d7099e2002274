"""matchlog's vocabulary: every event type, the envelope, the codec, schema versions and errors.

Events are facts, never requests: a proposed move that the referee refuses is recorded as
`AnswerRejected` (with the raw answer and the rule), so every player response is in the log and a
replay never has to refuse anything.

Schema evolution, the rules every change to an event follows:

1. A new field gets a default, so older stored events still decode.
2. A field's type never changes, and a field is never renamed in place.
3. A tag is never reused, even after its event type is retired.
4. Anything else is a breaking change: bump the class's `version`, and register an upcaster
   (`@upcaster(tag, from_version)`) that turns the old stored form (a dict) into the new one. The
   store keeps each event's version next to its bytes, and `decode` runs the upcasters in order.
5. Encoded samples of every version of every event live in `tests/fixtures/events/`; CI decodes
   them all, so an incompatible change fails a test rather than a replay.
"""

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
from .base import Event, Outcome, Seat, control_character
from .codec import EVENT_TYPES, AnyEvent, canonical, current_version, decode, encode, event_type, json_schema, upcaster
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
from .porrinha import GuessMade, GuessVoided, HandChosen, HandHidden, HandReset

__all__ = [
    "COMMENT_MARKS",
    "EVENT_TYPES",
    "ActionsUndone",
    "AgeGiven",
    "AnswerRejected",
    "AnswerWithheld",
    "AnyEvent",
    "AnyNote",
    "BoardGenerated",
    "ChanceCommitted",
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
    "decode_note",
    "draft",
    "drafts",
    "encode",
    "encode_note",
    "event_type",
    "json_schema",
    "now_us",
    "upcaster",
    "us_to_datetime",
    "uuid7",
    "uuid7_text",
    "uuid7_texts",
    "uuid_from_int",
]
