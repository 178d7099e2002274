"""One codec for every event: canonical JSON out, one decoder (built once) in, upcasters between.

The encoder is deterministic (struct fields in declaration order, dict keys sorted), so the bytes of
an event are a function of its value; the store hashes those bytes as written and never re-encodes a
stored event. Stored events carry their schema version; an older version is turned into the current
form by the registered upcasters before it is decoded (see `matchlog.events` for the rules).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

import msgspec

from . import backgammon, davinci, fish, knockout, lifecycle, porrinha
from .base import Event
from .errors import DecodeError

__all__ = [
    "EVENT_TYPES",
    "AnyEvent",
    "canonical",
    "current_version",
    "decode",
    "encode",
    "event_type",
    "json_schema",
    "upcaster",
]

#: Every event type the log may hold, across all games.
EVENT_TYPES: tuple[type[Event], ...] = (
    *lifecycle.EVENTS,
    *porrinha.EVENTS,
    *backgammon.EVENTS,
    *davinci.EVENTS,
    *fish.EVENTS,
    *knockout.EVENTS,
)

AnyEvent = Union[EVENT_TYPES]  # type: ignore[valid-type]  # noqa: UP007 (a runtime union of classes)

_BY_TAG: dict[str, type[Event]] = {cls.__struct_config__.tag: cls for cls in EVENT_TYPES}  # type: ignore[misc]
if len(_BY_TAG) != len(EVENT_TYPES):  # pragma: no cover - a programming error caught at import
    raise RuntimeError("two event classes share a tag")

_CURRENT: dict[str, int] = {tag: cls.version for tag, cls in _BY_TAG.items()}

_encoder = msgspec.json.Encoder(order="deterministic")
_decoder = msgspec.json.Decoder(AnyEvent)

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
_UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def encode(event: Event) -> bytes:
    """The canonical JSON bytes of `event`."""
    return _encoder.encode(event)


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
        return _BY_TAG[tag]
    except KeyError:
        raise DecodeError(f"unknown event type {tag!r} (written by a newer matchlog?)") from None


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
    if version is None or tag is None or version == _CURRENT.get(tag):
        try:
            return _decoder.decode(payload)
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
        return msgspec.convert(stored, AnyEvent)
    except RecursionError:
        raise DecodeError(f"{tag} v{version}: nested too deeply") from None
    except msgspec.ValidationError as error:
        raise DecodeError(f"{tag} v{version} did not upcast to a valid event: {error}") from None


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
    return msgspec.json.schema(AnyEvent if tag is None else event_type(tag))
