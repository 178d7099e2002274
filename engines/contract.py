"""The engine contract: one small, pure API that every game implements.

An engine is a reducer. `start` builds the state a match's `MatchStarted` describes, `apply` folds
one recorded event into a new state, and everything else reads a state: whose decision it is
(`to_act`), what they may answer (`legal`), whether an answer is allowed (`parse`, then `check`,
which raise `IllegalAction` with a stable code), how it ended (`outcome`), what one seat may see
(`view`, and `views`: what each seat sees of each event type, see `engines.views`), and how to
show it (`render`, `describe`). No engine does I/O, reads a clock or
draws a random number of its own: chance reaches it as recorded events. When chance must act,
`to_act` names the seat CHANCE, and `chance(state, rng)` turns the referee's random source into the
event to record (a roll, a shuffle, a generated board); where the possibilities can be listed,
`chance_outcomes` lists them, equally likely, so an audit can check a recorded one was possible.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

import msgspec

from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    AnswerWithheld,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    IllegalAction,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Outcome,
    PlayerRemoved,
    UsageError,
    Withheld,
)

from .views import Derived, Reveal

__all__ = [
    "CHANCE",
    "MAX_SEATS",
    "Engine",
    "GameSpec",
    "Rule",
    "Turn",
    "among_outcomes",
    "awaited_turn",
    "describe_lifecycle",
    "ordinal",
    "parse_options",
    "shown",
]

#: The seat of chance: `to_act` returns it when the referee must roll, shuffle or deal.
CHANCE = -1

#: The most seats any table may have, a game "without an upper limit" too: the log numbers seats as
#: SMALLINT (32,767 at most), and every output of a match grows with its seats. Every start goes
#: through `GameSpec.check_players`, so this is the one place a table is bounded.
MAX_SEATS = 4_096

State = TypeVar("State")


class Rule:
    """Codes every game shares for answers the rules forbid."""

    MATCH_OVER = "match.over"
    NOT_YOUR_TURN = "match.not_your_turn"
    WRONG_DECISION = "match.wrong_decision"
    #: A player removed because it kept answering what the rules reject (the game's policy sets how often).
    REJECTION_LIMIT = "match.rejection_limit"
    #: A chance event that chance could not have recorded there (audit's finding).
    IMPOSSIBLE_CHANCE = "chance.impossible"


class Turn(msgspec.Struct, frozen=True):
    """Whose decision is awaited, and of what kind (a game's own word: "hand", "guess", "move")."""

    seat: int
    decision: str


class GameSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A game declared as data: its name, table sizes, whether it has chance or hidden information,
    its options type, its state type, and a version that changes whenever its states do.
    `tournament` marks the record of a tournament (its moves are the games it played), which
    matchlog shows and replays like a game but does not referee between players."""

    name: str
    title: str
    min_players: int
    max_players: int | None
    chance: bool
    hidden: bool
    options: type
    state: type
    version: int = 1
    tournament: bool = False
    #: Rejected answers in a row (to the decision a seat is asked) that remove a player
    #: (`Rule.REJECTION_LIMIT`): the referee removes it there, and the judge takes such a removal
    #: only there, whatever its reason says.
    rejection_limit: int = 100

    def check_players(self, count: int, *, code: str = "usage.players") -> None:
        """Refuse a table of `count` players this game is not played by (never more than `MAX_SEATS`).

        Raises:
            UsageError: with `code`, saying how many players the game takes.
        """
        if count >= self.min_players and count <= (self.max_players or MAX_SEATS):
            return
        if count > MAX_SEATS:
            takes = f"at most {MAX_SEATS:,}" if self.max_players is None else f"at most {self.max_players}"
        elif self.max_players is None:
            takes = f"at least {self.min_players}"
        elif self.max_players == self.min_players:
            takes = f"exactly {self.min_players}"
        else:
            takes = f"{self.min_players} to {self.max_players}"
        raise UsageError(f"{self.title} is played by {takes} players, not {count}", code=code)

    @property
    def snapshot_key(self) -> str:
        """The key under which folded states of this engine version are cached."""
        return f"{self.name}:{self.version}"


class Engine(Protocol[State]):
    """What every game implements. `start` and `apply` fold a match's events into states; the rest
    read a state: whose decision it is, what may be answered, whether an answer is allowed, how the
    match ended, what one seat may see, and how to show it. Pure: no I/O, no clock, no random
    numbers of its own; chance reaches an engine as recorded events."""

    spec: GameSpec
    #: What each seat sees of every event type the game's log may hold (`engines.views`): a type
    #: not declared here shows as nothing, and the log refuses it.
    views: Mapping[type[Event], Reveal]
    #: What each figure `tally` counts (and the answers and rejections every game counts) is derived
    #: from (`engines.views.Derived`): a figure not declared here is withheld from every reader but
    #: the whole record's.
    figures: Mapping[str, Derived]
    #: Optionally, the events the referee records as its ruling on a rejected answer (Porrinha's
    #: voided guess), each with the decision it rules on: the judge takes one only right after that
    #: seat's rejection of that decision. Any other event no seat answers is chance's.
    #: rulings: Mapping[type[Event], str]
    #: Optionally, for a game with hidden information, whether an event shows a seat (or everyone) a
    #: value hidden from it before (a tile turned up, the hands of a settled round): the judge then
    #: refuses any undo that would take it back (`audit.undo_past_reveal`), as it does for a chance
    #: seed revealed. Without it, only a seed's reveal is one.
    #: def reveals(self, before: State, event: Event, after: State) -> bool: ...
    #: Optionally, `apply` of a run of events in one call (what a fold does, `replay.fold_all`),
    #: equal to applying them one by one, for a game that can fold without a state per event.
    #: def apply_all(self, state: State, events: Sequence[Event]) -> State: ...

    def start(self, started: MatchStarted) -> State:
        """The state at seq 0: the game's start, or the position `started.position` describes.
        Raises UsageError for options, seats or a position the game cannot take (a position's
        code is usage.position)."""
        ...

    def apply(self, state: State, event: Event) -> State:
        """The state after `event`. Pure; assumes the referee already checked the event."""
        ...

    def to_act(self, state: State) -> Turn | None:
        """Whose decision is awaited, or None when the match is over."""
        ...

    def chance(self, state: State, rng: random.Random) -> Event:
        """The event chance records now, drawn from the referee's `rng` (only when `to_act` is CHANCE)."""
        ...

    def chance_outcomes(self, state: State) -> tuple[Event, ...]:
        """The equally likely events chance may record now, where they can be listed (else empty)."""
        ...

    def tally(self, before: State, event: Event, after: State) -> tuple[tuple[int | None, str, float], ...]:
        """The game's own figures `event` adds, as (seat or None for the match, figure, amount):
        see `engines.figures`. Every figure is a sum over the match; one known only at the end
        (pips left, fish) is added by the MatchEnded event."""
        ...

    def check_chance(self, state: State, event: Event) -> None:
        """Judge a recorded chance event: raises IllegalAction (Rule.IMPOSSIBLE_CHANCE) when chance
        could not have recorded `event` in `state` (a die of 7, a tile dealt twice, a board with
        the wrong number of holes)."""
        ...

    def legal(self, state: State, seat: int) -> tuple[Event, ...]:
        """Every answer `seat` may give now, as the events they would record (empty if not its turn)."""
        ...

    def parse(self, state: State, seat: int, answer: object) -> Event:
        """The event a raw protocol answer proposes. Raises IllegalAction for a malformed answer."""
        ...

    def check(self, state: State, seat: int, action: Event) -> None:
        """Judge a proposed event. Raises IllegalAction (with the rule's code) when it is not allowed."""
        ...

    def outcome(self, state: State) -> Outcome | None:
        """How the match ended, or None while it goes on."""
        ...

    def view(self, state: State, seat: int | None) -> State:
        """The state as `seat` may see it (None: a spectator), with what it may not know removed."""
        ...

    def render(self, state: State) -> str:
        """The state drawn as text for a terminal."""
        ...

    def describe(self, before: State, event: Event, after: State) -> str:
        """One line saying what `event` did."""
        ...


def parse_options(spec: GameSpec, given: dict[str, Any] | None, *, bounded: bool = True) -> Any:
    """The game's options from a plain dict (missing ones take their defaults). The bounds an
    options type declares keep a match matchlog plays from running for hours: with `bounded=False`
    (a match a log holds already, which a version without those bounds may have written, or one a
    referee elsewhere drives through the service) a value past one is taken as given.

    Raises:
        UsageError: an unknown option or a value of the wrong type, or (if `bounded`) past its bounds.
    """
    given = dict(given or {})
    past: dict[str, Any] = {}
    while True:
        try:
            options = msgspec.convert(given, spec.options)
            return msgspec.structs.replace(options, **past) if past else options
        except msgspec.ValidationError as error:
            said = str(error)
            # A bound the options type declares, said in words: "chopsticks is at most 100".
            bound = re.fullmatch(r"Expected `\w+` (>=|<=) (\S+) - at `\$\.(\w+)`", said)
            if bound is not None and not bounded and bound[3] in given:
                past[bound[3]] = given.pop(bound[3])  # the rest is still checked, with its default here
                continue
            if bound is not None:
                said = f"{bound[3]} is {'at least' if bound[1] == '>=' else 'at most'} {bound[2]}"
            raise UsageError(f"{spec.name} options: {said}", code="usage.options") from None


def awaited_turn(engine: Engine[Any], state: Any, seat: int) -> Turn:
    """The decision `engine` awaits in `state`, if it is `seat`'s: the guards every game's `parse`
    and `check` run first, in this order.

    Raises:
        IllegalAction: the match is over (`match.over`), or it is not `seat`'s turn (`match.not_your_turn`).
    """
    turn = engine.to_act(state)
    # Disallow answers once the game is over.
    if turn is None:
        raise IllegalAction(Rule.MATCH_OVER, "the match is over")
    # Disallow answers out of turn (and while chance is to act: a deal, a roll, a board).
    if turn.seat != seat:
        raise IllegalAction(Rule.NOT_YOUR_TURN, f"it is not seat {seat}'s turn ({turn.decision} is awaited)")
    return turn


def shown(value: object, limit: int = 60) -> str:
    """A short text for any answer, even one too big to print (a 5,000-digit int, a huge string)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**18:
        return f"{'-' if value < 0 else ''}a {len(str(abs(value))) if abs(value) < 10**4000 else 'huge'}-digit number"
    try:
        text = repr(value)
    except Exception:
        return f"an unprintable {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ordinal(place: int) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th"."""
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def describe_lifecycle(names: tuple[str, ...], event: Event) -> str | None:
    """The line for an event every game shares, or None for a game's own event."""

    def name(seat: int | None) -> str:
        if seat is None:
            return "the arbiter"
        return names[seat] if 0 <= seat < len(names) else f"seat {seat}"

    match event:
        case MatchStarted(game=game, seats=seats, position=position):
            # Only that there is a position: it may hold what a seat may not see (hidden tiles).
            where = " from a given position" if position is not None else ""
            return f"{game} match starts{where}: " + ", ".join(
                f"seat {i} {s.name} ({s.player})" for i, s in enumerate(seats)
            )
        case MatchResumed(players=players):
            return "the referee resumes the match: " + ", ".join(
                f"seat {i} {name(i)} ({player})" for i, player in enumerate(players)
            )
        case AnswerRejected(seat=seat, decision=decision, answer=answer, code=code, message=message):
            return f"{name(seat)} answered {answer} to {decision}: rejected [{code}] {message}"
        case PlayerRemoved(seat=seat, code=code, reason=reason):
            return f"{name(seat)} is removed [{code}]" + (f": {reason}" if reason else "")
        case AnswerWithheld(seat=seat):
            return f"{name(seat)} answers"
        case Withheld():
            return "something you may not see happens"
        case ActionsUndone(seqs=seqs, reason=reason, by=by):
            taken = ", ".join(str(s) for s in seqs)
            return f"{name(by)} takes back seq {taken}" + (f": {reason}" if reason else "")
        case ChanceCommitted(commitment=commitment):
            return f"the referee commits to the seed of its chance (sha256 {commitment[:16]}…)"
        case ChanceRevealed(seed=seed):
            return f"the referee reveals its chance seed {seed[:16]}…: every draw can be re-derived"
        case MatchEnded(outcome=outcome, reason=reason):
            placed = ", ".join(f"{ordinal(outcome.places[s])} {name(s)}" for s in outcome.ranking)
            return f"match over ({outcome.result}{': ' + reason if reason else ''}): {placed}"
    return None


def among_outcomes(engine: Engine[Any], state: Any, event: Event) -> None:
    """`check_chance` for a game whose chance outcomes can all be listed here.

    Raises:
        IllegalAction: `event` is not one of them.
    """
    if event not in engine.chance_outcomes(state):
        raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"chance could not record {shown(event, 80)} here")


def not_allowed(code: str, message: str) -> IllegalAction:
    """Shorthand used by engines' guards."""
    return IllegalAction(code, message)
