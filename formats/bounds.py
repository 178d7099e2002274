"""How big an imported record may be, and the few readers every format shares to stay within it.

Every reader of another tool's record is linear in its input and refuses, with a `FormatError`
that names the bound, anything past these sizes before doing the work they would cost: no record
a referee of these games writes comes near them (a backgammon game is a few hundred turns, a Fish
game a few dozen States, a Porrinha match of 8 a few hundred lines), so they cost no real record
anything and keep a hostile one from costing minutes or gigabytes. JSON Lines imports (the log's
own export) are bounded the same way, line by line (`bounded_lines`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from matchlog.events import ImportRejected

from .imported import FormatError

__all__ = [
    "MAX_GAMES",
    "MAX_JSONL_LINE_BYTES",
    "MAX_LINE_CHARS",
    "MAX_RECORD_BYTES",
    "MAX_SEATS",
    "MAX_STEPS",
    "MAX_TURNS",
    "MAX_VARIATION_DEPTH",
    "at_most",
    "bounded_lines",
    "lines_of",
]

#: The largest file `import` reads in another tool's format (bytes).
MAX_RECORD_BYTES = 64 << 20
#: The longest line of a .mat or a text record (a text record's line holds a rejected answer or a
#: reason as JSON; the referee keeps an answer to 200 characters).
MAX_LINE_CHARS = 64 << 10
#: The most games (matches) one file holds.
MAX_GAMES = 10_000
#: The most turns one game of a file holds: SGF nodes, .mat move lines, Fish States, text record lines.
MAX_TURNS = 10_000
#: How deep SGF variations may nest (only the main line is read; GNU Backgammon nests none).
MAX_VARIATION_DEPTH = 64
#: The most checkers one backgammon roll moves (four with a double): more steps are no play at all.
MAX_STEPS = 4
#: The most seats of an imported match (Porrinha has no upper limit; the other games have 2 to 4).
MAX_SEATS = 64
#: The longest line of a JSON Lines import (one event; matchlog writes none near it).
MAX_JSONL_LINE_BYTES = 64 << 20


def at_most(count: int, most: int, format: str, where: str, what: str) -> None:
    """Refuse a record once it holds more than `most` of `what`.

    Raises:
        FormatError: `count` is past `most`, naming where and the bound.
    """
    if count > most:
        raise FormatError(format, f"{where}: more than {most:,} {what}; no record of these games holds that many")


def lines_of(text: str, format: str) -> Iterator[tuple[int, str]]:
    """The lines of a record (numbered from 1, a byte order mark dropped), each at most MAX_LINE_CHARS.

    Raises:
        FormatError: a line is longer, naming it.
    """
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise FormatError(
                format, f"line {number}: {len(line):,} characters, more than a line holds ({MAX_LINE_CHARS:,})"
            )
        yield number, line


def bounded_lines(file: IO[bytes]) -> Iterator[bytes]:
    """The lines of a JSON Lines file, read no further than MAX_JSONL_LINE_BYTES a line.

    Raises:
        ImportRejected: a line is longer, naming it.
    """
    number = 0
    while line := file.readline(MAX_JSONL_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_JSONL_LINE_BYTES and not line.endswith(b"\n"):
            raise ImportRejected(
                f"line {number}: longer than {MAX_JSONL_LINE_BYTES:,} bytes, more than one event of matchlog's; "
                "nothing was imported"
            )
        yield line
