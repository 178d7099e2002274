"""A readable text record of a Porrinha or Da Vinci Code match, in the manner of PGN: tag pairs
for the players, options and result, then one line an event.

    [Game "porrinha"]
    [Date "2026-11-23T20:15:03.123456Z"]
    [Seat0 "alice"]
    [Player0 "random"]
    [Seat1 "bob"]
    [Player1 "reasoner"]
    [chopsticks "3"]
    [policy "lenient"]
    [Result "2-1"]

    0: hand 3
    1: hand 1
    0: guess 6
    1: guess 4
    ...
    end normal places 2 1 winners 1 scores removed

Tags: `Game`, `Date` (UTC, to the microsecond), `SeatN` and `PlayerN` (the name and the player
of seat N), one tag per option in lower case, `Series`/`SeriesGame`/`SeriesGames` and
`Origin`/`OriginSeq` where the match has them, and `Result` (each seat's place, `*` while it goes
on). Tag values are quoted, `\\"` and `\\\\` escaped. A move line starts with the seat it is about
(`0:`); free text (answers, messages, reasons) is a JSON string. The lines:

    every game   commit ALGORITHM HEX · seed HEX · N: rejected DECISION CODE "ANSWER" "MESSAGE" ·
                 N: removed CODE "REASON" · [N:] undo SEQ... "REASON" ·
                 resumed players "PLAYER"... unconfined SEAT... ·
                 end RESULT places P... winners W... scores S... removed R... "REASON"
    Porrinha     N: hand H · N: hand reset · N: guess G · N: guess void
    Da Vinci     shuffle TILE... · N: draw TILE · N: joker at POSITION ·
                 N: tile sorted to POSITION · N: guess seat TARGET tile POSITION is NUMBER|joker · N: stop ·
                 N: reveal tile POSITION

A tile is its colour and number, `b3` or `w11`, `b-` and `w-` the jokers. The record is the
referee's, hidden hands and tiles included (what `export` without `--as-seat` holds); `import`
reads it back to the same events, and audits them (rules, and chance against its revealed seed)
before anything is written. Lines starting with `;` or `#` are comments.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import get as get_engine
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    GuessMade,
    GuessStopped,
    GuessVoided,
    HandChosen,
    HandReset,
    JokerPlaced,
    MatchEnded,
    MatchlogError,
    MatchResumed,
    MatchStarted,
    Origin,
    Outcome,
    PlayerRemoved,
    Record,
    Seat,
    Series,
    TileDrawn,
    TileGuessed,
    TileRevealed,
    TileSorted,
    TilesShuffled,
    UsageError,
    us_to_datetime,
)

from .bounds import MAX_SEATS, MAX_TURNS, at_most, lines_of
from .imported import FormatError, ImportedMatch, judged, match_key

__all__ = ["FORMAT", "GAMES", "export_text", "read_text"]

FORMAT = "text"

# Kinds of slot in a line.
_INT, _INTS, _FLOATS, _TEXT, _TEXTS = "int", "ints", "floats", "text", "texts"
_WORD, _TILE, _TILES, _NUMBER = "word", "tile", "tiles", "number"
Slot = tuple[str, str]  # (field, kind)


class _Line(msgspec.Struct, frozen=True):
    """How one event type reads as a line: the field shown as the `N:` prefix, then words and slots."""

    kind: type[Event]
    seat: str | None
    words: tuple[str | Slot, ...]


_EVERY_GAME = (
    _Line(ChanceCommitted, None, ("commit", ("algorithm", _WORD), ("commitment", _WORD))),
    _Line(ChanceRevealed, None, ("seed", ("seed", _WORD))),
    _Line(
        AnswerRejected,
        "seat",
        ("rejected", ("decision", _WORD), ("code", _WORD), ("answer", _TEXT), ("message", _TEXT)),
    ),
    _Line(PlayerRemoved, "seat", ("removed", ("code", _WORD), ("reason", _TEXT))),
    _Line(ActionsUndone, "by", ("undo", ("seqs", _INTS), ("reason", _TEXT))),
    _Line(MatchResumed, None, ("resumed", "players", ("players", _TEXTS), "unconfined", ("unconfined", _INTS))),
    _Line(
        MatchEnded,
        None,
        (
            "end",
            ("result", _WORD),
            "places",
            ("places", _INTS),
            "winners",
            ("winners", _INTS),
            "scores",
            ("scores", _FLOATS),
            "removed",
            ("removed", _INTS),
            ("reason", _TEXT),
        ),
    ),
)
#: The games this record is for, and their lines.
GAMES: dict[str, tuple[_Line, ...]] = {
    "porrinha": (
        *_EVERY_GAME,
        _Line(HandReset, "seat", ("hand", "reset")),
        _Line(HandChosen, "seat", ("hand", ("hand", _INT))),
        _Line(GuessVoided, "seat", ("guess", "void")),
        _Line(GuessMade, "seat", ("guess", ("guess", _INT))),
    ),
    "davinci": (
        *_EVERY_GAME,
        _Line(TilesShuffled, None, ("shuffle", ("order", _TILES))),
        _Line(TileDrawn, "seat", ("draw", ("tile", _TILE))),
        _Line(JokerPlaced, "seat", ("joker", "at", ("position", _INT))),
        _Line(TileSorted, "seat", ("tile", "sorted", "to", ("position", _INT))),
        _Line(
            TileGuessed,
            "seat",
            ("guess", "seat", ("target", _INT), "tile", ("position", _INT), "is", ("number", _NUMBER)),
        ),
        _Line(GuessStopped, "seat", ("stop",)),
        _Line(TileRevealed, "seat", ("reveal", "tile", ("position", _INT))),
    ),
}
_JOKERS = {24: "b-", 25: "w-"}
_encode_text = msgspec.json.Encoder().encode
_TAG = re.compile(r'^\[([A-Za-z][A-Za-z0-9_]*)\s+"([^"\\]*(?:\\.[^"\\]*)*)"\]$')
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^\s"]+')


# -- writing ---------------------------------------------------------------------------------


def _tile(tile: int) -> str:
    return _JOKERS.get(tile) or f"{'bw'[tile % 2]}{tile // 2}"


def _fields(event: Event) -> dict[str, Any]:
    if isinstance(event, MatchEnded):
        outcome = event.outcome
        return {
            "result": outcome.result,
            "places": outcome.places,
            "winners": outcome.winners,
            "scores": outcome.scores,
            "removed": outcome.removed,
            "reason": event.reason,
        }
    return {name: getattr(event, name) for name in event.__struct_fields__}


def _slot(value: Any, kind: str) -> str:
    match kind:
        case "int" | "word":
            return str(value)
        case "ints":
            return " ".join(str(v) for v in value)
        case "floats":
            return " ".join(_encode_text(float(v)).decode() for v in value)
        case "text":
            return _encode_text(value).decode()
        case "texts":
            return " ".join(_encode_text(v).decode() for v in value)
        case "tile":
            return _tile(value)
        case "tiles":
            return " ".join(_tile(v) for v in value)
        case _:  # number: a tile's number, or a joker
            return "joker" if value is None else str(value)


def _line(event: Event, lines: tuple[_Line, ...]) -> str:
    spec = next((line for line in lines if type(event) is line.kind), None)
    if spec is None:
        raise UsageError(f"a text record cannot hold {event.tag}", code="usage.export")
    fields = _fields(event)
    words = [_slot(fields[part[0]], part[1]) if isinstance(part, tuple) else part for part in spec.words]
    text = " ".join(word for word in words if word)
    seat = fields.get(spec.seat) if spec.seat else None
    return f"{seat}: {text}" if seat is not None else text


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _option(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _result(outcome: Outcome | None) -> str:
    return "*" if outcome is None else "-".join(str(place) for place in outcome.places)


def export_text(records: list[Record]) -> str:
    """A Porrinha or Da Vinci Code match as a text record (every event, the referee's view).

    Raises:
        UsageError: the match is of another game.
    """
    started = records[0].event
    assert isinstance(started, MatchStarted)
    lines = GAMES.get(started.game)
    if lines is None:
        raise UsageError(f"the text record holds {' and '.join(GAMES)}, not {started.game}", code="usage.export")
    when = us_to_datetime(records[0].at_us)
    tags = [("Game", started.game), ("Date", f"{when:%Y-%m-%dT%H:%M:%S.%f}Z")]
    for number, seat in enumerate(started.seats):
        tags += [(f"Seat{number}", seat.name), (f"Player{number}", seat.player)]
    tags += [(name, _option(value)) for name, value in started.options.items()]
    if started.series is not None:
        tags += [
            ("Series", started.series.id),
            ("SeriesGame", str(started.series.game)),
            ("SeriesGames", str(started.series.games)),
        ]
    if started.origin is not None:
        tags += [("Origin", str(started.origin.match_id)), ("OriginSeq", str(started.origin.seq))]
    ended = [r.event for r in records if isinstance(r.event, MatchEnded)]
    tags.append(("Result", _result(ended[-1].outcome if ended else None)))
    header = [f"[{name} {_quoted(value)}]" for name, value in tags]
    return "\n".join([*header, "", *(_line(record.event, lines) for record in records[1:])]) + "\n"


# -- reading ---------------------------------------------------------------------------------


class _NoMatch(Exception):
    """A line that does not read as this event type."""


def _tile_of(text: str) -> int:
    for tile, name in _JOKERS.items():
        if text == name:
            return tile
    found = re.fullmatch(r"([bw])(\d{1,2})", text)
    if found is None or int(found.group(2)) > 11:
        raise _NoMatch(f"{text!r} is not a tile (b0 to w11, b- or w- a joker)")
    return int(found.group(2)) * 2 + "bw".index(found.group(1))


def _int(text: str) -> int:
    if not re.fullmatch(r"-?\d{1,18}", text):
        raise _NoMatch(f"{text!r} is not a whole number")
    return int(text)


def _read_slot(tokens: list[str], at: int, kind: str) -> tuple[Any, int]:
    """The value of a slot at `tokens[at]`, and where the next part starts."""
    if kind == "texts":
        texts = []
        while at < len(tokens) and tokens[at].startswith('"'):
            texts.append(_read_slot(tokens, at, "text")[0])
            at += 1
        return tuple(texts), at
    many = {"ints": _int, "floats": float, "tiles": _tile_of}.get(kind)
    if many is not None:
        values = []
        while at < len(tokens) and not tokens[at].startswith('"'):
            try:
                values.append(many(tokens[at]))
            except (_NoMatch, ValueError):
                break
            at += 1
        return tuple(values), at
    if at >= len(tokens):
        raise _NoMatch("the line ends too early")
    token = tokens[at]
    match kind:
        case "int":
            return _int(token), at + 1
        case "word":
            if token.startswith('"'):
                raise _NoMatch(f"{token} is not a word")
            return token, at + 1
        case "text":
            if not token.startswith('"'):
                raise _NoMatch(f"{token!r} is not a quoted text")
            try:
                return msgspec.json.decode(token, type=str), at + 1
            except msgspec.DecodeError:
                raise _NoMatch(f"{token} is not a JSON string") from None
        case "tile":
            return _tile_of(token), at + 1
        case _:  # number
            return (None if token == "joker" else _int(token)), at + 1


def _event(spec: _Line, seat: int | None, tokens: list[str]) -> Event:
    fields: dict[str, Any] = {}
    at = 0
    for part in spec.words:
        if isinstance(part, str):
            if at >= len(tokens) or tokens[at] != part:
                raise _NoMatch(f"expected {part!r}")
            at += 1
        else:
            fields[part[0]], at = _read_slot(tokens, at, part[1])
    if at != len(tokens):
        raise _NoMatch(f"{tokens[at]!r} is more than the line holds")
    if spec.seat is not None:
        if seat is None and spec.seat == "seat":
            raise _NoMatch("the line needs the seat it is about ('N:')")
        fields[spec.seat] = seat
    elif seat is not None:
        raise _NoMatch("this line is not about a seat")
    try:
        if spec.kind is MatchEnded:
            reason = fields.pop("reason")
            return MatchEnded(outcome=Outcome(**fields), reason=reason)
        return spec.kind(**fields)
    except (TypeError, msgspec.ValidationError) as error:
        raise _NoMatch(str(error)) from None


def _read_line(text: str, lines: tuple[_Line, ...], where: str) -> Event:
    tokens = _TOKEN.findall(text)
    seat = None
    if tokens and re.fullmatch(r"\d{1,5}:", tokens[0]):
        seat, tokens = int(tokens[0][:-1]), tokens[1:]
    if not tokens:
        raise FormatError(FORMAT, f"{where}: a seat with nothing after it")
    reasons = []
    for spec in lines:
        if spec.words[0] != tokens[0]:
            continue
        try:
            return _event(spec, seat, tokens)
        except _NoMatch as error:
            reasons.append(str(error))
    if not reasons:
        verbs = sorted({line.words[0] for line in lines if isinstance(line.words[0], str)})
        raise FormatError(FORMAT, f"{where}: {tokens[0]!r} is not a line of this game ({', '.join(verbs)})")
    raise FormatError(FORMAT, f"{where}: cannot read {text.strip()!r}: {reasons[-1]}")


def _date(text: str, where: str) -> int:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise FormatError(FORMAT, f"{where}: Date {text!r} is not an ISO date and time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delta = when - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _started(tags: dict[str, tuple[str, int]], first_line: str) -> tuple[MatchStarted, int | None]:
    """The match.started the header describes, and the record's time."""

    def tag(name: str) -> str | None:
        found = tags.get(name)
        return found[0] if found else None

    def where(name: str) -> str:
        return f"line {tags[name][1]}" if name in tags else first_line

    game = tag("Game")
    if game not in GAMES:
        raise FormatError(FORMAT, f"{where('Game')}: the Game tag must be one of {', '.join(GAMES)}, not {game!r}")
    seats = []
    while (name := tag(f"Seat{len(seats)}")) is not None:
        at_most(len(seats) + 1, MAX_SEATS, FORMAT, where(f"Seat{len(seats)}"), "seats")
        seats.append(Seat(name, tag(f"Player{len(seats)}") or "imported"))
    spec = get_engine(game).spec
    given = {name: value for name, (value, _) in tags.items() if name[:1].islower()}
    try:
        converted = msgspec.to_builtins(msgspec.convert(given, spec.options, strict=False))
    except msgspec.ValidationError as error:
        raise FormatError(FORMAT, f"{first_line}: the options are not {game}'s: {error}") from None
    series = origin = None
    if tag("Series") is not None:
        try:
            series = Series(tag("Series"), int(tag("SeriesGame") or 0), int(tag("SeriesGames") or 0))  # type: ignore[arg-type]
        except ValueError:
            raise FormatError(FORMAT, f"{where('SeriesGame')}: SeriesGame and SeriesGames are numbers") from None
    if tag("Origin") is not None:
        try:
            origin = Origin(UUID(tag("Origin")), int(tag("OriginSeq") or 0))  # type: ignore[arg-type]
        except ValueError:
            raise FormatError(FORMAT, f"{where('Origin')}: Origin is a match id and OriginSeq a seq") from None
    started = MatchStarted(
        game=game,
        options={name: converted[name] for name in given},
        seats=tuple(seats),
        series=series,
        origin=origin,
    )
    at_us = _date(tag("Date"), where("Date")) if tag("Date") is not None else None  # type: ignore[arg-type]
    return started, at_us


def read_text(text: str) -> list[ImportedMatch]:
    """The match a text record holds, audited before it is returned (rules, and chance against its seed).

    Raises:
        FormatError: a tag or line that does not read, or an audit finding; the message names the line.
    """
    tags: dict[str, tuple[str, int]] = {}
    events: list[Event] = []
    places: list[str] = []
    lines: tuple[_Line, ...] = ()
    for number, raw in lines_of(text, FORMAT):
        line = raw.strip()
        where = f"line {number}"
        if not line or line[0] in ";#":
            continue
        at_most(len(events) + len(tags) + 1, MAX_TURNS, FORMAT, where, "tags and lines in one record")
        if not events:
            if (tag := _TAG.match(line)) is not None:
                tags[tag.group(1)] = (re.sub(r"\\(.)", r"\1", tag.group(2)), number)
                continue
            started, at_us = _started(tags, "line 1")
            events.append(started)
            places.append(f"line {min((at for _, at in tags.values()), default=1)}")
            lines = GAMES[started.game]
        events.append(_read_line(line, lines, where))
        places.append(where)
    if not events:
        if not tags:
            raise FormatError(FORMAT, "line 1: not a text record (no tags)")
        started, at_us = _started(tags, "line 1")
        events, places = [started], ["line 1"]
    ended = [event for event in events if isinstance(event, MatchEnded)]
    said = tags.get("Result")
    if said is not None and said[0] != _result(ended[-1].outcome if ended else None):
        raise FormatError(FORMAT, f"line {said[1]}: the Result tag {said[0]!r} is not how the record ends")
    try:
        return [judged(FORMAT, events, places, match_key(FORMAT, text), at_us)]
    except MatchlogError as error:
        if isinstance(error, FormatError):
            raise
        raise FormatError(FORMAT, f"the record: {error.message}") from None
