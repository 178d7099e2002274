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

from matchlog.engines import game as registered
from matchlog.engines import get as get_engine
from matchlog.engines import parse_options
from matchlog.engines.chance import ChanceSource, commitment, seed_for
from matchlog.engines.plugin import resolve
from matchlog.events import (
    ChanceCommitted,
    ChanceRevealed,
    Duel,
    Event,
    MatchStarted,
    Outcome,
    Record,
    Seat,
    Series,
    UnknownMatch,
    UsageError,
    uuid7,
)
from matchlog.store import Store

from . import backgammon, davinci, fish
from .calls import DEFAULT_TIMEOUT, Channel
from .channel import channel_for, close_players
from .generic import run_generic
from .match import MemoryRecorder, Recorder, Referee, Resumption, StoreRecorder, ctrl_c_deferred
from .players import is_builtin, make_player, runs_unconfined, seats_from_specs, seats_taken_by
from .porrinha import PorrinhaProtocol
from .sandbox import Limits

__all__ = [
    "DEFAULT_TIMEOUT",
    "RUNNERS",
    "MatchResult",
    "SeriesResult",
    "play_match",
    "play_series",
    "resume_match",
    "runner",
]

#: How many finished matches of a series may still be on their way to the log.
_IN_FLIGHT = 32

Runner = Callable[[Referee, Sequence[Channel], random.Random], object]

#: How each of our games drives its players through a match: (referee, player calls, chance's RNG).
RUNNERS: dict[str, Runner] = {
    "porrinha": lambda referee, calls, rng: referee.run(PorrinhaProtocol(calls)),
    "backgammon": backgammon.referee_match,
    "davinci": davinci.run_match,
    "fish": fish.run_match,
}


def runner(game: str) -> Runner:
    """How `game`'s players are driven through a match: ours by their own protocol, a plugin's by
    the protocol it brings (its `referee`), else by the generic protocol (`referee.generic`).

    Raises:
        UsageError: no such game, or a game matchlog records but does not referee (a tournament's
            record) (`usage.game`).
    """
    if game in RUNNERS:
        return RUNNERS[game]
    found = registered(game)
    if found.spec.tournament:
        raise UsageError(f"matchlog cannot referee {game}: it is the record of a tournament", code="usage.game")
    if found.referee is not None:
        return resolve(found.referee)
    return run_generic(found)


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
    seed: int | bytes | None = None,
    on_event: Callable[[Event, Any], None] | None = None,
    wait: bool = True,
    match_id: UUID | None = None,
    position: str | None = None,
    duel: Duel | None = None,
) -> MatchResult:
    """Referee one match between `players` (seated as `seats`) and record it.

    Built-in players are called directly; user players run under `timeout` seconds per call, in
    this process or, for a `ChildPlayer`, in its own.
    `seed` seeds chance (dice, shuffles, boards): a number to derive the seed from, or the 32
    bytes of the seed itself; without one the seed is secret until the match ends. Either way
    the referee commits to it first and reveals it at the end (`engines.chance`).
    `position` starts the match from a described position instead of the game's start, in the
    game's notation (see each engine's `start`). `duel` tags the match with its place in a duel.
    With `wait` (the default) it returns once the match is durable; without, the caller waits on
    the recorder (`MatchResult.recorder.wait()`).

    Raises:
        UsageError: a bad game, option, position or table size.
        StoreError: the log refused an append (the match stops there).
    """
    engine = get_engine(game)
    spec = engine.spec
    spec.check_players(len(seats))
    full_options = msgspec.to_builtins(parse_options(spec, options))
    started = MatchStarted(
        game=game, options=full_options, seats=tuple(seats), series=series, position=position, duel=duel
    )
    match_id = match_id or uuid7()
    if recorder is None:
        recorder = StoreRecorder(store, match_id) if store is not None else MemoryRecorder()
    chance = ChanceSource(seed if isinstance(seed, bytes) else seed_for(seed)) if spec.chance else None
    rng = chance or random.Random(seed)
    return _referee(
        started,
        seats,
        players,
        recorder,
        match_id=match_id,
        timeout=timeout,
        chance=chance,
        rng=rng,
        on_event=on_event,
        wait=wait,
    )


def resume_match(
    store: Store,
    match: UUID | str,
    specs: Sequence[str],
    *,
    seed: int | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    on_event: Callable[[Event, Any], None] | None = None,
    players: Sequence[object] | None = None,
    in_process: bool = False,
    limits: Limits | None = None,
) -> MatchResult:
    """Play on, to its end, a match that has not ended (after an arbiter's undo, in a fork, after a
    crash), from the state its log folds to (its effective history), with the players `specs`
    taking its seats in order (`players`, when given, are those specs' player objects, built by
    the caller); the seats keep their names. A user's class plays in a child process of its own
    (under `limits`) unless `in_process`.

    The referee records `match.resumed` with the players, then, for a game with chance, commits to
    a fresh seed (derived from `seed` when given, like the players' choices) and reveals it at the
    end, with the seeds of earlier segments a fork's origin revealed, so the audit re-derives them.

    Raises:
        UnknownMatch: no such match.
        UsageError: the match has ended, matchlog does not referee its game, or the players do not
            fit its seats.
        ConcurrencyError: the match changed while it was being picked up.
        StoreError: the log refused an append.
    """
    from matchlog.replay.fold import effective, engine_of  # replay reads the log back; nothing there imports us

    records = store.read(match)
    match_id = records[0].match_id
    engine = engine_of(records)
    started = records[0].event
    assert isinstance(started, MatchStarted)
    status = store.info(match_id).status
    if status != "running":
        raise UsageError(
            f"match {match_id} has ended ({status}): fork it (matchlog fork --at) to play on from before its end",
            code="usage.ended",
        )
    runner(started.game)
    seats = seats_taken_by(started.game, started.seats, specs)
    base = random.Random(seed)
    player_seeds = [base.randrange(2**63) for _ in seats]
    if players is not None and len(players) != len(seats):
        raise UsageError(f"{len(players)} player objects for {len(seats)} seats", code="usage.players")
    chance = ChanceSource(seed_for(None if seed is None else base.randrange(2**63))) if engine.spec.chance else None
    recorder = StoreRecorder(store, match_id)
    recorder.next_seq = records[-1].seq + 1
    resumption = Resumption(
        history=tuple(effective(records)[1:]),
        last_seq=records[-1].seq,
        players=tuple(seat.player for seat in seats),
        seeds=_seeds_revealed_upstream(store, records),
        unconfined=tuple(
            index
            for index, seat in enumerate(seats)
            if runs_unconfined(started.game, seat.player, in_process=in_process, limits=limits)
        ),
    )
    made: list[object] = []
    try:
        if players is None:
            for seat, number in zip(seats, player_seeds, strict=True):
                rng = random.Random(number)
                made.append(make_player(started.game, seat.player, rng, in_process=in_process, limits=limits))
            players = made
        return _referee(
            started,
            seats,
            players,
            recorder,
            match_id=match_id,
            timeout=timeout,
            chance=chance,
            rng=chance or random.Random(base.randrange(2**63)),
            on_event=on_event,
            wait=True,
            resumption=resumption,
        )
    finally:
        close_players(made)  # the players this made (a caller closes its own)


def _seeds_revealed_upstream(store: Store, records: Sequence[Record]) -> tuple[bytes, ...]:
    """Seeds this match committed to without revealing them that its origins (a fork's source, and
    theirs) revealed: public already, so the match may reveal them too and be audited alone."""
    unrevealed = {r.event.commitment for r in records if isinstance(r.event, ChanceCommitted)}
    unrevealed -= {_commitment_of(r.event.seed) for r in records if isinstance(r.event, ChanceRevealed)}
    found: list[bytes] = []
    origin = records[0].event.origin  # type: ignore[attr-defined]
    while unrevealed and origin is not None:
        try:
            upstream = store.read(origin.match_id)
        except UnknownMatch:
            break
        for record in upstream:
            if isinstance(record.event, ChanceRevealed):
                seed = bytes.fromhex(record.event.seed) if _is_hex(record.event.seed) else b""
                if seed and commitment(seed) in unrevealed:
                    unrevealed.discard(commitment(seed))
                    found.append(seed)
        origin = upstream[0].event.origin  # type: ignore[attr-defined]
    return tuple(found)


def _commitment_of(seed: str) -> str | None:
    return commitment(bytes.fromhex(seed)) if _is_hex(seed) else None


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


def _referee(
    started: MatchStarted,
    seats: Sequence[Seat],
    players: Sequence[object],
    recorder: Recorder,
    *,
    match_id: UUID,
    timeout: float | None,
    chance: ChanceSource | None,
    rng: random.Random,
    on_event: Callable[[Event, Any], None] | None,
    wait: bool,
    resumption: Resumption | None = None,
) -> MatchResult:
    """Play a match (a new one, or one picked up) with its game's runner, to its end."""
    game = started.game
    engine = get_engine(game)
    if game == "backgammon":  # before anything is recorded
        backgammon.refuse_match_play(started.options)
    calls = [
        channel_for(player, game, index, None if is_builtin(game, seat.player) else timeout)
        for index, (seat, player) in enumerate(zip(seats, players, strict=True))
    ]
    with ctrl_c_deferred():  # a Ctrl-C waits for the step in progress to be whole in the log
        referee = Referee(
            engine, started, recorder, match_id=match_id, on_event=on_event, chance=chance, resumption=resumption
        )
        try:
            runner(game)(referee, calls, rng)
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
    position: str | None = None,
    in_process: bool = False,
    limits: Limits | None = None,
) -> SeriesResult:
    """Build the players once and play `games` matches with them, in the same seats (each from
    `position`, when given). A user's class plays in a child process of its own (under `limits`)
    unless `in_process`. Each match is given to `on_match`, and counted, once it is durable (in the
    order played); on Ctrl-C the match in play is ended as abandoned, those finished are made
    durable and given, and the KeyboardInterrupt goes on.

    Raises:
        UsageError: a bad player spec, game, option or count.
        StoreError: the log refused an append.
    """
    if games < 1:
        raise UsageError(f"--games must be at least 1, not {games}", code="usage.games")
    runner(game)
    seats = seats_from_specs(game, specs, in_process=in_process, limits=limits)
    base = random.Random(seed)
    players: list[object] = []
    try:
        for seat in seats:
            rng = random.Random(base.randrange(2**63))
            players.append(make_player(game, seat.player, rng, in_process=in_process, limits=limits))
        return _play_series(game, seats, players, games, options, base, store, timeout, on_match, position)
    finally:
        close_players(players)


def _play_series(
    game: str,
    seats: list[Seat],
    players: list[object],
    games: int,
    options: dict[str, Any] | None,
    base: random.Random,
    store: Store | None,
    timeout: float | None,
    on_match: Callable[[MatchResult], None] | None,
    position: str | None,
) -> SeriesResult:
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
                        position=position,
                    )
                )
                report()
        except KeyboardInterrupt:
            report(every=True)  # what finished is on its way to the log: make it durable, and say so
            raise
    report(every=True)
    return SeriesResult(series_id, tuple(MatchResult(r.match_id, r.seats, r.outcome) for r in results), places)
