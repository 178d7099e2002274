"""matchlog's own games as plugins: each registered through the `matchlog.games` entry point in
matchlog's `pyproject.toml`, exactly as a game from another package is, and held to the same
contract kit (`matchlog.testing`).

Each brings its engine and events, its drawing model (drawn by the viewer's own modules), its
encoding for learners, and its player protocol and built-in players (in `matchlog.referee`,
loaded only when a match is refereed).
"""

from __future__ import annotations

from matchlog.events import backgammon as backgammon_events
from matchlog.events import davinci as davinci_events
from matchlog.events import fish as fish_events
from matchlog.events import knockout as knockout_events
from matchlog.events import porrinha as porrinha_events

from . import backgammon, boards, davinci, encodings, fish, knockout, porrinha
from .plugin import Game

__all__ = ["BACKGAMMON", "DAVINCI", "FISH", "KNOCKOUT", "PORRINHA"]

PORRINHA = Game(
    porrinha.ENGINE,
    porrinha_events.EVENTS,
    board=boards.porrinha_board,
    board_type=boards.PorrinhaBoard,
    encoding=encodings.ENCODINGS["porrinha"],
)
BACKGAMMON = Game(
    backgammon.ENGINE,
    backgammon_events.EVENTS,
    board=boards.backgammon_board,
    board_type=boards.BackgammonBoard,
    encoding=encodings.ENCODINGS["backgammon"],
)
DAVINCI = Game(
    davinci.ENGINE,
    davinci_events.EVENTS,
    board=boards.davinci_board,
    board_type=boards.DavinciBoard,
    encoding=encodings.ENCODINGS["davinci"],
)
FISH = Game(
    fish.ENGINE,
    fish_events.EVENTS,
    board=boards.fish_board,
    board_type=boards.FishBoard,
    encoding=encodings.ENCODINGS["fish"],
)
#: A knockout tournament's record: shown and replayed like a game, never refereed between players.
KNOCKOUT = Game(
    knockout.ENGINE,
    knockout_events.EVENTS,
    board=boards.knockout_board,
    board_type=boards.KnockoutBoard,
)
