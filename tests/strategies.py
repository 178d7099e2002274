"""Hypothesis strategies for every event type, built from the types' own field annotations."""

from __future__ import annotations

import types
import typing
from typing import Any, Union
from uuid import UUID

import msgspec
from hypothesis import strategies as st

from matchlog.events import EVENT_TYPES, Event

_text = st.text(max_size=20)
_small = st.integers(min_value=-(2**31), max_value=2**31)


def for_type(annotation: Any) -> st.SearchStrategy[Any]:
    """A strategy of values of `annotation` (the subset of types events use)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is int:
        return _small
    if annotation is str:
        return _text
    if annotation is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if annotation is bool:
        return st.booleans()
    if annotation is UUID:
        return st.uuids()
    if annotation is type(None):
        return st.none()
    if annotation is Any:
        return st.one_of(st.none(), _small, _text, st.booleans())
    if origin in (Union, types.UnionType):
        return st.one_of(*(for_type(a) for a in args))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(for_type(args[0]), max_size=5).map(tuple)
        return st.tuples(*(for_type(a) for a in args))
    if origin is dict:
        return st.dictionaries(_text, for_type(args[1]), max_size=4)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return struct(annotation)
    raise NotImplementedError(f"no strategy for {annotation!r}")


def struct(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls)
    return st.builds(cls, **{name: for_type(hints[name]) for name in cls.__struct_fields__})


def any_event() -> st.SearchStrategy[Event]:
    return st.one_of(*(struct(cls) for cls in EVENT_TYPES))
