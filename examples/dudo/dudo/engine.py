"""Dudo (liar's dice) as a matchlog engine: a small game with chance and hidden information.

Each player rolls its dice under a cup (chance, one `DiceRolled` a seat, seen only by its seat).
Then, from seat 0 round the table, each either bids ("at least 4 dice show a five") higher than the
last bid (more dice, or as many showing a higher face) or doubts the last bid ("dudo!"). A doubt
lifts every cup: if the dice bear the bid out, the doubter loses; if not, the bidder does. Everyone
else shares first place. A seat removed for failing to answer loses, and the hand ends when fewer
than two seats are left in.

The engine is pure: no I/O, no clock, no random numbers of its own; dice reach it as events.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from matchlog.engines import CHANCE, GameSpec, Rule, Turn, describe_lifecycle, parse_options
from matchlog.engines.views import (
    Derived,
    declare,
    declare_figures,
    everyone,
    lifecycle,
    private,
    shared_figures,
)
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
    Outcome,
    PlayerRemoved,
    UsageError,
)

from .events import BidMade, DiceHidden, DiceRolled, Doubted

__all__ = ["ENGINE", "Dudo", "DudoOptions", "DudoRule", "DudoState"]

FACES = 6


class DudoRule:
    """Dudo's own codes for answers the rules forbid."""

    MALFORMED = "dudo.malformed"
    NOT_HIGHER = "dudo.bid_not_higher"
    OUT_OF_RANGE = "dudo.bid_out_of_range"
    NOTHING_TO_DOUBT = "dudo.nothing_to_doubt"


class DudoOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How many dice each player rolls."""

    dice: int = 3


class DudoState(msgspec.Struct, frozen=True, kw_only=True):
    """The hand between two events. `dice[seat]` is empty until that seat rolled (and, in a view,
    while another seat's dice are under its cup); `bid` is (seat, quantity, face) of the last bid."""

    options: DudoOptions
    names: tuple[str, ...]
    dice: tuple[tuple[int, ...], ...]
    rolled: int = 0
    bid: tuple[int, int, int] | None = None
    turn: int = 0
    doubter: int | None = None
    removed: tuple[int, ...] = ()
    ended: bool = False

    @property
    def players(self) -> int:
        return len(self.names)

    @property
    def total(self) -> int:
        """Dice under all the cups."""
        return self.options.dice * self.players

    @property
    def over(self) -> bool:
        return self.ended or self.doubter is not None or self.players - len(self.removed) < 2


def _hidden(event: Event) -> Event:
    return DiceHidden(seat=event.seat)  # type: ignore[attr-defined]


class Dudo:
    """The rules of one hand of Dudo (see the module docstring)."""

    spec = GameSpec(
        name="dudo",
        title="Dudo (liar's dice)",
        min_players=2,
        max_players=4,
        chance=True,
        hidden=True,
        options=DudoOptions,
        state=DudoState,
    )

    #: A seat's dice are its own until the doubt lifts the cups; bids, doubts and rejected bids are public.
    views = declare(
        lifecycle(hidden=True),
        {DiceRolled: private(_hidden), DiceHidden: everyone, BidMade: everyone, Doubted: everyone},
    )
    #: Bids and doubts are public; answers and rejections are counted as each reader sees them.
    figures = declare_figures(shared_figures(hidden=True), {"bids": Derived.PUBLIC, "doubts": Derived.PUBLIC})

    # -- building and folding ----------------------------------------------------------------

    def start(self, started: MatchStarted) -> DudoState:
        options = parse_options(self.spec, started.options)
        if not 1 <= options.dice <= 5:
            raise UsageError(f"dudo is played with 1 to 5 dice each, not {options.dice}", code="usage.options")
        if started.position is not None:
            raise UsageError("dudo starts from no position but its own", code="usage.position")
        self.spec.check_players(len(started.seats))
        names = tuple(seat.name for seat in started.seats)
        return DudoState(options=options, names=names, dice=((),) * len(names))

    def apply(self, state: DudoState, event: Event) -> DudoState:
        match event:
            case DiceRolled(seat=seat, dice=dice):
                rolled = _put(state.dice, seat, dice)
                return msgspec.structs.replace(state, dice=rolled, rolled=state.rolled + 1)
            case DiceHidden():
                return msgspec.structs.replace(state, rolled=state.rolled + 1)
            case BidMade(seat=seat, quantity=quantity, face=face):
                return msgspec.structs.replace(state, bid=(seat, quantity, face), turn=_next(state, seat))
            case Doubted(seat=seat):
                return msgspec.structs.replace(state, doubter=seat)
            case PlayerRemoved(seat=seat):
                removed = msgspec.structs.replace(state, removed=(*state.removed, seat))
                return msgspec.structs.replace(removed, turn=_next(removed, seat)) if state.turn == seat else removed
            case MatchEnded():
                return msgspec.structs.replace(state, ended=True)
            case (
                AnswerRejected()
                | ChanceCommitted()
                | ChanceRevealed()
                | MatchResumed()
                | MatchStarted()
                | ActionsUndone()
            ):
                return state
        raise IllegalAction(Rule.WRONG_DECISION, f"dudo has no event {event.tag}")

    # -- whose turn, and what may happen ------------------------------------------------------

    def to_act(self, state: DudoState) -> Turn | None:
        if state.over:
            return None
        if state.rolled < state.players:
            return Turn(CHANCE, "roll")
        return Turn(state.turn, "bid")

    def chance(self, state: DudoState, rng: random.Random) -> Event:
        return DiceRolled(seat=state.rolled, dice=tuple(rng.randint(1, FACES) for _ in range(state.options.dice)))

    def chance_outcomes(self, state: DudoState) -> tuple[Event, ...]:
        return ()  # 6^dice rolls: judged by `check_chance` instead of listed

    def check_chance(self, state: DudoState, event: Event) -> None:
        turn = self.to_act(state)
        if turn is None or turn.seat != CHANCE:
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, "no dice are rolled now")
        if not isinstance(event, DiceRolled) or event.seat != state.rolled:
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"seat {state.rolled} rolls next")
        if len(event.dice) != state.options.dice or not all(1 <= die <= FACES for die in event.dice):
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"{state.options.dice} dice of 1 to 6, not {event.dice}")

    def legal(self, state: DudoState, seat: int) -> tuple[Event, ...]:
        if self.to_act(state) != Turn(seat, "bid"):
            return ()
        bids = tuple(
            BidMade(seat=seat, quantity=quantity, face=face)
            for quantity in range(1, state.total + 1)
            for face in range(1, FACES + 1)
            if _higher(state.bid, quantity, face)
        )
        return (*bids, Doubted(seat=seat)) if state.bid is not None else bids

    def parse(self, state: DudoState, seat: int, answer: object) -> Event:
        if answer == "dudo":
            return Doubted(seat=seat)
        match answer:
            case [int(quantity), int(face)] if not isinstance(quantity, bool) and not isinstance(face, bool):
                return BidMade(seat=seat, quantity=quantity, face=face)
        raise IllegalAction(DudoRule.MALFORMED, 'an answer is [quantity, face] or "dudo"')

    def check(self, state: DudoState, seat: int, action: Event) -> None:
        turn = self.to_act(state)
        if turn is None:
            raise IllegalAction(Rule.MATCH_OVER, "the hand is over")
        if turn.seat != seat:
            raise IllegalAction(Rule.NOT_YOUR_TURN, f"it is not seat {seat}'s turn")
        match action:
            case Doubted():
                if state.bid is None:
                    raise IllegalAction(DudoRule.NOTHING_TO_DOUBT, "there is no bid to doubt yet")
            case BidMade(quantity=quantity, face=face):
                if not (1 <= quantity <= state.total and 1 <= face <= FACES):
                    raise IllegalAction(
                        DudoRule.OUT_OF_RANGE, f"a bid is 1 to {state.total} dice of a face from 1 to 6"
                    )
                if not _higher(state.bid, quantity, face):
                    raise IllegalAction(DudoRule.NOT_HIGHER, f"{_said(quantity, face)} is not above {_bid_text(state)}")
            case _:
                raise IllegalAction(Rule.WRONG_DECISION, f"{action.tag} is not a bid or a doubt")

    def tally(self, before: DudoState, event: Event, after: DudoState) -> tuple[tuple[int | None, str, float], ...]:
        match event:
            case BidMade(seat=seat):
                return ((seat, "bids", 1.0),)
            case Doubted(seat=seat):
                return ((seat, "doubts", 1.0),)
        return ()

    # -- how it ended, and what a seat sees --------------------------------------------------

    def outcome(self, state: DudoState) -> Outcome | None:
        if not state.over:
            return None
        losers = set(state.removed)
        if state.doubter is not None and state.bid is not None:
            bidder, quantity, face = state.bid
            losers.add(state.doubter if _shown(state, face) >= quantity else bidder)
        if not losers:  # ended with nobody beaten (abandoned): nobody wins
            return Outcome(places=(1,) * state.players, winners=(), result="abandoned", removed=state.removed)
        places = tuple(state.players if seat in losers else 1 for seat in range(state.players))
        winners = tuple(seat for seat in range(state.players) if seat not in losers)
        return Outcome(places=places, winners=winners, removed=state.removed)

    def view(self, state: DudoState, seat: int | None) -> DudoState:
        if state.doubter is not None:
            return state  # the cups are lifted
        return msgspec.structs.replace(state, dice=tuple(d if s == seat else () for s, d in enumerate(state.dice)))

    # -- showing a state ---------------------------------------------------------------------

    def render(self, state: DudoState) -> str:
        lines = [f"Dudo · {state.options.dice} dice each · bid: {_bid_text(state)}"]
        for seat, name in enumerate(state.names):
            cup = " ".join(str(die) for die in state.dice[seat]) if state.dice[seat] else "(under the cup)"
            mark = " (removed)" if seat in state.removed else " <" if self.to_act(state) == Turn(seat, "bid") else ""
            lines.append(f"  {seat}  {name:<12} {cup}{mark}")
        outcome = self.outcome(state)
        if outcome is not None and outcome.winners:
            lines.append("  winners: " + ", ".join(state.names[seat] for seat in outcome.winners))
        return "\n".join(lines)

    def describe(self, before: DudoState, event: Event, after: DudoState) -> str:
        shared = describe_lifecycle(before.names, event)
        if shared is not None:
            return shared
        match event:
            case DiceRolled(seat=seat, dice=dice):
                return f"{before.names[seat]} rolls {' '.join(str(die) for die in dice)}"
            case DiceHidden(seat=seat):
                return f"{before.names[seat]} rolls under the cup"
            case BidMade(seat=seat, quantity=quantity, face=face):
                return f"{before.names[seat]} bids {_said(quantity, face)}"
            case Doubted(seat=seat):
                bid = before.bid
                if bid is None:
                    return f"{before.names[seat]} doubts"
                count = _shown(after, bid[2]) if after.dice[bid[0]] else None
                shown = "" if count is None else f": {count} show a {bid[2]}"
                return f"{before.names[seat]} says dudo to {_said(bid[1], bid[2])}{shown}"
        return event.tag


def _put(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _next(state: DudoState, seat: int) -> int:
    """The next seat round the table that is still in."""
    for step in range(1, state.players + 1):
        candidate = (seat + step) % state.players
        if candidate not in state.removed:
            return candidate
    return seat


def _higher(bid: tuple[int, int, int] | None, quantity: int, face: int) -> bool:
    """Whether (quantity, face) is above `bid`: more dice, or as many of a higher face."""
    return bid is None or (quantity, face) > (bid[1], bid[2])


def _shown(state: DudoState, face: int) -> int:
    return sum(die == face for dice in state.dice for die in dice)


def _said(quantity: int, face: int) -> str:
    return f"{quantity} × {face}"


def _bid_text(state: DudoState) -> str:
    return "none yet" if state.bid is None else f"{_said(state.bid[1], state.bid[2])} by {state.names[state.bid[0]]}"


ENGINE = Dudo()
