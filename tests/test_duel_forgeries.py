"""Duel tags and pairs no duel could have: a duel's games are what its report and its verdict are
computed from, so every write (the judge of a match's start, the clerk against the pair's games in
the log) and every read (`audit`, the report) holds them to one rule (`replay.pairs`). The first
four tests are attack 3's findings 2 and 3 (tests/test_attack3.py on its branch), as it wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.events import Duel, MatchlogError, MatchStarted, Seat, Sprt, uuid7

runner = CliRunner()

PORRINHA_OPTIONS = {"chopsticks": 3, "policy": "lenient"}


def _started(duel: Duel) -> MatchStarted:
    seats = (Seat("a", "random"), Seat("b", "random"))
    return MatchStarted(game="porrinha", options=PORRINHA_OPTIONS, seats=seats, duel=duel)


# -- attack 3: the test and the tags a duel's report is computed from ----------------------------


def test_every_sprt_bound_a_duel_cannot_decide_with_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """Every numeric option has bounds, refused with error[usage...] before anything runs. On main
    `--sprt elo0=-5,elo1=20000` is taken: the duel plays its first pair, then stops with
    `error[internal]: ZeroDivisionError` (the LLR of an Elo whose expected score rounds to 1),
    leaving a game abandoned, and the duel's report is that internal error for every reader."""
    db = tmp_path / "duel.duckdb"
    args = ["duel", "porrinha", "-p", "random", "-p", "random", "--pairs", "3", "--seed", "1", "--db", str(db)]
    result = runner.invoke(app, [*args, "--sprt", "elo0=-5,elo1=20000"])
    assert result.exit_code == 2, result.output
    assert "error[usage.sprt]" in result.output and "internal" not in result.output
    if db.exists():
        with matchlog.open(db) as log:
            assert log.matches() == []


@pytest.mark.parametrize(
    "duel",
    [
        Duel(id="d", pair=1, game=9, games=2),  # game 9 of a pair of 2
        Duel(id="d", pair=1, game=0, games=0),  # a pair of no games
        Duel(id="d", pair=1, game=0, games=3),  # a pair of 3 games at a table of 2 seats
        Duel(id="d", pair=-5, game=0, games=2),  # pairs are numbered from 1
        Duel(id="d", pair=1, game=0, games=2, sprt=Sprt(elo0=0, elo1=5, alpha=2.0)),  # no test
        Duel(id="d", pair=1, game=0, games=2, sprt=Sprt(elo0=0, elo1=1e308)),  # no LLR
    ],
    ids=["game-beyond-pair", "no-games", "games-not-seats", "pair-negative", "alpha-2", "elo1-1e308"],
)
def test_a_duel_tag_no_duel_could_have_is_refused_by_the_judge(tmp_path: Path, duel: Duel) -> None:
    """One judge for every event: an import, `/api/batches` or `FileLog.append` takes only what a
    referee of matchlog could have recorded. On main a `match.started` whose duel tag no duel can
    have is taken, and the duel's report (`duel-report`, `GET /api/duels/{id}`) is then an internal
    error (IndexError, ZeroDivisionError, ValueError: math domain error) for every reader."""
    with matchlog.open(tmp_path / "log.duckdb", mode="create") as log:
        with pytest.raises(MatchlogError) as refused:
            log.append(uuid7(), [_started(duel)], 0)
        assert refused.value.code != "internal"
        assert log.matches() == []


def _pair(db: Path, second: Duel, seats: tuple[tuple[Seat, Seat], tuple[Seat, Seat]], seeds: tuple[int, int]) -> bool:
    """Pair 1 of duel "forged": game 0 as `matchlog duel` plays it, and a second game tagged
    `second`; False when the log refused the second game (its judge saw it is no game of the pair)."""
    from matchlog.events import Series
    from matchlog.referee import play_match
    from matchlog.referee.backgammon import HeuristicPlayer, RandomPlayer
    from matchlog.store import Store

    first = Duel(id="forged", pair=1, game=0, games=2, sprt=Sprt(elo0=0.0, elo1=100.0))
    with Store(db) as store:
        for game, (tag, table, seed) in enumerate(((first, seats[0], seeds[0]), (second, seats[1], seeds[1]))):
            players = [HeuristicPlayer() if seat.player == "heuristic" else RandomPlayer() for seat in table]
            try:
                play_match(
                    "backgammon", table, players, store=store, seed=seed, series=Series("forged", game + 1, 2), duel=tag
                )
            except MatchlogError:
                if game == 0:
                    raise
                return False
    return True


def _audit_rules(db: Path) -> list[str]:
    result = runner.invoke(app, ["audit", "--all", "--db", str(db), "--json"])
    assert result.exit_code in (0, 1), result.output
    return sorted({f["rule"] for m in json.loads(result.stdout)["matches"] for f in m["findings"]})


HEURISTIC, RANDOM = Seat("heuristic", "heuristic"), Seat("random", "random")


def test_a_pair_game_that_calls_itself_not_duplicate_is_still_held_to_its_pairs_seed(tmp_path: Path) -> None:
    """Duplicate play is audited: a pair game on a seed of its own is named. On main the pair check
    runs only for a game whose own tag says `duplicate`: the second game of a duplicate pair tagged
    `duplicate: false`, played on another seed, audits clean, and the duel's report (whose tag is the
    first game's) still says "duplicate chance (one seed a pair)" and counts the pair."""
    db = tmp_path / "forged.duckdb"
    second = Duel(id="forged", pair=1, game=1, games=2, duplicate=False, sprt=Sprt(elo0=0.0, elo1=100.0))
    if not _pair(db, second, ((HEURISTIC, RANDOM), (RANDOM, HEURISTIC)), (7, 8)):
        return  # the judge refused it: no such pair is ever recorded
    with matchlog.open(db) as log:
        report = log.duel("forged")
    assert report.duplicate and report.pairs == 1  # what the report claims of the pair
    assert [rule for rule in _audit_rules(db) if rule.startswith("duel.")], "the pair audits clean"


def test_a_pair_game_whose_seats_are_not_the_duels_rotated_is_named_by_audit(tmp_path: Path) -> None:
    """The games of a pair seat the same two players with the seats swapped, and the report scores
    game g for the first player at seat g. On main nothing checks it: a second game that seats
    heuristic at seat 0 again (the same luck twice, on the pair's own seed) audits clean, and the
    report credits heuristic with random's result in it."""
    db = tmp_path / "unswapped.duckdb"
    second = Duel(id="forged", pair=1, game=1, games=2, sprt=Sprt(elo0=0.0, elo1=100.0))
    if not _pair(db, second, ((HEURISTIC, RANDOM), (HEURISTIC, RANDOM)), (7, 7)):
        return  # the judge refused it: no such pair is ever recorded
    assert [rule for rule in _audit_rules(db) if rule.startswith("duel.")], "a pair that did not swap audits clean"
