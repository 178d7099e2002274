"""A knockout tournament as a match of its own: the course's Fish tournament manager, for any game.

Its players are the entrants in sign-up order. Each round seats the players still in at tables of
the largest size, in order; when the rest cannot fill a table it backtracks to smaller ones (with
tables of 2 to 4: 5 -> 3+2, 6 -> 4+2, 7 -> 4+3, 9 -> 4+3+2). Every game's winners (all who tie
at the top) go on; losers and kicked players are out. The tournament ends after a round whose
winners are all who played it (the same set twice running), after a final round of one table, or
when fewer than two are left; a lone player wins by default. The players still in are then told
how they did, and a winner that fails to hear it becomes a loser (a `PlayerRemoved`).

The "moves" are `KnockoutGamePlayed` events the tournament runner records (chance's seat: the games
are played outside this reducer); each names its game's match in the same log.
"""

from __future__ import annotations

import random
from typing import Annotated, Any

import msgspec

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
    Outcome,
    PlayerRemoved,
    UsageError,
)

from .contract import CHANCE, MAX_SEATS, GameSpec, Rule, Turn, describe_lifecycle, parse_options
from .views import Derived, declare, declare_figures, everyone, lifecycle, shared_figures

__all__ = ["ENGINE", "Knockout", "KnockoutOptions", "KnockoutState", "tables"]


class KnockoutOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The game the tournament plays, its table sizes, and that game's options."""

    game: str = "fish"
    largest: Annotated[int, msgspec.Meta(ge=2, le=MAX_SEATS)] = 4
    smallest: Annotated[int, msgspec.Meta(ge=2, le=MAX_SEATS)] = 2
    game_options: dict[str, Any] = msgspec.field(default_factory=dict)


class KnockoutState(msgspec.Struct, frozen=True, kw_only=True):
    """The tournament between two events."""

    options: KnockoutOptions
    names: tuple[str, ...]
    active: tuple[int, ...]  # seats still in, in sign-up order
    round: int = 1
    groups: tuple[tuple[int, ...], ...] = ()  # this round's tables
    played: int = 0  # games of this round played so far
    round_winners: tuple[int, ...] = ()
    out_after: tuple[int, ...] = ()  # per seat: the last round it played (0 while still in)
    removed: tuple[int, ...] = ()
    games: tuple[str, ...] = ()  # every game's match id, in order
    phase: str = "playing"  # playing | ending | over
    winners: tuple[int, ...] = ()

    @property
    def over(self) -> bool:
        return self.phase == "over"


def tables(players: int, largest: int, smallest: int) -> list[int] | None:
    """Table sizes for `players`: as many of the largest as can be, backtracking to smaller tables
    when the rest cannot fill one; None when no split exists."""
    if players == 0:
        return []
    for size in range(min(largest, players), smallest - 1, -1):
        rest = tables(players - size, largest, smallest)
        if rest is not None:
            return [size, *rest]
    return None


class Knockout:
    """The knockout tournament engine (see the module docstring)."""

    spec = GameSpec(
        name="knockout",
        title="Knockout tournament",
        min_players=1,
        max_players=None,
        chance=True,
        hidden=False,
        options=KnockoutOptions,
        state=KnockoutState,
        tournament=True,
    )

    #: Nothing is hidden: every seat sees every event whole.
    views = declare(
        lifecycle(hidden=False),
        {KnockoutGamePlayed: everyone},
    )

    #: Nothing is hidden: every figure is everyone's.
    figures = declare_figures(shared_figures(hidden=False), {"games": Derived.PUBLIC})

    def start(self, started: MatchStarted) -> KnockoutState:
        options: KnockoutOptions = parse_options(self.spec, started.options, bounded=False)
        if started.position is not None:
            raise UsageError("a knockout does not start from a position", code="usage.position")
        if not 2 <= options.smallest <= options.largest or options.largest == options.smallest:
            raise UsageError(
                f"a knockout needs tables of two sizes or more to seat any field, not {options.smallest} to "
                f"{options.largest} players",
                code="usage.options",
            )
        count = len(started.seats)
        state = KnockoutState(
            options=options,
            names=tuple(seat.name for seat in started.seats),
            active=tuple(range(count)),
            out_after=(0,) * count,
        )
        return _draw(state)

    def apply(self, state: KnockoutState, event: Event) -> KnockoutState:
        match event:
            case KnockoutGamePlayed(match_id=match_id, seats=seats, winners=winners, removed=removed):
                if state.phase != "playing" or tuple(seats) != state.groups[state.played]:
                    raise ValueError(f"game {match_id} is not the next table of round {state.round}")
                kicked = tuple(seat for seat in removed if seat not in state.removed)
                return _after_game(
                    msgspec.structs.replace(
                        state,
                        played=state.played + 1,
                        round_winners=state.round_winners + tuple(s for s in winners if s not in removed),
                        removed=state.removed + kicked,
                        games=(*state.games, match_id),
                    )
                )
            case PlayerRemoved(seat=seat):
                if seat in state.removed or state.over:
                    return state
                removed = (*state.removed, seat)
                if state.phase == "ending":  # a winner that failed to hear it won becomes a loser
                    return msgspec.structs.replace(
                        state, removed=removed, winners=tuple(s for s in state.winners if s != seat)
                    )
                out = _put(state.out_after, seat, state.round)
                if state.played == 0:  # before the round's first game: draw it again without the player
                    active = tuple(s for s in state.active if s != seat)
                    return _draw(msgspec.structs.replace(state, active=active, removed=removed, out_after=out))
                return msgspec.structs.replace(state, removed=removed, out_after=out)
            case MatchEnded():
                return msgspec.structs.replace(state, phase="over")
            case AnswerRejected() | ChanceCommitted() | ChanceRevealed() | MatchResumed():
                return state
            case MatchStarted() | ActionsUndone():
                raise ValueError(f"{event.tag} is handled by replay, not by the engine")
        raise ValueError(f"a knockout cannot apply {event.tag}")

    def to_act(self, state: KnockoutState) -> Turn | None:
        if state.phase == "playing":
            return Turn(CHANCE, "game")
        if state.phase == "ending":
            return Turn(CHANCE, "end")
        return None

    def chance(self, state: KnockoutState, rng: random.Random) -> Event:
        raise ValueError("a knockout's games are played by its tournament runner, not drawn")

    def chance_outcomes(self, state: KnockoutState) -> tuple[Event, ...]:
        return ()

    def tally(
        self, before: KnockoutState, event: Event, after: KnockoutState
    ) -> tuple[tuple[int | None, str, float], ...]:
        return ((None, "games", 1.0),) if isinstance(event, KnockoutGamePlayed) else ()

    def check_chance(self, state: KnockoutState, event: Event) -> None:
        """A game played must be the next table of the round, its winners and kicks among its players."""
        if not isinstance(event, KnockoutGamePlayed) or state.phase != "playing":
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"a knockout does not record {event.tag} here")
        if tuple(event.seats) != state.groups[state.played]:
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"table {list(event.seats)} is not the next of the round")
        if not set(event.winners) | set(event.removed) <= set(event.seats):
            raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, "a winner or a kicked player did not play that game")

    def legal(self, state: KnockoutState, seat: int) -> tuple[Event, ...]:
        return ()

    def parse(self, state: KnockoutState, seat: int, answer: object) -> Event:
        raise IllegalAction(Rule.WRONG_DECISION, "players of a knockout answer in its games, not to it")

    def check(self, state: KnockoutState, seat: int, action: Event) -> None:
        raise IllegalAction(Rule.WRONG_DECISION, "players of a knockout answer in its games, not to it")

    def outcome(self, state: KnockoutState) -> Outcome | None:
        if state.phase == "playing":
            return None
        # Winners first; then by the round each went out in (later is better); the kicked last.
        count = len(state.names)
        reached = [
            state.round + 1 if seat in state.winners else state.out_after[seat] or state.round for seat in range(count)
        ]
        ranked = [s for s in range(count) if s not in state.removed]
        places = [0] * count
        for seat in ranked:
            places[seat] = 1 + sum(reached[other] > reached[seat] for other in ranked)
        for index, seat in enumerate(state.removed):
            places[seat] = len(ranked) + 1 + index
        return Outcome(
            places=tuple(places),
            winners=state.winners,
            scores=tuple(float(r) for r in reached),
            removed=state.removed,
        )

    def view(self, state: KnockoutState, seat: int | None) -> KnockoutState:
        return state

    def render(self, state: KnockoutState) -> str:
        title = f"{state.options.game} knockout · {len(state.names)} players · round {state.round}"
        lines = [title]
        if state.phase == "playing":
            for number, group in enumerate(state.groups):
                mark = "played" if number < state.played else "to play"
                lines.append(f"  table {number + 1} ({mark}): " + ", ".join(state.names[s] for s in group))
            if state.round_winners:
                lines.append("  through so far: " + ", ".join(state.names[s] for s in state.round_winners))
        else:
            lines.append("  winners: " + (", ".join(state.names[s] for s in state.winners) or "nobody"))
        if state.removed:
            lines.append("  kicked: " + ", ".join(state.names[s] for s in state.removed))
        lines.append(f"  {len(state.games)} games played")
        return "\n".join(lines)

    def describe(self, before: KnockoutState, event: Event, after: KnockoutState) -> str:
        line = describe_lifecycle(before.names, event)
        if line is not None and not isinstance(event, PlayerRemoved):
            return line
        match event:
            case KnockoutGamePlayed(match_id=match_id, seats=seats, winners=winners, result=result):
                table = before.played + 1
                won = ", ".join(before.names[s] for s in winners) or "nobody"
                line = (
                    f"round {before.round} table {table} ({', '.join(before.names[s] for s in seats)}): "
                    f"{won} through; match {match_id[:18]}{'' if result == 'normal' else f' ({result})'}"
                )
                if after.phase != "playing":
                    line += "; the tournament is decided"
                elif after.round != before.round:
                    line += f"; round {after.round}: " + " | ".join(
                        ", ".join(after.names[s] for s in group) for group in after.groups
                    )
                return line
            case PlayerRemoved(seat=seat, code=code, reason=reason):
                when = "after the tournament" if before.phase == "ending" else f"in round {before.round}"
                return f"{before.names[seat]} is kicked {when}: {code} ({reason})"
        return line if line is not None else event.tag


def _put(values: tuple, index: int, value: object) -> tuple:
    return (*values[:index], value, *values[index + 1 :])


def _draw(state: KnockoutState) -> KnockoutState:
    """Seat the players still in for the round, or settle the tournament if it cannot go on."""
    if len(state.active) < 2:
        return msgspec.structs.replace(state, groups=(), phase="ending", winners=state.active)
    sizes = tables(len(state.active), state.options.largest, state.options.smallest)
    assert sizes is not None, "tables of two consecutive sizes seat any field of two or more"
    groups, start = [], 0
    for size in sizes:
        groups.append(state.active[start : start + size])
        start += size
    return msgspec.structs.replace(state, groups=tuple(groups), played=0, round_winners=())


def _after_game(state: KnockoutState) -> KnockoutState:
    if state.played < len(state.groups):
        return state
    players = state.active
    through = tuple(s for s in players if s in state.round_winners and s not in state.removed)
    out = state.out_after
    for seat in players:
        if seat not in through and not out[seat]:
            out = _put(out, seat, state.round)
    settled = msgspec.structs.replace(state, out_after=out)
    final = len(state.groups) == 1  # one table: that was the final
    if final or set(through) == set(players) or len(through) < 2:
        return msgspec.structs.replace(settled, phase="ending", winners=through, round_winners=())
    return _draw(msgspec.structs.replace(settled, active=through, round=state.round + 1))


ENGINE = Knockout()
