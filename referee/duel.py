"""Duels: two players in pairs of games, until a number of pairs is played or a sequential test
decides which is the better.

Each pair plays the same two players with the seats swapped (for a table of K seats, K games
with the first player rotated through every seat and the second filling the others); in a
duplicate duel every game of a pair draws its chance from one committed seed, so each player
meets the dice, deals and boards the other met, and the players at a seat draw their own
randomness (a random tie-break, a handicap's blunders) from one seed per seat and pair, so that
two players that decide alike play the same game. The games are ordinary matches of the log,
tagged with the duel and the pair (`events.Duel`), played by the tournament's pools (worker
processes here, or a Ray cluster) and recorded by its writer, so Ctrl-C, kills and verification
work as they do for tournaments. The test is evaluated again as each pair completes; the report
at the end is the log's (`replay.duels`), computed again from what was recorded. A duel stopped
before it decided (Ctrl-C, a kill) resumes: the games missing from its pairs are played with
their pairs' chance, then new pairs. A game the duel leaves unfinished (in play when the test
decided, or at Ctrl-C) reveals its seed where that helps nobody (`_DuelWriter`), so that `audit`
re-derives its draws.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import get as get_engine
from matchlog.engines import parse_options
from matchlog.engines.chance import commitment, seed_for
from matchlog.events import ChanceCommitted, ChanceRevealed, Duel, Sprt, UsageError, decode, encode, now_us, uuid7
from matchlog.events.duel import PAIRS_MAX
from matchlog.replay.duels import DuelReport
from matchlog.replay.pairs import options_text
from matchlog.replay.sprt import Estimate, estimate, llr

from .play import DEFAULT_TIMEOUT, runner
from .players import seats_from_specs
from .sandbox import Limits
from .tournament import DuelPlan, Pool, Setup, _chain_findings, _Processes, _record, _Writer, cores

__all__ = ["DEFAULT_SPRT_PAIRS", "DuelProgress", "DuelRun", "rotations", "run_duel"]

#: Pairs a duel plays without --pairs: under a test, at most this many; else exactly 100.
DEFAULT_SPRT_PAIRS = 10_000
_DEFAULT_PAIRS = 100


class DuelProgress(msgspec.Struct, frozen=True, kw_only=True):
    """Where a running duel stands after a pair completes."""

    pairs: int
    llr: float | None
    estimate: Estimate
    verdict: str | None


class DuelRun(msgspec.Struct, frozen=True, kw_only=True):
    """What one run of a duel played, and the duel's report from the log after it."""

    duel_id: str
    report: DuelReport
    played: int
    unfinished: int
    seconds: float
    findings: tuple[Any, ...]
    interrupted: bool
    failures: tuple[str, ...] = ()


def rotations(seats: int) -> tuple[tuple[int, ...], ...]:
    """The seatings of a pair: in game g, seat i holds roster player (i - g) mod K, so the first
    player sits at seat g."""
    return tuple(tuple((i - g) % seats for i in range(seats)) for g in range(seats))


def run_duel(
    game: str,
    first: str,
    second: str,
    *,
    store: Any,
    pairs: int | None = None,
    sprt: Sprt | None = None,
    seats: int | None = None,
    duplicate: bool = True,
    options: dict[str, Any] | None = None,
    positions: Sequence[str] = (),
    seed: int | None = None,
    jobs: int | None = None,
    force_jobs: bool = False,
    pool: Callable[[Setup], Pool] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    in_process: bool = False,
    limits: Limits | None = None,
    resume: str | None = None,
    on_pair: Callable[[DuelProgress], None] | None = None,
) -> DuelRun:
    """Play a duel of `first` against `second` (player specs) and record every game; with
    `resume`, play on the duel of that id. Returns once the pairs are played, the test decided,
    or Ctrl-C (finished pairs are kept; games in play end as abandoned).

    Raises:
        UsageError: bad players, game, option, seats, pairs or jobs; a resume that does not fit
            the duel it names, or of a duel already decided or complete.
        UnknownMatch: (resume) no such duel.
        StoreError: the log refused the duel's events.
    """
    engine = get_engine(game)
    runner(game)
    spec = engine.spec
    table = seats or max(2, spec.min_players)
    if table < 2:
        raise UsageError("a duel needs a table of at least 2 seats", code="usage.seats")
    spec.check_players(table, code="usage.seats")
    if pairs is not None and not 1 <= pairs <= PAIRS_MAX:
        raise UsageError(f"--pairs is 1 to {PAIRS_MAX}, not {pairs}", code="usage.pairs")
    if sprt is not None:
        sprt.check(table)  # (normalised Elo's bounds depend on the sets' size)
    roster = seats_from_specs(game, [first] + [second] * (table - 1), in_process=in_process, limits=limits)
    full_options = msgspec.to_builtins(parse_options(spec, options))
    jobs = jobs or 1
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}", code="usage.jobs")
    if jobs > cores() and not force_jobs and pool is None:
        raise UsageError(
            f"--jobs {jobs} is more than the {cores()} cores here; give --force-jobs to start them anyway",
            code="usage.jobs",
        )
    master = seed if seed is not None else random.SystemRandom().randrange(2**63)
    earlier: DuelReport | None = None
    if resume is not None:
        earlier = store.duel(resume)
        sprt, duplicate = _fits(earlier, game, roster, table, sprt, duplicate)
        if options and full_options != earlier.options:
            shown = options_text(earlier.options) or "no options"
            raise UsageError(
                f"duel {earlier.duel_id} is played under {shown}: resume it with those, or give no -o",
                code="usage.resume",
            )
        full_options = dict(earlier.options)  # (a duel is one game: its first game fixed the options)
    # A resumed duel plays on to the pairs it planned, unless told otherwise.
    planned = pairs or (earlier.pairs_planned if earlier is not None else 0)
    planned = planned or (DEFAULT_SPRT_PAIRS if sprt is not None else _DEFAULT_PAIRS)
    duel_id = earlier.duel_id if earlier is not None else str(uuid7())
    tag = Duel(id=duel_id, pair=0, game=0, games=table, duplicate=duplicate, sprt=sprt, pairs=planned)
    slots, seeds, scored = _open_slots(earlier, engine.spec.chance and duplicate, seed, master)
    last = earlier.last_pair if earlier is not None else 0
    new_pairs = max(0, planned - last)
    total = len(slots) + new_pairs * table
    if total == 0:
        raise UsageError(
            f"duel {duel_id} has all of its {planned} pairs: give --pairs to play more", code="usage.pairs"
        )
    plan = DuelPlan(duel=tag, slots=slots, first_pair=last + 1, seeds=seeds, positions=tuple(positions))
    setup = Setup(
        game,
        tuple(roster),
        full_options,
        timeout,
        master,
        duel_id,
        total,
        rotations(table),
        in_process,
        limits,
        duel=plan,
    )
    writer = _DuelWriter(store, setup, shared_chance=engine.spec.chance and duplicate)
    tally = _Tally(writer, plan, table, sprt, earlier, scored, on_pair)
    began = time.monotonic()
    interrupted, unfinished = _record(
        pool(setup) if pool is not None else _Processes(setup, jobs), writer, total, None, stop_when=tally.decided
    )
    seconds = time.monotonic() - began
    match_ids = [m for m, count in writer.sent.items() if count]
    findings = _chain_findings(store, match_ids)
    return DuelRun(
        duel_id=duel_id,
        report=store.duel(duel_id),
        played=len(writer.places),
        unfinished=len(unfinished),
        seconds=seconds,
        findings=findings,
        interrupted=interrupted,
        failures=tuple(writer.failures),
    )


def _fits(
    earlier: DuelReport, game: str, roster: Sequence[Any], table: int, sprt: Sprt | None, duplicate: bool
) -> tuple[Sprt | None, bool]:
    """The test and chance of the duel being resumed, once the players and table are its own.

    Raises:
        UsageError: the duel was played otherwise, or has decided.
    """
    given = (game, roster[0].name, roster[0].player, roster[1].name, roster[1].player, table)
    recorded = (earlier.game, earlier.players[0], earlier.strategies[0], earlier.players[1], earlier.strategies[1])
    if given != (*recorded, earlier.seats):
        raise UsageError(
            f"duel {earlier.duel_id} is {earlier.game} between {earlier.players[0]} ({earlier.strategies[0]}) and "
            f"{earlier.players[1]} ({earlier.strategies[1]}) at {earlier.seats} seats: resume it with those",
            code="usage.resume",
        )
    if sprt is not None and sprt != earlier.sprt:
        raise UsageError(f"duel {earlier.duel_id} runs another test ({earlier.sprt})", code="usage.resume")
    if earlier.decided_at is not None:
        raise UsageError(f"duel {earlier.duel_id} has decided ({earlier.verdict})", code="usage.resume")
    if not duplicate and earlier.duplicate:
        raise UsageError(f"duel {earlier.duel_id} is a duplicate duel", code="usage.resume")
    return earlier.sprt, earlier.duplicate


def _open_slots(
    earlier: DuelReport | None, shared_chance: bool, given_seed: int | None, master: int
) -> tuple[tuple[tuple[int, int], ...], dict[int, bytes], dict[int, dict[int, float]]]:
    """The games missing from the pairs begun before (those that can be played with their pair's
    chance), the seeds they need, and the scores of the games their pairs have."""
    if earlier is None:
        return (), {}, {}
    slots: list[tuple[int, int]] = []
    seeds: dict[int, bytes] = {}
    scored: dict[int, dict[int, float]] = {}
    for pair in earlier.open_pairs:
        if shared_chance and pair.commitment is not None:
            revealed = _seed_bytes(pair.seed)
            derived = seed_for(random.Random(f"{master}:pair:{pair.pair}").randrange(2**63))
            if revealed is not None and commitment(revealed) == pair.commitment:
                seeds[pair.pair] = revealed
            elif given_seed is None or commitment(derived) != pair.commitment:
                continue  # nobody knows the pair's seed: its games cannot share its chance
        slots.extend((pair.pair, g) for g in pair.missing)
        scored[pair.pair] = dict(pair.scores)
    return tuple(slots), seeds, scored


def _seed_bytes(text: str | None) -> bytes | None:
    try:
        return None if text is None else bytes.fromhex(text)
    except ValueError:
        return None


class _DuelWriter(_Writer):
    """The tournament's writer, which also reveals the chance seed of a game it ends unfinished
    wherever the seed can help nobody, so that `audit` re-derives every draw of the game: once the
    duel has decided (its pairs are never played on), and always in a duplicate duel, where a
    pair's seed is no secret from the pair's other games anyway (the first game to end reveals it,
    and the others replay its draws), so a resumed duel can play the pair's missing games from it.
    A fresh-chance game's own seed stays secret until the duel decides."""

    def __init__(self, store: Any, setup: Setup, *, shared_chance: bool) -> None:
        super().__init__(store)
        self.setup = setup
        self.shared_chance = shared_chance
        self.over = False  # set once the test decides
        self.committed: dict[UUID, str] = {}  # match id -> the commitment its referee recorded

    def queue(self, match_id: UUID, events: list[tuple[str, int, bytes]]) -> None:
        first = self.sent.get(match_id, 0)
        for _, _, payload in events[: max(0, 2 - first)]:  # a commitment follows the start
            event = decode(payload)
            if isinstance(event, ChanceCommitted):
                self.committed[match_id] = event.commitment
        super().queue(match_id, events)

    def abandon(self, match_id: UUID, reason: str) -> None:
        number = self.running.get(match_id)
        promised = self.committed.get(match_id)
        if number is not None and promised is not None and (self.over or self.shared_chance):
            seed = self.setup.randomness(number)[1]["seed"]
            secret = seed if isinstance(seed, bytes) else seed_for(seed)
            if commitment(secret) == promised:  # never reveal what the game did not commit to
                self.queue(match_id, [(str(uuid7()), now_us(), encode(ChanceRevealed(seed=secret.hex())))])
        super().abandon(match_id, reason)


class _Tally:
    """The test as pairs complete, from the writer's finished matches: the stop condition of the
    writer loop, and the progress it reports."""

    def __init__(
        self,
        writer: _DuelWriter,
        plan: DuelPlan,
        table: int,
        sprt: Sprt | None,
        earlier: DuelReport | None,
        scored: dict[int, dict[int, float]],
        on_pair: Callable[[DuelProgress], None] | None,
    ) -> None:
        self.writer, self.plan, self.table, self.sprt, self.on_pair = writer, plan, table, sprt, on_pair
        self.grid = 2 * table * (table - 1)
        self.counts = list(earlier.counts) if earlier is not None else [0] * (self.grid + 1)
        self.scores: dict[int, dict[int, float]] = {p: dict(s) for p, s in scored.items()}
        self.seen: set[int] = set()

    def decided(self) -> str | None:
        """Score the matches finished since the last call; a reason to stop once the test decides."""
        verdict = None
        for number in sorted(set(self.writer.places) - self.seen):
            self.seen.add(number)
            pair, game = self.plan.slot(number)
            places = self.writer.places[number]
            others = [p for seat, p in enumerate(places) if seat != game]
            mine = places[game]
            score = sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)
            games = self.scores.setdefault(pair, {})
            games.setdefault(game, score)
            if len(games) == self.table:
                self.counts[round(sum(games.values()) / self.table * self.grid)] += 1
                del self.scores[pair]
                verdict = verdict or self._report()
        if verdict is None:
            return None
        self.writer.over = True  # the duel is over: nothing will draw from its seeds again
        return f"the duel decided: {verdict} accepted"

    def _report(self) -> str | None:
        value = None
        if self.sprt is not None:
            value = llr(self.counts, self.sprt.elo0, self.sprt.elo1, model=self.sprt.model, games_per_set=self.table)
        verdict = None if value is None or self.sprt is None else self.sprt.verdict(value)
        if self.on_pair is not None:
            self.on_pair(
                DuelProgress(
                    pairs=sum(self.counts),
                    llr=value,
                    estimate=estimate(self.counts, games_per_set=self.table),
                    verdict=verdict,
                )
            )
        return verdict
