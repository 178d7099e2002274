"""Knockout tournaments (the course's Fish tournament manager): games of up to four, the winners go on.

The tournament is a match of its own in the log (game "knockout", see `engines.knockout`): it
records each game it played, naming the game's match, and ends with the tournament's winners.
Every game is recorded like any match, in the tournament's series. Players are told when the
tournament starts (`tournament_started(n_players)`) and, if still in, how they did at the end
(`tournament_ended(won)`); both are optional, and a player that fails either is kicked (a winner
that fails to hear it won becomes a loser).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import CHANCE, Turn, parse_options
from matchlog.engines import get as get_engine
from matchlog.engines.knockout import ENGINE as KNOCKOUT
from matchlog.engines.knockout import KnockoutState, tables
from matchlog.events import Event, KnockoutGamePlayed, MatchStarted, Outcome, Seat, Series, UsageError, uuid7
from matchlog.store import Store

from .channel import channel_for
from .match import MemoryRecorder, Recorder, Referee, StoreRecorder
from .play import DEFAULT_TIMEOUT, MatchResult, play_match, runner
from .players import is_builtin

__all__ = ["KnockoutResult", "run_knockout"]

#: The course's largest table.
LARGEST_TABLE = 4


class KnockoutResult(msgspec.Struct, frozen=True):
    """A finished knockout: its own match id in the log, the entrants, how it ended, every game."""

    tournament_id: UUID
    seats: tuple[Seat, ...]
    outcome: Outcome
    games: tuple[MatchResult, ...]

    @property
    def winners(self) -> list[str]:
        return [self.seats[s].name for s in self.outcome.winners]

    @property
    def kicked(self) -> list[str]:
        return [self.seats[s].name for s in self.outcome.removed]


def run_knockout(
    game: str,
    seats: Sequence[Seat],
    players: Sequence[object],
    *,
    options: dict[str, Any] | None = None,
    store: Store | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    seed: int | None = None,
    largest: int = LARGEST_TABLE,
    on_event: Callable[[Event, KnockoutState], None] | None = None,
    on_game: Callable[[MatchResult], None] | None = None,
) -> KnockoutResult:
    """Run a knockout of `game` between `players` (in sign-up order, seated as `seats`) and record it.

    Raises:
        UsageError: a game matchlog cannot referee, options it refuses, or tables it cannot seat.
        StoreError: the log refused an append (the tournament stops there).
    """
    engine = get_engine(game)
    spec = engine.spec
    runner(game)
    largest = min(largest, spec.max_players or largest)
    if tables(2 * largest + 1, largest, spec.min_players) is None:
        raise UsageError(
            f"{spec.title} seats {spec.min_players} to {spec.max_players} players: a knockout needs tables "
            "of at least two sizes to seat any field",
            code="usage.game",
        )
    if not seats:
        raise UsageError("a knockout needs at least one player", code="usage.players")
    game_options = msgspec.to_builtins(parse_options(spec, options))
    started = MatchStarted(
        game=KNOCKOUT.spec.name,
        options={"game": game, "largest": largest, "smallest": spec.min_players, "game_options": game_options},
        seats=tuple(seats),
    )
    tournament_id = uuid7()
    recorder: Recorder = StoreRecorder(store, tournament_id) if store is not None else MemoryRecorder()
    referee = Referee(KNOCKOUT, started, recorder, match_id=tournament_id, on_event=on_event)
    calls = [
        channel_for(player, game, index, None if is_builtin(game, seat.player) else timeout)
        for index, (seat, player) in enumerate(zip(seats, players, strict=True))
    ]
    rng = random.Random(seed)
    results: list[MatchResult] = []
    try:
        for seat, call in enumerate(calls):
            reply = call.call("tournament_started", len(seats), required=False)
            if reply.failed:
                referee.remove(seat, reply.failure or "player.failed", f"tournament_started: {reply.detail}")
        while KNOCKOUT.to_act(referee.state) == Turn(CHANCE, "game"):
            table = referee.state.groups[referee.state.played]
            result = play_match(
                game,
                [seats[s] for s in table],
                [players[s] for s in table],
                options=game_options,
                store=store,
                timeout=timeout,
                series=Series(str(tournament_id), len(results) + 1, 0),
                seed=rng.randrange(2**63),
            )
            results.append(result)
            referee.record(
                KnockoutGamePlayed(
                    match_id=str(result.match_id),
                    seats=table,
                    winners=tuple(table[i] for i in result.outcome.winners),
                    removed=tuple(table[i] for i in result.outcome.removed),
                    result=result.outcome.result,
                )
            )
            recorder.wait()  # each game's result is durable before the next game starts
            if on_game is not None:
                on_game(result)
        state: KnockoutState = referee.state
        for seat, call in enumerate(calls):
            if seat not in state.removed:
                reply = call.call("tournament_ended", seat in state.winners, required=False)
                if reply.failed:
                    referee.remove(seat, reply.failure or "player.failed", f"tournament_ended: {reply.detail}")
        outcome = referee.finish()
    except KeyboardInterrupt:
        referee.abandon("tournament interrupted")
        recorder.wait()
        raise
    finally:
        for call in calls:
            call.close()
    recorder.wait()
    return KnockoutResult(tournament_id, tuple(seats), outcome, tuple(results))
