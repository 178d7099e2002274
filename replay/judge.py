"""The judge: the one place that decides whether an event may be the next of its match.

Whatever writes an event hands it to a `Judge` first: our referee (`referee.match.Referee`: each
answer it is given, each event it records, each draw of its chance), a referee elsewhere appending
through the service and the service's own chance (`service.live`), an import of JSON Lines
(`replay.imports`) or of another tool's record (`formats`), a batch of encoded events sent to the
service. The engine says who acts now (a seat, or chance) and what may happen; the judge takes the
event or refuses it with a stable code, before anything is written. `audit` is the same judge run
again over what was written, knowing what became known later (the chance seeds revealed at the
end), so the two decide every event alike.

What the judge decides, by the kind of event:

- a seat's answer: it is that seat's turn and the rules allow it (`engine.check`);
- a rejected answer: it was that seat's turn, and the rules refuse it with the recorded code (its
  recorded text is read back as a Python literal; one cut short cannot be re-judged, and is counted);
- a ruling on a rejected answer (an engine's `rulings`, such as Porrinha's voided guess): it follows
  that seat's rejection of that decision (`audit.unexplained_ruling`);
- a removal for breaking a rule: it follows that seat's rejection with that code, or enough of them
  in a row (`audit.unexplained_removal`); one from outside the rules (a timeout) needs none;
- chance (an event no seat answers and no ruling): chance is to act (`chance.out_of_turn`), the
  engine allows it there (`engine.check_chance`), and, where the judge knows the seed, it is
  exactly what the seed draws (`chance.not_from_seed`); in a match whose chance the service draws,
  nothing but the service records chance, commits to it, reveals it or ends the match
  (`chance.from_service`);
- match.started only at seq 0, with a table the game is played by; chance_committed only right
  after a segment's start (seq 0, or a match.resumed), once (`chance.late_commitment`,
  `chance.committed_twice`); a resumed match of committed chance commits again
  (`chance.uncommitted`); chance_revealed matches a commitment (`chance.reveal_mismatch`), and a
  segment's seed is revealed before the match ends by the rules (`chance.unrevealed`: only an
  abandonment may leave it secret);
  match.resumed has a player for each seat; match.ended has the outcome the rules give, or an
  abandonment's (every seat placed first, no winner); an undo takes back the latest effective
  events; nothing but an undo comes after the end.

A finding names the match, the seq, the rule and the evidence; a refusal is an `IllegalAction`
whose code is the finding's rule.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from matchlog.engines import CHANCE, Engine, Rule
from matchlog.engines import get as get_engine
from matchlog.engines.chance import ALGORITHM, ChanceSource, commitment
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    IllegalAction,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    PlayerRemoved,
    Record,
)

__all__ = ["NOT_A_LITERAL", "AuditFinding", "Judge", "literal"]

#: Removal codes that come from outside the rules (a timeout, an exception, a lost connection).
_OUTSIDE_THE_RULES = ("player.", "remote.", "match.")
#: What the audit counts of what it checked.
COUNTS = (
    "answers",
    "rejections",
    "rejections_not_rechecked",
    "protocol_rulings",
    "removals",
    "chance",
    "chance_rederived",
    "undos",
)
#: Events of every game that are not a seat's answer, a ruling or chance.
_LIFECYCLE = (MatchStarted, ChanceCommitted, ChanceRevealed, MatchResumed, MatchEnded, PlayerRemoved, ActionsUndone)


#: What each type of event is to a judge (`Judge._kind`), filled as types are met.
_KINDS: dict[type[Event], str] = {}


class AuditFinding(msgspec.Struct, frozen=True, kw_only=True):
    """One thing the log says that the rules (or the chain) do not allow."""

    match_id: str
    seq: int | None
    rule: str
    message: str
    evidence: dict[str, Any] = msgspec.field(default_factory=dict)


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value) if isinstance(value, msgspec.Struct | tuple | list) else value


class Judge:
    """One match's judge: the effective states the match folds to (an undo pops them), each seat's
    rejections, its chance segments, and the ruling on the next event.

    `seeds` are the chance seeds the judge knows (a segment committed to one of them is judged
    exactly); `service_chance` says that only the service may record the match's chance, and it
    tells the judge so with `by_service`.
    """

    def __init__(
        self,
        started: MatchStarted,
        *,
        match_id: object = "?",
        seeds: Iterable[bytes] = (),
        service_chance: bool = False,
        engine: Engine[Any] | None = None,
    ) -> None:
        """A judge of the match `started` opens (by its game's engine, unless `engine` is given).

        Raises:
            UsageError: the game is not one this matchlog knows, or is not played by that many.
            MatchlogError: the rules cannot set the table up as described (options, a position).
        """
        self.match_id = str(match_id)
        self.engine: Engine[Any] = engine if engine is not None else get_engine(started.game)
        self.seats = len(started.seats)
        self.engine.spec.check_players(self.seats)
        self.stack: list[tuple[int, Any]] = [(0, self.engine.start(started))]  # effective (seq, state after it)
        self.next_seq = 1
        self.service_chance = service_chance
        self.rulings: Mapping[type[Event], str] = getattr(self.engine, "rulings", {})
        #: Each seat's latest rejection code, and its rejected answers since its last accepted one.
        self.rejected: dict[int, str] = {}
        self.streak: dict[int, int] = {}
        self.ended: int | None = None
        self.counts = dict.fromkeys(COUNTS, 0)
        self.previous: Event = started
        # Chance: the seeds known, by commitment; the segment in play (the seq it starts at), its
        # commitment and its exact source (None: possibility only); every commitment so far.
        self.seeds = {commitment(seed): seed for seed in seeds}
        self.segment = 0
        self.committed: dict[int, ChanceCommitted] = {}
        self.commitments: set[str] = set()
        self.revealed: set[str] = set()  # the commitments whose seeds are revealed
        self.source: ChanceSource | None = None
        self.awaiting: int | None = None  # the seq of a resume still owing a commitment
        # What the judge itself cleared (an answer it checked, a draw it made) in the present state:
        # recording it is not judged a second time.
        self._cleared: tuple[Event, Any, tuple[str, ...]] | None = None
        self._refused: tuple[int, str, Any] | None = None
        self._drawn: tuple[Event, Any, ChanceSource] | None = None  # a draw judged, with its source moved past it

    @classmethod
    def of(cls, records: Sequence[Record], *, seeds: Iterable[bytes] = (), service_chance: bool = False) -> Judge:
        """A judge that holds the match `records` already wrote (judged when they were written).

        Raises:
            UsageError, MatchlogError: the first record does not start a match the rules can set up.
            IllegalAction: the rules cannot fold the records.
        """
        started = records[0].event
        if not isinstance(started, MatchStarted):
            raise IllegalAction("store.bad_start", f"a match starts with match.started, not {started.tag}")
        judge = cls(started, match_id=records[0].match_id, seeds=seeds, service_chance=service_chance)
        judge.fold(records[1:])
        return judge

    def fold(self, records: Iterable[Record]) -> None:
        """Take records already written (judged when they were written), without judging them again.

        Raises:
            IllegalAction: the rules cannot fold one.
        """
        for record in records:
            if not self.apply(record.seq, record.event):
                raise IllegalAction(
                    "audit.cannot_apply", f"the rules cannot fold seq {record.seq} ({record.event.tag})"
                )

    # -- reading ---------------------------------------------------------------------------------

    @property
    def state(self) -> Any:
        """The effective state after the last event taken."""
        return self.stack[-1][1]

    @property
    def over(self) -> bool:
        """Whether the match has ended (a match.ended in effect)."""
        return self.ended is not None

    # -- judging ---------------------------------------------------------------------------------

    def verdict(
        self, seq: int, event: Event, *, by_service: bool = False
    ) -> tuple[list[AuditFinding], tuple[str, ...]]:
        """What the rules do not allow about `event` as the next event at `seq`, and what the audit
        counts of it (to give `apply`); nothing is taken."""
        cleared = self._cleared
        if cleared is not None and cleared[0] is event and cleared[1] is self.stack[-1][1] and self.ended is None:
            return [], cleared[2]
        found: list[AuditFinding] = []
        counts: tuple[str, ...] = ()

        def find(rule: str, message: str, at: int = seq, **evidence: Any) -> None:
            evidence = {key: _plain(value) for key, value in evidence.items()}
            found.append(AuditFinding(match_id=self.match_id, seq=at, rule=rule, message=message, evidence=evidence))

        if self.ended is not None and not isinstance(event, ActionsUndone):  # an arbiter may undo after the end
            find("audit.after_end", f"{event.tag} was recorded after the match ended at seq {self.ended}")
        if self.awaiting is not None and not isinstance(event, ChanceCommitted):
            find(
                "chance.uncommitted",
                "the match was resumed without a commitment to a fresh seed",
                at=self.awaiting,
            )
        if self.service_chance and not by_service and isinstance(event, ChanceCommitted | ChanceRevealed | MatchEnded):
            find(
                "chance.from_service",
                f"the service draws this match's chance and ends it; {event.tag} is not the referee's",
            )
            return found, counts
        engine, before = self.engine, self.stack[-1][1]
        match event:
            case ActionsUndone(seqs=seqs):
                counts = ("undos",)
                effective = [s for s, _ in self.stack[1:]]
                if not seqs or list(seqs) != effective[-len(seqs) :]:
                    find(
                        "audit.bad_undo",
                        "the undo does not take back the latest effective events",
                        undone=seqs,
                        latest=effective[-len(seqs) :] if seqs else [],
                    )
            case MatchStarted():
                find("audit.restarted", "a second match.started inside the match")
            case ChanceCommitted():
                if self.segment in self.committed:
                    find(
                        "chance.committed_twice",
                        "the referee committed to a second seed in one segment (only a resume starts another)",
                    )
                elif seq != self.segment + 1:
                    find("chance.late_commitment", "the commitment does not come before everything else")
            case ChanceRevealed(seed=seed):
                try:
                    revealed = commitment(bytes.fromhex(seed))
                except ValueError:
                    find("chance.reveal_mismatch", "the revealed seed is not hex", seed=seed)
                else:
                    if revealed not in self.commitments:
                        find(
                            "chance.reveal_mismatch",
                            "the revealed seed does not match any commitment of the match",
                            commitments=sorted(self.commitments),
                            seed=seed,
                        )
            case MatchResumed(players=players):
                if len(players) != self.seats:
                    find(
                        "audit.bad_resume", f"the match was resumed with {len(players)} players for {self.seats} seats"
                    )
            case MatchEnded(outcome=outcome):
                if outcome.result == "abandoned":
                    if len(outcome.places) != self.seats or set(outcome.places) != {1} or outcome.winners:
                        find(
                            "audit.wrong_outcome",
                            "an abandoned match places every seat first and has no winner",
                            recorded=outcome,
                        )
                else:
                    expected = engine.outcome(before)
                    if expected is None:
                        find("audit.early_end", "the match ended while the rules had it go on", outcome=outcome)
                    elif expected != outcome:
                        find(
                            "audit.wrong_outcome",
                            "the recorded outcome is not the one the rules give",
                            recorded=outcome,
                            expected=expected,
                        )
                    committed = self.committed.get(self.segment)
                    if committed is not None and committed.commitment not in self.revealed:
                        find(
                            "chance.unrevealed",
                            "the match ended by the rules without revealing the seed its chance was committed to",
                            commitment=committed.commitment,
                        )
            case AnswerRejected(seat=seat, answer=answer, code=code, decision=decision):
                counts = ("rejections",)
                turn = engine.to_act(before)
                refused = self._refused
                if turn is None or turn.seat != seat:
                    find("audit.out_of_turn", f"seat {seat}'s answer was judged when it was not its turn", turn=turn)
                elif decision != turn.decision:  # a protocol's ruling (pygammon's undo, a bad input type)
                    counts = ("rejections", "protocol_rulings")
                elif refused is None or refused[:2] != (seat, code) or refused[2] is not before:
                    value = literal(answer)
                    if value is NOT_A_LITERAL:
                        counts = ("rejections", "rejections_not_rechecked")
                    else:
                        try:
                            engine.check(before, seat, engine.parse(before, seat, value))
                        except IllegalAction as error:
                            if error.code != code:
                                find(
                                    "audit.wrong_code",
                                    f"the answer breaks {error.code}, not {code}: {error.message}",
                                    answer=answer,
                                    recorded=code,
                                    rule=error.code,
                                )
                        else:
                            find(
                                "audit.legal_rejected",
                                f"a legal answer was rejected as {code}",
                                answer=answer,
                                recorded=code,
                            )
            case PlayerRemoved(seat=seat, code=Rule.REJECTION_LIMIT, reason=reason):
                counts = ("removals",)
                said = reason.split(" ", 1)[0]
                streak = self.streak.get(seat, 0)
                if not streak or (said.isdigit() and streak < int(said)):
                    find(
                        "audit.unexplained_removal",
                        f"seat {seat} was removed for {Rule.REJECTION_LIMIT} ({reason}) after {streak} rejected "
                        "answers in a row",
                        code=Rule.REJECTION_LIMIT,
                    )
            case PlayerRemoved(seat=seat, code=code):
                counts = ("removals",)
                if not code.startswith(_OUTSIDE_THE_RULES) and self.rejected.get(seat) != code:
                    find(
                        "audit.unexplained_removal",
                        f"seat {seat} was removed for {code} without a rejected answer breaking it",
                        code=code,
                    )
            case _ if event.actor is not None:
                counts = ("answers",)
                actor = event.actor
                turn = engine.to_act(before)
                if turn is None:
                    find("match.over", f"seat {actor}'s {event.tag} came after the game was over", event=event)
                elif turn.seat != actor:
                    find("match.not_your_turn", f"seat {actor} answered when seat {turn.seat} was to act", event=event)
                else:
                    try:
                        engine.check(before, actor, event)
                    except IllegalAction as error:
                        find(
                            error.code,
                            f"an accepted answer breaks the rules: {error.message}",
                            event=event,
                            alternatives=len(engine.legal(before, actor)),
                        )
                    except Exception as error:  # one the rules cannot even judge there: none is legal
                        find(
                            "audit.cannot_apply",
                            f"the rules cannot judge {event.tag} here ({type(error).__name__}: {error})",
                            event=event,
                        )
            case _ if type(event) in self.rulings:
                decision = self.rulings[type(event)]
                ruled = self.previous
                seat = getattr(event, "seat", None)
                if not (isinstance(ruled, AnswerRejected) and ruled.seat == seat and ruled.decision == decision):
                    find(
                        "audit.unexplained_ruling",
                        f"{event.tag} rules on seat {seat}'s rejected {decision}, but none comes right before it",
                        event=event,
                    )
            case _:
                counts = self._judge_chance(before, event, by_service, find)
        return found, counts

    def _judge_chance(self, before: Any, event: Event, by_service: bool, find: Any) -> tuple[str, ...]:
        """Judge an event that only chance records: who records it, its turn, its possibility, its seed."""
        engine = self.engine
        if self.service_chance and not by_service:
            find("chance.from_service", f"the service draws this match's chance; {event.tag} is not the referee's")
            return ()
        turn = engine.to_act(before)
        if turn is None or turn.seat != CHANCE:
            whose = "the match was over" if turn is None else f"seat {turn.seat} was to {turn.decision}"
            find("chance.out_of_turn", f"chance recorded {event.tag} when {whose}", event=event)
            return ()
        try:
            engine.check_chance(before, event)
        except IllegalAction as error:
            find(error.code, error.message, event=event)
        except Exception as error:  # one the game cannot even place (a seat it has not): no draw gives it
            find(
                Rule.IMPOSSIBLE_CHANCE,
                f"{event.tag} cannot be drawn here ({type(error).__name__}: {error})",
                event=event,
            )
        if self.source is None:
            return ("chance",)
        source = self.source.copy()
        try:
            derived: Event | None = engine.chance(before, source)
        except Exception:  # what the seed draws here cannot even be computed
            derived = None
        if derived != event:
            find("chance.not_from_seed", "the seed draws something else here", recorded=event, derived=derived)
        self._drawn = (event, before, source)
        return ("chance", "chance_rederived")

    def apply(self, seq: int, event: Event, counts: Sequence[str] = ()) -> bool:
        """Take `event` at `seq` whatever it is (judged already, or written already); False, and
        nothing taken, when the rules cannot fold it."""
        before = self.stack[-1][1]
        if not isinstance(event, ActionsUndone):
            try:
                after = self.engine.apply(before, event)
            except Exception:  # a log the rules cannot fold any further
                return False
        tally = self.counts
        for key in counts:
            tally[key] += 1
        self._cleared = self._refused = None
        self.previous = event
        self.next_seq = seq + 1
        kind = _KINDS.get(type(event)) or self._kind(type(event))
        if kind == "answer":  # (most events: first)
            self.streak.pop(event.actor, None)  # type: ignore[arg-type]
        elif kind == "chance":
            if self.source is not None:
                drawn = self._drawn
                if drawn is not None and drawn[0] is event and drawn[1] is before:
                    self.source = drawn[2]  # the source that drew it, moved past it
                else:
                    turn = self.engine.to_act(before)
                    if turn is not None and turn.seat == CHANCE:  # the stream moves past this draw
                        with contextlib.suppress(Exception):  # (one it cannot even compute: a finding)
                            self.engine.chance(before, self.source)
        elif kind == "rejected":
            seat, code = event.seat, event.code  # type: ignore[attr-defined]
            self.rejected[seat] = code
            self.streak[seat] = self.streak.get(seat, 0) + 1
        elif kind == "undo":
            seqs, by = event.seqs, event.by  # type: ignore[attr-defined]
            if by is not None:  # a seat's undo is an accepted answer of its own
                self.streak.pop(by, None)
            if self.ended in seqs:
                self.ended = None  # the end is taken back: the match goes on
            effective = [s for s, _ in self.stack[1:]]
            if seqs and list(seqs) == effective[-len(seqs) :]:
                del self.stack[-len(seqs) :]
            self._drawn = None
            return True
        elif kind == "ended":
            self.ended = seq
        elif kind == "revealed":
            with contextlib.suppress(ValueError):  # (one that is not hex: a finding)
                self.revealed.add(commitment(bytes.fromhex(event.seed)))  # type: ignore[attr-defined]
        elif kind == "resumed":  # a new chance segment, drawn from its own seed
            self.segment, self.source = seq, None
            self.awaiting = seq if self.commitments else None
        elif kind == "committed":
            self.awaiting = None
            algorithm, committed = event.algorithm, event.commitment  # type: ignore[attr-defined]
            if self.segment not in self.committed and seq == self.segment + 1:
                self.committed[self.segment] = event  # type: ignore[assignment]
                self.commitments.add(committed)
                seed = self.seeds.get(committed)
                self.source = ChanceSource(seed) if seed is not None and algorithm == ALGORITHM else None
        self._drawn = None
        self.stack.append((seq, after))
        return True

    def _kind(self, kind: type[Event]) -> str:
        """What a type of event is to the judge (remembered for the type)."""
        named = {
            ChanceRevealed: "revealed",
            ActionsUndone: "undo",
            MatchResumed: "resumed",
            ChanceCommitted: "committed",
            MatchEnded: "ended",
            AnswerRejected: "rejected",
        }.get(kind)
        if named is None:
            if kind in _LIFECYCLE:
                named = "lifecycle"
            elif kind.actor is not Event.actor:  # a seat's answer (its type names its seat)
                named = "answer"
            elif kind in self.rulings:
                named = "ruling"
            else:
                named = "chance"
        if kind not in self.rulings:  # (rulings are an engine's own: not shared between engines)
            _KINDS[kind] = named
        return named

    # -- taking ----------------------------------------------------------------------------------

    def take(self, event: Event, *, by_service: bool = False) -> None:
        """Judge `event` as the next of the match and take it.

        Raises:
            IllegalAction: the rules refuse it (the code names the rule); nothing changed.
        """
        seq = self.next_seq
        cleared = self._cleared
        if cleared is not None and cleared[0] is event and cleared[1] is self.stack[-1][1] and self.ended is None:
            counts = cleared[2]  # (what the judge itself cleared: see `verdict`)
        else:
            found, counts = self.verdict(seq, event, by_service=by_service)
            if found:
                raise _refusal(found[0])
        if not self.apply(seq, event, counts):
            raise IllegalAction("audit.cannot_apply", f"seq {seq}: the rules cannot apply {event.tag} here")

    def take_all(self, events: Sequence[Event], *, by_service: bool = False) -> list[AuditFinding]:
        """Judge `events` as the next of the match and take them all if nothing is found; else leave
        the judge as it was and return what was found."""
        saved = self._save(any(isinstance(event, ActionsUndone) for event in events))
        for seq, event in enumerate(events, start=self.next_seq):
            found, counts = self.verdict(seq, event, by_service=by_service)
            if not found and not self.apply(seq, event, counts):
                found = [
                    AuditFinding(
                        match_id=self.match_id,
                        seq=seq,
                        rule="audit.cannot_apply",
                        message=f"the rules cannot apply {event.tag} here",
                    )
                ]
            if found:
                self._restore(saved)
                return found
        return []

    def check_answer(self, seat: int, event: Event) -> None:
        """Judge the answer `seat` proposes now (as `event`) without taking it; the judge remembers
        an answer it allowed, and a rejection it made, so recording either is not judged again.

        Raises:
            IllegalAction: the rules refuse it (the code names the rule).
        """
        before = self.stack[-1][1]
        try:
            self.engine.check(before, seat, event)
        except IllegalAction as error:
            self._refused = (seat, error.code, before)
            raise
        self._cleared = (event, before, ("answers",))

    def draw(self, rng: Any) -> Event:
        """The event chance records now: what the committed seed draws, where the judge knows it,
        else what `rng` draws (the engine only draws what is possible), cleared to be taken next
        (a draw from the seed moves its stream on: any other chance taken next is not the seed's).

        Raises:
            IllegalAction: chance is not to act now, or the service draws this match's chance.
        """
        before = self.stack[-1][1]
        turn = self.engine.to_act(before)
        if turn is None or turn.seat != CHANCE:
            whose = "the match is over" if turn is None else f"seat {turn.seat} is to {turn.decision}"
            raise IllegalAction("chance.not_now", f"chance is not to act now: {whose}")
        if self.source is None:
            event = self.engine.chance(before, rng)
            self._cleared = (event, before, ("chance",))
            return event
        # The draw moves the judge's own stream on: the next chance event taken must be this one.
        event = self.engine.chance(before, self.source)
        self._cleared = (event, before, ("chance", "chance_rederived"))
        self._drawn = (event, before, self.source)
        return event

    def finish(self) -> list[AuditFinding]:
        """What only the end of the record shows (a resume still owing its commitment)."""
        if self.awaiting is None:
            return []
        return [
            AuditFinding(
                match_id=self.match_id,
                seq=self.awaiting,
                rule="chance.uncommitted",
                message="the match was resumed without a commitment to a fresh seed",
            )
        ]

    # -- all or nothing --------------------------------------------------------------------------

    def save(self, undoes: bool = True) -> tuple[Any, ...]:
        """What `restore` needs to put the judge back as it is (`undoes`: an undo may follow)."""
        return self._save(undoes)

    def restore(self, saved: tuple[Any, ...]) -> None:
        """Put the judge back as it was when `saved` was made."""
        self._restore(saved)

    def _save(self, undoes: bool) -> tuple[Any, ...]:
        # The stack only grows unless an undo pops it (copying it whole for every batch would cost
        # a long match's length each time).
        return (
            list(self.stack) if undoes else len(self.stack),
            dict(self.rejected),
            dict(self.streak),
            self.ended,
            dict(self.counts),
            self.previous,
            self.next_seq,
            self.segment,
            dict(self.committed),
            set(self.commitments),
            set(self.revealed),
            self.source.copy() if self.source is not None else None,
            self.awaiting,
            self._drawn,
        )

    def _restore(self, saved: tuple[Any, ...]) -> None:
        stack = saved[0]
        if isinstance(stack, list):
            self.stack = stack
        else:
            del self.stack[stack:]
        (
            self.rejected,
            self.streak,
            self.ended,
            self.counts,
            self.previous,
            self.next_seq,
            self.segment,
            self.committed,
            self.commitments,
            self.revealed,
            self.source,
            self.awaiting,
            self._drawn,
        ) = saved[1:]
        self._cleared = self._refused = None


def _refusal(finding: AuditFinding) -> IllegalAction:
    return IllegalAction(finding.rule, f"seq {finding.seq}: {finding.message}")


#: What `literal` returns for a recorded answer that is not a whole Python literal.
NOT_A_LITERAL = object()


def literal(text: str) -> Any:
    """The answer a rejection recorded as its repr, if that repr is a whole Python literal."""
    if text.endswith("…"):
        return NOT_A_LITERAL
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_A_LITERAL
