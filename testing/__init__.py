"""The contract kit: the tests every game passes, as a library a game's own test suite imports.

matchlog's own games run it in matchlog's suite, and a game from another package runs it in its
own: subclass `Contract` in a test module, name the game, and pytest runs every check on it
(`docs/guides/add-a-game.md`):

    from matchlog.testing import Contract

    class TestConnectFour(Contract):
        game = "connect4"

A game with hidden information brings its twin maker (`twins`): matches that differ from a given
one only in what one seat may not know, which the view test compares every output of that seat
over. The checks are also functions (`check_playout`, `check_codec`, ...: `matchlog.testing.kit`),
for a suite that drives them its own way (with hypothesis, say).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar

from matchlog.engines import Game
from matchlog.engines import game as registered
from matchlog.events import Record, plugins

from .kit import (
    GARBAGE,
    Playout,
    Twin,
    check_bad_answers,
    check_codec,
    check_declared,
    check_encoding,
    check_folding,
    check_playout,
    check_twins,
    check_views,
    playout,
    sample,
)

__all__ = [
    "GARBAGE",
    "Contract",
    "Playout",
    "Twin",
    "check_bad_answers",
    "check_codec",
    "check_declared",
    "check_encoding",
    "check_folding",
    "check_playout",
    "check_twins",
    "check_views",
    "playout",
    "registering",
    "sample",
]


class _Given:
    """A game given in this process, found as an entry point is."""

    def __init__(self, game: Game) -> None:
        self.name = game.name
        self.value = f"<{game.name} given in this process>"
        self._game = game

    def load(self) -> Game:
        return self._game


@contextlib.contextmanager
def registering(*games: Game) -> Iterator[None]:
    """Within the block, matchlog knows `games` too, beside every game installed, as if their
    packages were installed (in this process only): for a game's own tests before it is packaged,
    or a notebook."""
    plugins.reload([*entry_points(group=plugins.GROUP), *(_Given(game) for game in games)])
    try:
        yield
    finally:
        plugins.reload()


class Contract:
    """Every check of the kit as a pytest test class: subclass it (`class TestMyGame(Contract)`)
    and set `game`; optionally the table sizes, the seeds, the options, a folder of encoded event
    samples, and, for a game with hidden information, `played` and `twins`."""

    #: The game's name, as registered.
    game: ClassVar[str]
    #: Table sizes to play (default: the least, and one more where the game allows it).
    tables: ClassVar[tuple[int, ...] | None] = None
    #: Seeds of the random matches each check plays.
    seeds: ClassVar[Sequence[int]] = range(6)
    #: The game's options for every match the checks play.
    options: ClassVar[dict[str, Any]] = {}
    #: A folder of encoded event samples (`TAG.vN.json`) that must still decode.
    samples: ClassVar[Path | None] = None

    def played(self, seed: int) -> list[Record]:
        """The records of one match the twin test starts from (default: a random playout)."""
        return playout(self.game, self._tables()[0], seed, options=self.options).records

    def twins(self, records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[Twin]:
        """Twins of `records` for `seat`: (records, the first seq where `seat` could tell them
        apart), each differing only in what `seat` may not know then. A game with hidden
        information must give them."""
        return iter(())

    def _tables(self) -> tuple[int, ...]:
        if self.tables is not None:
            return self.tables
        spec = registered(self.game).engine.spec
        more = spec.min_players + 1
        return (spec.min_players, more) if spec.max_players is None or more <= spec.max_players else (spec.min_players,)

    def _playouts(self) -> list[Playout]:
        return [
            check_playout(self.game, table, seed, options=self.options)
            for table in self._tables()
            for seed in self.seeds
        ]

    def test_the_game_declares_itself(self) -> None:
        check_declared(self.game)

    def test_random_playouts_end_fold_to_the_live_state_and_audit_clean(self) -> None:
        self._playouts()

    def test_every_event_type_round_trips_through_the_codec(self) -> None:
        check_codec(
            self.game, samples=self.samples, playouts=[playout(self.game, seed=seed) for seed in self.seeds[:2]]
        )

    def test_folding_is_deterministic(self) -> None:
        for seed in self.seeds[:2]:
            check_folding(self.game, seed)

    def test_every_event_type_declares_its_views_and_every_figure_what_it_is_derived_from(self) -> None:
        check_views(self.game, [playout(self.game, seed=seed, options=self.options) for seed in self.seeds[:3]])

    def test_no_output_a_seat_gets_depends_on_what_it_may_not_know(self) -> None:
        compared = sum(check_twins(self.played(seed), self.twins, seed=seed) for seed in self.seeds[:4])
        if registered(self.game).engine.spec.hidden:
            assert compared > 0, (
                f"{self.game} hides information but its twins() gave no twin: the views were not tested"
            )

    def test_bad_answers_get_rulings(self) -> None:
        for seed in self.seeds[:3]:
            check_bad_answers(self.game, seed)

    def test_every_decision_encodes_within_its_space_or_datasets_refuse_the_game(self) -> None:
        for table in self._tables():
            for seed in self.seeds[:2]:
                check_encoding(self.game, seed, players=table, options=self.options)
