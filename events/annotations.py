"""What an annotation says: the notes that sit beside a match's record, never in it.

An annotation speaks of one recorded event (its match, seq and chain hash; `store.annotations`
keeps the envelope) and carries one note:

    Decision   an analyser's judgement of a decision: the value of the position before it (what
               the best choice was worth), the value after the choice made, the best choice, the
               loss and its mark
    Luck       an analyser's judgement of a chance event: how much the roll gave or took
    Comment    a person's words on the timeline (a coach's remark, an arbiter's ruling), with an
               optional annotation glyph (!!, !, !?, ?!, ?, ??)

Notes are frozen msgspec Structs with explicit tags, decoded through one union, like events; their
canonical JSON is what the annotation's hash covers. A note never changes a match: the match's own
chain, its audit and its outcome are the same with or without any note.
"""

from __future__ import annotations

import msgspec

from .errors import DecodeError

__all__ = [
    "COMMENT_MARKS",
    "AnyNote",
    "Choice",
    "Comment",
    "Decision",
    "Luck",
    "Note",
    "decode_note",
    "encode_note",
]

#: The glyphs a comment may carry: chess's annotation symbols, as GNU Backgammon's SGF and lichess
#: use them.
COMMENT_MARKS = ("!!", "!", "!?", "?!", "?", "??")


class Note(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """What an annotation says about the event it points at."""


class Choice(msgspec.Struct, frozen=True, array_like=True):
    """One choice an analyser weighed: in the game's notation, its value, and (where the analyser
    has them) its own encoding of the choice and its outcome probabilities (GNU Backgammon: the
    move's SGF letters; win, win gammon, win backgammon, lose gammon, lose backgammon)."""

    choice: str
    value: float
    move: str = ""
    odds: tuple[float, ...] = ()


class Decision(Note, kw_only=True, tag="analysis.decision"):
    """An analyser's judgement of one decision of one seat, made from what that seat knew then.

    `before` is the value of the position before the decision (what the analyser's best choice
    gets), `after` the value of the choice made, `loss` the difference (never negative), all in
    `unit` (backgammon: gnubg's equity; Porrinha and Da Vinci Code: the chance of being right;
    Fish: fish the seat can make sure of). `chance` and `best_chance` are the deciding seat's chance
    of winning (or of being right) after the choice made and after the best, where the analyser
    gives one (the graph draws it); `steps` draws the best choice on the board (backgammon: (from,
    to) points, None the bar or off; Fish: (row, column, row, column)); `last_seq` is the
    decision's last event when it spans several (a backgammon play, a checker a seq); `choices`
    the best few and the one made; `evaluation` how the analyser evaluated them, in its own words
    (GNU Backgammon: its evaluation context as its SGF writes it, "2C 0 1 0.000000 1")."""

    analyser: str
    version: str
    seat: int
    decision: str
    played: str
    best: str
    before: float
    after: float
    loss: float
    unit: str
    mark: str | None = None
    forced: bool = False
    chance: float | None = None
    best_chance: float | None = None
    last_seq: int | None = None
    steps: tuple[tuple[int | None, ...], ...] = ()
    choices: tuple[Choice, ...] = ()
    evaluation: str = ""


class Luck(Note, kw_only=True, tag="analysis.luck"):
    """An analyser's judgement of a chance event: what it gave `seat` (negative: took), in `unit`,
    and its mark (very unlucky, unlucky, lucky, very lucky)."""

    analyser: str
    version: str
    seat: int
    luck: float
    unit: str
    mark: str | None = None


class Comment(Note, kw_only=True, tag="annotation.comment"):
    """A person's words about an event: a remark, or (`ruling`) an arbiter's ruling on it."""

    text: str
    mark: str | None = None
    ruling: bool = False


AnyNote = Decision | Luck | Comment

_encoder = msgspec.json.Encoder(order="deterministic")
_decoder = msgspec.json.Decoder(AnyNote)


def encode_note(note: Note) -> bytes:
    """A note's canonical JSON: what its annotation's hash covers."""
    return _encoder.encode(note)


def decode_note(payload: bytes | str) -> Note:
    """A note from its JSON.

    Raises:
        DecodeError: not a note of a known type.
    """
    try:
        return _decoder.decode(payload)
    except (msgspec.DecodeError, RecursionError) as error:
        raise DecodeError(f"not an annotation's note: {error}", code="annotation.decode") from None
