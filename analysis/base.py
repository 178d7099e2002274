"""What every analyser is: a name and version recorded on every row it writes, the game it judges,
and `analyse(records) -> [Judged]` over one match's whole record.

An analyser judges each decision from what the deciding seat knew then (its view at that seq,
`engines.views.shown_state`), never from the full state, and writes the note into that seat's
view: the analysis of seat k's decision belongs to seat k (`Judged.seat`), and the views of the
annotations show it to whoever may see seat k's view.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any, Protocol

import msgspec

from matchlog.engines import Engine, Turn
from matchlog.events import Event, Record
from matchlog.replay.annotations import Judged
from matchlog.replay.fold import effective, engine_of

__all__ = ["Analyser", "Decided", "Judged", "decisions", "matchlog_version"]


class Analyser(Protocol):
    """Judges the decisions (and chance) of one game's matches."""

    #: How the user names it (`--analyser NAME`), with its argument if any ("maximin:3").
    name: str
    #: Its version: a row says which analyser, at which version, wrote it.
    version: str
    #: The game it judges.
    game: str

    @property
    def author(self) -> str:
        """What its rows name as their author: the name and version."""
        ...

    def analyse(self, records: Sequence[Record]) -> list[Judged]:
        """Its judgement of one ended match, from the match's whole record (seq 0 on).

        Raises:
            UsageError: the match is not of its game, or it cannot judge it (gnubg missing, say).
        """
        ...

    def analyse_many(self, matches: Sequence[Sequence[Record]]) -> list[list[Judged]]:
        """`analyse` of several matches at once (gnubg reads many in one run)."""
        ...


class Decided(msgspec.Struct, frozen=True):
    """One decision as it was taken: the record of the answer, whose turn and what kind, and the
    state before it, whole (for listing the choices) and as the deciding seat saw it."""

    record: Record
    turn: Turn
    before: Any
    seen: Any


def decisions(records: Sequence[Record], kinds: Sequence[str] = ()) -> Iterator[Decided]:
    """The decisions of a match (of `kinds` only, when given) in its effective history: each answer a
    seat gave when the rules awaited one from it, with the state before it as that seat saw it."""
    from matchlog.engines.views import shown_state

    engine: Engine[Any] = engine_of(records)
    history = effective(records)
    state = engine.start(history[0].event)  # type: ignore[arg-type]
    for record in history[1:]:
        event: Event = record.event
        turn = engine.to_act(state)
        if turn is not None and turn.seat >= 0 and event.actor == turn.seat and (not kinds or turn.decision in kinds):
            yield Decided(record, turn, state, shown_state(engine, state, turn.seat))
        state = engine.apply(state, event)


@cache
def matchlog_version() -> str:
    """matchlog's own version: what its analysers' rows name as theirs."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("matchlog")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout without installing
        return "0"
