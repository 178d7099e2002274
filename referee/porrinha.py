"""Porrinha's player protocol, as the seed's core drives it, and its built-in players.

A player is any object with `hand(table) -> int` and `guess(table) -> int`, and optionally
`begin_game(table)`, `end_round(table)` and `end_game(table)`. The referee calls `begin_game` on
every player, then per round `hand` (circularly from the first guesser), `guess` (same order, each
seeing the guesses before it) and `end_round` on every player not removed (even those out of the
game, as the seed says), and finally `end_game` (which the original core never called).

`table` is a read-only `Table`: the seed's `core/util.h` queries over what that player may see.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from matchlog.engines import Turn
from matchlog.engines.porrinha import (
    INVALID_GUESS,
    NO_HAND,
    NOT_PLAYING,
    PENDING_GUESS,
    PorrinhaState,
)
from matchlog.engines.views import shown_state
from matchlog.events import Event, GuessVoided, IllegalAction, PlayerRemoved

from .calls import PlayerCalls, Reply
from .match import Referee
from .players import register_builtin

__all__ = ["PorrinhaProtocol", "RandomPlayer", "ReasonerPlayer", "Table"]


class Table:
    """What one player may know, through the queries of the seed's `core/util.h`.

    Indices are seats (0 .. player_count - 1). Guesses use the core's markers: PENDING_GUESS (not
    yet guessed this round), NOT_PLAYING, INVALID_GUESS. During `end_round`, `guess()` answers the
    round that just settled, as in the core.
    """

    PENDING_GUESS = PENDING_GUESS
    NOT_PLAYING = NOT_PLAYING
    INVALID_GUESS = INVALID_GUESS

    __slots__ = ("_settled", "_state", "index")

    def __init__(self, state: PorrinhaState, index: int, *, settled: bool = False) -> None:
        self._state = state
        self._settled = settled
        #: The asking player's own index.
        self.index = index

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, "index"):
            raise AttributeError("the table is read-only")
        object.__setattr__(self, name, value)

    # Overall game queries (updated between rounds).

    @property
    def player_count(self) -> int:
        """Players at the table, including those no longer playing."""
        return self._state.players

    @property
    def active_player_count(self) -> int:
        """Players still holding chopsticks (and not removed)."""
        return len(self._state.active_seats)

    @property
    def chopstick_count(self) -> int:
        """Chopsticks on the table: the sum over the players still playing."""
        return self._state.chopstick_count

    def chopsticks(self, player: int | None = None) -> int | tuple[int, ...]:
        """Chopsticks of one player, or of every player (a tuple by index)."""
        return self._state.chopsticks if player is None else self._state.chopsticks[player]

    def name(self, player: int | None = None) -> str:
        """A player's display name (default: your own)."""
        return self._state.names[self.index if player is None else player]

    @property
    def round(self) -> int:
        """This round's number, from 1."""
        return self._state.round - 1 if self._settled else self._state.round

    @property
    def my_hand(self) -> int | None:
        """Your own hand this round, once chosen."""
        return self._state.hands[self.index]

    # Individual round queries.

    def guess(self, player: int | None = None) -> int | tuple[int, ...]:
        """This round's guess of one player, or all guesses; negative values are markers."""
        guesses = self._state.last_guesses if self._settled else self._state.guesses
        return guesses if player is None else guesses[player]

    def valid_guess(self, guess: int) -> bool:
        """Whether `guess` may be said now: in [0, chopstick_count] and not already guessed."""
        return isinstance(guess, int) and 0 <= guess <= self._state.chopstick_count and guess not in self._state.guesses

    # End-round information (the last settled round).

    def hand(self, player: int | None = None) -> int | tuple[int, ...]:
        """Last round's hand of one player (-1 if it did not play, or in round 1), or all of them."""
        hands = self._state.last_hands or (NO_HAND,) * self._state.players
        return hands if player is None else hands[player]

    @property
    def last_winner(self) -> int:
        """Who guessed right last round (-1 if nobody did, and in round 1)."""
        return self._state.last_winner

    @property
    def last_total(self) -> int:
        """Last round's total of hands (-1 in round 1)."""
        return self._state.last_total

    def __repr__(self) -> str:
        return f"<Table round {self.round} seat {self.index} of {self.player_count}>"


class PorrinhaProtocol:
    """Drives players through `begin_game`, `hand`, `guess`, `end_round`, `end_game`."""

    def __init__(self, calls: Sequence[PlayerCalls]) -> None:
        self.calls = list(calls)

    def _table(self, referee: Referee, seat: int, *, settled: bool = False) -> Table:
        return Table(shown_state(referee.engine, referee.state, seat), seat, settled=settled)

    def _notify(self, referee: Referee, method: str, seats: Sequence[int], *, settled: bool = False) -> None:
        for seat in seats:
            if seat in referee.removed:
                continue
            reply = self.calls[seat].call(method, self._table(referee, seat, settled=settled), required=False)
            if reply.failed:
                referee.remove(seat, reply.failure or "player.failed", reply.detail)

    def begin(self, referee: Referee) -> None:
        self._notify(referee, "begin_game", range(len(self.calls)))

    def ask(self, referee: Referee, turn: Turn) -> Reply:
        return self.calls[turn.seat].call(turn.decision, self._table(referee, turn.seat))

    def ruling(self, referee: Referee, turn: Turn, error: IllegalAction) -> list[Event]:
        state: PorrinhaState = referee.state
        if state.options.policy == "strict":
            return [PlayerRemoved(seat=turn.seat, code=error.code, reason=f"invalid {turn.decision}: {error.message}")]
        # A rejected hand counts as 0 by the rejection itself (see the engine): no event of its own.
        return [] if turn.decision == "hand" else [GuessVoided(seat=turn.seat)]

    def after(self, referee: Referee, before: Any, after: Any) -> None:
        if after.round > before.round:
            n = after.players
            self._notify(referee, "end_round", [(after.first_guesser + i) % n for i in range(n)], settled=True)

    def end(self, referee: Referee) -> None:
        self._notify(referee, "end_game", range(len(self.calls)))


class RandomPlayer:
    """Closes a random hand and says a random valid guess."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def hand(self, table: Table) -> int:
        return self.rng.randint(0, table.chopsticks(table.index))  # type: ignore[arg-type]

    def guess(self, table: Table) -> int:
        choices = [g for g in range(table.chopstick_count + 1) if table.valid_guess(g)]
        return self.rng.choice(choices)


class ReasonerPlayer:
    """Guesses the most likely total given its own hand and the guesses said before its own.

    Each other player's hand starts uniform over 0..its chopsticks. A player who guessed before
    is assumed to have said about its own hand plus the mean of the rest, so its guess shifts the
    odds of its hand (a likelihood falling off by half per chopstick of error). The totals'
    distribution is the convolution of those hands with our own, and we say its most likely valid
    value. Hands are uniform at random, so nobody can read ours.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def hand(self, table: Table) -> int:
        return self.rng.randint(0, table.chopsticks(table.index))  # type: ignore[arg-type]

    def guess(self, table: Table) -> int:
        me = table.index
        chopsticks: tuple[int, ...] = table.chopsticks()  # type: ignore[assignment]
        guesses: tuple[int, ...] = table.guess()  # type: ignore[assignment]
        playing = [s for s in range(table.player_count) if guesses[s] != NOT_PLAYING]
        totals = [1.0]  # distribution of the sum, index = total
        for seat in playing:
            if seat == me:
                odds = [0.0] * (table.my_hand or 0) + [1.0]
            else:
                odds = self._hand_odds(seat, chopsticks, guesses, playing)
            totals = _convolve(totals, odds)
        choices = [g for g in range(table.chopstick_count + 1) if table.valid_guess(g)]
        best = max(totals[g] if g < len(totals) else 0.0 for g in choices)
        top = [g for g in choices if (totals[g] if g < len(totals) else 0.0) >= best - 1e-12]
        return self.rng.choice(top)

    @staticmethod
    def _hand_odds(seat: int, chopsticks: tuple[int, ...], guesses: tuple[int, ...], playing: list[int]) -> list[float]:
        guess = guesses[seat]
        odds = [1.0] * (chopsticks[seat] + 1)
        if guess >= 0:  # it guessed before us: its guess says something about its hand
            rest = sum(chopsticks[s] for s in playing if s != seat) / 2
            odds = [math.pow(0.5, abs(guess - (h + rest))) for h in range(len(odds))]
        total = sum(odds)
        return [p / total for p in odds]


def _convolve(a: list[float], b: list[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, p in enumerate(a):
        if p:
            for j, q in enumerate(b):
                out[i + j] += p * q
    return out


register_builtin("porrinha", "random", RandomPlayer, "a random hand, a random valid guess")
register_builtin(
    "porrinha",
    "reasoner",
    ReasonerPlayer,
    "the most likely total from its own hand and the guesses before it",
)
