"""Duel tags and pairs no duel could have: a duel's games are what its report and its verdict are
computed from, so every write (the judge of a match's start, the clerk against the pair's games in
the log) and every read (`audit`, the report) holds them to one rule (`replay.pairs`). The first
four tests are attack 3's findings 2 and 3 (tests/test_attack3.py on its branch), as it wrote them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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


# -- one rule, read alike by the clerk, the audit, an import and the report ----------------------


def _play(table: tuple[Seat, ...], seed: int, tag: Duel, **written: object) -> object:
    """A backgammon game of duel FORGED between heuristic and random, seated as `table`."""
    from matchlog.events import Series
    from matchlog.referee import play_match
    from matchlog.referee.backgammon import HeuristicPlayer, RandomPlayer

    players = [HeuristicPlayer() if seat.player == "heuristic" else RandomPlayer() for seat in table]
    return play_match(
        "backgammon",
        table,
        players,
        seed=seed,
        series=Series(FORGED, tag.pair * 2 + tag.game, 0),
        duel=tag,
        **written,
    )


#: A duel's id as `matchlog duel` gives them (a report is asked by its id or a prefix of it).
FORGED = "01a21b47-0000-7000-8000-00000000f0e6"
TEST = Sprt(elo0=0.0, elo1=100.0)
FIRST = Duel(id=FORGED, pair=1, game=0, games=2, sprt=TEST)
#: Second games of pair 1 that no duel plays, with the rule each breaks; game 0 is FIRST, seated
#: (HEURISTIC, RANDOM) on seed 7.
SECOND = Duel(id=FORGED, pair=1, game=1, games=2, sprt=TEST)
FORGERIES = {
    "not-duplicate": (msgspec.structs.replace(SECOND, duplicate=False), (RANDOM, HEURISTIC), 8, "duel.test_differs"),
    "unswapped": (SECOND, (HEURISTIC, RANDOM), 7, "duel.seats_not_rotated"),
    "other-player": (SECOND, (RANDOM, Seat("heuristic", "random")), 7, "duel.seats_not_rotated"),
    "other-test": (
        msgspec.structs.replace(SECOND, sprt=Sprt(elo0=-100.0, elo1=0.0)),
        (RANDOM, HEURISTIC),
        7,
        "duel.test_differs",
    ),
    "other-seed": (SECOND, (RANDOM, HEURISTIC), 8, "duel.commitment_differs"),
}


@pytest.mark.parametrize("forgery", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_game_no_pair_could_have_is_refused_by_the_clerk_and_named_alike_by_audit_import_and_report(
    tmp_path: Path, forgery: tuple[Duel, tuple[Seat, Seat], int, str]
) -> None:
    """The clerk refuses the game with the rule's code, nothing of it written; written around the
    clerk (the store itself), `audit` names the same rule, an import of it is refused naming it, and
    the duel's report is an error with that code, never a verdict scored from it."""
    from matchlog.referee.match import MemoryRecorder
    from matchlog.store import Store

    tag, table, seed, rule = forgery
    refused_db, forged_db = tmp_path / "refused.duckdb", tmp_path / "forged.duckdb"
    with matchlog.open(refused_db, mode="create", write=True) as log:
        _play((HEURISTIC, RANDOM), 7, FIRST, store=log.store)
        with pytest.raises(MatchlogError) as refused:
            _play(table, seed, tag, store=log.store)
        assert refused.value.code == rule, refused.value
        assert len(log.matches()) == 1 or all(m.status == "abandoned" for m in log.matches()[1:])
    with Store(forged_db) as store:
        for game_tag, game_table, game_seed in ((FIRST, (HEURISTIC, RANDOM), 7), (tag, table, seed)):
            recorder = MemoryRecorder()
            played = _play(game_table, game_seed, game_tag, recorder=recorder)
            store.append(played.match_id, recorder.drafts, 0)  # the store itself: around the clerk
    assert rule in _audit_rules(forged_db)
    result = runner.invoke(app, ["duel-report", FORGED, "--db", str(forged_db)])
    assert result.exit_code != 0 and f"error[{rule}]" in result.output and "internal" not in result.output
    exported = tmp_path / "forged.jsonl"
    with matchlog.open(forged_db) as log, exported.open("wb") as out:
        log.export(out)
    with matchlog.open(tmp_path / "imported.duckdb", mode="create", write=True) as log:
        with pytest.raises(MatchlogError) as rejected:
            log.import_jsonl(exported.read_bytes().splitlines(keepends=True))
        assert rejected.value.code == "store.import_rejected" and f"[{rule}]" in rejected.value.message
        assert log.matches() == []


def test_a_tag_no_duel_could_have_written_around_the_judge_is_a_coded_report_not_an_internal_error(
    tmp_path: Path,
) -> None:
    """A match.started whose tag no duel could have, written with the store itself: `audit` says it
    cannot start as recorded, and the duel's report is `error[usage.duel]`, for the command line and
    the service alike."""
    from matchlog.events import MatchEnded, Outcome, draft
    from matchlog.store import Store

    db = tmp_path / "bad-tag.duckdb"
    with Store(db) as store:
        tag = Duel(id=FORGED, pair=1, game=9, games=2)
        store.append(
            uuid7(),
            [draft(_started(tag)), draft(MatchEnded(outcome=Outcome(places=(1, 1), winners=(), result="abandoned")))],
            0,
        )
    assert "audit.bad_start" in _audit_rules(db)
    result = runner.invoke(app, ["duel-report", FORGED, "--db", str(db)])
    assert result.exit_code != 0 and "error[usage.duel]" in result.output and "internal" not in result.output


def test_a_bulk_append_holds_a_pair_game_to_the_pair_game_before_it_in_the_same_call(tmp_path: Path) -> None:
    """A tournament's writer appends many matches in one call: the second game of a pair is held to
    the first though the log does not hold it yet, and the whole call is refused, nothing written."""
    from matchlog.events import encode, now_us

    def encoded(*events: object) -> list[tuple[str, int, bytes]]:
        return [(str(uuid7()), now_us(), encode(event)) for event in events]

    def start(game: int, table: tuple[Seat, Seat]) -> MatchStarted:
        return MatchStarted(
            game="porrinha",
            options=PORRINHA_OPTIONS,
            seats=table,
            duel=Duel(id="bulk", pair=1, game=game, games=2),
        )

    a, b = Seat("a", "random"), Seat("b", "random")
    with matchlog.open(tmp_path / "bulk.duckdb", mode="create", write=True) as log:
        with pytest.raises(MatchlogError) as refused:
            log.append_bulk_encoded([(uuid7(), encoded(start(0, (a, b))), 0), (uuid7(), encoded(start(1, (a, b))), 0)])
        assert refused.value.code == "duel.seats_not_rotated"
        assert log.matches() == []
        log.append_bulk_encoded([(uuid7(), encoded(start(0, (a, b))), 0), (uuid7(), encoded(start(1, (b, a))), 0)])
        assert len(log.matches()) == 2
        # One append at a time (the service's batches): held to the pair's games in the log.
        with pytest.raises(MatchlogError) as refused:
            log.append(
                uuid7(), [msgspec.structs.replace(start(1, (a, b)), duel=Duel(id="bulk", pair=2, game=1, games=2))], 0
            )
        assert refused.value.code == "duel.seats_not_rotated"
        assert len(log.matches()) == 2


# -- the test's numbers: bounds checked before anything runs, and an LLR for whatever is given ----


from matchlog.events import UsageError  # noqa: E402
from matchlog.events.duel import ELO_MAX, nelo_max  # noqa: E402
from matchlog.replay.sprt import estimate, llr  # noqa: E402

_ANY_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-(10**400), max_value=10**400)
)


@settings(max_examples=300, deadline=None)
@given(
    counts=st.lists(_ANY_NUMBER, min_size=0, max_size=30),
    elo0=_ANY_NUMBER,
    elo1=_ANY_NUMBER,
    model=st.sampled_from(["logistic", "normalized", "bayes"]),
    games=st.one_of(st.none(), st.integers(min_value=1, max_value=6)),
)
def test_the_llr_and_the_estimate_are_total_a_number_or_a_usage_error(
    counts: list[float], elo0: float, elo1: float, model: str, games: int | None
) -> None:
    """Whatever they are given: a finite number, or a UsageError with its code; never a
    ZeroDivisionError, a math domain error or an overflow."""
    codes = []
    try:
        value = llr(counts, elo0, elo1, model=model, games_per_set=games)
        assert math.isfinite(value)
    except UsageError as error:
        codes.append(error.code)
    try:
        found = estimate(counts, games_per_set=games)
        assert all(math.isfinite(x) for x in (found.score, found.elo, found.elo_low, found.elo_high, found.los))
    except UsageError as error:
        codes.append(error.code)
    assert set(codes) <= {"usage.sprt", "usage.counts"}


@settings(max_examples=200, deadline=None)
@given(
    games=st.integers(min_value=2, max_value=5),
    model=st.sampled_from(["logistic", "normalized"]),
    bounds=st.tuples(st.floats(-1.0, 1.0), st.floats(-1.0, 1.0)).filter(lambda b: b[0] < b[1]),
    data=st.data(),
)
def test_every_test_a_duel_takes_gives_a_finite_llr_for_any_pairs(
    games: int, model: str, bounds: tuple[float, float], data: st.DataObject
) -> None:
    """A test within the bounds `Sprt.check` takes, over the sets of a table of `games` seats, has an
    LLR for whatever counts its pairs make."""
    widest = ELO_MAX if model == "logistic" else nelo_max(games)
    sprt = Sprt(elo0=bounds[0] * widest, elo1=bounds[1] * widest, model=model)
    sprt.check(games)
    categories = 2 * games * (games - 1) + 1
    counts = data.draw(st.lists(st.integers(min_value=0, max_value=10**6), min_size=categories, max_size=categories))
    assert math.isfinite(llr(counts, sprt.elo0, sprt.elo1, model=model, games_per_set=games))


@pytest.mark.parametrize(
    "text",
    [
        "elo0=-5,elo1=20000",
        "elo0=0,elo1=1201",
        "elo0=-1e308,elo1=0",
        "elo0=0,elo1=300,model=normalized",
        "elo0=0,elo1=5,alpha=2",
        "elo0=0,elo1=5,beta=-0.1",
        "elo0=0,elo1=inf",
    ],
)
def test_a_test_whose_expected_score_is_0_or_1_is_refused_by_the_command_line(tmp_path: Path, text: str) -> None:
    db = tmp_path / "duel.duckdb"
    result = runner.invoke(
        app, ["duel", "backgammon", "-p", "heuristic", "-p", "random", "--sprt", text, "--db", str(db)]
    )
    assert result.exit_code == 2 and "error[usage.sprt]" in result.output, result.output
    if db.exists():
        with matchlog.open(db) as log:
            assert log.matches() == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=30).filter(str.strip))
def test_the_duels_games_are_found_whatever_its_id_and_only_by_its_tag(tmp_path: Path, name: str) -> None:
    """`duel_games` looks a duel's games up among the log's starts by the text its tag is stored as
    (quotes, backslashes and any character an id may hold, escaped as the canonical JSON escapes
    them) and then by the tag itself: a start whose options merely hold a "duel" key of the same id
    is no game of it."""
    from matchlog.replay.pairs import duel_games
    from matchlog.store import Store

    duel_id = f"{name}{uuid7()}"  # (one log for every example: each its own duel)
    first = _started(Duel(id=duel_id, pair=1, game=0, games=2))
    decoy = MatchStarted(game="porrinha", options={"duel": {"id": duel_id}}, seats=first.seats)
    with Store(tmp_path / "duels.duckdb") as store:
        store.append(uuid7(), [decoy], 0)
        match_id = uuid7()
        store.append(match_id, [first], 0)
        duel_first, pair_first, _ = duel_games(store, duel_id, 1)
        assert duel_first is not None and duel_first.match_id == str(match_id) and duel_first.started == first
        assert pair_first is not None and pair_first.match_id == str(match_id)
        assert duel_games(store, duel_id + "x", 1) == (None, None, None)


def test_a_later_pairs_game_under_other_options_is_refused_by_the_clerk_and_named_by_audit(tmp_path: Path) -> None:
    """A duel compares two players at one game: its first game fixes the options every game of it is
    played under (only the position may change from pair to pair, `--positions`). The options were
    held only within a pair, so a resumed duel given other options (or none, where the duel had
    some) mixed games of two rule sets into one verdict."""
    from matchlog.referee.match import MemoryRecorder
    from matchlog.store import Store

    later = Duel(id=FORGED, pair=2, game=0, games=2, sprt=TEST)
    other = {"rules": "pygammon"}
    with matchlog.open(tmp_path / "refused.duckdb", mode="create", write=True) as log:
        _play((HEURISTIC, RANDOM), 7, FIRST, store=log.store)
        with pytest.raises(MatchlogError) as refused:
            _play((HEURISTIC, RANDOM), 9, later, store=log.store, options=other)
        assert refused.value.code == "duel.table_differs" and "options" in refused.value.message, refused.value
        _play((HEURISTIC, RANDOM), 9, later, store=log.store)  # the duel's own options: taken
    with Store(tmp_path / "forged.duckdb") as store:
        for tag, options in ((FIRST, None), (later, other)):
            recorder = MemoryRecorder()
            played = _play((HEURISTIC, RANDOM), 7, tag, recorder=recorder, options=options)
            store.append(played.match_id, recorder.drafts, 0)  # the store itself: around the clerk
    assert "duel.table_differs" in _audit_rules(tmp_path / "forged.duckdb")
