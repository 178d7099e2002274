"""How an environment's agent answers through its game's player protocol: the methods the referee
asks a decision through, and the protocol's answer that proposes the event an action stands for.

An agent of `matchlog.envs` plays its seat as any player does: the game's own referee asks it
through the game's protocol (Porrinha's `hand` and `guess`, pygammon's moves, Fish's
`get_placement` and `get_move`, Da Vinci Code's `guess`, `reveal`, `place_joker`), so the match is
judged, ruled on and recorded exactly as one between programs. One table per game of ours; the
answer an event proposes is what the engine's `parse` turns back into that event. A game from another
package that its referee drives through the generic protocol (`referee.generic`: `act(decision)`)
gets its side from that protocol: the game's own `answer` for the event (`answers`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import msgspec

from matchlog.engines import game as registered
from matchlog.events import (
    AgeGiven,
    CheckerMoved,
    Event,
    GuessMade,
    GuessStopped,
    HandChosen,
    JokerPlaced,
    PenguinMoved,
    PenguinPlaced,
    TileGuessed,
    TileRevealed,
    UsageError,
)
from matchlog.referee.generic import answer_of
from matchlog.referee.play import RUNNERS

__all__ = ["ANSWERS", "Answers", "answers"]


class Answers(msgspec.Struct, frozen=True):
    """A game's side of an agent: the player methods that ask a decision, the protocol answer that
    proposes an event, and methods asked before a decision's own (Da Vinci Code's
    `continue_guessing`) with their answer from the same action: a false one ends the decision there."""

    decisions: frozenset[str]
    answer: Callable[[Event], object]
    ahead: Mapping[str, Callable[[Event], object]] = MappingProxyType({})


def _porrinha(event: Event) -> object:
    match event:
        case HandChosen(hand=number) | GuessMade(guess=number):
            return number
    return None


def _backgammon(event: Event) -> object:
    match event:
        case CheckerMoved(die_index=index, source=source):
            return (index, source)
    return None


def _davinci(event: Event) -> object:
    match event:
        case TileGuessed(target=target, position=position, number=number):
            return (target, position, number)
        case GuessStopped():
            return "stop"
        case TileRevealed(position=position) | JokerPlaced(position=position):
            return position
    return None


def _fish(event: Event) -> object:
    match event:
        case AgeGiven(age=age):
            return age
        case PenguinPlaced(position=position):
            return list(position)
        case PenguinMoved(source=source, target=target):
            return [list(source), list(target)]
    return None


ANSWERS: Mapping[str, Answers] = MappingProxyType(
    {
        "porrinha": Answers(frozenset({"hand", "guess"}), _porrinha),
        "backgammon": Answers(frozenset({"move"}), _backgammon),
        "davinci": Answers(
            frozenset({"guess", "reveal", "place_joker"}),
            _davinci,
            MappingProxyType({"continue_guessing": lambda event: not isinstance(event, GuessStopped)}),
        ),
        "fish": Answers(frozenset({"initialize", "get_placement", "get_move"}), _fish),
    }
)


def answers(game: str) -> Answers:
    """The side of an agent of `game`: ours from `ANSWERS`, any other game's from the generic
    protocol its referee drives it by (one decision, `act`, answered as the game's `answer` writes
    the event).

    Raises:
        UsageError: no such game (`usage.game`), or a game whose plugin brings a protocol of its own,
            which no table here speaks (`usage.env`).
    """
    if game in ANSWERS:
        return ANSWERS[game]
    found = registered(game)
    if game in RUNNERS or found.referee is not None:
        raise UsageError(f"{game} has no environment: its players' protocol is not known here", code="usage.env")
    return Answers(frozenset({"act"}), lambda event: answer_of(found, event))
