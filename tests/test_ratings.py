"""Ratings (`matchlog ratings`): Weng-Lin and Bradley-Terry ratings as a projection of the ended
matches of the log: the same bytes each time, the same table through a running server, and the
leaderboard page in Chromium (tests/test_viewer.py's browser)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.events import MatchEnded, MatchStarted, Outcome, Seat, draft, uuid7
from matchlog.referee import play_series
from matchlog.store import Store

from .conftest import Served, start_server
from .test_viewer import browser, page  # noqa: F401 (the session's Chromium, and a page that fails on script errors)

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


def test_the_leaderboard_page_draws_every_players_interval(served_ratings: Served, page: Page) -> None:  # noqa: F811
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
