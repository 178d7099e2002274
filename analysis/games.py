"""The analysers of Porrinha, Da Vinci Code and Fish: each built on the built-in player that plays
the game best, judging every decision from what the deciding seat saw.

- Porrinha, `reasoner`: each guess by the reasoner's chances of the total (`guess_odds`: the seat's
  own hand, the chopsticks, the guesses said before it); a guess's value is the chance it is the
  total. Hands are chosen at random by every good player, so they get no row.
- Da Vinci Code, `seed-ai`: each guess by the seed's probability vectors (`candidates`: the tiles
  each hidden tile may be, from what the seat sees), a guess's value being the chance it is right;
  after a right guess, stopping is worth the chance the best next guess would be wrong (the seed's
  rule, to go on while some tile has at most two possibilities, is to go on when it would more
  likely be right). Turning up a tile and placing a joker get no row: the vectors tell them apart
  by nothing.
- Fish, `maximin:DEPTH` (2 unless given): each move by the house player's maximin search over the
  seat's next DEPTH turns, the others playing against it (`move_value`): the fish it makes sure
  of. Placements get no row (the house player places by a fixed scan).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matchlog.engines import GameTree
from matchlog.engines import get as get_engine
from matchlog.engines.davinci import number
from matchlog.events import (
    Choice,
    Decision,
    GuessMade,
    GuessStopped,
    PenguinMoved,
    Record,
    TileGuessed,
    UsageError,
)
from matchlog.replay.annotations import Judged

from .base import decisions, matchlog_version
from .marks import mark

__all__ = ["DavinciAnalyser", "FishAnalyser", "PorrinhaAnalyser"]

#: How many of the best choices a row lists (the one made is always among them).
CHOICES = 5


def _check_game(records: Sequence[Record], game: str) -> None:
    """Raises UsageError unless `records` are a match of `game`."""
    started = records[0].event
    if getattr(started, "game", None) != game:
        raise UsageError(f"that analyser judges {game}, not {getattr(started, 'game', '?')}", code="usage.analyser")


def _choices(valued: dict[str, float], played: str) -> tuple[Choice, ...]:
    """The best few choices by value (ties in the order given), and the one made."""
    ranked = sorted(valued.items(), key=lambda item: -item[1])[:CHOICES]
    if played not in dict(ranked):
        ranked.append((played, valued[played]))
    return tuple(Choice(choice, value) for choice, value in ranked)


class _Analyser:
    """What the three share: a name, a version, an author, and analysing matches one by one."""

    name = ""
    game = ""

    @property
    def version(self) -> str:
        return matchlog_version()

    @property
    def author(self) -> str:
        return f"{self.name} {self.version}"

    def analyse(self, records: Sequence[Record]) -> list[Judged]:
        raise NotImplementedError

    def analyse_many(self, matches: Sequence[Sequence[Record]]) -> list[list[Judged]]:
        return [self.analyse(records) for records in matches]

    def _decision(
        self, seat: int, kind: str, valued: dict[str, float], played: str, unit: str, **more: Any
    ) -> Decision:
        """A row for a decision whose choices are `valued`, `played` the one made."""
        top = max(valued.values())
        # The choice made, when it is as good as any; else the first of the best.
        best = played if valued[played] >= top - 1e-12 else next(c for c, v in valued.items() if v >= top - 1e-12)
        before, after = valued[best], valued[played]
        loss = max(0.0, before - after)
        chance = {"chance": after, "best_chance": before} if unit == "chance" else {}
        return Decision(
            analyser=self.name,
            version=self.version,
            seat=seat,
            decision=kind,
            played=played,
            best=best,
            before=before,
            after=after,
            loss=loss,
            unit=unit,
            mark=mark(loss, unit),
            forced=len(valued) == 1,
            choices=_choices(valued, played),
            **chance,
            **more,
        )


class PorrinhaAnalyser(_Analyser):
    """Porrinha's guesses judged by the reasoner's chances of the total."""

    name = "reasoner"
    game = "porrinha"

    def analyse(self, records: Sequence[Record]) -> list[Judged]:
        from matchlog.referee.porrinha import Table, TableView, guess_odds

        _check_game(records, self.game)
        judged = []
        for decided in decisions(records, ("guess",)):
            event = decided.record.event
            if not isinstance(event, GuessMade):
                continue  # an invalid guess the referee turned down: nothing to weigh
            seat = decided.turn.seat
            odds = guess_odds(Table(TableView.of(decided.seen, seat)))
            valued = {str(guess): chance for guess, chance in odds.items()}
            if str(event.guess) not in valued:
                continue
            row = self._decision(seat, "guess", valued, str(event.guess), "chance")
            judged.append(Judged(decided.record.seq, seat, row))
        return judged


def _guess_text(target: int, position: int, guessed: int | None) -> str:
    return f"seat {target} tile {position} = {'joker' if guessed is None else guessed}"


class DavinciAnalyser(_Analyser):
    """Da Vinci Code's guesses, and going on or stopping, judged by the seed's probability vectors."""

    name = "seed-ai"
    game = "davinci"

    def analyse(self, records: Sequence[Record]) -> list[Judged]:
        from matchlog.referee.davinci import candidates

        _check_game(records, self.game)
        judged = []
        for decided in decisions(records, ("guess", "guess_or_stop")):
            event = decided.record.event
            seat = decided.turn.seat
            options = candidates(decided.seen, seat)
            valued: dict[str, float] = {}
            for (target, position), tiles in sorted(options.items()):
                for guessed in sorted({number(t) for t in tiles}, key=lambda n: -1 if n is None else n):
                    right = sum(1 for t in tiles if number(t) == guessed)
                    valued[_guess_text(target, position, guessed)] = right / len(tiles)
            best_guess = max(valued.values(), default=0.0)
            if decided.turn.decision == "guess_or_stop":
                valued["stop"] = 1.0 - best_guess  # right to stop when the best guess would be wrong
            if isinstance(event, TileGuessed):
                played = _guess_text(event.target, event.position, event.number)
                valued.setdefault(played, 0.0)  # a guess the vectors rule out is right by no chance
            elif isinstance(event, GuessStopped):
                played = "stop"
            else:
                continue
            kind = "guess" if decided.turn.decision == "guess" else "guess or stop"
            judged.append(Judged(decided.record.seq, seat, self._decision(seat, kind, valued, played, "chance")))
        return judged


class FishAnalyser(_Analyser):
    """Fish's moves judged by the house player's maximin search over the seat's next DEPTH turns."""

    game = "fish"

    def __init__(self, depth: int | str = 2) -> None:
        try:
            self.depth = int(depth)
        except ValueError:
            raise UsageError(f"maximin takes a depth from 1 to 4, not {depth!r}", code="usage.analyser") from None
        if not 1 <= self.depth <= 4:
            raise UsageError(f"maximin takes a depth from 1 to 4, not {depth}", code="usage.analyser")
        self.name = f"maximin:{self.depth}"

    def analyse(self, records: Sequence[Record]) -> list[Judged]:
        from matchlog.referee.fish import move_value

        _check_game(records, self.game)
        engine = get_engine(self.game)
        judged = []
        for decided in decisions(records, ("move",)):
            event = decided.record.event
            if not isinstance(event, PenguinMoved):
                continue
            seat = decided.turn.seat
            tree = GameTree(engine, decided.seen)  # Fish hides nothing: the seat saw the whole board
            valued: dict[str, float] = {}
            steps: dict[str, tuple[int, ...]] = {}
            for move in tree.valid_moves():
                assert isinstance(move, PenguinMoved)
                text = _move_text(move)
                valued[text] = move_value(tree, move, self.depth)
                steps[text] = (*move.source, *move.target)
            played = _move_text(event)
            if played not in valued:
                continue
            best = max(valued, key=lambda choice: valued[choice])
            row = self._decision(seat, "move", valued, played, "fish", steps=(steps[best],))
            judged.append(Judged(decided.record.seq, seat, row))
        return judged


def _move_text(move: PenguinMoved) -> str:
    return f"{list(move.source)}->{list(move.target)}"
