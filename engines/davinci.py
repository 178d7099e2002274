"""Da Vinci Code: hidden information. Every seat sees every row's colours and positions, but only
the numbers of its own tiles and of tiles turned up; the log holds them all, and `view`/`redact`
decide what each seat may know.

Tiles are numbered by sequence (tile t shows t // 2; black when even, white when odd), so a row in
sequence order is sorted by number with black before white at equal numbers. Jokers (24 black,
25 white, with the `jokers` option) go wherever their owner puts them. A turn: draw the top tile
(while the pile lasts), guess an opponent's hidden tile; right, and the tile is turned up and the
guesser may go on or stop (its drawn tile stays hidden); wrong, and the guesser turns up the tile
it drew, or, with nothing drawn, a hidden tile of its choice. A player whose tiles are all turned
up is out; the last with a hidden tile wins.

With jokers, every drawn tile waits to be placed: a joker by its owner (`JokerPlaced`), a numbered
tile by the referee at its place in order (`TileSorted`, a step as certain as a deal). The others
see both as `TilePlacedHidden`, so neither the events nor their number tell them a tile is a joker.
"""

from __future__ import annotations

import random
import re
from typing import Any

import msgspec

from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    ChanceCommitted,
    ChanceRevealed,
    Event,
    GuessStopped,
    IllegalAction,
    JokerPlaced,
    MatchEnded,
    MatchResumed,
    MatchStarted,
    Outcome,
    PlayerRemoved,
    TileDrawn,
    TileDrawnHidden,
    TileGuessed,
    TilePlacedHidden,
    TileRevealed,
    TileSorted,
    TilesShuffled,
    TilesShuffledHidden,
    UsageError,
)

from .contract import (
    CHANCE,
    GameSpec,
    Rule,
    Turn,
    among_outcomes,
    awaited_turn,
    describe_lifecycle,
    ordinal,
    parse_options,
    shown,
)
from .views import (
    Derived,
    by_decision,
    declare,
    declare_figures,
    everyone,
    lifecycle,
    private,
    public_start,
    secret,
    shared_figures,
    withheld_answer,
)

__all__ = [
    "BLACK",
    "ENGINE",
    "HIDDEN",
    "JOKERS",
    "WHITE",
    "DaVinci",
    "DavinciOptions",
    "DavinciRule",
    "DavinciState",
    "colour",
    "number",
    "tile_text",
]

BLACK, WHITE = 0, 1
#: The black and the white joker.
JOKERS = (24, 25)
#: A tile a viewer may not know, by colour: HIDDEN[colour].
HIDDEN = (-2, -1)


def colour(tile: int) -> int:
    """BLACK or WHITE (also for a hidden marker)."""
    return tile % 2


def number(tile: int) -> int | None:
    """The number on a tile; None for a joker (or a hidden marker)."""
    return tile // 2 if 0 <= tile < 24 else None


def tile_text(tile: int, *, revealed: bool = True) -> str:
    """B3 / W3 for a tile turned up, b3 / w3 for a hidden one, b? / w? for one the viewer cannot see; - is a joker."""
    letter = "BW"[colour(tile)]
    if tile < 0:
        return letter.lower() + "?"
    face = "-" if tile in JOKERS else str(number(tile))
    return (letter if revealed else letter.lower()) + face


class DavinciRule:
    """Codes of the rules `parse` and `check` enforce."""

    MALFORMED = "davinci.malformed"
    NOT_AN_OPPONENT = "davinci.not_an_opponent"
    NO_SUCH_TILE = "davinci.no_such_tile"
    ALREADY_REVEALED = "davinci.already_revealed"
    NOT_A_NUMBER = "davinci.not_a_number"
    NOT_YOUR_HIDDEN_TILE = "davinci.not_your_hidden_tile"
    NO_SUCH_PLACE = "davinci.no_such_place"


class DavinciOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`jokers`: play with the published game's two jokers (26 tiles). `hidden_jokers` (with jokers):
    every drawn tile waits to be placed, so the number of events never shows a joker; a match
    recorded without this option (before matchlog had it) replays as it was played, with only
    jokers waiting."""

    jokers: bool = False
    hidden_jokers: bool = True


class DavinciState(msgspec.Struct, frozen=True, kw_only=True):
    """The table between two events (as the referee knows it, or as one seat may see it)."""

    options: DavinciOptions
    names: tuple[str, ...]
    pile: tuple[int, ...] = ()  # top first; HIDDEN markers in a seat's view
    rows: tuple[tuple[int, ...], ...] = ()  # each seat's row, in its order
    revealed: tuple[tuple[bool, ...], ...] = ()
    wrong: tuple[tuple[tuple[int | None, ...], ...], ...] = ()  # per tile: numbers guessed wrong for it
    phase: str = "shuffle"  # shuffle | deal | draw | guess | more | reveal | over
    dealt: int = 0
    turn: int = -1
    drawn: int = -1  # where the tile drawn this turn sits in the turn's row
    pending: tuple[tuple[int, int], ...] = ()  # (seat, tile) drawn and waiting to be placed
    out: tuple[int, ...] = ()  # seats whose tiles are all turned up, in that order
    removed: tuple[int, ...] = ()
    last: tuple[int, int, int, int | None, bool] | None = None  # the last guess: seat, target, position, number, right
    ended: bool = False

    @property
    def players(self) -> int:
        return len(self.names)

    @property
    def hand_size(self) -> int:
        return 3 if self.players == 4 else 4

    def active(self, seat: int) -> bool:
        return seat not in self.out and seat not in self.removed

    @property
    def active_seats(self) -> tuple[int, ...]:
        return tuple(s for s in range(self.players) if self.active(s))

    @property
    def over(self) -> bool:
        return self.ended or self.phase == "over"

    def hidden_positions(self, seat: int) -> tuple[int, ...]:
        return tuple(i for i, shown_ in enumerate(self.revealed[seat]) if not shown_)


def _placed_hidden(event: Event) -> Event:
    return TilePlacedHidden(seat=event.seat, position=event.position)  # type: ignore[attr-defined]


def _drawn_hidden(event: Event) -> Event:
    return TileDrawnHidden(seat=event.seat, colour=colour(event.tile))  # type: ignore[attr-defined]


def _shuffled_hidden(event: Event) -> Event:
    return TilesShuffledHidden(count=len(event.order))  # type: ignore[attr-defined]


def _started_as_seen(before: Any, event: Event, seat: int | None) -> Event:
    """A match's start as a seat saw it: its public fields and, for a match started from a
    position, the position as that seat knew it (its own hidden tiles; the others' and the pile
    face down; a spectator, every hidden tile face down)."""
    shown = public_start(before, event, seat)
    if getattr(event, "position", None) is None:
        return shown
    started = msgspec.structs.replace(shown, position=event.position)  # type: ignore[attr-defined]
    return msgspec.structs.replace(shown, position=_position_text(ENGINE.view(ENGINE.start(started), seat)))


class DaVinci:
    """The Da Vinci Code engine (see the module docstring)."""

    spec = GameSpec(
        name="davinci",
        title="Da Vinci Code",
        min_players=2,
        max_players=4,
        chance=True,
        hidden=True,
        options=DavinciOptions,
        state=DavinciState,
        rejection_limit=3,  # invalid answers in a row: the seed's player loop asked no more
    )

    #: Numbers stay with their owners until turned up; colours, places and guesses are public.
    views = declare(
        lifecycle(
            hidden=True,
            rejected=by_decision(
                {"guess": everyone, "guess_or_stop": everyone, "reveal": everyone}, private(withheld_answer)
            ),
        ),
        {
            TilesShuffled: secret(_shuffled_hidden),
            TilesShuffledHidden: everyone,
            TileDrawn: private(_drawn_hidden),
            TileDrawnHidden: everyone,
            JokerPlaced: private(_placed_hidden),
            TileSorted: private(_placed_hidden),
            TilePlacedHidden: everyone,
            TileGuessed: everyone,
            GuessStopped: everyone,
            TileRevealed: everyone,
            MatchStarted: _started_as_seen,
        },
    )

    #: Guesses, their results and turns are public; answers are counted as each reader sees them: a
    #: joker placed is its owner's answer, a numbered tile sorted the referee's step.
    figures = declare_figures(
        shared_figures(hidden=True),
        {"guesses": Derived.PUBLIC, "correct_guesses": Derived.PUBLIC, "turns": Derived.PUBLIC},
    )

    # -- building and folding ----------------------------------------------------------------

    def start(self, started: MatchStarted) -> DavinciState:
        """The table before the shuffle; or the position `started` describes (referee-only: it
        holds the hidden tiles): each seat's row in order, rows split by `/`, then after `|` the
        pile from the top, then optionally whose turn it is (`turn=1`; by default the first seat
        with a hidden tile). A tile is its colour and number as the game writes it: b3 / w3 a
        hidden tile, B3 / W3 one turned up, b- / w- a joker: `b1 W4 w7 / w0 b5 B9 | b2 w10 turn=1`.

        Raises:
            UsageError: an option, a table size or a position Da Vinci Code cannot take.
        """
        options: DavinciOptions = parse_options(self.spec, started.options, bounded=False)
        if "hidden_jokers" not in started.options:  # recorded before the option: as it was played
            options = msgspec.structs.replace(options, hidden_jokers=False)
        players = len(started.seats)
        self.spec.check_players(players)
        state = DavinciState(
            options=options,
            names=tuple(seat.name for seat in started.seats),
            rows=((),) * players,
            revealed=((),) * players,
            wrong=((),) * players,
        )
        return state if started.position is None else _from_position(state, started.position)

    def apply(self, state: DavinciState, event: Event) -> DavinciState:
        """Return the table after `event`. Assumes the referee already checked it."""
        match event:
            case TilesShuffled(order=order):
                return msgspec.structs.replace(state, pile=order, phase="deal")
            case TileDrawn(seat=seat, tile=tile):
                return _drawn(state, seat, tile)
            case JokerPlaced(seat=seat, position=position) | TileSorted(seat=seat, position=position):
                return _placed(state, seat, position)
            case TileGuessed(seat=seat, target=target, position=position, number=guess):
                return _guessed(state, seat, target, position, guess)
            case GuessStopped():
                return _next_turn(state)
            case TileRevealed(seat=seat, position=position):
                return _next_turn(_turn_up(state, seat, position))
            case PlayerRemoved(seat=seat):
                if state.over or not state.active(seat):
                    return state
                left = msgspec.structs.replace(
                    state, removed=(*state.removed, seat), pending=tuple(p for p in state.pending if p[0] != seat)
                )
                if len(left.active_seats) < 2:
                    return msgspec.structs.replace(left, phase="over")
                return _next_turn(left) if state.turn == seat else left
            case MatchEnded():
                return msgspec.structs.replace(state, ended=True)
            case (
                AnswerRejected()
                | ChanceCommitted()
                | ChanceRevealed()
                | MatchResumed()
                | TilesShuffledHidden()
                | TileDrawnHidden()
            ):
                return state
            case MatchStarted() | ActionsUndone():
                raise ValueError(f"{event.tag} is handled by replay, not by the engine")
        raise ValueError(f"Da Vinci Code cannot apply {event.tag}")

    # -- reading a state ---------------------------------------------------------------------

    def to_act(self, state: DavinciState) -> Turn | None:
        if state.over:
            return None
        if state.pending:
            owner, tile = state.pending[0]
            if tile in JOKERS:
                return Turn(owner, "place_joker")
            # A numbered tile goes to its place in order; in a view that cannot see which tile it
            # is, its owner is placing a tile.
            return Turn(CHANCE, "place_tile") if tile >= 0 else Turn(owner, "place_tile")
        match state.phase:
            case "shuffle":
                return Turn(CHANCE, "shuffle")
            case "deal":
                return Turn(CHANCE, "deal")
            case "draw":
                return Turn(CHANCE, "draw")
            case "guess":
                return Turn(state.turn, "guess")
            case "more":
                return Turn(state.turn, "guess_or_stop")
            case "reveal":
                return Turn(state.turn, "reveal")
        return None  # pragma: no cover - every phase is listed above

    def chance(self, state: DavinciState, rng: random.Random) -> Event:
        turn = self.to_act(state)
        if turn is None or turn.seat != CHANCE:
            raise ValueError("chance has nothing to do now")
        if turn.decision == "shuffle":
            tiles = list(range(24)) + (list(JOKERS) if state.options.jokers else [])
            rng.shuffle(tiles)
            return TilesShuffled(order=tuple(tiles))
        return self.chance_outcomes(state)[0]

    def chance_outcomes(self, state: DavinciState) -> tuple[Event, ...]:
        """Deals and draws take the top of the pile, and a numbered tile goes to its place in
        order: one possible event. A shuffle has too many to list."""
        turn = self.to_act(state)
        if turn is not None and turn.decision == "place_tile" and turn.seat == CHANCE:
            owner, tile = state.pending[0]
            return (TileSorted(seat=owner, position=_sorted_place(state.rows[owner], tile)),)
        if turn is None or turn.seat != CHANCE or turn.decision == "shuffle" or not state.pile:
            return ()
        seat = state.dealt % state.players if turn.decision == "deal" else state.turn
        return (TileDrawn(seat=seat, tile=state.pile[0]),)

    def tally(
        self, before: DavinciState, event: Event, after: DavinciState
    ) -> tuple[tuple[int | None, str, float], ...]:
        figures: list[tuple[int | None, str, float]] = []
        if isinstance(event, TileGuessed) and after.last is not None:
            figures += [(event.seat, "guesses", 1.0), (event.seat, "correct_guesses", float(after.last[4]))]
        if after.turn != before.turn and after.turn >= 0:
            figures.append((None, "turns", 1.0))
        return tuple(figures)

    def check_chance(self, state: DavinciState, event: Event) -> None:
        turn = self.to_act(state)
        if isinstance(event, TilesShuffled) and turn is not None and turn.decision == "shuffle":
            # A shuffle holds every tile of the set once.
            tiles = sorted(range(24)) + (list(JOKERS) if state.options.jokers else [])
            if sorted(event.order) != sorted(tiles):
                raise IllegalAction(Rule.IMPOSSIBLE_CHANCE, f"the shuffle is not the {len(tiles)} tiles, each once")
            return
        among_outcomes(self, state, event)  # a deal or a draw takes the top of the pile

    def legal(self, state: DavinciState, seat: int) -> tuple[Event, ...]:
        turn = self.to_act(state)
        if turn is None or turn.seat != seat:
            return ()
        if turn.decision == "place_joker":
            return tuple(JokerPlaced(seat=seat, position=p) for p in range(len(state.rows[seat]) + 1))
        if turn.decision == "reveal":
            return tuple(TileRevealed(seat=seat, position=p) for p in state.hidden_positions(seat))
        guesses: list[Event] = [GuessStopped(seat=seat)] if turn.decision == "guess_or_stop" else []
        numbers: list[int | None] = [*range(12), *([None] if state.options.jokers else [])]
        for target in state.active_seats:
            if target == seat:
                continue
            for position in state.hidden_positions(target):
                guesses.extend(TileGuessed(seat=seat, target=target, position=position, number=n) for n in numbers)
        return tuple(guesses)

    def parse(self, state: DavinciState, seat: int, answer: object) -> Event:
        """A guess is (target, position, number), number None or "joker" for a joker; "stop" (or False)
        stops guessing; a reveal or a joker's place is a position."""
        turn = awaited_turn(self, state, seat)
        if turn.decision in ("reveal", "place_joker"):
            if not _is_int(answer):
                raise IllegalAction(DavinciRule.MALFORMED, f"{turn.decision} needs a position, not {shown(answer, 40)}")
            if turn.decision == "reveal":
                return TileRevealed(seat=seat, position=answer)  # type: ignore[arg-type]
            return JokerPlaced(seat=seat, position=answer)  # type: ignore[arg-type]
        if turn.decision == "guess_or_stop" and (answer is False or answer == "stop"):
            return GuessStopped(seat=seat)
        if not isinstance(answer, tuple | list) or len(answer) != 3:
            raise IllegalAction(
                DavinciRule.MALFORMED, f"a guess is (target, position, number), not {shown(answer, 40)}"
            )
        target, position, guess = answer
        if guess == "joker":
            guess = None
        if not _is_int(target) or not _is_int(position) or not (guess is None or _is_int(guess)):
            raise IllegalAction(DavinciRule.MALFORMED, f"a guess is three integers, not {shown(answer, 40)}")
        return TileGuessed(seat=seat, target=target, position=position, number=guess)  # type: ignore[arg-type]

    def check(self, state: DavinciState, seat: int, action: Event) -> None:
        turn = awaited_turn(self, state, seat)
        match action:
            case JokerPlaced(seat=acting, position=position) if turn.decision == "place_joker" and acting == seat:
                # A joker goes anywhere in its owner's row: before, between or after its tiles.
                if not 0 <= position <= len(state.rows[seat]):
                    raise IllegalAction(
                        DavinciRule.NO_SUCH_PLACE,
                        f"position {position} is not a place in a row of {len(state.rows[seat])}",
                    )
            case TileRevealed(seat=acting, position=position) if turn.decision == "reveal" and acting == seat:
                # Only one of your own tiles that is still hidden.
                if position not in state.hidden_positions(seat):
                    raise IllegalAction(DavinciRule.NOT_YOUR_HIDDEN_TILE, f"your tile {position} is not hidden")
            case GuessStopped(seat=acting) if turn.decision == "guess_or_stop" and acting == seat:
                pass
            case TileGuessed(seat=acting, target=target, position=position, number=guess) if (
                turn.decision in ("guess", "guess_or_stop") and acting == seat
            ):
                # A guess names an opponent still in the game...
                if target == seat or not 0 <= target < state.players or not state.active(target):
                    raise IllegalAction(DavinciRule.NOT_AN_OPPONENT, f"seat {target} is not an opponent still playing")
                # ...one of its tiles...
                if not 0 <= position < len(state.rows[target]):
                    raise IllegalAction(DavinciRule.NO_SUCH_TILE, f"seat {target} has no tile {position}")
                # ...that is still hidden...
                if state.revealed[target][position]:
                    raise IllegalAction(DavinciRule.ALREADY_REVEALED, f"seat {target}'s tile {position} is turned up")
                # ...and a number a tile can show (a joker only when jokers are in the game).
                if (guess is None and not state.options.jokers) or (guess is not None and not 0 <= guess <= 11):
                    raise IllegalAction(DavinciRule.NOT_A_NUMBER, f"{shown(guess, 20)} is not a tile's number")
            case _:
                raise IllegalAction(Rule.WRONG_DECISION, f"seat {seat} must answer {turn.decision}, not {action.tag}")

    def outcome(self, state: DavinciState) -> Outcome | None:
        if not state.over:
            return None
        # The last with a hidden tile wins; the others rank by how long they lasted; removed players last.
        still = [s for s in range(state.players) if s not in state.out and s not in state.removed]
        ranking = (*still, *reversed(state.out), *reversed(state.removed))
        places = [0] * state.players
        for place, seat in enumerate(ranking, start=1):
            places[seat] = place
        return Outcome(places=tuple(places), winners=tuple(still[:1]), removed=state.removed)

    def reveals(self, before: DavinciState, event: Event, after: DavinciState) -> bool:
        """Whether `event` turned a tile up for everyone, or showed a seat the tile it drew."""
        return after.revealed != before.revealed or len(after.pile) < len(before.pile)

    def view(self, state: DavinciState, seat: int | None) -> DavinciState:
        rows = tuple(
            tuple(
                tile if owner == seat or state.revealed[owner][i] else HIDDEN[colour(tile)]
                for i, tile in enumerate(row)
            )
            for owner, row in enumerate(state.rows)
        )
        pile = tuple(HIDDEN[colour(tile)] for tile in state.pile)
        pending = tuple((owner, tile if owner == seat else HIDDEN[colour(tile)]) for owner, tile in state.pending)
        return msgspec.structs.replace(state, rows=rows, pile=pile, pending=pending)

    # -- showing a state ---------------------------------------------------------------------

    def render(self, state: DavinciState) -> str:
        width = max(6, *(len(name) for name in state.names))
        turn = self.to_act(state)
        status = "over" if state.over else f"{_name(state, state.turn)}'s turn" if state.turn >= 0 else "dealing"
        jokers = " with jokers" if state.options.jokers else ""
        lines = [f"Da Vinci Code{jokers} · {status} · {len(state.pile)} tiles in the pile"]
        for seat, row in enumerate(state.rows):
            tiles = []
            for i, tile in enumerate(row):
                text = tile_text(tile, revealed=state.revealed[seat][i])
                tiles.append(text + ("*" if seat == state.turn and i == state.drawn else ""))
            note = " (out)" if seat in state.out else " (left)" if seat in state.removed else ""
            marker = ">" if turn is not None and turn.seat == seat else " "
            lines.append(f"{marker} {seat} {state.names[seat]:<{width}}  {' '.join(tiles)}{note}")
        lines.append("  (upper case: turned up; lower case: hidden; ?: not yours to see; -: joker; *: just drawn)")
        if state.last is not None:
            guesser, target, position, guess, right = state.last
            lines.append(
                f"  last guess: {_name(state, guesser)} said {_name(state, target)}'s tile {position} is "
                f"{'a joker' if guess is None else guess}: {'right' if right else 'wrong'}"
            )
        if turn is not None and turn.seat != CHANCE:
            lines.append(f"  waiting for {_name(state, turn.seat)} to {turn.decision.replace('_', ' ')}")
        return "\n".join(lines)

    def describe(self, before: DavinciState, event: Event, after: DavinciState) -> str:
        line = describe_lifecycle(before.names, event)
        if line is not None:
            return line
        match event:
            case TilesShuffled(order=order):
                return f"the referee shuffles {len(order)} tiles face down"
            case TilesShuffledHidden(count=count):
                return f"the referee shuffles {count} tiles face down"
            case TileDrawn(seat=seat, tile=tile):
                return f"{_name(before, seat)} draws {tile_text(tile, revealed=False)}" + _place(after, seat, tile)
            case TileDrawnHidden(seat=seat, colour=hue):
                return f"{_name(before, seat)} draws a {'black' if hue == BLACK else 'white'} tile"
            case JokerPlaced(seat=seat, position=position):
                return f"{_name(before, seat)} puts the joker at {position}"
            case TileSorted(seat=seat, position=position):
                tile = after.rows[seat][position] if position < len(after.rows[seat]) else HIDDEN[0]
                return (
                    f"{_name(before, seat)}'s {tile_text(tile, revealed=False)} goes to {position}, its place in order"
                )
            case TilePlacedHidden(seat=seat, position=position):
                return f"{_name(before, seat)} puts the tile it drew at {position}"
            case TileGuessed(seat=seat, target=target, position=position, number=guess):
                said = "a joker" if guess is None else str(guess)
                right = after.last is not None and after.last[4]
                line = f"{_name(before, seat)} says {_name(before, target)}'s tile {position} is {said}: "
                if right:
                    line += "right, it is turned up"
                elif before.drawn >= 0:
                    line += f"wrong; {_name(before, seat)} turns up its drawn tile"
                else:
                    line += "wrong"
                for gone in after.out[len(before.out) :]:
                    line += f"; {_name(after, gone)} is out ({ordinal(after.players - len(before.out))})"
                return line
            case GuessStopped(seat=seat):
                return f"{_name(before, seat)} stops guessing"
            case TileRevealed(seat=seat, position=position):
                return f"{_name(before, seat)} turns up its tile {position}"
        return event.tag


# -- transitions -----------------------------------------------------------------------------


def _insert_at(row: tuple, index: int, value: object) -> tuple:
    return (*row[:index], value, *row[index:])


def _replace(rows: tuple, seat: int, row: tuple) -> tuple:
    return (*rows[:seat], row, *rows[seat + 1 :])


def _sorted_place(row: tuple[int, ...], tile: int) -> int:
    """Where a numbered tile goes: just after the last numbered tile below it (jokers stay put)."""
    place = 0
    for index, other in enumerate(row):
        if other not in JOKERS and other >= 0 and other < tile:
            place = index + 1
    return place


def _add_tile(state: DavinciState, seat: int, tile: int, position: int, *, this_turn: bool) -> DavinciState:
    """`tile` joins `seat`'s row at `position` (`this_turn`: it is the tile drawn this turn)."""
    return msgspec.structs.replace(
        state,
        rows=_replace(state.rows, seat, _insert_at(state.rows[seat], position, tile)),
        revealed=_replace(state.revealed, seat, _insert_at(state.revealed[seat], position, False)),
        wrong=_replace(state.wrong, seat, _insert_at(state.wrong[seat], position, ())),
        drawn=position if this_turn else state.drawn,
    )


def _drawn(state: DavinciState, seat: int, tile: int) -> DavinciState:
    taken = msgspec.structs.replace(state, pile=state.pile[1:])
    if tile in JOKERS or (state.options.jokers and state.options.hidden_jokers):
        taken = msgspec.structs.replace(taken, pending=(*taken.pending, (seat, tile)))
    else:
        taken = _add_tile(taken, seat, tile, _sorted_place(state.rows[seat], tile), this_turn=state.phase == "draw")
    return _after_draw(taken)


def _after_draw(state: DavinciState) -> DavinciState:
    if state.phase == "deal":
        dealt = state.dealt + 1
        if dealt < state.hand_size * state.players:
            return msgspec.structs.replace(state, dealt=dealt)
        # Seat 0 plays first.
        return msgspec.structs.replace(state, dealt=dealt, turn=0, phase="draw" if state.pile else "guess")
    return msgspec.structs.replace(state, phase="guess")


def _placed(state: DavinciState, seat: int, position: int) -> DavinciState:
    """The tile `seat` drew and has waiting goes to `position` in its row."""
    index = next(i for i, (owner, _) in enumerate(state.pending) if owner == seat)
    tile = state.pending[index][1]
    # A tile placed in the guessing phase by the seat to move is the tile it drew this turn.
    this_turn = state.phase == "guess" and seat == state.turn
    unpended = msgspec.structs.replace(state, pending=state.pending[:index] + state.pending[index + 1 :])
    return _add_tile(unpended, seat, tile, position, this_turn=this_turn)


def _turn_up(state: DavinciState, seat: int, position: int) -> DavinciState:
    shown_row = list(state.revealed[seat])
    shown_row[position] = True
    turned = msgspec.structs.replace(state, revealed=_replace(state.revealed, seat, tuple(shown_row)))
    if all(shown_row) and seat not in turned.out:
        turned = msgspec.structs.replace(turned, out=(*turned.out, seat))
    if len(turned.active_seats) < 2:
        turned = msgspec.structs.replace(turned, phase="over")
    return turned


def _guessed(state: DavinciState, seat: int, target: int, position: int, guess: int | None) -> DavinciState:
    right = number(state.rows[target][position]) == guess  # None == None: a joker guessed as a joker
    noted = msgspec.structs.replace(state, last=(seat, target, position, guess, right))
    if right:
        turned = _turn_up(noted, target, position)
        if turned.over:
            return turned
        # Go on or stop, while an opponent still has a hidden tile.
        return msgspec.structs.replace(turned, phase="more")
    excluded = list(noted.wrong[target])
    excluded[position] = (*excluded[position], guess)
    noted = msgspec.structs.replace(noted, wrong=_replace(noted.wrong, target, tuple(excluded)))
    if noted.drawn >= 0:
        return _next_turn(_turn_up(noted, seat, noted.drawn))
    # Nothing was drawn (the pile is empty): the guesser chooses a hidden tile to turn up.
    return msgspec.structs.replace(noted, phase="reveal")


def _next_turn(state: DavinciState) -> DavinciState:
    if state.over or len(state.active_seats) < 2:
        return msgspec.structs.replace(state, phase="over")
    n = state.players
    following = next((state.turn + i) % n for i in range(1, n + 1) if state.active((state.turn + i) % n))
    return msgspec.structs.replace(state, turn=following, drawn=-1, phase="draw" if state.pile else "guess")


def _place(state: DavinciState, seat: int, tile: int) -> str:
    if tile in JOKERS:
        return " (a joker: its owner chooses where it goes)"
    row = state.rows[seat]
    return f" at {row.index(tile)}" if tile in row else ""


def _name(state: DavinciState, seat: int) -> str:
    return state.names[seat] if 0 <= seat < len(state.names) else f"seat {seat}"


_TILE = re.compile(r"(?P<colour>[bwBW])(?P<face>[0-9]{1,2}|-)")
_TURN = re.compile(r"\bturn=(?P<seat>[0-9]{1,2})\b")


def _position_text(state: DavinciState) -> str:
    """A table written in the `--position` notation (b? / w? for a tile the viewer cannot see)."""
    rows = " / ".join(
        " ".join(tile_text(tile, revealed=up) for tile, up in zip(row, shown_, strict=True))
        for row, shown_ in zip(state.rows, state.revealed, strict=True)
    )
    pile = " ".join(tile_text(tile, revealed=False) for tile in state.pile)
    return f"{rows} | {pile} turn={state.turn}" if pile else f"{rows} turn={state.turn}"


def _from_position(state: DavinciState, text: str) -> DavinciState:
    """`state` (before the shuffle) set to the rows and pile of a `--position` text (`DaVinci.start`).

    Raises:
        UsageError: (usage.position) not that form, or not a position this table can play on from.
    """

    def refuse(message: str) -> UsageError:
        return UsageError(f"a Da Vinci Code position: {message}", code="usage.position")

    def tile(word: str) -> tuple[int, bool]:
        given = _TILE.fullmatch(word)
        if given is None:
            raise refuse(f"{word[:20]!r} is not a tile (b3, W11, b- for a joker)")
        hue = "bw".index(given["colour"].lower())
        if given["face"] == "-":
            if not state.options.jokers:
                raise refuse(f"{word} is a joker, and the match is played without jokers (--jokers)")
            return JOKERS[hue], given["colour"].isupper()
        if not 0 <= int(given["face"]) <= 11:
            raise refuse(f"{word}: tiles are numbered 0 to 11")
        return 2 * int(given["face"]) + hue, given["colour"].isupper()

    turns = _TURN.findall(text)
    if len(turns) > 1:
        raise refuse("turn= is given more than once")
    board, _, pile_text = _TURN.sub(" ", text).partition("|")
    if "|" in pile_text:
        raise refuse("one | separates the rows from the pile")
    rows_text = board.split("/")
    if len(rows_text) != state.players:
        raise refuse(f"it has {len(rows_text)} rows (split by /); the match has {state.players} seats")
    rows: list[tuple[int, ...]] = []
    revealed: list[tuple[bool, ...]] = []
    for seat, row_text in enumerate(rows_text):
        row = [tile(word) for word in row_text.split()]
        if not row:
            raise refuse(f"seat {seat}'s row is empty")
        numbered = [t for t, _ in row if t not in JOKERS]
        if numbered != sorted(numbered):
            raise refuse(f"seat {seat}'s row is not in order (by number, black before white)")
        rows.append(tuple(t for t, _ in row))
        revealed.append(tuple(up for _, up in row))
    pile = tuple(tile(word)[0] for word in pile_text.split())
    every = [t for row in rows for t in row] + list(pile)
    if len(set(every)) != len(every):
        twice = next(t for t in every if every.count(t) > 1)
        raise refuse(f"{tile_text(twice, revealed=False)} is in it twice")
    out = tuple(seat for seat in range(state.players) if all(revealed[seat]))
    active = [seat for seat in range(state.players) if seat not in out]
    if len(active) < 2:
        raise refuse("two seats or more must have a hidden tile")
    turn = int(turns[0]) if turns else active[0]
    if turn not in active:
        raise refuse(f"turn={turn} is not a seat with a hidden tile ({', '.join(map(str, active))})")
    return msgspec.structs.replace(
        state,
        rows=tuple(rows),
        revealed=tuple(revealed),
        wrong=tuple(((),) * len(row) for row in rows),
        pile=pile,
        dealt=len(every) - len(pile),
        turn=turn,
        out=out,
        phase="draw" if pile else "guess",
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


ENGINE = DaVinci()
