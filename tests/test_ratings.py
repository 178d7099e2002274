"""Ratings (`matchlog ratings`): Weng-Lin and Bradley-Terry ratings as a projection of the ended
matches of the log: the same bytes each time, the same table through a running server, and the
leaderboard page in Chromium (the session's one browser, tests/conftest.py)."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
from playwright.sync_api import Page, expect
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.events import MatchEnded, MatchStarted, Outcome, Seat, draft, uuid7
from matchlog.referee import play_series
from matchlog.replay.ratings import PROVISIONAL_SIGMA, RatingCache, pair_weight, rate
from matchlog.replay.results import Result, log_head
from matchlog.store import Store

from .conftest import Served, start_server

runner = CliRunner()


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.stdout


def _ended(store: Store, seats: list[tuple[str, str]], places: tuple[int, ...]) -> None:
    """A hand-made match of Porrinha that ended with `places`."""
    started = MatchStarted(
        game="porrinha", options={"chopsticks": 3, "policy": "lenient"}, seats=tuple(Seat(n, p) for n, p in seats)
    )
    winners = tuple(s for s, p in enumerate(places) if p == 1)
    store.append(uuid7(), [draft(started), draft(MatchEnded(outcome=Outcome(places=places, winners=winners)))], 0)


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("ratings") / "ratings.duckdb"
    with Store(db) as store:
        play_series("backgammon", ["heuristic", "random"], games=6, seed=3, store=store, timeout=5.0)
        play_series("porrinha", ["reasoner", "random", "random"], games=6, seed=4, store=store, timeout=5.0)
        _ended(store, [("old", "random"), ("new", "reasoner")], (2, 1))
        _ended(store, [("new", "reasoner"), ("other", "random")], (1, 2))
        _ended(store, [("other", "random"), ("old", "random")], (1, 2))
        # A running match counts for nobody, and an abandoned one neither.
        running = MatchStarted(game="porrinha", options={}, seats=(Seat("ghost", "random"), Seat("old", "random")))
        store.append(uuid7(), [draft(running)], 0)
        abandoned = Outcome(places=(1, 1), winners=(), result="abandoned")
        store.append(uuid7(), [draft(running), draft(MatchEnded(outcome=abandoned))], 0)
    return db


def test_ratings_json_is_the_same_bytes_twice_and_the_same_table_through_a_server(rated: Path, tmp_path: Path) -> None:
    once = invoke("ratings", "--db", str(rated), "--json")
    assert once == invoke("ratings", "--db", str(rated), "--json")
    table = json.loads(once)
    players = {(r["game"], r["player"]) for r in table["ratings"]}
    assert ("backgammon", "heuristic") in players and ("porrinha", "new") in players
    assert not any(r["player"] == "ghost" for r in table["ratings"])  # running and abandoned: not counted
    assert table["matches"] == 6 + 6 + 3
    heuristic = next(r for r in table["ratings"] if r["player"] == "heuristic")
    random_player = next(r for r in table["ratings"] if r["game"] == "backgammon" and r["player"] == "random")
    assert heuristic["mu"] > random_player["mu"] and heuristic["provisional"]
    assert random_player["elo_low"] < random_player["elo"] < random_player["elo_high"]
    copy = tmp_path / "served.duckdb"
    copy.write_bytes(rated.read_bytes())
    server = start_server(copy)
    try:
        assert invoke("ratings", "--db", str(copy), "--json") == once  # through the server that owns the file
        answer = httpx.get(f"{server.url}/api/ratings").json()  # read by anyone: results are public once ended
        assert answer == table
        duel_missing = httpx.get(f"{server.url}/api/duels/none-such")
        assert duel_missing.status_code == 404 and duel_missing.json()["code"] == "store.unknown_match"
        assert httpx.get(f"{server.url}/api/ratings", params={"alias": "no-equals"}).json()["code"] == "usage.alias"
    finally:
        server.stop()


def test_a_name_played_by_two_strategies_is_two_players_until_aliased(rated: Path) -> None:
    with matchlog.open(rated) as log:
        table = log.rating_table("porrinha")
        assert {"new", "old", "other"} <= {r.player for r in table.ratings}
        merged = log.rating_table("porrinha", aliases={"old": "new"})
        new = next(r for r in merged.ratings if r.player == "new")
        assert set(new.names) == {"new", "old"} and set(new.strategies) == {"random", "reasoner"}
        assert merged.skipped == 1  # old against new: one player at two seats, left out
        shown = log.rating_table("porrinha", players=["other"], anchor="other")
        assert [r.player for r in shown.ratings] == ["other"] and shown.ratings[0].elo == 0.0
        frame = log.ratings("backgammon")
        assert frame.num_rows == 2 and frame.column_names[:2] == ["game", "player"]
    invoke("ratings", "--db", str(rated), "--anchor", "nobody", code=2)
    invoke("ratings", "--db", str(rated), "--alias", "x", code=2)
    assert "heuristic" in invoke("ratings", "backgammon", "--db", str(rated))
    assert invoke("ratings", "backgammon", "--db", str(rated), "--csv").startswith("game,player,strategy")


@pytest.fixture(scope="module")
def served_ratings(rated: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    copy = tmp_path_factory.mktemp("leaderboard") / "board.duckdb"
    copy.write_bytes(rated.read_bytes())
    server = start_server(copy)
    yield server
    server.stop()


def test_the_leaderboard_page_draws_every_players_interval(served_ratings: Served, page: Page) -> None:
    table = httpx.get(f"{served_ratings.url}/api/ratings", params={"game": "backgammon"}).json()
    page.goto(f"{served_ratings.url}/ratings?game=backgammon")
    expect(page.locator("table.leaderboard tbody tr")).to_have_count(len(table["ratings"]))
    drawn = page.locator("svg.ratings g.rating")
    expect(drawn).to_have_count(sum(1 for r in table["ratings"] if r["elo"] is not None))
    for rating in table["ratings"]:
        row = page.locator(f'svg.ratings g.rating[data-player="{rating["player"]}"]')
        assert float(row.get_attribute("data-low")) == pytest.approx(rating["elo_low"])
        assert float(row.get_attribute("data-high")) == pytest.approx(rating["elo_high"])
        line = row.locator("line.interval")
        assert float(line.get_attribute("x1")) <= float(row.locator("circle").get_attribute("cx"))
        assert float(row.locator("circle").get_attribute("cx")) <= float(line.get_attribute("x2"))
    expect(page.locator("nav.site a", has_text="ratings")).to_have_count(1)


def _result(number: int, names: list[str], places: tuple[int, ...]) -> Result:
    """A hand-made ended match between `names` (seat order) that finished in `places`."""
    started = MatchStarted(game="fish", options={}, seats=tuple(Seat(name, "built-in") for name in names))
    winners = tuple(seat for seat, place in enumerate(places) if place == 1)
    outcome = Outcome(places=places, winners=winners)
    return Result(match_id=str(number), started=started, outcome=outcome, ended_at_us=number, leaf=number)


def test_a_rating_is_provisional_until_about_ten_even_games_against_established_players() -> None:
    assert PROVISIONAL_SIGMA == 5.0
    established = [f"old{i}" for i in range(4)]
    # Forty rounds among four players, each pair's results even: σ about 2.1 each.
    tables = [
        (a, b, (r + i + j) % 2)
        for r in range(40)
        for i, a in enumerate(established)
        for j, b in enumerate(established)
        if i < j
    ]
    found = [_result(n, [a, b], (1, 2) if first_won else (2, 1)) for n, (a, b, first_won) in enumerate(tables)]

    def newcomer_after(games: int) -> object:
        played = [
            _result(len(found) + g, ["new", established[g % 4]], (1, 2) if g % 2 else (2, 1)) for g in range(games)
        ]
        return next(r for r in rate(found + played, head=0).ratings if r.player == "new")

    assert all(not r.provisional and r.sigma <= 2.5 for r in rate(found, head=0).ratings)
    assert newcomer_after(5).provisional
    settled = newcomer_after(12)
    assert not settled.provisional and settled.sigma <= PROVISIONAL_SIGMA
    # 24 wins over one much weaker newcomer say little of either: both stay provisional.
    one_sided = rate([_result(g, ["champion", "novice"], (1, 2)) for g in range(24)], head=0)
    assert all(r.provisional and r.sigma > 6 for r in one_sided.ratings)


def test_each_result_of_a_k_seat_match_weighs_what_a_plackett_luce_order_tells() -> None:
    assert [round(pair_weight(k), 4) for k in (2, 3, 4, 5)] == [1.0, 0.7778, 0.6389, 0.5433]
    # Under Plackett-Luce a finishing order of K even players tells each (K - H_K) / K; its
    # K - 1 weighted results, each a Bradley-Terry game of p (1 - p) = 1/4, tell the same.
    for k in (2, 3, 4, 5, 8):
        information = sum((m / k) * (1 / m) * (1 - 1 / m) for m in range(2, k + 1))
        assert (k - 1) * pair_weight(k) / 4 == pytest.approx(information)


def test_bradley_terry_intervals_from_four_seat_matches_cover_the_truth_95_times_in_100() -> None:
    # Finishing orders drawn from Plackett-Luce with known strengths: the 95% intervals
    # (relative to the anchor) must hold the true Elo about 95 times in 100. Counted as
    # independent games, the six results of a 4-seat match gave intervals that held it 89 times.
    draws = random.Random(7)
    truth = {"p0": 0.0, "p1": 60.0, "p2": -60.0, "p3": 120.0, "p4": -120.0, "p5": 30.0}
    strength = {p: math.exp(elo * math.log(10) / 400) for p, elo in truth.items()}
    held = asked = 0
    for _ in range(100):
        found = []
        for number in range(80):
            table = draws.sample(sorted(truth), 4)
            order: list[str] = []
            while len(order) < 4:
                left = [p for p in table if p not in order]
                order.append(draws.choices(left, weights=[strength[p] for p in left])[0])
            found.append(_result(number, table, tuple(order.index(p) + 1 for p in table)))
        for row in rate(found, head=0, anchor="p0").ratings:
            if row.player != "p0":
                asked += 1
                held += row.elo_low <= truth[row.player] <= row.elo_high
    assert 0.92 <= held / asked <= 0.98


def test_a_table_is_kept_by_the_head_it_was_computed_at_and_the_question_and_the_cache_is_bounded(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "kept.duckdb") as store:
        _ended(store, [("ann", "random"), ("bob", "reasoner")], (1, 2))
        cache = RatingCache(size=2)
        head = log_head(store)
        question = RatingCache.question("porrinha")
        first = cache.table(store, head, question)
        assert cache.table(store, head, RatingCache.question("porrinha")) is first and cache.computed == 1
        assert first.head == head.leaf and {r.player for r in first.ratings} == {"ann", "bob"}
        # A new match moves the head: a new table, with the match in it.
        _ended(store, [("bob", "reasoner"), ("cy", "random")], (1, 2))
        moved = log_head(store)
        assert moved.leaf > head.leaf
        grown = cache.table(store, moved, question)
        assert cache.computed == 2 and "cy" in {r.player for r in grown.ratings}
        # The table at the old head is the log up to it, whatever came after.
        assert cache.table(store, head, question) is first
        # Two tables at most: asking a third question drops the one asked longest ago.
        other = RatingCache.question("porrinha", anchor="bob")
        cache.table(store, moved, other)
        assert cache.computed == 3
        assert cache.table(store, head, question) is first  # asked more lately: kept
        cache.table(store, moved, question)  # dropped: computed again
        assert cache.computed == 4


def test_the_service_tags_the_table_with_the_head_and_answers_304_until_the_log_grows(
    rated: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "tagged.duckdb"
    copy.write_bytes(rated.read_bytes())
    server = start_server(copy)
    try:
        url = f"{server.url}/api/ratings"
        first = httpx.get(url, params={"game": "porrinha"})
        tag = first.headers["etag"]
        assert first.status_code == 200 and tag.startswith('"') and first.headers["cache-control"] == "no-cache"
        # Keyed: nobody holding a candidate head hash can test it against the tag (it once was a
        # plain SHA-256 of the last leaf and the chain hash of the log's last event).
        sql = {"query": "SELECT leaf, lower(hex(hash)) FROM events WHERE leaf = (SELECT max(leaf) FROM events)"}
        leaf, head = httpx.post(f"{server.url}/api/sql", json=sql, headers=server.headers()).json()["rows"][0]
        for question in ([None, None, None, [], [], None], ["porrinha", None, None, [], [], None]):
            unkeyed = hashlib.sha256(msgspec.json.encode([leaf, head, question])).hexdigest()[:32]
            assert unkeyed not in tag
        again = httpx.get(url, params={"game": "porrinha"}, headers={"If-None-Match": tag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
        listed = httpx.get(url, params={"game": "porrinha"}, headers={"If-None-Match": f'"stale", W/{tag}'})
        assert listed.status_code == 304
        # Another question at the same head is another table, with its own tag.
        other = httpx.get(url, params={"game": "porrinha", "anchor": "new"}, headers={"If-None-Match": tag})
        assert other.status_code == 200 and other.headers["etag"] != tag
        # A match that ends moves the head: the old tag no longer holds, and the new table counts it.
        with matchlog.open(server.url, token=server.admin) as log:
            play_series("porrinha", ["late=random", "random"], games=1, seed=9, store=log, timeout=5.0)
        grown = httpx.get(url, params={"game": "porrinha"}, headers={"If-None-Match": tag})
        assert grown.status_code == 200 and grown.headers["etag"] != tag
        assert "late" in {r["player"] for r in grown.json()["ratings"]}
        assert httpx.get(url, params={"game": "no-such-game"}).json()["code"] == "usage.game"
    finally:
        server.stop()
