"""Porrinha: a game of hidden hands and public guesses, with no chance at all.

Every active player closes a hand on 0..its chopsticks; then, in turn from the first guesser, each
says a guess of the total, which nobody may repeat. Guessing right costs a chopstick (the aim is to
lose them all) and makes you first guesser; the last player left holding chopsticks loses. It shows
hidden information (hands stay secret until the round settles) and sequential public information
(each guesser hears the guesses before its own).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import Annotated, Literal

import msgspec

from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    GuessMade,
    GuessVoided,
    HandChosen,
    HandHidden,
    HandReset,
    IllegalAction,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Outcome,
    PlayerRemoved,
    UsageError,
)

from .contract import GameSpec, Rule, Turn, awaited_turn, describe_lifecycle, ordinal, parse_options, shown
from .views import (
    Derived,
    by_decision,
    declare,
    declare_figures,
    everyone,
    lifecycle,
    private,
    shared_figures,
    withheld_answer,
)

__all__ = [
    "CLOSED_HAND",
    "ENGINE",
    "INVALID_GUESS",
    "NOT_PLAYING",
    "NO_HAND",
    "PENDING_GUESS",
    "Porrinha",
    "PorrinhaOptions",
    "PorrinhaRule",
    "PorrinhaState",
]

# The guess markers of the original core's `core/util.h`, kept with their values.
PENDING_GUESS = -1
NOT_PLAYING = -2
INVALID_GUESS = -3
#: A hand in `last_hands` of a player that did not play that round (the core's -1).
NO_HAND = -1
#: A hand in `hands` as another seat's view shows it: closed, on a number it may not see.
CLOSED_HAND = -1


class PorrinhaRule:
    """Codes of the rules Porrinha's `parse` and `check` enforce."""

    NOT_AN_INTEGER = "porrinha.not_an_integer"
    HAND_OUT_OF_RANGE = "porrinha.hand_out_of_range"
    GUESS_OUT_OF_RANGE = "porrinha.guess_out_of_range"
    GUESS_TAKEN = "porrinha.guess_taken"


#: The most chopsticks a player may hold, at the start or in a position. Every chopstick costs at least
#: one round, and as many more as it takes someone to guess the total right (a hand and the guesses
#: grow with it): with many more, a match would run for hours without being a different game.
MAX_CHOPSTICKS = 100
#: The most chopsticks a table starts with (the `chopsticks` option times the players), past any
#: option's bound: the guesses anyone lists, the judge and a dispute report included, run from 0
#: to the table's chopsticks.
MAX_TABLE_CHOPSTICKS = 100_000


class PorrinhaOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Chopsticks each player starts with, and what an invalid answer costs.

    `lenient` (the seed's behaviour): an invalid hand counts as 0, an invalid guess as INVALID_GUESS.
    `strict`: the player who gives an invalid answer is removed from the game.
    """

    chopsticks: Annotated[int, msgspec.Meta(ge=1, le=MAX_CHOPSTICKS)] = 3
    policy: Literal["lenient", "strict"] = "lenient"


class PorrinhaState(msgspec.Struct, frozen=True, kw_only=True):
    """The table between two events."""

    options: PorrinhaOptions
    names: tuple[str, ...]
    chopsticks: tuple[int, ...]
    hands: tuple[int | None, ...]  # this round; None until chosen (and for players not playing); CLOSED_HAND in a view
    guesses: tuple[int, ...]  # this round: a guess, PENDING_GUESS, NOT_PLAYING or INVALID_GUESS
    out: tuple[int, ...] = ()  # seats that emptied their hands, in that order
    removed: tuple[int, ...] = ()  # seats the referee removed, in that order
    round: int = 1
    first_guesser: int = 0
    last_hands: tuple[int, ...] = ()  # the last settled round; NO_HAND for a seat that did not play
    last_guesses: tuple[int, ...] = ()
    last_total: int = -1
    last_winner: int = -1
    ended: bool = False  # the referee recorded MatchEnded

    @property
    def players(self) -> int:
        return len(self.names)

    def active(self, seat: int) -> bool:
        """Whether `seat` still plays (has chopsticks and was not removed)."""
        return seat not in self.out and seat not in self.removed

    @property
    def active_seats(self) -> tuple[int, ...]:
        return tuple(seat for seat in range(self.players) if self.active(seat))

    @property
    def chopstick_count(self) -> int:
        """Chopsticks on the table: the sum over the players still playing."""
        return sum(self.chopsticks[seat] for seat in self.active_seats)

    @property
    def over(self) -> bool:
        return self.ended or len(self.active_seats) < 2

    def order(self) -> tuple[int, ...]:
        """Active seats in this round's order: circular from the first guesser."""
        n = self.players
        return tuple(s for s in ((self.first_guesser + i) % n for i in range(n)) if self.active(s))


def _hand_hidden(event: Event) -> Event:
    return HandHidden(seat=event.seat)  # type: ignore[attr-defined]


class Porrinha:
    """The Porrinha engine (see the module docstring)."""

    spec = GameSpec(
        name="porrinha",
        title="Porrinha",
        min_players=2,
        max_players=None,
        chance=False,
        hidden=True,
        options=PorrinhaOptions,
        state=PorrinhaState,
    )

    #: A hand, valid or not (a lenient rejection counts as 0), is one event that the others see as
    #: `HandHidden`; guesses are public.
    views = declare(
        lifecycle(
            hidden=True,
            rejected=by_decision({"hand": private(_hand_hidden), "guess": everyone}, private(withheld_answer)),
        ),
        {
            HandChosen: private(_hand_hidden),
            HandReset: private(_hand_hidden),
            HandHidden: everyone,
            GuessMade: everyone,
            GuessVoided: everyone,
        },
    )
    #: The referee's rulings on a rejected answer, each with the decision it rules on: a lenient
    #: voided guess (and, in logs from before views denied by default, a reset hand) follows that seat's rejection.
    rulings = MappingProxyType({HandReset: "hand", GuessVoided: "guess"})

    #: Guesses and rounds are public (a round's total is told when it settles); answers and rejections
    #: are counted as each reader sees them: a rejected hand counts as 0 and looks like any hand.
    figures = declare_figures(
        shared_figures(hidden=True),
        {"guesses": Derived.PUBLIC, "correct_guesses": Derived.PUBLIC, "turns": Derived.PUBLIC},
    )

    # -- building and folding ----------------------------------------------------------------

    def start(self, started: MatchStarted) -> PorrinhaState:
        """The first round, every player with the `chopsticks` option's count; or the position
        `started` describes: chopsticks per seat, then optionally the first guesser (seat 0 by
        default), as `3,2,0,1 first=1` (a seat with none has left the game; seats that left
        earlier rank in seat order).

        Raises:
            UsageError: an option, a table size or a position Porrinha cannot take.
        """
        options: PorrinhaOptions = parse_options(self.spec, started.options, bounded=False)
        players = len(started.seats)
        self.spec.check_players(players)
        # The guesses a judge, a dispute or a player may list grow with the chopsticks on the table.
        if options.chopsticks < 1 or options.chopsticks * players > MAX_TABLE_CHOPSTICKS:
            raise UsageError(
                f"each of the {players} players starts with 1 chopstick or more, and the table holds at most "
                f"{MAX_TABLE_CHOPSTICKS:,}; not {shown(options.chopsticks)} each",
                code="usage.options",
            )
        state = PorrinhaState(
            options=options,
            names=tuple(seat.name for seat in started.seats),
            chopsticks=(options.chopsticks,) * players,
            hands=(None,) * players,
            guesses=(PENDING_GUESS,) * players,
        )
        if started.position is None:
            return state
        chopsticks, first = _position(started.position, players)
        out = tuple(seat for seat in range(players) if chopsticks[seat] == 0)
        return msgspec.structs.replace(
            state,
            chopsticks=chopsticks,
            out=out,
            first_guesser=first,
            guesses=tuple(NOT_PLAYING if seat in out else PENDING_GUESS for seat in range(players)),
        )

    def apply(self, state: PorrinhaState, event: Event) -> PorrinhaState:
        """Return the table after `event`. Assumes the referee already checked it."""
        match event:
            case HandChosen(seat=seat, hand=hand):
                return msgspec.structs.replace(state, hands=_put(state.hands, seat, hand))
            case HandReset(seat=seat):
                return msgspec.structs.replace(state, hands=_put(state.hands, seat, 0))
            case GuessMade(seat=seat, guess=guess):
                return _settle_if_complete(msgspec.structs.replace(state, guesses=_put(state.guesses, seat, guess)))
            case GuessVoided(seat=seat):
                return _settle_if_complete(
                    msgspec.structs.replace(state, guesses=_put(state.guesses, seat, INVALID_GUESS))
                )
            case PlayerRemoved(seat=seat):
                # A player that already finished (out, removed, or the game decided) keeps its place.
                if state.over or not state.active(seat):
                    return state
                removed = msgspec.structs.replace(
                    state,
                    removed=(*state.removed, seat),
                    hands=_put(state.hands, seat, None),
                    guesses=_put(state.guesses, seat, NOT_PLAYING),
                )
                return removed if removed.over else _settle_if_complete(removed)
            case MatchEnded():
                return msgspec.structs.replace(state, ended=True)
            case AnswerRejected(seat=seat, decision="hand") if state.options.policy == "lenient":
                # Lenient: the rejected hand counts as 0. The rejection is the ruling, one event
                # like any hand, so the others cannot count events to learn that this hand is 0.
                return msgspec.structs.replace(state, hands=_put(state.hands, seat, 0))
            case AnswerRejected() | ChanceCommitted() | ChanceRevealed() | MatchResumed() | HandHidden():
                return state  # the ruling that follows (or the hidden fact) is what changes the table
            case MatchStarted() | ActionsUndone():
                raise ValueError(f"{event.tag} is handled by replay, not by the engine")
        raise ValueError(f"Porrinha cannot apply {event.tag}")

    def apply_all(self, state: PorrinhaState, events: Sequence[Event]) -> PorrinhaState:
        """`apply` of each event in turn, without a state per event: hands and guesses go into
        lists, and the table is made again only where a guess may settle the round and where an
        event other than a hand or a guess is applied (by `apply`, as ever)."""
        hands, guesses = list(state.hands), list(state.guesses)
        players = len(hands)
        held = False  # whether the lists hold what `state` does not yet
        for event in events:
            kind = type(event)
            if kind is HandChosen and 0 <= event.seat < players:
                hands[event.seat] = event.hand
                held = True
            elif kind is GuessMade and 0 <= event.seat < players:
                guesses[event.seat] = event.guess
                if PENDING_GUESS in guesses:  # the round is not complete: nothing settles
                    held = True
                    continue
                state = _settle_if_complete(msgspec.structs.replace(state, hands=tuple(hands), guesses=tuple(guesses)))
                hands, guesses, held = list(state.hands), list(state.guesses), False
            else:
                if held:
                    state = msgspec.structs.replace(state, hands=tuple(hands), guesses=tuple(guesses))
                state = self.apply(state, event)
                hands, guesses, held = list(state.hands), list(state.guesses), False
        if held:
            state = msgspec.structs.replace(state, hands=tuple(hands), guesses=tuple(guesses))
        return state

    # -- reading a state ---------------------------------------------------------------------

    def to_act(self, state: PorrinhaState) -> Turn | None:
        if state.over:
            return None
        order = state.order()
        for seat in order:
            if state.hands[seat] is None:
                return Turn(seat, "hand")
        for seat in order:
            if state.guesses[seat] == PENDING_GUESS:
                return Turn(seat, "guess")
        return None  # pragma: no cover - a complete round is settled by apply

    def chance(self, state: PorrinhaState, rng: random.Random) -> Event:
        raise ValueError("Porrinha has no chance")

    def chance_outcomes(self, state: PorrinhaState) -> tuple[Event, ...]:
        return ()  # Porrinha has no chance

    def tally(
        self, before: PorrinhaState, event: Event, after: PorrinhaState
    ) -> tuple[tuple[int | None, str, float], ...]:
        if after.round == before.round:
            return ()
        # A round settled: every valid guess in it, and whether it named the total.
        figures: list[tuple[int | None, str, float]] = [(None, "turns", 1.0)]
        for seat, guess in enumerate(after.last_guesses):
            if guess >= 0:
                figures += [(seat, "guesses", 1.0), (seat, "correct_guesses", float(guess == after.last_total))]
        return tuple(figures)

    def check_chance(self, state: PorrinhaState, event: Event) -> None:
        raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, "Porrinha has no chance")

    def legal(self, state: PorrinhaState, seat: int) -> tuple[Event, ...]:
        turn = self.to_act(state)
        if turn is None or turn.seat != seat:
            return ()
        if turn.decision == "hand":
            return tuple(HandChosen(seat=seat, hand=h) for h in range(state.chopsticks[seat] + 1))
        taken = set(state.guesses)
        return tuple(GuessMade(seat=seat, guess=g) for g in range(state.chopstick_count + 1) if g not in taken)

    def parse(self, state: PorrinhaState, seat: int, answer: object) -> Event:
        turn = awaited_turn(self, state, seat)
        # Only a true int is a number of chopsticks (not a bool, a float or a numeric string).
        if not isinstance(answer, int) or isinstance(answer, bool):
            raise IllegalAction(
                PorrinhaRule.NOT_AN_INTEGER,
                f"{turn.decision} must be an integer, not {type(answer).__name__}",
            )
        if turn.decision == "hand":
            return HandChosen(seat=seat, hand=answer)
        return GuessMade(seat=seat, guess=answer)

    def check(self, state: PorrinhaState, seat: int, action: Event) -> None:
        turn = awaited_turn(self, state, seat)
        match action:
            case HandChosen(seat=acting, hand=hand) if turn.decision == "hand" and acting == seat:
                # A hand holds between none and all of the player's own chopsticks.
                if not 0 <= hand <= state.chopsticks[seat]:
                    raise IllegalAction(
                        PorrinhaRule.HAND_OUT_OF_RANGE,
                        f"hand {shown(hand)} is not between 0 and the {state.chopsticks[seat]} chopsticks"
                        f" of seat {seat}",
                    )
            case GuessMade(seat=acting, guess=guess) if turn.decision == "guess" and acting == seat:
                # A guess lies in [0, chopsticks on the table]: the seed's "smaller than" is a slip.
                if not 0 <= guess <= state.chopstick_count:
                    raise IllegalAction(
                        PorrinhaRule.GUESS_OUT_OF_RANGE,
                        f"guess {shown(guess)} is not between 0 and the {state.chopstick_count} chopsticks"
                        " on the table",
                    )
                # Nobody may repeat a guess already made this round.
                if guess in state.guesses:
                    other = state.guesses.index(guess)
                    raise IllegalAction(
                        PorrinhaRule.GUESS_TAKEN, f"guess {guess} was already made this round by seat {other}"
                    )
            case _:
                raise IllegalAction(Rule.WRONG_DECISION, f"seat {seat} must answer {turn.decision}, not {action.tag}")

    def outcome(self, state: PorrinhaState) -> Outcome | None:
        if not state.over:
            return None
        # The first to empty its hand ranks first; the last left holding chopsticks loses;
        # removed players rank below everyone, the earliest removed last.
        ranking = (*state.out, *(s for s in state.active_seats), *reversed(state.removed))
        places = [0] * state.players
        for place, seat in enumerate(ranking, start=1):
            places[seat] = place
        return Outcome(places=tuple(places), winners=ranking[:1], removed=state.removed)

    def reveals(self, before: PorrinhaState, event: Event, after: PorrinhaState) -> bool:
        """Whether `event` settled a round: every hand of it is shown to everyone."""
        return after.round != before.round

    def view(self, state: PorrinhaState, seat: int | None) -> PorrinhaState:
        # Who has closed a hand is public; on how many chopsticks is not.
        hands = tuple(hand if s == seat or hand is None else CLOSED_HAND for s, hand in enumerate(state.hands))
        return msgspec.structs.replace(state, hands=hands)

    # -- showing a state ---------------------------------------------------------------------

    def render(self, state: PorrinhaState) -> str:
        width = max(6, *(len(name) for name in state.names))
        status = "over" if state.over else f"round {state.round}"
        lines = [
            f"Porrinha · {status} · {_count(state.chopstick_count, 'chopstick')} on the table · "
            f"first guesser: {_name(state, state.first_guesser)}",
            f"  {'seat':<4}  {'player':<{width}}  {'sticks':>6}  {'hand':>4}  {'guess':>5}",
        ]
        turn = self.to_act(state)
        for seat, name in enumerate(state.names):
            if seat in state.removed:
                hand, guess = "", "removed"
            elif seat in state.out:
                hand, guess = "", f"out ({ordinal(state.out.index(seat) + 1)})"
            elif state.over:
                hand, guess = "", "last" if state.ended or len(state.active_seats) == 1 else ""
            else:
                hand = {None: "-", CLOSED_HAND: "?"}.get(state.hands[seat], str(state.hands[seat]))
                guess = _guess_text(state.guesses[seat])
            marker = ">" if turn is not None and turn.seat == seat else " "
            lines.append(f"{marker} {seat:<4}  {name:<{width}}  {state.chopsticks[seat]:>6}  {hand:>4}  {guess:>5}")
        if state.last_hands:
            hands = " + ".join(str(h) for h in state.last_hands if h != NO_HAND)
            right = (
                _name(state, state.last_winner) + " guessed right" if state.last_winner >= 0 else "nobody guessed right"
            )
            lines.append(f"  last round: {hands} = {state.last_total}; {right}")
        if turn is not None:
            lines.append(f"  waiting for {_name(state, turn.seat)} to choose a {turn.decision}")
        return "\n".join(lines)

    def describe(self, before: PorrinhaState, event: Event, after: PorrinhaState) -> str:
        line = describe_lifecycle(before.names, event)
        if line is None:
            match event:
                case HandChosen(seat=seat, hand=hand):
                    line = f"{_name(before, seat)} closes a hand on {hand}"
                case HandHidden(seat=seat):
                    line = f"{_name(before, seat)} closes a hand"
                case HandReset(seat=seat):
                    line = f"{_name(before, seat)}'s invalid hand counts as 0"
                case GuessMade(seat=seat, guess=guess):
                    line = f"{_name(before, seat)} guesses {guess}"
                case GuessVoided(seat=seat):
                    line = f"{_name(before, seat)}'s guess is recorded as invalid"
                case _:
                    line = event.tag
        if after.round > before.round:
            hands = " + ".join(str(h) for h in after.last_hands if h != NO_HAND)
            if after.last_winner >= 0:
                winner = after.last_winner
                left = after.chopsticks[winner]
                result = f"{_name(after, winner)} guessed right, " + (
                    f"{_count(left, 'chopstick')} left" if left else "and leaves the game"
                )
            else:
                result = "nobody guessed right"
            line += f" | round {before.round}: {hands} = {after.last_total}; {result}"
        return line


_POSITION = re.compile(
    r"\s*(?P<chopsticks>[0-9]{1,6}(?:\s*,\s*[0-9]{1,6})*)(?:\s+first\s*=\s*(?P<first>[0-9]{1,6}))?\s*"
)


def _position(text: str, players: int) -> tuple[tuple[int, ...], int]:
    """Chopsticks per seat and the first guesser, from a `--position` text such as `3,2,0,1 first=1`.

    Raises:
        UsageError: (usage.position) not that form, or not a position Porrinha can play on from.
    """
    given = _POSITION.fullmatch(text)
    if given is None:
        example = "3,2,0,1 first=1"
        raise UsageError(
            f"a Porrinha position is chopsticks per seat and the first guesser, e.g. {example}; not {text[:60]!r}",
            code="usage.position",
        )
    chopsticks = tuple(int(count) for count in given["chopsticks"].split(","))
    first = int(given["first"] or 0)
    if len(chopsticks) != players:
        raise UsageError(
            f"the position gives chopsticks for {len(chopsticks)} seats; the match has {players}", code="usage.position"
        )
    if any(count > MAX_CHOPSTICKS for count in chopsticks):
        raise UsageError(f"a player holds at most {MAX_CHOPSTICKS} chopsticks in a position", code="usage.position")
    if sum(count > 0 for count in chopsticks) < 2:
        raise UsageError("the position must leave two players or more holding chopsticks", code="usage.position")
    if not 0 <= first < players or chopsticks[first] == 0:
        raise UsageError(f"the first guesser, seat {first}, must be a seat holding chopsticks", code="usage.position")
    return chopsticks, first


def _put(values: tuple, index: int, value: object) -> tuple:
    return (*values[:index], value, *values[index + 1 :])


def _settle_if_complete(state: PorrinhaState) -> PorrinhaState:
    """Settle the round once every active player has a hand and a guess (one new table: this runs
    at the end of every round of every fold)."""
    guesses = state.guesses
    if PENDING_GUESS in guesses:  # only an active seat can still owe a guess: not yet (the usual case)
        return state
    hands, out, removed = state.hands, state.out, state.removed
    players = len(state.names)
    active = [s for s in range(players) if s not in out and s not in removed]
    if len(active) < 2 or any(hands[s] is None for s in active):  # (no guess is pending: see above)
        return state
    total = sum(hands[s] or 0 for s in active)
    winner = next((s for s in active if guesses[s] == total), -1)
    chopsticks = state.chopsticks
    if winner >= 0:
        chopsticks = _put(chopsticks, winner, chopsticks[winner] - 1)
        if chopsticks[winner] == 0:
            out = (*out, winner)
    playing = [s not in out and s not in removed for s in range(players)]  # after the round
    # The right guesser starts the next round; if it left, or nobody was right, the next active player does.
    if winner >= 0 and playing[winner]:
        first = winner
    else:
        after = winner if winner >= 0 else state.first_guesser
        first = next(((after + i) % players for i in range(1, players + 1) if playing[(after + i) % players]), after)
    return msgspec.structs.replace(
        state,
        chopsticks=chopsticks,
        out=out,
        round=state.round + 1,
        first_guesser=first,
        last_hands=tuple(NO_HAND if h is None else h for h in hands),
        last_guesses=guesses,
        last_total=total,
        last_winner=winner,
        hands=(None,) * players,
        guesses=tuple(PENDING_GUESS if p else NOT_PLAYING for p in playing),
    )


def _name(state: PorrinhaState, seat: int) -> str:
    return state.names[seat] if 0 <= seat < len(state.names) else f"seat {seat}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _guess_text(guess: int) -> str:
    return {PENDING_GUESS: "-", NOT_PLAYING: "", INVALID_GUESS: "invalid"}.get(guess, str(guess))


ENGINE = Porrinha()
