"""The event vocabulary: tags, the codec, schema versions and upcasters, encoded samples."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.events import (
    EVENT_TYPES,
    DecodeError,
    Event,
    GuessMade,
    Outcome,
    current_version,
    decode,
    draft,
    encode,
    event_type,
    json_schema,
    uuid7,
)
from matchlog.events import codec as codec_module

from .strategies import any_event

SAMPLES = Path(__file__).parent / "fixtures" / "events"


def tags() -> list[str]:
    return [cls.__struct_config__.tag for cls in EVENT_TYPES]


def test_tags_are_unique_namespaced_and_stable_strings():
    assert len(set(tags())) == len(tags())
    for tag in tags():
        namespace, _, name = tag.partition(".")
        assert namespace and name and tag == tag.lower(), tag


def test_events_are_frozen():
    event = GuessMade(seat=1, guess=3)
    with pytest.raises(AttributeError):
        event.guess = 4  # type: ignore[misc]


@given(any_event())
def test_every_event_round_trips_through_the_codec(event: Event):
    assert decode(encode(event)) == event
    # Canonical: the bytes are a function of the value.
    assert encode(decode(encode(event))) == encode(event)


def test_dict_options_encode_in_a_deterministic_order():
    from matchlog.events import MatchStarted, Seat

    one = MatchStarted(game="g", options={"b": 1, "a": 2}, seats=(Seat("x", "y"),))
    two = MatchStarted(game="g", options={"a": 2, "b": 1}, seats=(Seat("x", "y"),))
    assert encode(one) == encode(two)


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (b"not json", "not a valid event"),
        (b'{"type": "no.such_event"}', "not a valid event"),
        (b'{"type": "porrinha.guess_made", "seat": "one", "guess": 2}', "Expected `int`"),
        (b'{"type": "porrinha.guess_made", "seat": 1}', "missing required field"),
        (b'{"type": "porrinha.guess_made", "seat": 1, "guess": 2.5}', "Expected `int`"),
        (b"\xff\xfe", "not a valid event"),
        (b"[]", "not a valid event"),
    ],
)
def test_malformed_payloads_raise_decode_error(payload: bytes, fragment: str):
    with pytest.raises(DecodeError) as caught:
        decode(payload)
    assert fragment in str(caught.value)
    assert caught.value.code == "event.decode"


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_escape_as_anything_but_decode_error(data: bytes):
    with contextlib.suppress(DecodeError):
        decode(data)


def test_unknown_tag_and_future_version_are_decode_errors():
    with pytest.raises(DecodeError, match="unknown event type"):
        event_type("chess.moved")
    with pytest.raises(DecodeError, match="not a version this matchlog knows"):
        decode(encode(GuessMade(seat=0, guess=1)), tag="porrinha.guess_made", version=2)


def test_an_older_version_is_upcast_before_decoding(monkeypatch: pytest.MonkeyPatch):
    # Pretend guess_made is now v2, whose v1 form called the field "value".
    monkeypatch.setattr(GuessMade, "version", 2)
    monkeypatch.setitem(codec_module._words().current, "porrinha.guess_made", 2)
    monkeypatch.setattr(codec_module, "_UPCASTERS", dict(codec_module._UPCASTERS))

    @codec_module.upcaster("porrinha.guess_made", 1)
    def rename(stored: dict) -> dict:
        stored = dict(stored)
        stored["guess"] = stored.pop("value")
        return stored

    old = b'{"type":"porrinha.guess_made","seat":2,"value":5}'
    assert decode(old, tag="porrinha.guess_made", version=1) == GuessMade(seat=2, guess=5)
    assert current_version("porrinha.guess_made") == 2
    with pytest.raises(RuntimeError, match="already registered"):
        codec_module.upcaster("porrinha.guess_made", 1)(rename)


def test_a_missing_upcaster_is_a_decode_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(GuessMade, "version", 3)
    monkeypatch.setitem(codec_module._words().current, "porrinha.guess_made", 3)
    with pytest.raises(DecodeError, match="no upcaster"):
        decode(b'{"type":"porrinha.guess_made","seat":2,"guess":5}', tag="porrinha.guess_made", version=1)


def test_json_schema_describes_every_event():
    schema = json_schema()
    described = {
        definition["properties"]["type"]["enum"][0]
        for definition in schema["$defs"].values()
        if "type" in definition.get("properties", {})
    }
    assert described == set(tags())


def test_every_event_type_and_version_has_an_encoded_sample_that_still_decodes():
    """Adding an event (or a version) without a sample fails here; so does an incompatible change.

    `TAG.vN.json` is the current form of version N; `TAG.vN.LABEL.json` is an older form of the same
    version (before a field with a default was added, say), which must still decode."""
    found = {}
    for path in sorted(SAMPLES.glob("*.json")):
        named = re.fullmatch(r"(?P<tag>[a-z_]+\.[a-z_]+)\.v(?P<version>\d+)(?:\.(?P<label>[a-z0-9-]+))?", path.stem)
        assert named is not None, f"{path.name} is not named TAG.vN.json or TAG.vN.LABEL.json"
        tag, version = named["tag"], int(named["version"])
        sample = path.read_bytes().strip()
        event = decode(sample, tag=tag, version=version)
        assert event.tag == tag
        if named["label"] is not None:
            assert encode(event) != sample, f"{path.name} is the current form: name it {tag}.v{version}.json"
            continue
        found[(tag, version)] = path
        if version == current_version(tag):
            assert encode(event) == sample, f"{path.name} no longer encodes the same"
    # matchlog's own event types; a plugin's samples are its package's (the kit's `Contract.samples`).
    for tag in (cls.__struct_config__.tag for cls in EVENT_TYPES if cls.__module__.startswith("matchlog.")):
        for version in range(1, current_version(tag) + 1):
            assert (tag, version) in found, f"no sample tests/fixtures/events/{tag}.v{version}.json"


def test_uuid7_ids_are_version_7_and_time_ordered():
    ids = [uuid7() for _ in range(2_000)]
    assert all(i.version == 7 for i in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_draft_keeps_the_given_id_and_time():
    event = GuessMade(seat=0, guess=1)
    fixed = uuid7()
    assert draft(event, event_id=fixed, at_us=5).event_id == fixed
    assert draft(event, event_id=fixed, at_us=5).at_us == 5
    assert draft(event).event_id != draft(event).event_id


def test_outcome_ranking_orders_seats_by_place():
    assert Outcome(places=(3, 1, 2), winners=(1,)).ranking == (1, 2, 0)
    assert msgspec.json.decode(msgspec.json.encode(Outcome(places=(1,), winners=(0,))), type=Outcome).places == (1,)


def test_samples_are_valid_json_objects():
    for path in SAMPLES.glob("*.json"):
        assert isinstance(json.loads(path.read_text()), dict)
