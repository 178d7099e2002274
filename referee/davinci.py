"""Da Vinci Code's player protocol, its built-in players (the seed's probability-vector AI and a
random one), and a human player at the terminal.

A player is an object with `guess(view) -> (target, position, number)` (number None, or "joker",
for a joker) and optionally `continue_guessing(view) -> bool` (after a right guess; default: stop),
`reveal(view) -> position` (a wrong guess with the pile empty), `place_joker(view) -> position`,
`begin_game(view)`, `observe(view, text)` (after every step, as that seat saw it) and
`end_game(view)`. `view` is the engine's state as that seat may see it: numbers of other seats'
hidden tiles are HIDDEN markers. An invalid answer is rejected and asked again; the third in a row
removes the player (match.rejection_limit). `PlayerLeft` (or Ctrl-C / "quit" for the human) records that it left.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
from rich.console import Console
from rich.text import Text

from matchlog.engines import Turn
from matchlog.engines.davinci import (
    ENGINE,
    JOKERS,
    DavinciState,
    colour,
    number,
    tile_text,
)
from matchlog.engines.views import shown_event, shown_state
from matchlog.events import Event, IllegalAction

from .calls import Channel, PlayerLeft, Reply
from .messages import Messages
from .registry import register_builtin, register_messages

if TYPE_CHECKING:
    from .match import Referee

__all__ = ["DavinciMessages", "DavinciProtocol", "HumanPlayer", "RandomPlayer", "SeedAIPlayer", "candidates"]

#: Invalid answers in a row that remove a player (the game's: the judge takes a removal only there).
MAX_INVALID = ENGINE.spec.rejection_limit


class DavinciProtocol:
    """Asks each decision of the player whose turn it is, and tells every player what happened."""

    def __init__(self, calls: Sequence[Channel]) -> None:
        self.calls = list(calls)

    def _view(self, referee: Referee, seat: int) -> DavinciState:
        return shown_state(ENGINE, referee.state, seat)

    def begin(self, referee: Referee) -> None:
        for seat, calls in enumerate(self.calls):
            reply = calls.call("begin_game", self._view(referee, seat), required=False)
            if reply.failed:
                referee.remove(seat, reply.failure or "player.failed", reply.detail)

    def ask(self, referee: Referee, turn: Turn) -> Reply:
        calls, view = self.calls[turn.seat], self._view(referee, turn.seat)
        if turn.decision == "guess_or_stop":
            go_on = calls.call("continue_guessing", view, required=False)
            if go_on.failed or not go_on.value:
                return go_on if go_on.failed else Reply(value="stop")
            return calls.call("guess", view)
        method = {"guess": "guess", "reveal": "reveal", "place_joker": "place_joker"}[turn.decision]
        return calls.call(method, view)

    def ruling(self, referee: Referee, turn: Turn, error: IllegalAction) -> list[Event]:
        return []  # asked again, until the rejection limit

    def after(self, referee: Referee, before: Any, after: Any) -> None:
        for seat, calls in enumerate(self.calls):
            if seat in referee.removed or not calls.has("observe"):
                continue
            lines = [
                ENGINE.describe(
                    shown_state(ENGINE, b, seat), shown_event(ENGINE, b, event, seat), shown_state(ENGINE, a, seat)
                )
                for b, event, a in referee.step
            ]
            reply = calls.call("observe", shown_state(ENGINE, after, seat), "\n".join(lines))
            if reply.failed:
                referee.remove(seat, reply.failure or "player.failed", reply.detail)

    def end(self, referee: Referee) -> None:
        for seat, calls in enumerate(self.calls):
            if seat not in referee.removed:
                calls.call("end_game", self._view(referee, seat), required=False)


def run_match(referee: Referee, calls: Sequence[Channel], rng: random.Random) -> None:
    """Play a recorded match between player objects."""
    referee.run(DavinciProtocol(calls), rng)


# -- what a player can work out ----------------------------------------------------------------


def candidates(view: DavinciState, me: int) -> dict[tuple[int, int], set[int]]:
    """For every hidden tile of every opponent: the tiles it may be, given what `me` can see.

    Starting from every tile of its colour that `me` has not seen (and the joker of that colour,
    while unseen), it removes numbers publicly guessed wrong for it, then repeats until nothing
    changes: a tile must sort after the tiles to its left and before those to its right (jokers,
    and tiles that may be jokers, bound nothing), and a tile that can only be one thing is no other.
    """
    seen = {tile for row in view.rows for tile in row if tile >= 0}
    found: dict[tuple[int, int], set[int]] = {}
    rows: dict[int, list[set[int]]] = {}
    for target, row in enumerate(view.rows):
        if target == me or not view.active(target):
            continue
        options: list[set[int]] = []
        for position, tile in enumerate(row):
            if tile >= 0:
                options.append({tile})
                continue
            hue = colour(tile)
            possible = {t for t in range(hue, 24, 2) if t not in seen}
            if view.options.jokers and JOKERS[hue] not in seen:
                possible.add(JOKERS[hue])
            wrong = view.wrong[target][position]
            possible = {t for t in possible if number(t) not in wrong}
            options.append(possible)
        rows[target] = options
    for _ in range(30):
        changed = False
        for options in rows.values():
            changed |= _order(options)
        # A tile that can only be one thing is no other hidden tile.
        certain = {next(iter(o)) for options in rows.values() for o in options if len(o) == 1}
        for options in rows.values():
            for o in options:
                if len(o) > 1 and o & certain:
                    o.difference_update(certain)
                    changed = True
        if not changed:
            break
    for target, options in rows.items():
        for position, tile in enumerate(view.rows[target]):
            if tile < 0:
                found[(target, position)] = options[position]
    return found


def _order(options: list[set[int]]) -> bool:
    """Narrow each tile to values after the smallest possible left neighbour and before the largest
    possible right one; only tiles that cannot be jokers bound others."""
    changed = False
    for index, option in enumerate(options):
        numbered = {t for t in option if t not in JOKERS}
        if not numbered:
            continue
        low = max((min(o) for o in options[:index] if o and not o & set(JOKERS)), default=-1)
        high = min((max(o) for o in options[index + 1 :] if o and not o & set(JOKERS)), default=24)
        keep = {t for t in numbered if low < t < high} | (option & set(JOKERS))
        if keep != option and keep:
            option.intersection_update(keep)
            changed = True
    return changed


def _numbers(options: set[int]) -> list[int | None]:
    return sorted((number(t) for t in options), key=lambda n: -1 if n is None else n)


# -- players ---------------------------------------------------------------------------------


class SeedAIPlayer:
    """The seed's computer player: guess the hidden tile with the fewest possibilities (a random
    one of them), and guess again only while some tile has at most two. Never crashes: with no
    possibilities left anywhere it still makes a legal guess, and with the pile empty it turns up
    a tile when it must."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def _best(self, view: DavinciState) -> tuple[tuple[int, int], set[int]] | None:
        me = view.turn
        options = candidates(view, me)
        ranked = sorted(((len(o), key) for key, o in options.items() if o))
        if not ranked:
            return None
        key = ranked[0][1]
        return key, options[key]

    def guess(self, view: DavinciState) -> tuple[int, int, int | None]:
        best = self._best(view)
        if best is None:  # nothing is consistent (cannot happen in a real game): still guess legally
            target = next(t for t in view.active_seats if t != view.turn)
            position = next(i for i, tile in enumerate(view.rows[target]) if tile < 0)
            return target, position, 0
        (target, position), options = best
        return target, position, self.rng.choice(_numbers(options))

    def continue_guessing(self, view: DavinciState) -> bool:
        best = self._best(view)
        return best is not None and len(best[1]) <= 2

    def reveal(self, view: DavinciState) -> int:
        return self.rng.choice(view.hidden_positions(view.turn))

    def place_joker(self, view: DavinciState) -> int:
        seat = view.pending[0][0]
        return self.rng.randint(0, len(view.rows[seat]))


class RandomPlayer:
    """Guesses a random hidden tile as a random number of its colour it has not seen."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def guess(self, view: DavinciState) -> tuple[int, int, int | None]:
        me = view.turn
        hidden = [(t, p) for t in view.active_seats if t != me for p, tile in enumerate(view.rows[t]) if tile < 0]
        target, position = self.rng.choice(hidden)
        hue = colour(view.rows[target][position])
        seen = {tile for row in view.rows for tile in row if tile >= 0}
        numbers = [number(t) for t in range(hue, 24, 2) if t not in seen] or list(range(12))
        return target, position, self.rng.choice(numbers)

    def continue_guessing(self, view: DavinciState) -> bool:
        return self.rng.random() < 0.5

    def reveal(self, view: DavinciState) -> int:
        return self.rng.choice(view.hidden_positions(view.turn))

    def place_joker(self, view: DavinciState) -> int:
        seat = view.pending[0][0]
        return self.rng.randint(0, len(view.rows[seat]))


class HumanPlayer:
    """A person at the terminal: the table drawn with rich, every answer checked and asked again
    until it is one the rules allow. "quit", end of input or Ctrl-C leaves the match."""

    def __init__(
        self,
        rng: random.Random | None = None,
        *,
        ask: Callable[[str], str] | None = None,
        console: Console | None = None,
    ) -> None:
        self.console = console or Console(highlight=False)
        self.ask_line = ask or self.console.input
        self.seat = -1

    # What the human sees.

    def begin_game(self, view: DavinciState) -> None:
        self.console.print(Text("Da Vinci Code: guess the numbers on the others' hidden tiles.", style="bold"))

    def observe(self, view: DavinciState, text: str) -> None:
        for line in text.splitlines():
            self.console.print(Text("  " + line, style="dim"))

    def end_game(self, view: DavinciState) -> None:
        self.draw(view)
        outcome = ENGINE.outcome(view)
        if outcome is not None and outcome.winners:
            self.console.print(Text(f"{view.names[outcome.winners[0]]} wins.", style="bold"))

    def draw(self, view: DavinciState) -> None:
        for seat, row in enumerate(view.rows):
            line = Text(f"{seat} {view.names[seat]:<10} ")
            for position, tile in enumerate(row):
                face = tile_text(tile, revealed=view.revealed[seat][position])
                style = "black on white" if colour(tile) == 1 else "white on black"
                if view.revealed[seat][position]:
                    style += " bold"
                line.append(
                    f" {position}:{face}{'*' if seat == view.turn and position == view.drawn else ''} ", style=style
                )
            if not view.active(seat):
                line.append("  (out)")
            self.console.print(line)
        self.console.print(Text(f"pile: {len(view.pile)} tiles", style="dim"))

    # What the human answers.

    def _line(self, prompt: str) -> str:
        try:
            text = self.ask_line(prompt)
        except (EOFError, KeyboardInterrupt):
            raise PlayerLeft("the player left (end of input or Ctrl-C)") from None
        if text.strip().lower() in ("quit", "q", "exit"):
            raise PlayerLeft("the player quit")
        return text.strip()

    def guess(self, view: DavinciState) -> tuple[int, int, int | None]:
        self.seat = view.turn
        self.draw(view)
        opponents = [t for t in view.active_seats if t != view.turn]
        numbers = f"0-11{' or joker' if view.options.jokers else ''}"
        while True:
            words = self._line(f"Your guess ({self._example(view, opponents)}; a number is {numbers}): ").split()
            guess = self._parse_guess(view, opponents, words)
            if isinstance(guess, str):
                self.console.print(Text(guess, style="red"))
                continue
            return guess

    @staticmethod
    def _example(view: DavinciState, opponents: list[int]) -> str:
        """What a guess is typed as here, with an example from this table: `position number` against
        one opponent (its seat may be given too), `seat position number` against more."""
        target = opponents[0]
        position = next((p for p, shown in enumerate(view.revealed[target]) if not shown), 0)
        if len(opponents) == 1:
            return f"position number, e.g. {position} 7 for {view.names[target]}'s tile {position}"
        return f"seat position number, e.g. {target} {position} 7 for {view.names[target]}'s tile {position}"

    def _parse_guess(
        self, view: DavinciState, opponents: list[int], words: list[str]
    ) -> tuple[int, int, int | None] | str:
        if len(words) == 2 and len(opponents) == 1:
            words = [str(opponents[0]), *words]
        if len(words) != 3:
            return f"Give {self._example(view, opponents)}."
        try:
            target, position = int(words[0]), int(words[1])
        except ValueError:
            return "The seat and the position are numbers."
        if target not in opponents:
            return f"Seat {target} is not an opponent still playing ({', '.join(map(str, opponents))})."
        if not 0 <= position < len(view.rows[target]) or view.revealed[target][position]:
            hidden = [p for p, tile in enumerate(view.rows[target]) if not view.revealed[target][p]]
            return f"Position {position} is not a hidden tile of seat {target} ({', '.join(map(str, hidden))})."
        if words[2].lower() in ("joker", "j", "-") and view.options.jokers:
            return target, position, None
        try:
            guessed = int(words[2])
        except ValueError:
            return f"{words[2]!r} is not a number from 0 to 11."
        if not 0 <= guessed <= 11:
            return f"{guessed} is not a number from 0 to 11."
        return target, position, guessed

    def continue_guessing(self, view: DavinciState) -> bool:
        self.draw(view)
        while True:
            answer = self._line("Right! Guess again? [y/n]: ").lower()
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no", ""):
                return False
            self.console.print(Text("Answer y or n.", style="red"))

    def reveal(self, view: DavinciState) -> int:
        hidden = view.hidden_positions(view.turn)
        while True:
            answer = self._line(
                f"Wrong, and the pile is empty: which of your tiles do you turn up ({', '.join(map(str, hidden))})? "
            )
            if answer.isdigit() and int(answer) in hidden:
                return int(answer)
            self.console.print(Text(f"Choose one of your hidden tiles: {', '.join(map(str, hidden))}.", style="red"))

    def place_joker(self, view: DavinciState) -> int:
        seat = view.pending[0][0]
        size = len(view.rows[seat])
        self.draw(view)
        while True:
            answer = self._line(f"You drew a joker: where does it go in your row (0 to {size})? ")
            if answer.isdigit() and 0 <= int(answer) <= size:
                return int(answer)
            self.console.print(Text(f"Give a place from 0 to {size}.", style="red"))


class DavinciMessages(Messages):
    """Every call carries the player's `seat` and its `view` (`DavinciState` as that seat sees it:
    other seats' hidden tiles and the pile are HIDDEN markers); observe adds the step's `text`."""

    def __init__(self, seat: int) -> None:
        self.seat = seat

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        if args and isinstance(args[0], DavinciState):
            message = {"call": method, "seat": self.seat, "view": msgspec.to_builtins(args[0])}
            if method == "observe" and len(args) == 2:
                message["text"] = args[1]
            return message
        return super().request(method, args)

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        if "view" in message:
            view = msgspec.convert(message["view"], DavinciState)
            return (view, message["text"]) if message["call"] == "observe" else (view,)
        return super().arguments(message)


register_messages("davinci", DavinciMessages)
register_builtin("davinci", "seed-ai", SeedAIPlayer, "the seed's AI: the tile with the fewest possibilities first")
register_builtin("davinci", "random", RandomPlayer, "a random hidden tile, a random unseen number")
register_builtin("davinci", "human", HumanPlayer, "you, at the terminal")
