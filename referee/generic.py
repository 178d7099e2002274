"""The generic player protocol: how the referee drives the players of a game that brings no protocol
of its own (a game from another package, OpenSpiel's through the bridge).

A player is any object with `act(decision) -> answer`, and optionally `begin_game(decision)` and
`end_game(decision)`. A `Decision` is what its seat may know at that moment: the seat, the kind of
decision awaited, the state as the seat sees it (the engine's `view`, as JSON values), and the
answers the rules allow now (`legal`, each as the game's `answer` writes it). The referee judges
an answer with the engine's `parse` and `check`; a rejected answer is recorded and asked again, and
a seat that keeps answering what the rules refuse is removed at `REJECTION_LIMIT`. A player in a
child process gets the same `Decision` as one JSON object (`{"call": "act", "seat": ..., "decision":
..., "view": ..., "legal": [...]}`, docs/protocol.md) and answers one JSON value.

Every game gets the built-in `random` here (a legal answer, uniformly at random); a game adds its
own built-ins through its plugin's `players`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from matchlog.engines import Turn
from matchlog.engines.views import shown_state
from matchlog.events import Event, IllegalAction

from .calls import Channel, Reply

if TYPE_CHECKING:
    from matchlog.engines import Game

    from .match import Referee

__all__ = ["REJECTION_LIMIT", "Decision", "GenericProtocol", "RandomPlayer", "answer_of", "run_generic"]

#: Rejected answers in a row that remove a seat under the generic protocol.
REJECTION_LIMIT = 10


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """What a seat may know when it is asked: its seat, the decision awaited (None at the start
    and the end of the game), the state as it sees it, and the answers the rules allow now."""

    seat: int
    decision: str | None
    view: Any
    legal: list[Any]


def answer_of(game: Game, event: Event) -> Any:
    """The answer a player gives to propose `event` (the game's own `answer`, else the event's
    fields as JSON values)."""
    answer = getattr(game, "answer", None)
    if answer is not None:
        return answer(event)
    return msgspec.to_builtins(event)


class GenericProtocol:
    """Asks each player `act(decision)` in turn; tells each `begin_game` and `end_game`."""

    rejection_limit = REJECTION_LIMIT

    def __init__(self, game: Game, calls: Sequence[Channel]) -> None:
        self.game = game
        self.calls = list(calls)

    def decision(self, referee: Referee, seat: int, turn: Turn | None) -> Decision:
        """What `seat` may know now, with the answers it may give if `turn` is its own."""
        engine = referee.engine
        legal = engine.legal(referee.state, seat) if turn is not None and turn.seat == seat else ()
        return Decision(
            seat=seat,
            decision=None if turn is None else turn.decision,
            view=msgspec.to_builtins(shown_state(engine, referee.state, seat)),
            legal=[answer_of(self.game, event) for event in legal],
        )

    def _tell(self, referee: Referee, method: str) -> None:
        for seat, call in enumerate(self.calls):
            if seat in referee.removed:
                continue
            reply = call.call(method, self.decision(referee, seat, None), required=False)
            if reply.failed:
                referee.remove(seat, reply.failure or "player.failed", reply.detail)

    def begin(self, referee: Referee) -> None:
        self._tell(referee, "begin_game")

    def ask(self, referee: Referee, turn: Turn) -> Reply:
        return self.calls[turn.seat].call("act", self.decision(referee, turn.seat, turn))

    def ruling(self, referee: Referee, turn: Turn, error: IllegalAction) -> list[Event]:
        # The seat is asked again; the rejection limit removes one that never answers legally.
        return []

    def after(self, referee: Referee, before: Any, after: Any) -> None:
        return None

    def end(self, referee: Referee) -> None:
        self._tell(referee, "end_game")


def run_generic(game: Game) -> Any:
    """The runner of `game` under the generic protocol: (referee, calls, rng) -> its outcome."""

    def run(referee: Referee, calls: Sequence[Channel], rng: random.Random) -> object:
        return referee.run(GenericProtocol(game, calls), rng)

    return run


class RandomPlayer:
    """Answers one of the legal answers, uniformly at random."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def act(self, decision: Decision) -> Any:
        return self.rng.choice(decision.legal)
