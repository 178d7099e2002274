"""The judge: the one place that decides whether an event may be the next of its match.

Whatever writes an event hands it to a `Judge` first: our referee (`referee.match.Referee`: each
answer it is given, each event it records, each draw of its chance) and every write to a log
(`replay.clerk`: a referee elsewhere appending through the service, the service's own chance, an
arbiter's undo and abandonment, a fork, the Python API's append, a tournament's writer, another
tool's record), and an import of JSON Lines (`replay.imports`). The engine says who acts now (a
seat, or chance) and what may happen; the judge takes the event or refuses it with a stable code,
before anything is written. `audit` is the same judge run again over what was written, knowing what
became known later (the chance seeds revealed at the end), so the two decide every event alike.

What the judge decides, by the kind of event:

- every event: it is one of its game's own (`match.wrong_game`: not another game's, nor one only
  views show), each seat it names is at the table, and a match.ended places each seat
  (`match.no_such_seat`);
- a seat's answer: it is that seat's turn and the rules allow it (`engine.check`);
- a rejected answer: it was that seat's turn, and the rules refuse it with the recorded code (its
  recorded text is read back as a Python literal; one cut short cannot be re-judged, and is
  counted); an answer to another decision than the one asked (a protocol's own ruling, such as
  pygammon's undo) is taken unchecked, and counted;
- a ruling on a rejected answer (an engine's `rulings`, such as Porrinha's voided guess): it follows
  that seat's rejection of that decision (`audit.unexplained_ruling`);
- a removal for breaking a rule: it follows that seat's rejection with that code, or, for
  `match.rejection_limit`, the game's limit (`GameSpec.rejection_limit`) of rejected answers in a
  row to the decision the seat was asked, whatever the reason says (`audit.unexplained_removal`);
  one from outside the rules (a timeout) needs none;
- chance (an event no seat answers and no ruling): chance is to act (`chance.out_of_turn`), the
  engine allows it there (`engine.check_chance`), its segment's seed is not revealed yet
  (`chance.after_reveal`), and it is what the seed draws there (`chance.not_from_seed`): the k-th
  draw of a segment's effective history is the seed's k-th draw, so an undo that takes draws back
  rewinds the stream with them and drawing again draws the same. Where the judge knows the seed it
  judges each draw as it comes; where not, the reveal is judged by every effective draw of its
  segment. In a match whose chance the service draws, nothing but the service records chance,
  commits to it, reveals it, resumes or ends the match (`chance.from_service`);
- match.started only at seq 0, with a table the game is played by; chance_committed only right
  after a segment's start (seq 0, or a match.resumed), once (`chance.late_commitment`,
  `chance.committed_twice`); a resumed match of committed chance commits again
  (`chance.uncommitted`); chance_revealed matches a commitment (`chance.reveal_mismatch`), and a
  segment's seed is revealed before the match ends by the rules (`chance.unrevealed`: only an
  abandonment may leave it secret); in a game with hidden information nothing but another reveal
  and the end follows a reveal, an undo of that end included (`chance.hidden_revealed`: the seed
  has told every seat the hidden state);
  match.resumed has a player for each seat; match.ended has the outcome the rules give, or an
  abandonment's (every seat placed first, no winner); nothing but an undo comes after the end.
- an undo takes back the latest effective events (`audit.bad_undo`). A commitment, a reveal and a
  resume are facts about the match's chance and its referees, not actions: no undo takes one back
  (`SEGMENT_EVENTS`), so a revealed seed stays revealed and its segment closed to chance (the next
  chance needs a match.resumed and a fresh commitment).

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
from matchlog.engines.chance import ALGORITHM, START, ChanceSource, commitment
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    IllegalAction,
    KnockoutGamePlayed,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    PlayerRemoved,
    Record,
    UsageError,
    seat_problem,
)

from .pairs import PairChance

__all__ = ["NOT_A_LITERAL", "SEGMENT_EVENTS", "AuditFinding", "Judge", "Segment", "literal"]

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
#: Events that open a chance segment, commit to its seed or reveal it: facts about the match's
#: chance and its referees, which no undo takes back (they are not actions of the match).
SEGMENT_EVENTS = (ChanceCommitted, ChanceRevealed, MatchResumed)
#: Events of every game that are not a seat's answer, a ruling or chance.
_LIFECYCLE = (MatchStarted, *SEGMENT_EVENTS, MatchEnded, PlayerRemoved, ActionsUndone)
#: The fields of an event that name one seat of its match.
_SEAT_FIELDS = ("seat", "target", "by")


#: What each type of event is to a judge (`Judge._kind`), filled as types are met.
_KINDS: dict[type[Event], str] = {}
#: The seat fields each type of event has (`_seat_fields`), filled as types are met.
_SEATED: dict[type[Event], tuple[str, ...]] = {}


class AuditFinding(msgspec.Struct, frozen=True, kw_only=True):
    """One thing the log says that the rules (or the chain) do not allow."""

    match_id: str
    seq: int | None
    rule: str
    message: str
    evidence: dict[str, Any] = msgspec.field(default_factory=dict)


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value) if isinstance(value, msgspec.Struct | tuple | list) else value


class Segment:
    """One chance segment of a match: from its start (seq 0) or a match.resumed to the next; its
    commitment, its seed where known, its reveal, and its effective draws (the k-th of which is the
    seed's k-th draw)."""

    __slots__ = ("checked", "committed", "draws", "positions", "revealed", "secret", "start")

    def __init__(self, start: int) -> None:
        self.start = start
        self.committed: ChanceCommitted | None = None
        #: The seed, where the judge knows it; `checked`: known from the commitment on, so every
        #: draw was judged as it came (else the reveal judges them all).
        self.secret: bytes | None = None
        self.checked = False
        self.revealed: int | None = None  # the seq of its reveal
        #: The effective draws, in order: (seq, event, the state before it: kept until the seed is
        #: known, to judge the draw then).
        self.draws: list[tuple[int, Event, Any]] = []
        #: Where the seed's stream is before each effective draw (the k-th before draw k), and after
        #: the last: an undo of draws rewinds to an earlier one.
        self.positions: list[tuple[int, int, int]] = []

    def knows(self, seed: bytes) -> None:
        """Learn the segment's seed before its first draw: every draw is judged as it comes."""
        self.secret, self.checked, self.positions = seed, True, [START]

    def source(self) -> ChanceSource:
        """The seed's stream where the next draw starts."""
        assert self.secret is not None
        return ChanceSource.at(self.secret, self.positions[len(self.draws)])


class Judge:
    """One match's judge: the effective states the match folds to (an undo pops them), each seat's
    rejections, its chance segments, and the ruling on the next event.

    `seeds` are the chance seeds the judge knows (a segment committed to one of them is judged
    draw by draw); `service_chance` says that only the service may record the match's chance, and
    it tells the judge so with `by_service`.
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
            UsageError: the game is not one this matchlog knows, or is not played by that many, or a
                seat's name or player is one no table takes (`usage.seat_name`), or a duel tag no duel
                at that table could give (`usage.duel`, `usage.sprt`: `events.Duel.check`).
            MatchlogError: the rules cannot set the table up as described (options, a position).
        """
        self.match_id = str(match_id)
        self.engine: Engine[Any] = engine if engine is not None else get_engine(started.game)
        self.seats = len(started.seats)
        self.engine.spec.check_players(self.seats)
        for seat, sitting in enumerate(started.seats):  # the one rule for a seat, whoever writes it
            problem = seat_problem(sitting)
            if problem is not None:
                raise UsageError(f"seat {seat}: {problem}", code="usage.seat_name")
        if started.duel is not None:  # a tag no duel at this table could give its game
            started.duel.check(self.seats)
        self.started = started
        #: In a new game of a duel, the pair's chance as the log holds it (`replay.pairs`, set by the
        #: clerk): what follows the start is the commitment to the pair's seed. None: nothing to
        #: hold the match to.
        self.pair_chance: PairChance | None = None
        #: The effective history: (seq, state after it, the seat that answered it or None); an undo
        #: pops it. Segment events are not on it (no undo takes one back).
        self.stack: list[tuple[int, Any, int | None]] = [(0, self.engine.start(started), None)]
        self.next_seq = 1
        self.service_chance = service_chance
        self.rulings: Mapping[type[Event], str] = getattr(self.engine, "rulings", {})
        self.limit = self.engine.spec.rejection_limit
        #: Each seat's latest rejection code, and its rejected answers in a row to the decision it
        #: was asked (since its last accepted answer).
        self.rejected: dict[int, str] = {}
        self.streak: dict[int, int] = {}
        self.ended: int | None = None
        self.counts = dict.fromkeys(COUNTS, 0)
        self.previous: Event = started
        # Chance: the seeds known, by commitment; the segments (the last is in play); each
        # commitment's segment; the seq of a resume still owing a commitment; the seq of the first
        # reveal of a game with hidden information (nothing but the end follows it).
        self.seeds = {commitment(seed): seed for seed in seeds}
        self.segments: list[Segment] = [Segment(0)]
        self.commitments: dict[str, Segment] = {}
        self.awaiting: int | None = None
        self.hidden_revealed: int | None = None
        #: The seq of the latest reveal (a chance seed, or what the engine's `reveals` says shows a
        #: hidden value to a seat or to everyone): no undo takes back anything up to it.
        self.revealed_at: int | None = None
        self._reveals: Any = getattr(self.engine, "reveals", None)
        # What the judge itself cleared (an answer it checked, a draw it made) in the present state:
        # recording it is not judged a second time.
        self._cleared: tuple[Event, Any, tuple[str, ...]] | None = None
        self._refused: tuple[int, str, Any] | None = None
        #: A chance event judged: (event, state before, whether it is a draw, the stream after it).
        self._drawn: tuple[Event, Any, bool, tuple[int, int, int] | None] | None = None

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

    @property
    def segment(self) -> Segment:
        """The chance segment in play."""
        return self.segments[-1]

    def undoable(self) -> tuple[int, ...]:
        """The seqs an arbiter's undo takes back: the last effective answer of a seat and every
        effective event after it (segment events stay: they are not actions).

        Raises:
            UsageError: no seat has answered anything that is still effective.
        """
        stack = self.stack
        for index in range(len(stack) - 1, 0, -1):
            if stack[index][2] is not None:
                return tuple(seq for seq, _, _ in stack[index:])
        raise UsageError("there is nothing to undo: no answer of any seat is in effect", code="usage.nothing_to_undo")

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

        # (positional only: a finding's evidence may say which rule was broken, as `rule`)
        def find(rule: str, message: str, /, at: int = seq, **evidence: Any) -> None:
            evidence = {key: _plain(value) for key, value in evidence.items()}
            found.append(AuditFinding(match_id=self.match_id, seq=at, rule=rule, message=message, evidence=evidence))

        kind = _KINDS.get(type(event)) or self._kind(type(event))
        # An event of another game, or one only views show, is nothing this match's rules can judge.
        if type(event) not in self.engine.views or event.view_only:
            find("match.wrong_game", f"{event.tag} is not an event of a {self.engine.spec.title} match")
            return found, counts
        # An event naming a seat the table does not have says nothing the rules can judge.
        off = _off_the_table(event, self.seats)
        if off is not None:
            find("match.no_such_seat", f"{event.tag} names {off}, but the match has seats 0 to {self.seats - 1}")
            return found, counts
        if self.ended is not None and kind != "undo":  # an arbiter may undo after the end
            find("audit.after_end", f"{event.tag} was recorded after the match ended at seq {self.ended}")
        if self.awaiting is not None and kind != "committed":
            find(
                "chance.uncommitted",
                "the match was resumed without a commitment to a fresh seed",
                at=self.awaiting,
            )
        if self.hidden_revealed is not None and kind not in ("revealed", "ended"):
            find(
                "chance.hidden_revealed",
                f"the chance seed revealed at seq {self.hidden_revealed} has shown every seat the hidden state of "
                f"this {self.engine.spec.title} match: nothing but its end may follow it",
            )
            return found, counts
        if self.service_chance and not by_service and kind in ("committed", "revealed", "resumed", "ended"):
            find(
                "chance.from_service",
                f"the service draws this match's chance, resumes it and ends it; {event.tag} is not the referee's",
            )
            return found, counts
        if seq == 1 and self.pair_chance is not None:
            self.pair_chance.judge(event, find)
        engine, before = self.engine, self.stack[-1][1]
        match event:
            case ActionsUndone(seqs=seqs):
                counts = ("undos",)
                effective = [s for s, _, _ in self.stack[1:]]
                if not seqs or list(seqs) != effective[-len(seqs) :]:
                    find(
                        "audit.bad_undo",
                        "the undo does not take back the latest effective events (a commitment, a reveal and a "
                        "resume are never taken back)",
                        undone=seqs,
                        latest=effective[-len(seqs) :] if seqs else [],
                    )
                elif self.revealed_at is not None and seqs[0] <= self.revealed_at:
                    find(
                        "audit.undo_past_reveal",
                        f"the undo takes back seq {seqs[0]}, before what seq {self.revealed_at} revealed: a reveal "
                        "cannot be taken back (what it showed stays known)",
                        undone=seqs,
                    )
            case MatchStarted():
                find("audit.restarted", "a second match.started inside the match")
            case ChanceCommitted():
                if self.segment.committed is not None:
                    find(
                        "chance.committed_twice",
                        "the referee committed to a second seed in one segment (only a resume starts another)",
                    )
                elif seq != self.segment.start + 1:
                    find("chance.late_commitment", "the commitment does not come before everything else")
            case ChanceRevealed(seed=seed):
                self._judge_reveal(seed, find)
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
                    committed = self.segment.committed
                    if committed is not None and self.segment.revealed is None:
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
                streak = self.streak.get(seat, 0)
                if streak < self.limit:
                    find(
                        "audit.unexplained_removal",
                        f"seat {seat} was removed for {Rule.REJECTION_LIMIT} ({reason}) after {streak} rejected "
                        f"answers in a row; {self.engine.spec.title}'s limit is {self.limit}",
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
                        find(error.code, f"an accepted answer breaks the rules: {error.message}", event=event)
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
        """Judge an event that only chance records: who records it, its turn, its possibility, its
        segment, its seed."""
        engine = self.engine
        if self.service_chance and not by_service:
            find("chance.from_service", f"the service draws this match's chance; {event.tag} is not the referee's")
            return ()
        turn = engine.to_act(before)
        if turn is None or turn.seat != CHANCE:
            whose = "the match was over" if turn is None else f"seat {turn.seat} was to {turn.decision}"
            find("chance.out_of_turn", f"chance recorded {event.tag} when {whose}", event=event)
            self._drawn = (event, before, False, None)
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
        segment = self.segment
        if segment.revealed is not None:
            find(
                "chance.after_reveal",
                f"the seed of this chance segment was revealed at seq {segment.revealed}: what it draws next is "
                "known to everyone (a new segment needs match.resumed and a fresh commitment)",
                event=event,
            )
            self._drawn = (event, before, False, None)
            return ("chance",)
        if segment.secret is None:
            self._drawn = (event, before, True, None)
            return ("chance",)
        source = segment.source()
        try:
            derived: Event | None = engine.chance(before, source)
        except Exception:  # what the seed draws here cannot even be computed
            derived = None
        if derived != event:
            find(
                "chance.not_from_seed",
                f"the seed's draw {len(segment.draws) + 1} of this segment is something else",
                recorded=event,
                derived=derived,
            )
        self._drawn = (event, before, True, source.position)
        return ("chance", "chance_rederived")

    def _judge_reveal(self, seed: str, find: Any) -> None:
        """Judge a reveal: it matches a commitment, and every effective draw of that segment not
        judged yet (its seed was unknown) is what the seed draws."""
        try:
            secret = bytes.fromhex(seed)
        except ValueError:
            find("chance.reveal_mismatch", "the revealed seed is not hex", seed=seed)
            return
        segment = self.commitments.get(commitment(secret))
        if segment is None:
            find(
                "chance.reveal_mismatch",
                "the revealed seed does not match any commitment of the match",
                commitments=sorted(self.commitments),
                seed=seed,
            )
            return
        if segment.checked or segment.committed is None or segment.committed.algorithm != ALGORITHM:
            return
        source = ChanceSource(secret)
        for number, (at, drawn, before) in enumerate(segment.draws, start=1):
            try:
                derived: Event | None = self.engine.chance(before, source)
            except Exception:
                derived = None
            if derived != drawn:
                find(
                    "chance.not_from_seed",
                    f"the seed's draw {number} of this segment is something else",
                    at=at,
                    recorded=drawn,
                    derived=derived,
                )

    def apply(self, seq: int, event: Event, counts: Sequence[str] = ()) -> bool:
        """Take `event` at `seq` whatever it is (judged already, or written already); False, and
        nothing taken, when the rules cannot fold it."""
        before = self.stack[-1][1]
        kind = _KINDS.get(type(event)) or self._kind(type(event))
        on_the_stack = kind not in ("undo", "revealed", "resumed", "committed")
        if on_the_stack:
            try:
                after = self.engine.apply(before, event)
            except Exception:  # a log the rules cannot fold any further
                return False
            if self._reveals is not None and self._reveals(before, event, after):
                self.revealed_at = seq
        tally = self.counts
        for key in counts:
            tally[key] += 1
        self._cleared = self._refused = None
        self.previous = event
        self.next_seq = seq + 1
        drawn, self._drawn = self._drawn, None
        if kind == "answer":  # (most events: first)
            self.streak.pop(event.actor, None)  # type: ignore[arg-type]
        elif kind == "chance":
            self._draw(seq, event, before, drawn)
        elif kind == "rejected":
            seat, code = event.seat, event.code  # type: ignore[attr-defined]
            self.rejected[seat] = code
            turn = self.engine.to_act(before)
            if turn is not None and turn.seat == seat and turn.decision == event.decision:  # type: ignore[attr-defined]
                self.streak[seat] = self.streak.get(seat, 0) + 1  # (a protocol's own ruling does not count)
        elif kind == "undo":
            seqs, by = event.seqs, event.by  # type: ignore[attr-defined]
            if by is not None:  # a seat's undo is an accepted answer of its own
                self.streak.pop(by, None)
            taken = set(seqs)
            if self.ended in taken:
                self.ended = None  # the end is taken back: the match goes on
            stack = self.stack
            while len(stack) > 1 and stack[-1][0] in taken:
                stack.pop()
            for segment in self.segments:  # the draws taken back rewind their seed's stream
                draws = segment.draws
                while draws and draws[-1][0] in taken:
                    draws.pop()
            return True
        elif kind == "ended":
            self.ended = seq
        elif kind == "revealed":
            self._reveal(seq, event.seed)  # type: ignore[attr-defined]
            return True
        elif kind == "resumed":  # a new chance segment, drawn from its own seed
            self.segments.append(Segment(seq))
            self.awaiting = seq if self.commitments else None
            return True
        elif kind == "committed":
            self._commit(seq, event)  # type: ignore[arg-type]
            return True
        self.stack.append((seq, after, event.actor))
        return True

    def _draw(self, seq: int, event: Event, before: Any, drawn: tuple[Any, ...] | None) -> None:
        """Take a chance event: a draw of the segment in play when chance was to act (before its
        reveal), moving its seed's stream on where the seed is known."""
        if drawn is None or drawn[0] is not event or drawn[1] is not before:
            turn = self.engine.to_act(before)
            is_draw = turn is not None and turn.seat == CHANCE and self.segment.revealed is None
            drawn = (event, before, is_draw, None)
        if not drawn[2]:
            return
        segment = self.segment
        if segment.secret is not None:
            after = drawn[3]
            if after is None:
                source = segment.source()
                with contextlib.suppress(Exception):  # (one it cannot even compute: a finding)
                    self.engine.chance(before, source)
                after = source.position
            del segment.positions[len(segment.draws) + 1 :]
            segment.positions.append(after)
        # The state before the draw is kept only to judge it once the seed is revealed (a segment
        # with no commitment never reveals one).
        kept = None if segment.checked or segment.committed is None else before
        segment.draws.append((seq, event, kept))

    def _reveal(self, seq: int, seed: str) -> None:
        self.revealed_at = seq  # (whatever it reveals: it is known to every reader from here on)
        try:
            secret = bytes.fromhex(seed)
        except ValueError:  # (one that is not hex: a finding)
            return
        segment = self.commitments.get(commitment(secret))
        if segment is None:  # (a finding)
            return
        if segment.revealed is None:
            segment.revealed = seq
        segment.secret, segment.checked = secret, True
        segment.draws = [(at, drawn, None) for at, drawn, _ in segment.draws]  # (judged: the states may go)
        if self.engine.spec.hidden and self.hidden_revealed is None:
            self.hidden_revealed = seq

    def _commit(self, seq: int, event: ChanceCommitted) -> None:
        self.awaiting = None
        segment = self.segment
        if segment.committed is None and seq == segment.start + 1:
            segment.committed = event
            self.commitments[event.commitment] = segment
            seed = self.seeds.get(event.commitment)
            if seed is not None and event.algorithm == ALGORITHM:
                segment.knows(seed)

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
                self._drawn = None
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
        """The event chance records now: what the segment's seed draws next, where the judge knows
        it, else what `rng` draws (the engine only draws what is possible), cleared to be taken next.

        Raises:
            IllegalAction: chance is not to act now (`chance.not_now`), the segment's seed is
                revealed (`chance.after_reveal`), or the judge knows no seed and was given no
                random source (`chance.uncommitted`).
        """
        before = self.stack[-1][1]
        turn = self.engine.to_act(before)
        if turn is None or turn.seat != CHANCE:
            whose = "the match is over" if turn is None else f"seat {turn.seat} is to {turn.decision}"
            raise IllegalAction("chance.not_now", f"chance is not to act now: {whose}")
        segment = self.segment
        if segment.revealed is not None:
            raise IllegalAction(
                "chance.after_reveal",
                f"the seed of this chance segment was revealed at seq {segment.revealed}: a new segment needs "
                "match.resumed and a fresh commitment",
            )
        if segment.secret is None:
            if rng is None:
                raise IllegalAction(
                    "chance.uncommitted", "there is no seed to draw this match's chance from (nor another source)"
                )
            event = self.engine.chance(before, rng)
            self._cleared = (event, before, ("chance",))
            self._drawn = (event, before, True, None)
            return event
        source = segment.source()
        event = self.engine.chance(before, source)
        self._cleared = (event, before, ("chance", "chance_rederived"))
        self._drawn = (event, before, True, source.position)
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
        # The stack and a segment's draws only grow unless an undo pops them or a reveal lets their
        # states go (copying them whole for every batch would cost a long match's length each time).
        segments = [
            (
                segment,
                segment.committed,
                segment.secret,
                segment.checked,
                segment.revealed,
                list(segment.draws) if undoes or not segment.checked else len(segment.draws),
                list(segment.positions),
            )
            for segment in self.segments
        ]
        return (
            list(self.stack) if undoes else len(self.stack),
            dict(self.rejected),
            dict(self.streak),
            self.ended,
            dict(self.counts),
            self.previous,
            self.next_seq,
            segments,
            dict(self.commitments),
            self.awaiting,
            self.hidden_revealed,
            self.revealed_at,
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
            segments,
            self.commitments,
            self.awaiting,
            self.hidden_revealed,
            self.revealed_at,
        ) = saved[1:]
        self.segments = []
        for segment, committed, secret, checked, revealed, draws, positions in segments:
            segment.committed, segment.secret, segment.checked, segment.revealed = committed, secret, checked, revealed
            if isinstance(draws, list):
                segment.draws = draws
            else:
                del segment.draws[draws:]
            segment.positions = positions
            self.segments.append(segment)
        self._cleared = self._refused = self._drawn = None


def _refusal(finding: AuditFinding) -> IllegalAction:
    return IllegalAction(finding.rule, f"seq {finding.seq}: {finding.message}")


def _seat_fields(kind: type[Event]) -> tuple[str, ...]:
    """The fields of a type of event that name one seat (remembered for the type): a seat, a
    target or an asker that is a number (Fish's `target` is a tile)."""
    fields = tuple(
        field.name
        for field in msgspec.structs.fields(kind)
        if field.name in _SEAT_FIELDS and field.type in (int, int | None)
    )
    _SEATED[kind] = fields
    return fields


def _off_the_table(event: Event, seats: int) -> str | None:
    """What `event` names that the table of `seats` does not have (a seat, an outcome of another
    table), or None."""
    kind = type(event)
    fields = _SEATED.get(kind)
    if fields is None:
        fields = _seat_fields(kind)
    for name in fields:
        value = getattr(event, name)
        if value is not None and not 0 <= value < seats:
            return f"{name} {value}"
    if isinstance(event, MatchEnded):
        outcome = event.outcome
        if len(outcome.places) != seats or any(not 1 <= place <= seats for place in outcome.places):
            return f"places {list(outcome.places)}"
        if outcome.scores and len(outcome.scores) != seats:
            return f"scores for {len(outcome.scores)} seats"
        named = (*outcome.winners, *outcome.removed)
    elif isinstance(event, KnockoutGamePlayed):
        named = (*event.seats, *event.winners, *event.removed)
    else:
        return None
    return next((f"seat {seat}" for seat in named if not 0 <= seat < seats), None)


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
