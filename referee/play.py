"""Playing matches and series: players built from specs, matches recorded, places counted.

A series is the seed's "tournament": the same player objects play game after game (keeping what
they learnt), each game its own match in the log, with a count of places per player. Matches are
recorded while the next one plays, but a match is reported (`on_match`, the result's matches and
places) only once it is durable: a kill never loses a match that was reported.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import get as get_engine
from matchlog.engines import parse_options
from matchlog.engines.chance import ChanceSource, seed_for
from matchlog.events import Event, MatchStarted, Outcome, Seat, Series, UsageError, uuid7
from matchlog.store import Store

from . import backgammon, davinci, fish
from .calls import PlayerCalls
from .match import MemoryRecorder, Recorder, Referee, StoreRecorder, ctrl_c_deferred
from .players import is_builtin, make_player, seats_from_specs
from .porrinha import PorrinhaProtocol

__all__ = ["DEFAULT_TIMEOUT", "RUNNERS", "MatchResult", "SeriesResult", "play_match", "play_series"]

#: Seconds a player may take to answer one call, unless told otherwise.
DEFAULT_TIMEOUT = 10.0
#: How many finished matches of a series may still be on their way to the log.
_IN_FLIGHT = 32

Runner = Callable[[Referee, Sequence[PlayerCalls], random.Random], object]

#: How each game drives its players through a match: (referee, player calls, chance's RNG).
RUNNERS: dict[str, Runner] = {
    "porrinha": lambda referee, calls, rng: referee.run(PorrinhaProtocol(calls)),
    "backgammon": backgammon.referee_match,
    "davinci": davinci.run_match,
    "fish": fish.run_match,
}


class MatchResult(msgspec.Struct, frozen=True):
    """One recorded match: its id, seats and outcome."""

    match_id: UUID
    seats: tuple[Seat, ...]
    outcome: Outcome
    recorder: Any = None


class SeriesResult(msgspec.Struct, frozen=True):
    """A series: every match, and for each seat name how often it took each place."""

    series_id: str
    matches: tuple[MatchResult, ...]
    places: dict[str, dict[int, int]]


def play_match(
    game: str,
    seats: Sequence[Seat],
    players: Sequence[object],
    *,
    options: dict[str, Any] | None = None,
    store: Store | None = None,
    recorder: Recorder | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    series: Series | None = None,
    seed: int | None = None,
    on_event: Callable[[Event, Any], None] | None = None,
    wait: bool = True,
    match_id: UUID | None = None,
) -> MatchResult:
    """Referee one match between `players` (seated as `seats`) and record it.

    Built-in players are called directly; user players run under `timeout` seconds per call.
    `seed` seeds chance (dice, shuffles, boards); without one the seed is secret until the match
    ends. Either way the referee commits to it first and reveals it at the end (`engines.chance`).
    With `wait` (the default) it returns once the match is durable; without, the caller waits on
    the recorder (`MatchResult.recorder.wait()`).

    Raises:
        UsageError: a bad game, option or table size.
        StoreError: the log refused an append (the match stops there).
    """
    engine = get_engine(game)
    spec = engine.spec
    spec.check_players(len(seats))
    full_options = msgspec.to_builtins(parse_options(spec, options))
    started = MatchStarted(game=game, options=full_options, seats=tuple(seats), series=series)
    match_id = match_id or uuid7()
    if recorder is None:
        recorder = StoreRecorder(store, match_id) if store is not None else MemoryRecorder()
    calls = [
        PlayerCalls(player, None if is_builtin(game, seat.player) else timeout)
        for seat, player in zip(seats, players, strict=True)
    ]
    chance = ChanceSource(seed_for(seed)) if spec.chance else None
    with ctrl_c_deferred():  # a Ctrl-C waits for the step in progress to be whole in the log
        referee = Referee(engine, started, recorder, match_id=match_id, on_event=on_event, chance=chance)
        try:
            RUNNERS[game](referee, calls, chance or random.Random(seed))
        except KeyboardInterrupt:
            if referee.outcome is None:  # what was played stays in the log, ended as abandoned
                referee.abandon("match interrupted")
                recorder.wait()
            raise
        finally:
            for call in calls:
                call.close()
    assert referee.outcome is not None, f"the {game} runner ended without recording an outcome"
    if wait:
        recorder.wait()
    return MatchResult(match_id, tuple(seats), referee.outcome, recorder)


def play_series(
    game: str,
    specs: Sequence[str],
    *,
    games: int = 1,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    store: Store | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    on_match: Callable[[MatchResult], None] | None = None,
) -> SeriesResult:
    """Build the players once and play `games` matches with them, in the same seats. Each match is
    given to `on_match`, and counted, once it is durable (in the order played); on Ctrl-C the
    match in play is ended as abandoned, those finished are made durable and given, and the
    KeyboardInterrupt goes on.

    Raises:
        UsageError: a bad player spec, game, option or count.
        StoreError: the log refused an append.
    """
    if games < 1:
        raise UsageError(f"--games must be at least 1, not {games}", code="usage.games")
    if game not in RUNNERS:
        get_engine(game)  # the clearer error when the game does not exist at all
        raise UsageError(f"matchlog cannot referee {game} yet", code="usage.game")
    seats = seats_from_specs(game, specs)
    base = random.Random(seed)
    players = [make_player(game, seat.player, random.Random(base.randrange(2**63))) for seat in seats]
    series_id = str(uuid7())
    results: list[MatchResult] = []
    places: dict[str, dict[int, int]] = {seat.name: {} for seat in seats}
    in_flight: deque[MatchResult] = deque()  # played, on their way to the log

    def report(*, every: bool = False) -> None:
        """Give the matches that are durable, oldest first (and wait for one if too many are on their way)."""
        while in_flight and (every or len(in_flight) > _IN_FLIGHT or in_flight[0].recorder.durable()):
            result = in_flight[0]
            result.recorder.wait()
            in_flight.popleft()
            results.append(result)
            for seat, place in enumerate(result.outcome.places):
                counts = places[seats[seat].name]
                counts[place] = counts.get(place, 0) + 1
            if on_match is not None:
                on_match(result)

    with ctrl_c_deferred():  # a Ctrl-C waits for the step of the match in play to end
        try:
            for number in range(1, games + 1):
                series = Series(series_id, number, games) if games > 1 else None
                in_flight.append(
                    play_match(
                        game,
                        seats,
                        players,
                        options=options,
                        store=store,
                        timeout=timeout,
                        series=series,
                        seed=base.randrange(2**63),
                        wait=False,
                    )
                )
                report()
        except KeyboardInterrupt:
            report(every=True)  # what finished is on its way to the log: make it durable, and say so
            raise
    report(every=True)
    return SeriesResult(series_id, tuple(MatchResult(r.match_id, r.seats, r.outcome) for r in results), places)
