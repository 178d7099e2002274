"""Dudo as a matchlog game: the object this package registers through the `matchlog.games` entry
point (see `pyproject.toml`), with everything matchlog needs to record, replay, audit, show, rate
and write as a dataset for learners."""

from __future__ import annotations

from pathlib import Path

from matchlog.engines import Game

from . import board, players
from .engine import ENGINE
from .events import EVENTS, BidMade, Doubted

__all__ = ["GAME"]


def _answer(event: object) -> object:
    """The answer a player gives for a bid or a doubt (what `parse` reads back)."""
    if isinstance(event, BidMade):
        return [event.quantity, event.face]
    assert isinstance(event, Doubted)
    return "dudo"


GAME = Game(
    ENGINE,
    EVENTS,
    players={"counter": (players.Counter, "doubts a bid above what it expects, else raises on its best face")},
    board=board.board,
    board_type=board.DudoBoard,
    script=Path(__file__).with_name("board.js"),
    answer=_answer,
    # Loaded when a dataset or an environment asks for it, not with the rules.
    encoding="dudo.encoding:ENCODING",
)
