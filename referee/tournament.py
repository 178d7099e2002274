"""Round-robin tournaments: matches played by a pool of workers, one writer recording them all.

Every table of K players (every pairing when K is 2) plays in every seat order, the games spread
evenly over those arrangements. Workers play with fresh player objects per match and stream each
match's events back as they go; this process is the log's one writer and appends them in bulk
transactions, each event judged on the way by the log's clerk (`replay.clerk`), as every write is:
a worker is another process (or a cluster's task), and what it sends is taken only if the rules
allow it. Ctrl-C stops cleanly: what the workers sent is stored, every match that had started
but not finished is ended as abandoned ("interrupted"), and the chains are verified.

Where the matches are played is a `Pool`: worker processes on this machine (`--jobs`, here), or
tasks on a Ray cluster (`matchlog.cluster`). Every pool plays each match with `play_numbered` and
sends the writer the same messages, so the writer loop, the progress, the standings and the
Ctrl-C handling are one piece of code whatever plays the games.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import multiprocessing
import os
import queue
import random
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol
from uuid import UUID

import msgspec

from matchlog.engines import get as get_engine
from matchlog.engines.figures import FIGURES_VERSION, Figure
from matchlog.events import (
    DecodeError,
    Draft,
    Duel,
    IllegalAction,
    MatchEnded,
    MatchlogError,
    MatchStarted,
    Outcome,
    Seat,
    Series,
    UsageError,
    decode,
    encode,
    now_us,
    uuid7,
    uuid_from_int,
)
from matchlog.replay.clerk import Clerk
from matchlog.store import Figures, Finding, Store

from .channel import close_players
from .play import DEFAULT_TIMEOUT, play_match, runner
from .players import make_player, seats_from_specs
from .sandbox import Limits

__all__ = [
    "DuelPlan",
    "Pool",
    "Setup",
    "Standing",
    "TournamentResult",
    "arrangements",
    "cores",
    "play_numbered",
    "ratings",
    "run_tournament",
    "starting_processes",
]

#: Events a worker gathers before sending them.
_CHUNK = 500
#: How long workers have to stop before they are terminated, and then killed.
_STOP_SECONDS = 15.0
_TERMINATE_SECONDS = 3.0
#: The writer appends when it holds this many events, or this many seconds have passed.
_BATCH_EVENTS = 20_000
_BATCH_SECONDS = 0.2

_encode = msgspec.msgpack.Encoder().encode
_decode_events = msgspec.msgpack.Decoder(list[tuple[str, int, bytes]]).decode


class Standing(msgspec.Struct, frozen=True):
    """One player's results over the tournament."""

    name: str
    player: str
    matches: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    win_low: float
    win_high: float
    mean_place: float
    rating: float


class TournamentResult(msgspec.Struct, frozen=True):
    """What a tournament played, recorded and found."""

    tournament_id: str
    game: str
    finished: int
    unfinished: int
    events: int
    seconds: float
    standings: tuple[Standing, ...]
    findings: tuple[Finding, ...]
    interrupted: bool
    failures: tuple[str, ...] = ()

    @property
    def rate(self) -> float:
        return self.finished / self.seconds if self.seconds else 0.0


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def arrangements(players: int, seats: int) -> list[tuple[int, ...]]:
    """Every table of `seats` players out of `players`, in every seat order."""
    return [order for table in itertools.combinations(range(players), seats) for order in itertools.permutations(table)]


# -- the workers -------------------------------------------------------------------------------


class _Stopped(Exception):
    """The writer asked the workers to stop."""


class _QueueRecorder:
    """A worker's recorder: events go to the writer process in chunks; it also notices a stop."""

    def __init__(self, results: Any, stop: Any, number: int, match_id: UUID) -> None:
        self.results = results
        self.stop = stop
        self.parent = os.getppid()
        self.number = number
        self.match_id = match_id
        self.sent = 0
        self.buffer: list[Draft] = []
        self.steps = 0

    def record(self, drafts: list[Draft]) -> None:
        self.buffer.extend(drafts)
        if len(self.buffer) >= _CHUNK:
            self.flush()
        self.steps += 1
        if any(isinstance(d.event, MatchEnded) for d in drafts):
            return  # the match has ended: it goes to the writer whole, never to be ended again
        if self.steps % 16 == 0 and (self.stop.is_set() or os.getppid() != self.parent):
            self.flush()
            raise _Stopped  # asked to stop, or the writer is gone: nobody would record the rest

    def flush(self) -> None:
        if self.buffer:
            payload = _encode([(str(d.event_id), d.at_us, encode(d.event)) for d in self.buffer])
            self.results.put(("events", self.number, self.match_id.bytes, self.sent, payload))
            self.sent += len(self.buffer)
            self.buffer = []

    def project(self, last_seq: int, figures: list[Figure]) -> None:
        self.flush()  # the figures follow the match's last events
        self.results.put(("figures", self.number, self.match_id.bytes, last_seq, figures))

    def wait(self) -> None:
        self.flush()


class DuelPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What makes a tournament's matches the games of a duel (`referee.duel`): match `number` is
    game `game` of pair `pair` (`slot`), seated by the `game`-th arrangement (the seats rotated),
    tagged with `duel` (its pair and game filled in). In a duplicate duel every game of a pair
    draws its chance from the pair's seed: `seeds[pair]` where a game of the pair already revealed
    it, else one derived from the tournament's seed and the pair alone; and the players at each
    seat draw their own randomness from one source for the pair (`Setup.randomness`)."""

    duel: Duel
    slots: tuple[tuple[int, int], ...] = ()  # (pair, game) played first: those missing from earlier pairs
    first_pair: int = 1  # the pair after the slots
    seeds: dict[int, bytes] = {}
    positions: tuple[str, ...] = ()  # pair p starts from positions[(p - 1) % len], when given

    def slot(self, number: int) -> tuple[int, int]:
        """(pair, game) of match `number` (0-based)."""
        if number < len(self.slots):
            return self.slots[number]
        pair, game = divmod(number - len(self.slots), self.duel.games)
        return self.first_pair + pair, game


class Setup(msgspec.Struct, frozen=True):
    """What a worker needs to play any match of a tournament (sent once to each worker or task)."""

    game: str
    seats: tuple[Seat, ...]  # the roster, in sign-up order
    options: dict[str, Any]
    timeout: float | None
    seed: int
    tournament_id: str
    total: int  # matches in all
    orders: tuple[tuple[int, ...], ...]  # every arrangement (`arrangements`), taken in turn
    in_process: bool = False  # a user's class plays in this process, not a child of its own
    limits: Limits | None = None  # what a child player may use
    duel: DuelPlan | None = None  # the matches are a duel's games

    def order(self, number: int) -> tuple[int, ...]:
        """The seat order of match `number` (0-based): the arrangements are taken in turn (in a
        duel, the game's place in its pair picks it)."""
        if self.duel is not None:
            return self.orders[self.duel.slot(number)[1]]
        return self.orders[number % len(self.orders)]

    def randomness(self, number: int) -> tuple[list[random.Random], dict[str, Any]]:
        """The random sources of match `number`'s players, seat by seat, and its plan (`plan`):
        both depend only on the tournament's seed and the number, so the writer can name the seed
        of a match a worker left unfinished."""
        rng = random.Random(f"{self.seed}:{number}")
        players = [random.Random(rng.randrange(2**63)) for _ in self.order(number)]
        if self.duel is not None and self.duel.duel.duplicate:
            # A duplicate pair shares its seats' randomness as it shares its chance (common random
            # numbers): whoever sits at a seat draws what the players there drew in the pair's other
            # games, so two players that decide alike play alike, and only their differences part
            # the games.
            pair = self.duel.slot(number)[0]
            players = [random.Random(f"{self.seed}:pair:{pair}:seat:{seat}") for seat in range(len(players))]
        return players, self.plan(number, rng)

    def plan(self, number: int, rng: random.Random) -> dict[str, Any]:
        """How match `number` is played besides its seats: its chance seed, series, duel tag and
        position (`rng` is the match's own, from which a tournament match draws its seed)."""
        seed = rng.randrange(2**63)
        if self.duel is None:
            return {"seed": seed, "series": Series(self.tournament_id, number + 1, self.total)}
        plan = self.duel
        pair, game = plan.slot(number)
        if plan.duel.duplicate:  # every game of the pair: one seed
            seed = plan.seeds.get(pair) or random.Random(f"{self.seed}:pair:{pair}").randrange(2**63)
        games = plan.duel.games
        return {
            "seed": seed,
            "series": Series(plan.duel.id, (pair - 1) * games + game + 1, plan.duel.pairs * games),
            "duel": msgspec.structs.replace(plan.duel, pair=pair, game=game),
            "position": plan.positions[(pair - 1) % len(plan.positions)] if plan.positions else None,
        }


def play_numbered(setup: Setup, number: int, results: Any, stop: Any) -> bool:
    """Play match `number` (0-based) of the tournament, putting the writer's messages into
    `results` (anything with `put`) as it goes; `stop.is_set()` is checked every few steps.

    Returns False when the writer asked to stop: what was played is sent, and the match, not ended,
    is the writer's to end as interrupted. A match that cannot be played is sent as "failed".
    The seed of a match depends only on the tournament's seed and its number, so a match that is
    played again (a Ray task rerun after its node died) is the same match.
    """
    order = setup.order(number)
    table = [setup.seats[i] for i in order]
    rngs, plan = setup.randomness(number)
    match_id = uuid7()
    recorder = _QueueRecorder(results, stop, number, match_id)
    results.put(("start", number, match_id.bytes, list(order)))
    players: list[object] = []
    try:
        for seat, rng_of_seat in zip(table, rngs, strict=True):
            players.append(
                make_player(setup.game, seat.player, rng_of_seat, in_process=setup.in_process, limits=setup.limits)
            )
        result = play_match(
            setup.game,
            table,
            players,
            options=setup.options,
            recorder=recorder,
            timeout=setup.timeout,
            match_id=match_id,
            **plan,
        )
    except _Stopped:
        return False  # the writer ends the match as interrupted
    except Exception as error:  # the match could not be played: say so, and carry on
        recorder.flush()
        results.put(("failed", number, match_id.bytes, f"{type(error).__name__}: {error}"))
        return True
    finally:
        close_players(players)  # each match's child players end with it
    results.put(("end", number, match_id.bytes, list(result.outcome.places)))
    return True


def _worker(tasks: Any, results: Any, stop: Any, setup: Setup) -> None:
    """Play the match numbers handed out until told to stop; Ctrl-C is the writer's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    while not stop.is_set():
        try:
            number = tasks.get(timeout=0.5)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return  # the writer is gone: nobody would record the match
            continue
        if number is None or not play_numbered(setup, number, results, stop):
            return


# -- where matches are played ------------------------------------------------------------------


class Pool(Protocol):
    """Where a tournament's matches are played: worker processes here (`--jobs`), or tasks on a
    cluster (`matchlog.cluster`). Every pool plays each match with `play_numbered` and hands the
    writer the messages it puts, in the order it put them for each match."""

    def start(self) -> None:
        """Start the workers (the writer holds Ctrl-C back meanwhile)."""

    def hand_out(self, done: int) -> None:
        """Keep enough matches queued, given how many have finished; never more than the total."""

    def receive(self, timeout: float) -> list[tuple[Any, ...]] | None:
        """The messages that arrived within `timeout` seconds ([]: none yet); None when every worker
        is gone and nothing more will come."""

    def stop(self) -> Iterator[tuple[Any, ...]]:
        """Ask the workers to stop at their next step, and yield what they send until they have
        (a worker that does not stop in time is ended, and loses what it had not sent)."""

    def shortfall(self, missing: int, games: int) -> str:
        """Why `missing` of `games` matches were not played, though nobody stopped the tournament."""


class _Processes:
    """Worker processes on this machine, fed match numbers through a queue (the `--jobs` pool)."""

    def __init__(self, setup: Setup, jobs: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.tasks = context.Queue()
        self.results = context.Queue()
        self.stopping = context.Event()
        self.workers = [
            context.Process(target=_worker, args=(self.tasks, self.results, self.stopping, setup), daemon=True)
            for _ in range(jobs)
        ]
        self.games = setup.total
        self.handed_out = 0

    def start(self) -> None:
        for worker in self.workers:
            worker.start()

    def hand_out(self, done: int) -> None:
        """Keep a few numbers queued per worker (not all of them: a stopped run must not wait on them)."""
        while self.handed_out < self.games and self.handed_out - done < 2 * len(self.workers):
            self.tasks.put(self.handed_out)
            self.handed_out += 1
            if self.handed_out == self.games:
                for _ in self.workers:
                    self.tasks.put(None)

    def receive(self, timeout: float) -> list[tuple[Any, ...]] | None:
        try:
            return [self.results.get(timeout=timeout)]
        except queue.Empty:
            if not any(worker.is_alive() for worker in self.workers) and self.results.empty():
                return None  # every worker is gone: what they did not finish is unfinished
            return []

    def stop(self) -> Iterator[tuple[Any, ...]]:
        workers, results = self.workers, self.results
        self.stopping.set()
        try:
            deadline = time.monotonic() + _STOP_SECONDS
            while any(w.pid is not None and w.is_alive() for w in workers) and time.monotonic() < deadline:
                try:
                    message = results.get(timeout=0.05)
                except (queue.Empty, EOFError, OSError):
                    continue
                yield message
            stragglers = [worker for worker in workers if worker.pid is not None and worker.is_alive()]
            while not stragglers:  # every worker has exited: what is left in the queue is whole
                try:
                    message = results.get(timeout=0.05)
                except (queue.Empty, EOFError, OSError):
                    break
                yield message
        finally:
            for worker in workers:
                if worker.pid is not None and worker.is_alive():
                    worker.terminate()  # a worker that ignores the stop loses what it had not sent
            _end(workers)
            # Nobody reads the queues any more: do not wait on them at exit.
            for channel in (self.tasks, results):
                channel.cancel_join_thread()
                channel.close()

    def shortfall(self, missing: int, games: int) -> str:
        codes = ", ".join(str(w.exitcode) for w in self.workers)
        return f"every worker stopped (exit codes {codes}) with {missing} of {games} matches not played"


def _end(workers: Sequence[Any]) -> None:
    """Wait for every started worker to end: terminated ones a moment, then killed."""
    deadline = time.monotonic() + _TERMINATE_SECONDS
    for worker in workers:
        if worker.pid is not None:
            worker.join(timeout=max(0.0, deadline - time.monotonic()))
    for worker in workers:
        if worker.pid is not None and worker.is_alive():
            worker.kill()
            worker.join()


# -- the writer --------------------------------------------------------------------------------


@contextlib.contextmanager
def starting_processes() -> Iterator[None]:
    """Ctrl-C held back while child processes start, and delivered as the block ends (unlike
    `match.ctrl_c_deferred`, which holds it only through a `held_ctrl_c` step). A KeyboardInterrupt
    between a child's start and the hand-over of its pickled arguments leaves it reading a pipe its
    parent closed (a traceback on the shared stderr). The press is recorded by a handler of our
    own, since Python runs handlers in the main thread whichever thread the kernel delivers to,
    and this thread blocks the signal too, so that the children started meanwhile inherit the
    block: a terminal's Ctrl-C to the whole group cannot kill one that is still importing either."""
    pressed: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
        installed = True
    except ValueError:  # not the main thread: Python delivers Ctrl-C elsewhere anyway
        previous, installed = None, False
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if installed:
            signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
            if pressed:
                signal.raise_signal(signal.SIGINT)  # to whatever handled it before: once


class _CtrlC:
    """Ctrl-C as a flag the tournament loop checks, not an exception: a KeyboardInterrupt raised
    at an arbitrary point could land in the middle of reading a worker's message from the queue
    and leave the pipe unreadable, so that stopping would hang."""

    def __init__(self) -> None:
        self.pressed = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> _CtrlC:
        try:
            self._previous = signal.signal(signal.SIGINT, self._press)
            self._installed = True
        except ValueError:  # not the main thread: KeyboardInterrupt stays as it is
            pass
        return self

    @contextlib.contextmanager
    def blocked(self) -> Iterator[None]:
        """Ctrl-C held back for a moment (`starting_processes`): processes started now inherit the
        block. A Ctrl-C meanwhile still counts, as the block ends."""
        if not self._installed:
            yield
            return
        with starting_processes():
            yield

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def _press(self, signum: int, frame: Any) -> None:
        self.pressed = True


class _Writer:
    """Appends what the workers send, in bulk transactions through the log's judge, and keeps the
    score. A worker is not trusted (a cluster's task could send anything): every event goes through
    the clerk's judged bulk path (`replay.clerk`), and a match whose events the judge refuses keeps
    what was taken before and ends as abandoned, the ruling in its end and in `failures`; nothing
    more of it is written, and the other matches of the batch are."""

    def __init__(self, store: Store) -> None:
        self.store = store
        # A log (`matchlog.open`: a file, a server) writes through its own clerk; a bare store gets one.
        self.judged: Any = Clerk(store) if isinstance(store, Store) else store
        self.refused: dict[UUID, str] = {}  # match id -> the ruling its events met
        self.pending: list[tuple[UUID, list[tuple[str, int, bytes]], int]] = []
        self.pending_events = 0
        self.flushed_at = time.monotonic()
        self.sent: dict[UUID, int] = {}  # match id -> events received so far (stored or pending)
        self.tables: dict[UUID, int] = {}  # match id -> its number of seats
        self.running: dict[UUID, int] = {}  # match id -> match number, until it ends
        self.numbers: dict[UUID, int] = {}  # match id -> match number
        self.orders: dict[int, tuple[int, ...]] = {}
        self.places: dict[int, tuple[int, ...]] = {}
        self.failures: list[str] = []
        self.events = 0
        self.figures: list[Figures] = []  # written once their matches' events are

    def take(self, message: tuple) -> bool:
        """Handle one worker message; True when it finished a match (played, or failed)."""
        kind, number, raw_id = message[0], message[1], message[2]
        match_id = uuid_from_int(int.from_bytes(raw_id, "big"))
        finished = False
        if kind == "start":
            self.running[match_id] = number
            self.numbers[match_id] = number
            self.orders[number] = tuple(message[3])
            self.tables[match_id] = len(message[3])
            self.sent[match_id] = 0
        elif match_id in self.refused:  # (ended with its ruling: nothing more of it is written)
            if kind in ("end", "failed"):
                self.running.pop(match_id, None)
                finished = True
        elif kind == "events":
            self.queue(match_id, _decode_events(message[4]))
        elif kind == "figures":
            self.figures.append(Figures(match_id, message[3], FIGURES_VERSION, tuple(map(tuple, message[4]))))
        elif kind == "end":
            self.running.pop(match_id, None)
            self.places[number] = tuple(message[3])
            finished = True
        elif kind == "failed":
            self.failures.append(f"match {number + 1}: {message[3]}")
            self.abandon(match_id, f"the match failed: {message[3]}")
            finished = True
        if self.pending_events >= _BATCH_EVENTS or time.monotonic() - self.flushed_at >= _BATCH_SECONDS:
            self.flush()
        return finished

    def queue(self, match_id: UUID, events: list[tuple[str, int, bytes]]) -> None:
        """Events (id, time, canonical JSON) to append after what was sent of the match."""
        self.pending.append((match_id, events, self.sent[match_id]))
        self.sent[match_id] += len(events)
        self.pending_events += len(events)

    def abandon(self, match_id: UUID, reason: str) -> None:
        """End a started match as abandoned, after whatever of it was sent."""
        self.running.pop(match_id, None)
        if not self.sent.get(match_id) or match_id in self.refused:
            return  # nothing of it reached the log, or it has ended with its ruling
        self.queue(match_id, [_abandonment(self.tables[match_id], reason)])

    def flush(self) -> None:
        """Hand the log's judge what was sent since the last flush, every match's batch at once;
        a batch it refuses (by the rules, or as no event) is left out, and its match ended with the
        ruling (`_refuse`).

        Raises:
            StoreError, ConcurrencyError: the log refused the write itself (nothing of it was written).
        """
        while self.pending:
            merged: dict[UUID, tuple[UUID, list[tuple[str, int, bytes]], int]] = {}
            for match_id, drafts, first in self.pending:  # a match's chunks arrive in order
                if match_id in merged:
                    merged[match_id][1].extend(drafts)
                else:
                    merged[match_id] = (match_id, list(drafts), first)
            taken = self.pending
            self.pending, self.pending_events = [], 0  # (a refusal queues its match's end here)
            try:
                self.events += self._write(list(merged.values()))
            except BaseException:
                # Kept to send again (a re-sent event is a no-op), but for what the judge refused:
                # the stop's last flush tries once more.
                kept = [entry for entry in taken if entry[0] not in self.refused]
                self.pending = kept + self.pending
                self.pending_events = sum(len(events) for _, events, _ in self.pending)
                raise
        if self.figures:
            self.store.put_figures([f for f in self.figures if f.match_id not in self.refused])
        self.figures = []
        self.flushed_at = time.monotonic()

    def _write(self, batches: list[tuple[UUID, list[tuple[str, int, bytes]], int]]) -> int:
        """Write `batches` through the judge; how many events were written. The judged path is all
        or nothing, so once it refuses, each match's batch is written on its own to find the
        refused ones (a refusal is rare: the workers run the same referee).

        Raises:
            StoreError, ConcurrencyError: the log refused the write itself.
        """
        try:
            self.judged.append_bulk_encoded(batches)
            return sum(len(events) for _, events, _ in batches)
        except MatchlogError as ruling:
            if not _refusal(ruling):
                raise
            if len(batches) == 1:
                self._refuse(*batches[0], ruling)
                return 0
        written = 0
        for batch in batches:
            try:
                self.judged.append_bulk_encoded([batch])
                written += len(batch[1])
            except MatchlogError as ruling:
                if not _refusal(ruling):
                    raise
                self._refuse(*batch, ruling)
        return written

    def _refuse(self, match_id: UUID, events: list[tuple[str, int, bytes]], first: int, ruling: MatchlogError) -> None:
        """A match whose batch the judge refused: nothing of the batch is written, nothing more of it
        will be, and it ends as abandoned with the ruling (after its start, if the batch held it)."""
        number = self.numbers.get(match_id)
        said = f"the log's judge refused its events: [{ruling.code}] {ruling.message}"
        self.failures.append(f"match {number + 1 if number is not None else match_id}: {said}")
        self.running.pop(match_id, None)
        if number is not None:
            self.places.pop(number, None)  # (its end may have come before its events were judged)
        if match_id in self.refused:
            return  # its end was refused too: the log keeps what it took, `matchlog abandon` ends it
        self.refused[match_id] = said
        opening = events[:1] if first == 0 and _starts(events) else []
        if first == 0 and not opening:
            return  # nothing of it is in the log (a start the judge refuses is refused again, above)
        self.sent[match_id] = first + len(opening)
        self.pending.append((match_id, [*opening, _abandonment(self.tables[match_id], said)], first))
        self.sent[match_id] += 1
        self.pending_events += len(opening) + 1


#: What the log says of a worker's batch, not of the log: the batch is refused, the log is fine.
_REFUSED_BYTES = ("store.bad_event", "store.bad_start", "store.duplicate_id", "store.not_an_event")


def _refusal(error: MatchlogError) -> bool:
    """Whether `error` refuses what a worker sent (the rules, or its bytes), not the write itself."""
    return isinstance(error, IllegalAction | UsageError) or error.code in _REFUSED_BYTES


def _starts(events: list[tuple[str, int, bytes]]) -> bool:
    """Whether a batch's first event is a match's start (one that decodes)."""
    try:
        return bool(events) and isinstance(decode(events[0][2]), MatchStarted)
    except DecodeError:
        return False


def _abandonment(seats: int, reason: str) -> tuple[str, int, bytes]:
    """The end of a match of `seats` as abandoned, with why, as a worker sends an event."""
    outcome = Outcome(places=(1,) * seats, winners=(), result="abandoned")
    return (str(uuid7()), now_us(), encode(MatchEnded(outcome=outcome, reason=reason)))


def run_tournament(
    game: str,
    specs: Sequence[str],
    *,
    games: int,
    store: Store,
    jobs: int | None = None,
    seats: int | None = None,
    options: dict[str, Any] | None = None,
    seed: int | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    on_progress: Callable[[int, int], None] | None = None,
    pool: Callable[[Setup], Pool] | None = None,
    in_process: bool = False,
    limits: Limits | None = None,
    force_jobs: bool = False,
) -> TournamentResult:
    """Play `games` matches over every table and seat order, in `jobs` worker processes (default:
    one per core; more than the cores only with `force_jobs`), or in the pool `pool(setup)` makes
    (`matchlog.cluster.ray_pool` plays them on a Ray cluster). Every worker has ended when this
    returns or raises, whatever happened. A user's class plays in a child process of its own in
    each match (under `limits`) unless `in_process`.

    Raises:
        UsageError: bad players, table size, game, option or number of jobs.
        StoreError: the log refused the tournament's events.
        RemoteError: (a cluster) it cannot be reached.
    """
    engine = get_engine(game)
    runner(game)
    table = seats or engine.spec.min_players
    roster = seats_from_specs(game, specs, in_process=in_process, limits=limits)
    if len(roster) < table:
        raise UsageError(f"a table of {table} needs at least {table} players, not {len(roster)}", code="usage.players")
    spec = engine.spec
    spec.check_players(table, code="usage.seats")
    if games < 1:
        raise UsageError(f"--games must be at least 1, not {games}", code="usage.games")
    from matchlog.engines import parse_options

    full_options = msgspec.to_builtins(parse_options(spec, options))
    orders = arrangements(len(roster), table)
    seed = seed if seed is not None else random.SystemRandom().randrange(2**63)
    tournament_id = str(uuid7())
    available = cores()
    jobs = jobs or available
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}", code="usage.jobs")
    if jobs > available and not force_jobs and pool is None:
        raise UsageError(
            f"--jobs {jobs} is more than the {available} cores here: each worker plays flat out, so more only "
            "slow each other down (and every one is a process); give --force-jobs to start them anyway",
            code="usage.jobs",
        )
    setup = Setup(
        game, tuple(roster), full_options, timeout, seed, tournament_id, games, tuple(orders), in_process, limits
    )
    workers = pool(setup) if pool is not None else _Processes(setup, jobs)
    writer = _Writer(store)
    began = time.monotonic()
    interrupted, unfinished = _record(workers, writer, games, on_progress)
    seconds = time.monotonic() - began
    match_ids = [m for m, count in writer.sent.items() if count]
    findings = _chain_findings(store, match_ids)
    standings = _standings(roster, writer.orders, writer.places)
    return TournamentResult(
        tournament_id,
        game,
        len(writer.places),
        len(unfinished),
        writer.events,
        seconds,
        standings,
        findings,
        interrupted,
        tuple(writer.failures),
    )


def _record(
    pool: Pool,
    writer: _Writer,
    games: int,
    on_progress: Callable[[int, int], None] | None,
    stop_when: Callable[[], str | None] | None = None,
) -> tuple[bool, list[UUID]]:
    """The writer loop: start the pool, record what it sends until every match is finished (or
    Ctrl-C, or `stop_when()` gives a reason to stop), then stop it and end what it left unfinished.
    Returns (interrupted, unfinished ids)."""
    interrupted = False
    done = 0
    stopped: str | None = None
    with _CtrlC() as ctrl_c:  # until every finished match is stored
        try:
            with ctrl_c.blocked():
                pool.start()
            pool.hand_out(done)
            while done < games and not ctrl_c.pressed and stopped is None:
                messages = pool.receive(0.1)
                if messages is None:
                    break  # every worker is gone: what they did not finish is unfinished
                if not messages:
                    if time.monotonic() - writer.flushed_at >= _BATCH_SECONDS:
                        writer.flush()
                    pool.hand_out(done)  # (a pool may have taken work back: a cluster's lost task)
                    continue
                for message in messages:
                    if writer.take(message):
                        done += 1
                        if on_progress is not None:
                            on_progress(done, games)
                        if stop_when is not None:
                            stopped = stopped or stop_when()
                if stopped is None:
                    pool.hand_out(done)
        except KeyboardInterrupt:  # where no handler could be installed (not the main thread)
            interrupted = True
        finally:
            interrupted = interrupted or ctrl_c.pressed
            # Let the workers stop at their next step, and store everything they sent until then.
            for message in pool.stop():
                writer.take(message)
            if done < games and not interrupted and stopped is None:
                writer.failures.append(pool.shortfall(games - done, games))
            interrupted = interrupted or ctrl_c.pressed
            unfinished = list(writer.running)
            reason = "tournament interrupted" if interrupted else stopped or "its worker stopped"
            for match_id in unfinished:
                writer.abandon(match_id, reason)
            writer.flush()
    return interrupted, unfinished


def _standings(
    roster: Sequence[Seat], orders: dict[int, tuple[int, ...]], places: dict[int, tuple[int, ...]]
) -> tuple[Standing, ...]:
    """Results per player, and ratings fitted to every pair of seats in every match."""
    from matchlog.replay.stats import wilson

    count = len(roster)
    matches, wins, draws, place_sum = [0] * count, [0] * count, [0] * count, [0] * count
    scored = [[0.0] * count for _ in range(count)]  # scored[a][b]: a's points against b, 1 a win, 0.5 a tie
    for number in sorted(places):
        order, placed = orders[number], places[number]
        best = min(placed)
        first = [seat for seat, place in enumerate(placed) if place == best]
        for seat, player in enumerate(order):
            matches[player] += 1
            place_sum[player] += placed[seat]
            if seat in first:
                if len(first) == 1:
                    wins[player] += 1
                else:
                    draws[player] += 1
        for a, b in itertools.combinations(range(len(order)), 2):
            score = 1.0 if placed[a] < placed[b] else 0.5 if placed[a] == placed[b] else 0.0
            scored[order[a]][order[b]] += score
            scored[order[b]][order[a]] += 1.0 - score
    rating = ratings(scored)
    standings = []
    for player, seat in enumerate(roster):
        n = matches[player]
        low, high = wilson(wins[player], n)
        standings.append(
            Standing(
                seat.name,
                seat.player,
                n,
                wins[player],
                draws[player],
                n - wins[player] - draws[player],
                wins[player] / n if n else 0.0,
                low,
                high,
                place_sum[player] / n if n else 0.0,
                round(rating[player], 1),
            )
        )
    return tuple(sorted(standings, key=lambda s: (-s.rating, s.name)))


def _chain_findings(store: Any, match_ids: list[UUID]) -> tuple[Finding, ...]:
    """What verifying the recorded matches' chains finds: a Store answers with a list of findings,
    a Log (`matchlog.open`: a file or a server) with a Verification that holds them."""
    if not match_ids:
        return ()
    checked = store.verify(match_ids)
    return tuple(getattr(checked, "findings", checked))


def ratings(scored: Sequence[Sequence[float]], *, rounds: int = 10_000, tolerance: float = 1e-9) -> list[float]:
    """Elo-scale ratings (mean 1500) fitted to pairwise results by Bradley-Terry maximum likelihood.

    `scored[a][b]` is what a scored against b (1 a win, 0.5 a tie). Unlike Elo updated match by
    match, the fit does not depend on the order the matches finished in, and equal players get
    equal ratings. Every pair that met also counts one tie more (a weak prior), so a player that
    never lost still gets a finite rating. Solved with Hunter's MM iteration (2004).
    """
    count = len(scored)
    games = [[scored[a][b] + scored[b][a] for b in range(count)] for a in range(count)]
    played = [[games[a][b] + 1.0 if games[a][b] else 0.0 for b in range(count)] for a in range(count)]
    points = [sum(scored[a][b] + 0.5 for b in range(count) if games[a][b]) for a in range(count)]
    strength = [1.0] * count
    for _ in range(rounds):
        fitted = [
            points[a] / total
            if (total := sum(played[a][b] / (strength[a] + strength[b]) for b in range(count)))
            else 1.0
            for a in range(count)
        ]
        scale = math.exp(sum(map(math.log, fitted)) / count) if count else 1.0
        fitted = [value / scale for value in fitted]
        done = max((abs(x - y) for x, y in zip(fitted, strength, strict=True)), default=0.0) < tolerance
        strength = fitted
        if done:
            break
    return [1500.0 + 400.0 * math.log10(value) for value in strength]
