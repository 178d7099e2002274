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
from typing import TYPE_CHECKING, Any

import msgspec

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

from .calls import Channel, Reply
from .messages import Messages
from .registry import register_builtin, register_messages

if TYPE_CHECKING:
    from .match import Referee

__all__ = ["PorrinhaMessages", "PorrinhaProtocol", "RandomPlayer", "ReasonerPlayer", "Table", "TableView", "guess_odds"]


class TableView(msgspec.Struct, frozen=True, kw_only=True):
    """What one player may know at one call, as the seed's `core/util.h` tells it: the data behind
    `Table`'s queries, and the `table` of Porrinha's messages to a player in a child process."""

    #: The asking player's own index.
    index: int
    player_count: int
    active_player_count: int
    chopstick_count: int
    #: Every player's chopsticks, by index.
    chopsticks: tuple[int, ...]
    names: tuple[str, ...]
    round: int
    #: Its own hand this round, once chosen.
    my_hand: int | None
    #: This round's guesses (during end_round: the round that just settled), markers included.
    guesses: tuple[int, ...]
    #: Last round's hands (-1: did not play, or round 1).
    hands: tuple[int, ...]
    last_winner: int
    last_total: int

    @classmethod
    def of(cls, state: PorrinhaState, index: int, *, settled: bool = False) -> TableView:
        """The table as `index` sees it in `state` (a view for that seat); `settled` during end_round."""
        return cls(
            index=index,
            player_count=state.players,
            active_player_count=len(state.active_seats),
            chopstick_count=state.chopstick_count,
            chopsticks=state.chopsticks,
            names=state.names,
            round=state.round - 1 if settled else state.round,
            my_hand=state.hands[index],
            guesses=state.last_guesses if settled else state.guesses,
            hands=state.last_hands or (NO_HAND,) * state.players,
            last_winner=state.last_winner,
            last_total=state.last_total,
        )


class Table:
    """What one player may know, through the queries of the seed's `core/util.h`.

    Indices are seats (0 .. player_count - 1). Guesses use the core's markers: PENDING_GUESS (not
    yet guessed this round), NOT_PLAYING, INVALID_GUESS. During `end_round`, `guess()` answers the
    round that just settled, as in the core.
    """

    PENDING_GUESS = PENDING_GUESS
    NOT_PLAYING = NOT_PLAYING
    INVALID_GUESS = INVALID_GUESS

    __slots__ = ("_view",)

    def __init__(self, view: TableView) -> None:
        object.__setattr__(self, "_view", view)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("the table is read-only")

    @property
    def index(self) -> int:
        """The asking player's own index."""
        return self._view.index

    @property
    def view(self) -> TableView:
        """All of it as data (what a player in a child process is sent)."""
        return self._view

    # Overall game queries (updated between rounds).

    @property
    def player_count(self) -> int:
        """Players at the table, including those no longer playing."""
        return self._view.player_count

    @property
    def active_player_count(self) -> int:
        """Players still holding chopsticks (and not removed)."""
        return self._view.active_player_count

    @property
    def chopstick_count(self) -> int:
        """Chopsticks on the table: the sum over the players still playing."""
        return self._view.chopstick_count

    def chopsticks(self, player: int | None = None) -> int | tuple[int, ...]:
        """Chopsticks of one player, or of every player (a tuple by index)."""
        return self._view.chopsticks if player is None else self._view.chopsticks[player]

    def name(self, player: int | None = None) -> str:
        """A player's display name (default: your own)."""
        return self._view.names[self.index if player is None else player]

    @property
    def round(self) -> int:
        """This round's number, from 1."""
        return self._view.round

    @property
    def my_hand(self) -> int | None:
        """Your own hand this round, once chosen."""
        return self._view.my_hand

    # Individual round queries.

    def guess(self, player: int | None = None) -> int | tuple[int, ...]:
        """This round's guess of one player, or all guesses; negative values are markers."""
        return self._view.guesses if player is None else self._view.guesses[player]

    def valid_guess(self, guess: int) -> bool:
        """Whether `guess` may be said now: in [0, chopstick_count] and not already guessed."""
        return isinstance(guess, int) and 0 <= guess <= self._view.chopstick_count and guess not in self._view.guesses

    # End-round information (the last settled round).

    def hand(self, player: int | None = None) -> int | tuple[int, ...]:
        """Last round's hand of one player (-1 if it did not play, or in round 1), or all of them."""
        return self._view.hands if player is None else self._view.hands[player]

    @property
    def last_winner(self) -> int:
        """Who guessed right last round (-1 if nobody did, and in round 1)."""
        return self._view.last_winner

    @property
    def last_total(self) -> int:
        """Last round's total of hands (-1 in round 1)."""
        return self._view.last_total

    def __repr__(self) -> str:
        return f"<Table round {self.round} seat {self.index} of {self.player_count}>"


class PorrinhaProtocol:
    """Drives players through `begin_game`, `hand`, `guess`, `end_round`, `end_game`."""

    def __init__(self, calls: Sequence[Channel]) -> None:
        self.calls = list(calls)

    def _table(self, referee: Referee, seat: int, *, settled: bool = False) -> Table:
        return Table(TableView.of(shown_state(referee.engine, referee.state, seat), seat, settled=settled))

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
        odds = guess_odds(table)
        best = max(odds.values())
        top = [g for g, chance in odds.items() if chance >= best - 1e-12]
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


def guess_odds(table: Table) -> dict[int, float]:
    """The chance of each valid guess being the total, as the reasoner reckons it from what `table`
    shows its player (its own hand, the chopsticks, the guesses said before it), valid guesses in
    order. The analyser of Porrinha (matchlog.analysis) judges guesses by it."""
    me = table.index
    chopsticks: tuple[int, ...] = table.chopsticks()  # type: ignore[assignment]
    guesses: tuple[int, ...] = table.guess()  # type: ignore[assignment]
    playing = [s for s in range(table.player_count) if guesses[s] != NOT_PLAYING]
    totals = [1.0]  # distribution of the sum, index = total
    for seat in playing:
        if seat == me:
            odds = [0.0] * (table.my_hand or 0) + [1.0]
        else:
            odds = ReasonerPlayer._hand_odds(seat, chopsticks, guesses, playing)
        totals = _convolve(totals, odds)
    choices = [g for g in range(table.chopstick_count + 1) if table.valid_guess(g)]
    return {g: totals[g] if g < len(totals) else 0.0 for g in choices}


def _convolve(a: list[float], b: list[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, p in enumerate(a):
        if p:
            for j, q in enumerate(b):
                out[i + j] += p * q
    return out


class PorrinhaMessages(Messages):
    """Every call carries the asking player's `table` (`porrinha.TableView`); hand and guess are
    answered with an integer, the rest with anything (null)."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        if len(args) == 1 and isinstance(args[0], Table):
            return {"call": method, "table": msgspec.to_builtins(args[0].view)}
        return super().request(method, args)

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        if "table" in message:
            return (Table(msgspec.convert(message["table"], TableView)),)
        return super().arguments(message)


register_messages("porrinha", lambda seat: PorrinhaMessages())
register_builtin("porrinha", "random", RandomPlayer, "a random hand, a random valid guess")
register_builtin(
    "porrinha",
    "reasoner",
    ReasonerPlayer,
    "the most likely total from its own hand and the guesses before it",
)
