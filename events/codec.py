"""One codec for every event: canonical JSON out, one decoder (built once) in, upcasters between.

The encoder is deterministic (struct fields in declaration order, dict keys sorted), so the bytes of
an event are a function of its value; the store hashes those bytes as written and never re-encodes a
stored event. Stored events carry their schema version; an older version is turned into the current
form by the registered upcasters before it is decoded (see `matchlog.events` for the rules).

The vocabulary is not fixed here: it is the events every game shares (`lifecycle`) and the events of
every game registered through the `matchlog.games` entry point (`events.plugins`), ours included,
gathered into one tagged union and one decoder at the first decode (`EVENT_TYPES`, `AnyEvent`).
A tag is a game's (`fish.penguin_moved` is fish's), so no two games can share one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Union

import msgspec

from . import lifecycle, plugins
from .base import Event
from .errors import DecodeError

__all__ = [
    "EVENT_TYPES",
    "AnyEvent",
    "canonical",
    "current_version",
    "decode",
    "decode_lines",
    "encode",
    "encode_texts",
    "event_type",
    "json_schema",
    "upcaster",
]

_encoder = msgspec.json.Encoder(order="deterministic")


class _Vocabulary:
    """Every event type the log may hold: the lifecycle's and those of every game loaded
    (`events.plugins`), by tag, with the one decoder of their union. Built once, at first use."""

    def __init__(self, kinds: tuple[type[Event], ...]) -> None:
        self.kinds = kinds
        self.union: Any = Union[kinds]  # noqa: UP007 (a runtime union of classes)
        self.by_tag: dict[str, type[Event]] = {cls.__struct_config__.tag: cls for cls in kinds}  # type: ignore[misc]
        if len(self.by_tag) != len(kinds):  # pragma: no cover - events.plugins refuses a taken tag
            raise RuntimeError("two event classes share a tag")
        self.current: dict[str, int] = {tag: cls.version for tag, cls in self.by_tag.items()}
        self.decoder = msgspec.json.Decoder(self.union)


_vocabulary: _Vocabulary | None = None
_building = threading.Lock()


def _words() -> _Vocabulary:
    """The vocabulary, built from the games loaded at the first call."""
    global _vocabulary
    vocabulary = _vocabulary
    if vocabulary is None:
        loaded = plugins.load()
        with _building:
            if _vocabulary is None:
                _vocabulary = _Vocabulary((*lifecycle.EVENTS, *loaded.events))
            vocabulary = _vocabulary
    return vocabulary


def _forget() -> None:
    global _vocabulary
    _vocabulary = None


plugins.on_reload(_forget)


#: Every event type the log may hold (the lifecycle's and every loaded game's), built at first use.
EVENT_TYPES: tuple[type[Event], ...]
#: The tagged union of EVENT_TYPES (what a field holding any event decodes to), built at first use.
AnyEvent: Any


def __getattr__(name: str) -> Any:
    # EVENT_TYPES and AnyEvent are the games' vocabulary: computed when first asked for, never at
    # import, since the games' own modules import this package.
    if name == "EVENT_TYPES":
        return _words().kinds
    if name == "AnyEvent":
        return _words().union
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
_UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def encode(event: Event) -> bytes:
    """The canonical JSON bytes of `event`."""
    return _encoder.encode(event)


def encode_texts(events: Sequence[Event]) -> list[str]:
    """The canonical JSON of each event, as text: `encode(event).decode()` each, in one encoder call
    and one split (a bulk append encodes every event it writes). JSON text never holds a raw
    newline (the encoder escapes it inside strings), so the lines split back one way only."""
    if not events:
        return []
    return _encoder.encode_lines(events).decode()[:-1].split("\n")


def canonical(payload: bytes, event: Event, version: int) -> bool:
    """Whether `payload` is the one way matchlog writes `event` (stored at `version`): for the
    current version its canonical bytes; for an older one, JSON with no space, no repeated key and
    nothing a decoder would drop (its keys kept in the order given)."""
    if version == event.version:
        return encode(event) == payload
    try:
        return msgspec.json.encode(msgspec.json.decode(payload)) == payload
    except (msgspec.DecodeError, RecursionError):
        return False


def event_type(tag: str) -> type[Event]:
    """The event class stored under `tag`.

    Raises:
        DecodeError: no event type has that tag.
    """
    try:
        return _words().by_tag[tag]
    except KeyError:
        pass
    game = tag.partition(".")[0]
    broken = plugins.failures().get(game)
    if broken is not None:
        raise DecodeError(f"unknown event type {tag!r}: its game {game} did not load ({broken})")
    if game in plugins.load().games:
        raise DecodeError(f"unknown event type {tag!r} (written by a newer version of {game}?)")
    raise DecodeError(f"unknown event type {tag!r}: no game {game!r} is installed (or a newer matchlog wrote it)")


def current_version(tag: str) -> int:
    """The schema version this matchlog writes for `tag`."""
    return event_type(tag).version


def upcaster(tag: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Register a function that turns the stored form of `tag` at `from_version` into `from_version + 1`."""

    def register(function: Upcaster) -> Upcaster:
        key = (tag, from_version)
        if key in _UPCASTERS:
            raise RuntimeError(f"an upcaster for {tag} v{from_version} is already registered")
        _UPCASTERS[key] = function
        return function

    return register


def decode(payload: bytes | str, *, tag: str | None = None, version: int | None = None) -> Event:
    """Decode stored or received bytes to an event, upcasting an older schema version first.

    Raises:
        DecodeError: the bytes are not a valid event, or its version is unknown.
    """
    words = _words()
    if version is None or tag is None or version == words.current.get(tag):
        try:
            return words.decoder.decode(payload)
        except msgspec.DecodeError as error:
            raise DecodeError(f"not a valid event: {error}") from None
        except RecursionError:
            raise DecodeError("not a valid event: its JSON is nested too deeply") from None
    current = current_version(tag)
    if version > current or version < 1:
        raise DecodeError(f"{tag} v{version} is not a version this matchlog knows (it writes v{current})")
    try:
        stored = msgspec.json.decode(payload)
    except msgspec.DecodeError as error:
        raise DecodeError(f"not valid JSON: {error}") from None
    except RecursionError:
        raise DecodeError("not valid JSON: it is nested too deeply") from None
    if not isinstance(stored, dict):
        raise DecodeError(f"{tag} v{version}: expected a JSON object")
    for step in range(version, current):
        try:
            stored = _UPCASTERS[(tag, step)](stored)
        except KeyError:
            raise DecodeError(f"no upcaster from {tag} v{step} to v{step + 1}") from None
    try:
        return msgspec.convert(stored, words.union)
    except RecursionError:
        raise DecodeError(f"{tag} v{version}: nested too deeply") from None
    except msgspec.ValidationError as error:
        raise DecodeError(f"{tag} v{version} did not upcast to a valid event: {error}") from None


def decode_lines(lines: bytes | memoryview, kinds: set[tuple[str, int]]) -> list[Event] | None:
    """Decode events stored one a line (each its canonical JSON, then a newline) in one call, when
    every (tag, version) among them (`kinds`) is the version this matchlog writes; None when one is
    not (the caller decodes those one by one, upcasting them, with `decode`).

    Raises:
        DecodeError: a line is not a valid event.
    """
    words = _words()
    if any(words.current.get(tag) != version for tag, version in kinds):
        return None
    try:
        return words.decoder.decode_lines(lines)
    except msgspec.DecodeError as error:
        raise DecodeError(f"not a valid event: {error}") from None
    except RecursionError:
        raise DecodeError("not a valid event: its JSON is nested too deeply") from None


@upcaster("match.started", 1)
def _started_before_duels(stored: dict[str, Any]) -> dict[str, Any]:
    """match.started v1 had no `duel`: its default (not a duel) is right for every one."""
    return stored


def json_schema(tag: str | None = None) -> dict[str, Any]:
    """The JSON Schema of every event (a tagged union on the `type` field), or of the one event
    stored under `tag` (with only the definitions it uses).

    Raises:
        DecodeError: no event type has that tag.
    """
    return msgspec.json.schema(_words().union if tag is None else event_type(tag))
