"""The generic match loop: ask whoever must act, judge the answer, record the events, repeat.

The referee keeps the live state in memory and records every event as it goes (so a crash loses
at most what was not yet committed). Each game supplies a `GameProtocol` that speaks its players'
protocol (which method to call, with what view) and its policy for rejected answers.

The live state is its judge's (`replay.judge`): the one judge every writer of the log hands its
events to, and the audit runs again. A player's answer is judged by it (`allowed`), chance is drawn
through it (from the committed seed, which the judge knows), and every event the referee records,
its own rulings included, is taken by it first: an event it refuses raises `IllegalAction` and is
neither applied nor recorded. What the judge has just cleared (an answer it allowed, a draw it
made, a rejection it made) is not judged a second time when it is recorded.

A referee either opens a match (recording its `MatchStarted`) or picks one up that has not ended
(a `Resumption`: its effective history, folded again here): then it records `MatchResumed` and,
for a game with chance, a fresh commitment, the start of a new chance segment.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, Protocol
from uuid import UUID

import msgspec

from matchlog.engines import CHANCE, Engine, Rule, Turn
from matchlog.engines.chance import ALGORITHM, ChanceSource, commitment
from matchlog.engines.contract import shown
from matchlog.engines.figures import FIGURES_VERSION, Figure, Tally
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    Draft,
    Event,
    IllegalAction,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Outcome,
    PlayerRemoved,
    Record,
    drafts,
    uuid7,
)
from matchlog.replay.clerk import Clerk
from matchlog.replay.judge import Judge
from matchlog.store import Appended, Figures, Store

from .calls import Reply

__all__ = [
    "GameProtocol",
    "MemoryRecorder",
    "Recorder",
    "Referee",
    "Resumption",
    "StoreRecorder",
    "ctrl_c_deferred",
    "held_ctrl_c",
]

#: A match that needs more decisions than this is ended as abandoned (players that never progress).
MAX_DECISIONS = 200_000
#: Answers are recorded by repr, cut to this length.
_ANSWER_LIMIT = 200


class _Held:
    """Ctrl-C held back through steps that must not be cut in two (see `held_ctrl_c`)."""

    installed = 0  # how many ctrl_c_deferred() are open (in the main thread)
    depth = 0
    pressed = False


def _deferring_ctrl_c(signum: int, frame: object) -> None:
    """Python's own Ctrl-C, but one that comes inside a held step waits for the step to end."""
    if _Held.depth:
        _Held.pressed = True
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Within, Ctrl-C raises KeyboardInterrupt as it would, except inside a `held_ctrl_c()` step,
    where it waits for the step to end. (Only where Python's own handler is installed, in the main
    thread: a Ctrl-C that is ignored or caught stays so.)"""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    previous = signal.signal(signal.SIGINT, _deferring_ctrl_c)
    _Held.installed += 1
    try:
        yield
    finally:
        _Held.installed -= 1
        signal.signal(signal.SIGINT, previous)


class held_ctrl_c:
    """Hold a Ctrl-C back through a step that must not be cut in two (events applied but not
    recorded, a batch taken from the buffer but not sent): inside `ctrl_c_deferred()`, one that
    comes meanwhile is raised as the step ends, where the match is whole. Blocking the signal would
    not do: the kernel hands it to another thread (the log's writer, a player's), and Python
    raises it in the main thread all the same. Elsewhere (a worker that ignores Ctrl-C, another
    thread) there is nothing to hold, and it costs a lookup."""

    __slots__ = ("_held",)

    def __enter__(self) -> None:
        # (No signal.getsignal here: it costs more than the step it guards.)
        self._held = _Held.installed > 0 and threading.get_ident() == threading.main_thread().ident
        if self._held:
            _Held.depth += 1

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        if not self._held:
            return
        _Held.depth -= 1
        if _Held.depth == 0 and _Held.pressed:
            _Held.pressed = False
            if kind is None or not issubclass(kind, KeyboardInterrupt):
                raise KeyboardInterrupt


class Recorder(Protocol):
    """Where a referee's events go."""

    def record(self, drafts: list[Draft]) -> None:
        """Take the events of one step."""
        ...

    def flush(self) -> None:
        """Send everything taken so far, without waiting for it to be durable."""
        ...

    def project(self, last_seq: int, figures: list[Figure]) -> None:
        """Take the figures of the match, which ended at `last_seq` (after its last event)."""
        ...

    def wait(self) -> None:
        """Return once everything sent is durable; raise the first failure."""
        ...

    def durable(self) -> bool:
        """Whether everything taken so far is sent and durable (or failed: `wait` raises it)."""
        ...


class MemoryRecorder:
    """Keeps the drafts in a list (tests, and matches played without a log)."""

    def __init__(self) -> None:
        self.drafts: list[Draft] = []
        self.figures: list[Figure] = []

    def record(self, drafts: list[Draft]) -> None:
        self.drafts.extend(drafts)

    def records(self, match_id: UUID, *, at_us: int | None = None) -> list[Record]:
        """The drafts as the log's records of `match_id`, unhashed (to fold or audit a match played
        without a log); `at_us` stamps them all with one time instead of each its own."""
        return [
            Record(
                match_id=match_id,
                seq=seq,
                event_id=draft.event_id,
                at_us=draft.at_us if at_us is None else at_us,
                actor=draft.event.actor,
                version=draft.event.version,
                event=draft.event,
                hash=b"",
            )
            for seq, draft in enumerate(self.drafts)
        ]

    def project(self, last_seq: int, figures: list[Figure]) -> None:
        self.figures = figures

    def flush(self) -> None:
        pass

    def wait(self) -> None:
        pass

    def durable(self) -> bool:
        return True


class StoreRecorder:
    """Appends a match's events to the log as it goes, a batch at a time, without waiting for each
    commit: a batch leaves every FLUSH_EVENTS events or FLUSH_SECONDS, so a crash loses at most that
    much. `wait` sends the rest and returns once every batch is durable."""

    FLUSH_EVENTS = 1_000
    FLUSH_SECONDS = 0.05

    def __init__(self, store: Store, match_id: UUID) -> None:
        self.store = store
        self.match_id = match_id
        #: The log's one write path (`replay.clerk`): the referee's judge, once adopted, is the
        #: match's there; a batch no referee adopted is judged by the clerk itself.
        self.clerk = Clerk(store)
        self._adopted = False
        self.next_seq = 0
        self._buffer: list[Draft] = []
        self._sent_at = time.monotonic()
        self._pending: deque[Future[Appended]] = deque()

    def adopt(self, judge: Judge) -> None:
        """Write through the clerk with the referee's `judge` as the match's (each event is judged
        once, as the referee records it)."""
        self.clerk.adopt(self.match_id, judge)
        self._adopted = True

    def record(self, drafts: list[Draft]) -> None:
        self._buffer.extend(drafts)
        if len(self._buffer) >= self.FLUSH_EVENTS or time.monotonic() - self._sent_at >= self.FLUSH_SECONDS:
            self._send()

    def flush(self) -> None:
        self._send()

    def project(self, last_seq: int, figures: list[Figure]) -> None:
        rows = Figures(self.match_id, last_seq, FIGURES_VERSION, tuple(figures))
        if self._buffer:
            self._send(rows)  # they ride with the match's last events
        else:
            self._pending.append(self.store.put_figures([rows], wait=False))  # type: ignore[arg-type]

    def wait(self) -> None:
        self._send()
        self._settle(block=True)

    def durable(self) -> bool:
        return not self._buffer and all(future.done() for future in self._pending)

    def _send(self, figures: Figures | None = None) -> None:
        self._settle(block=False)
        self._sent_at = time.monotonic()
        if not self._buffer:
            return
        with held_ctrl_c():  # a batch taken from the buffer is on its way, and counted
            batch, self._buffer = self._buffer, []
            if self._adopted:
                sent = self.clerk.record(self.match_id, batch, self.next_seq, figures=figures)
            else:
                sent = self.clerk.submit(self.match_id, batch, self.next_seq, figures=figures)[0]
            self._pending.append(sent)
            self.next_seq += len(batch)

    def _settle(self, *, block: bool) -> None:
        """Collect finished appends, raising the first failure (so the match stops at once)."""
        while self._pending and (block or self._pending[0].done()):
            self._pending[0].result()
            self._pending.popleft()


class GameProtocol(Protocol):
    """A game's side of the loop: its player protocol and its rulings."""

    def begin(self, referee: Referee) -> None:
        """Tell every player the game begins."""
        ...

    def ask(self, referee: Referee, turn: Turn) -> Reply:
        """Ask the player at `turn.seat` for its decision."""
        ...

    def ruling(self, referee: Referee, turn: Turn, error: IllegalAction) -> list[Event]:
        """The events that follow a rejected answer under this match's policy."""
        ...

    def after(self, referee: Referee, before: Any, after: Any) -> None:
        """Tell players what one step changed (e.g. a round settled)."""
        ...

    def end(self, referee: Referee) -> None:
        """Tell every player the game is over."""
        ...


class Resumption(msgspec.Struct, frozen=True, kw_only=True):
    """Where a referee picks up a match that has not ended.

    `history` is the match's effective history after its `MatchStarted` (undos and what they took
    back skipped: `replay.fold.effective`), `last_seq` the seq of the log's last event (an undo
    may follow the last effective one), `players` the player at each seat from here on, and
    `seeds` earlier chance seeds this referee reveals at the end besides its own (a fork's
    origin revealed them, so the fork's own log can re-derive its first segment too), and
    `unconfined` the seats whose players the operating system does not confine.
    """

    history: tuple[Record, ...]
    last_seq: int
    players: tuple[str, ...]
    seeds: tuple[bytes, ...] = ()
    unconfined: tuple[int, ...] = ()


class Referee:
    """Runs one match: the live state, every event recorded, players asked through their protocol."""

    def __init__(
        self,
        engine: Engine[Any],
        started: MatchStarted,
        recorder: Recorder | None = None,
        *,
        match_id: UUID | None = None,
        on_event: Callable[[Event, Any], None] | None = None,
        chance: ChanceSource | None = None,
        resumption: Resumption | None = None,
    ) -> None:
        self.engine = engine
        self.started = started
        self.match_id = match_id or uuid7()
        self.recorder = recorder if recorder is not None else MemoryRecorder()
        self.on_event = on_event
        seeds = (*(resumption.seeds if resumption is not None else ()), *((chance.secret,) if chance else ()))
        #: The judge: the live state, and the ruling on every event before it is recorded.
        self.judge = Judge(started, match_id=self.match_id, seeds=seeds, engine=engine)
        adopt = getattr(self.recorder, "adopt", None)
        if adopt is not None:  # a log's clerk takes this judge as the match's: each event judged once
            adopt(self.judge)
        #: The live state: the judge's, after every event recorded (undos applied).
        self.state: Any = self.judge.state
        self.removed: set[int] = set()
        self.outcome: Outcome | None = None
        #: The events of the step in progress, each with the states around it (for telling players).
        self.step: list[tuple[Any, Event, Any]] = []
        self.seq = -1
        #: The committed random source chance draws from (None: chance is not provable here).
        self.chance = chance
        #: The figures statistics need, counted as the match goes (`engines.figures`).
        self.tally = Tally(engine)
        #: Earlier segments' chance seeds to reveal at the end (a resumed fork's).
        self._seeds: tuple[bytes, ...] = ()
        if resumption is None:
            self._emit([started], apply=False)
        else:
            self._pick_up(resumption)
        if chance is not None:
            self.record(ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(chance.secret)))

    def _pick_up(self, resumption: Resumption) -> None:
        """Fold the match's effective history (tallying it) and record that play goes on here."""
        if len(resumption.players) != len(self.started.seats):
            raise ValueError(f"{len(resumption.players)} players for {len(self.started.seats)} seats")
        for record in resumption.history:
            before = self.state
            self.judge.fold([record])
            self.state = self.judge.state
            self.tally.add(record.seq, before, record.event, self.state)
            if isinstance(record.event, PlayerRemoved):
                self.removed.add(record.event.seat)
        self.seq = resumption.last_seq
        self.judge.next_seq = self.seq + 1
        self._seeds = resumption.seeds
        self.record(MatchResumed(players=resumption.players, unconfined=resumption.unconfined))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(seat.name for seat in self.started.seats)

    def record(self, *events: Event) -> None:
        """Have the judge take `events` and record them, in one append.

        Raises:
            IllegalAction: the judge refuses one (the code names the rule); none is applied or recorded.
        """
        self._emit(list(events), apply=True)

    def _emit(self, events: list[Event], *, apply: bool) -> None:
        with held_ctrl_c():  # the live state and the record move together
            self._emit_held(events, apply=apply)

    def _emit_held(self, events: list[Event], *, apply: bool) -> None:
        judge = self.judge
        states: list[tuple[Any, Any]] = []
        if apply:
            saved = judge.save(any(isinstance(e, ActionsUndone) for e in events)) if len(events) > 1 else None
            try:
                stack = judge.stack
                for event in events:
                    before = stack[-1][1]
                    judge.take(event)
                    stack = judge.stack  # (an undo's restore may have replaced it)
                    states.append((before, stack[-1][1]))
            except IllegalAction:
                if saved is not None:
                    judge.restore(saved)  # all of them, or none
                raise
            self.state = judge.state
        else:
            states = [(self.state, self.state)] * len(events)
        for event, (before, after) in zip(events, states, strict=True):
            self.step.append((before, event, after))
            if isinstance(event, PlayerRemoved):
                self.removed.add(event.seat)
            self.seq += 1
            if apply and not isinstance(event, ActionsUndone):
                self.tally.add(self.seq, before, event, after)
            if self.on_event is not None:
                self.on_event(event, after)
        self.recorder.record(drafts(events))

    def remove(self, seat: int, code: str, reason: str) -> None:
        """Take a player out of the match, recording why; it is never called again."""
        if seat in self.removed:
            return
        self.record(PlayerRemoved(seat=seat, code=code, reason=reason))

    def over_rejection_limit(self, seat: int) -> bool:
        """Remove `seat` if its rejected answers in a row reached its game's limit; whether it did.
        The count is the judge's (answers to the decision the seat was asked, in a row), so the
        judge takes the removal."""
        count, limit = self.judge.streak.get(seat, 0), self.engine.spec.rejection_limit
        if count < limit or seat in self.removed:
            return False
        self.remove(seat, Rule.REJECTION_LIMIT, f"{count} rejected answers in a row (the limit is {limit})")
        return True

    def allowed(self, seat: int, reply: Reply) -> Event:
        """The event a successful reply proposes, if the judge allows it.

        Raises:
            IllegalAction: the answer is malformed or breaks a rule.
        """
        event = self.engine.parse(self.state, seat, reply.value)
        self.judge.check_answer(seat, event)
        return event

    def draw(self, rng: random.Random | None = None) -> Event:
        """The event chance records now: what the committed seed draws, else what `rng` draws."""
        return self.judge.draw(rng or self.chance or random.Random())

    def run(self, protocol: GameProtocol, rng: random.Random | None = None) -> Outcome:
        """Play the match to its end and record the outcome; chance draws from `rng`."""
        protocol.begin(self)
        decisions = 0
        while (turn := self.engine.to_act(self.state)) is not None:
            decisions += 1
            if decisions > MAX_DECISIONS:
                return self.abandon(f"no result after {MAX_DECISIONS} decisions")
            before = self.state
            self.step = []
            if turn.seat == CHANCE:
                self.record(self.draw(rng))
                protocol.after(self, before, self.state)
                continue
            reply = protocol.ask(self, turn)
            if reply.failed:
                self.remove(turn.seat, reply.failure or "player.failed", reply.detail)
            else:
                try:
                    event = self.allowed(turn.seat, reply)
                except IllegalAction as error:
                    rejected = AnswerRejected(
                        seat=turn.seat,
                        decision=turn.decision,
                        answer=shown(reply.value, _ANSWER_LIMIT),
                        code=error.code,
                        message=error.message,
                    )
                    self.record(rejected, *protocol.ruling(self, turn, error))
                    self.over_rejection_limit(turn.seat)
                else:
                    self.record(event)
            protocol.after(self, before, self.state)
        protocol.end(self)
        return self.finish()

    def finish(self, outcome: Outcome | None = None) -> Outcome:
        """Record how the match ended (by default, as the engine sees it) and send it to the log."""
        outcome = outcome if outcome is not None else self.engine.outcome(self.state)
        assert outcome is not None, "an engine with nobody to act must have an outcome"
        return self._end(MatchEnded(outcome=outcome))

    def abandon(self, reason: str) -> Outcome:
        """End the match without a result (every seat shares the place), recording why; a match
        that has ended already keeps its end."""
        if self.outcome is not None:
            return self.outcome
        players = len(self.started.seats)
        outcome = Outcome(places=(1,) * players, winners=(), result="abandoned", removed=tuple(sorted(self.removed)))
        return self._end(MatchEnded(outcome=outcome, reason=reason))

    def _end(self, ended: MatchEnded) -> Outcome:
        # A Ctrl-C waits until the end, its figures and the outcome are all in place: one that came
        # between them would have the match abandoned after its end.
        with held_ctrl_c():
            self.record(*self._reveal(), ended)
            self.outcome = ended.outcome
            self.recorder.project(self.seq, self.tally.figures())
            self.recorder.flush()
        return ended.outcome

    def _reveal(self) -> list[Event]:
        """The seed of a committed random source (and earlier segments' seeds this referee knows),
        revealed once the match is over."""
        own = () if self.chance is None else (self.chance.secret,)
        return [ChanceRevealed(seed=seed.hex()) for seed in (*self._seeds, *own)]

    def take_back(self, undo: ActionsUndone) -> None:
        """Record an undo: the judge returns to the state before the first event it takes back.

        Raises:
            IllegalAction: it does not take back the latest effective events.
        """
        self._emit([undo], apply=True)
        self.tally.take_back(undo.seqs)
