"""Ids given by their start: every command that takes a match's id, or a duel's, takes a unique
prefix of it (as `git` takes a commit's), and names the one error when it matches none or several.

The rule is one function, `unique_prefix`; what the ids are (matches in the catalogue, duels in
their games' starts) is the caller's query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from matchlog.events import UnknownMatch

__all__ = ["unique_prefix"]

#: What an id's start may hold: hex digits and dashes (a UUID as text, lowercased).
_ID_TEXT = re.compile(r"[0-9a-f-]{1,36}")


def unique_prefix(given: str, kind: str, where: str, found: Callable[[str], Sequence[Sequence[Any]]]) -> Any:
    """The one id of a `kind` (match, duel) in `where` that `given` starts, where `found(pattern)`
    gives the rows (id first) whose id is LIKE `pattern`, at most two.

    Raises:
        UnknownMatch: `given` is not the start of an id, or of none, or of more than one.
    """
    text = str(given).strip().lower()
    if not _ID_TEXT.fullmatch(text):
        raise UnknownMatch(f"{given!r} is not a {kind} id (hex digits and dashes)")
    rows = found(text + "%")
    if not rows:
        raise UnknownMatch(f"no {kind} {text} in {where}")
    if len(rows) > 1:
        raise UnknownMatch(f"{text} is the start of more than one {kind} id; give more of it")
    return rows[0][0]
