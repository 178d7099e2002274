"""Games are plugins: the games matchlog knows are those registered through the `matchlog.games`
entry point, ours and any package's alike. A plugin that fails to load is named with the reason
and every other game goes on working; a match of a game whose plugin is not installed is a clear
error for that match only. Dudo (examples/dudo, installed from its folder as a user would install
it) appears in `matchlog games`, plays a tournament, verifies, audits clean and shows in the viewer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from uuid import UUID

import httpx
import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.engines import failures, get, names
from matchlog.events import DecodeError, UsageError, decode, plugins
from matchlog.referee import play_series
from matchlog.store import Store

from .conftest import Served, start_server

runner = CliRunner()

#: A distribution of broken game plugins, found as an installed package is (a .dist-info on the path).
_BROKEN = {
    "broken_games-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: broken-games\nVersion: 0.1\n",
    "broken_games-0.1.dist-info/entry_points.txt": (
        "[matchlog.games]\n"
        "missing = no_such_module_anywhere:GAME\n"
        "notagame = thief_game:NOT_A_GAME\n"
        "thief = thief_game:THIEF\n"
        "lazy = lazy_game:GAME\n"
    ),
    "thief_game.py": (
        "from matchlog.engines import Game\n"
        "from matchlog.engines.games import FISH\n"
        "from matchlog.events import Event\n"
        "class Stolen(Event, tag='porrinha.stolen'):\n"
        "    seat: int\n"
        "NOT_A_GAME = 42\n"
        "class Thief:\n"
        "    name = 'thief'\n"
        "    events = (Stolen,)\n"
        "    matchlog_game = True\n"
        "THIEF = Thief()\n"
    ),
    "lazy_game.py": (
        "from matchlog.engines import Game, GameSpec\n"
        "class Lazy:\n"
        "    spec = GameSpec(name='lazy', title='Lazy', min_players=2, max_players=2, chance=False,\n"
        "                    hidden=False, options=dict, state=dict)\n"
        "GAME = Game(Lazy(), ())\n"
    ),
}


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    for name, text in _BROKEN.items():
        path = tmp_path / "site" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "site"


def matchlog_cli(*args: str, path: Path | None = None, code: int = 0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(path) if path else ""}
    command = [sys.executable, "-m", "matchlog.cli", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done


def test_a_plugin_that_fails_to_load_is_named_with_the_reason_and_the_other_games_work(broken: Path, tmp_path: Path):
    listed = matchlog_cli("games", path=broken).stdout
    assert "missing: did not load: ModuleNotFoundError: No module named 'no_such_module_anywhere'" in listed
    assert "notagame: did not load: int is not a game" in listed
    assert "thief: did not load: Stolen's tag 'porrinha.stolen' is not under the game's name (thief.…)" in listed
    assert "lazy: did not load: TypeError: the engine of lazy lacks start, apply" in listed
    for game in ("porrinha", "backgammon", "davinci", "fish", "dudo"):
        assert f"\n{game}: " in f"\n{listed}"
    by_name = {entry["game"]: entry for entry in json.loads(matchlog_cli("games", "--json", path=broken).stdout)}
    assert set(by_name["thief"]) == {"game", "failed"}
    # A command that needs the games names each broken one once on stderr, and does its work.
    db = str(tmp_path / "log.duckdb")
    played = matchlog_cli("play", "porrinha", "-p", "random", "-p", "random", "--db", db, path=broken)
    assert "1 match recorded" in played.stdout
    assert played.stderr.count("warning: the game missing did not load (ModuleNotFoundError") == 1
    assert played.stderr.count("warning: the game thief did not load") == 1
    refused = matchlog_cli("play", "missing", "-p", "random", "--db", db, path=broken, code=2)
    assert "error[usage.game]: the game 'missing' is installed but did not load: ModuleNotFoundError" in refused.stderr
    # Without them, nothing is said.
    assert "warning" not in matchlog_cli("play", "porrinha", "-p", "random", "-p", "random", "--db", db).stderr


def test_a_match_of_a_game_whose_plugin_is_not_installed_is_an_error_for_that_match_only(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    with Store(db) as store:
        play_series("porrinha", ["random", "random"], games=2, store=store, seed=1, timeout=None)
        dudo = play_series("dudo", ["counter", "random"], games=1, store=store, seed=2, timeout=None)
    dudo_id = str(dudo.matches[0].match_id)
    plugins.reload([point for point in entry_points(group=plugins.GROUP) if point.name != "dudo"])
    try:
        assert "dudo" not in names()
        with pytest.raises(DecodeError, match=r"unknown event type 'dudo\.bid_made': no game 'dudo' is installed"):
            decode(b'{"type":"dudo.bid_made","seat":0,"quantity":1,"face":2}', tag="dudo.bid_made", version=1)
        with pytest.raises(UsageError, match="no game called 'dudo'"):
            get("dudo")
        stats = runner.invoke(app, ["stats", "--db", str(db), "--json"])
        assert stats.exit_code == 0, stats.output
        # Statistics read the catalogue and the figures, which need no rules: the match counts.
        assert sorted(g["finished"] for g in json.loads(stats.stdout)["games"]) == [1, 2]
        # The audit cannot vouch for that match, and says why; it audits the others.
        audited = runner.invoke(app, ["audit", "--all", "--db", str(db)])
        assert audited.exit_code == 1
        assert f"FAIL match {dudo_id} [event.decode]" in audited.stdout
        assert "no game 'dudo' is installed" in audited.stdout
        assert audited.stdout.count("FAIL") == 1
        exported = runner.invoke(app, ["export", "--all", "--as-seat", "0", "--db", str(db)])
        assert exported.exit_code == 0
        assert dudo_id[:8] in exported.stderr
        shown = runner.invoke(app, ["replay", dudo_id, "--db", str(db)])
        assert shown.exit_code == 2
        assert "dudo" in shown.stderr
    finally:
        plugins.reload()
    assert "dudo" in names()


def test_two_plugins_cannot_register_one_name_nor_a_reserved_one():
    ours = list(entry_points(group=plugins.GROUP))
    twice = EntryPoint(name="fish", value="matchlog.engines.games:PORRINHA", group=plugins.GROUP)
    reserved = EntryPoint(name="match", value="matchlog.engines.games:FISH", group=plugins.GROUP)
    try:
        plugins.reload([*ours, twice, reserved])
        found = failures()
        assert found["fish (matchlog.engines.games:PORRINHA)"].startswith("another package already registers")
        assert "not a game's name" in found["match"]
        assert get("fish").spec.name == "fish"
    finally:
        plugins.reload()
    assert not failures()


def test_dudo_installed_from_its_folder_plays_a_tournament_that_verifies_and_audits_clean(tmp_path: Path):
    listed = matchlog_cli("games").stdout
    assert "dudo: Dudo (liar's dice), 2 to 4 players" in listed
    assert "player counter:" in listed
    db = str(tmp_path / "dudo.duckdb")
    played = matchlog_cli("tournament", "dudo", "-p", "counter", "-p", "random", "--games", "12", "--jobs", "1",
                          "--db", db)  # fmt: skip
    assert "12 matches" in played.stdout
    assert "every hash chain verifies" in matchlog_cli("verify", "--deep", "--db", db).stdout
    assert "no findings" in matchlog_cli("audit", "--all", "--db", db).stdout
    ratings = json.loads(matchlog_cli("ratings", "dudo", "--json", "--db", db).stdout)
    assert ratings
    # Its encoding (the package's) makes its decisions a dataset, each row as its seat saw it.
    data = tmp_path / "dudo-data"
    matchlog_cli("dataset", "-o", str(data), "--game", "dudo", "--db", db)
    steps = pq.read_table(next((data / "data").glob("train-*.parquet"))).to_pylist()
    assert len({step["match_id"] for step in steps}) == 12
    assert {step["game"] for step in steps} == {"dudo"}
    assert all(len(step["observation"]) == 41 and step["legal_actions"] for step in steps)
    assert "### dudo" in (data / "README.md").read_text()  # the card says what its tensor holds


# -- the viewer --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, UUID, UUID]]:
    """A server over a Dudo match of three and a Kuhn poker match of OpenSpiel's."""
    db = tmp_path_factory.mktemp("plugins") / "plugins.duckdb"
    with Store(db) as store:
        dudo = play_series("dudo", ["counter", "counter", "random"], store=store, seed=11, timeout=None)
        kuhn = play_series("openspiel:kuhn_poker", ["random", "random"], store=store, seed=4, timeout=None)
    server = start_server(db)
    yield server, dudo.matches[0].match_id, kuhn.matches[0].match_id
    server.stop()


def dice_shown(page: Page) -> list[list[str]]:
    """Each seat's dice on the board: its face, or "?" for a die under a cup."""
    return page.evaluate(
        """() => [...document.querySelectorAll("svg.dudo g.player")].map((row) =>
            [...row.querySelectorAll("g.die")].map((die) => die.dataset.face ?? "?"))"""
    )


def test_the_viewer_draws_dudo_with_the_board_its_package_ships_as_each_seat_may_see_it(
    served: tuple[Served, UUID, UUID], page: Page, tmp_path: Path
):
    server, dudo, _ = served
    assert httpx.get(f"{server.url}/games/dudo.js").headers["content-type"].startswith("text/javascript")
    assert httpx.get(f"{server.url}/games/nosuch.js").status_code == 404
    with matchlog.open(server.db) as log:
        lines = log.lines(dudo, as_seat=None)
        doubt = next(line.seq for line in lines if line.type == "dudo.doubted")
        whole = log.state(dudo, doubt, as_seat=None).state.dice
    page.goto(f"{server.url}/matches/{dudo}?seq={doubt - 1}&as_seat=0&token={server.admin}")
    page.wait_for_selector(f'svg.dudo[data-seq="{doubt - 1}"]')
    before = dice_shown(page)
    assert before[0] == [str(die) for die in whole[0]]
    assert before[1] == before[2] == ["?"] * 3  # the others' cups are down
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(f'svg.dudo[data-seq="{doubt}"]')
    assert dice_shown(page) == [[str(die) for die in cup] for cup in whole]  # the doubt lifts every cup
    # The same board in a file that replays offline, the game's module inlined.
    exported = tmp_path / "dudo.html"
    done = runner.invoke(app, ["export", str(dudo), "--format", "html", "-o", str(exported), "--as-seat", "1",
                               "--db", str(server.db)])  # fmt: skip
    assert done.exit_code == 0, done.output
    page.goto(f"{exported.as_uri()}?seq={doubt - 1}")
    page.wait_for_selector(f'svg.dudo[data-seq="{doubt - 1}"]')
    assert dice_shown(page)[0] == ["?"] * 3


def test_the_viewer_shows_a_game_that_brings_no_board_as_its_state_in_text(
    served: tuple[Served, UUID, UUID], page: Page
):
    server, _, kuhn = served
    page.goto(f"{server.url}/matches/{kuhn}?seq=4&as_seat=1&token={server.admin}")
    text = page.wait_for_selector('pre.text-board[data-seq="4"]')
    assert text is not None
    shown = text.inner_text()
    assert "Kuhn Poker (OpenSpiel)" in shown
    with matchlog.open(server.db) as log:
        seen = log.state(kuhn, 4, as_seat=1).state.seen
    assert f"observes: {seen[1]}" in shown
    assert "observes" not in shown.replace(f"observes: {seen[1]}", "")  # nobody else's


def test_a_reader_through_the_server_reads_a_game_found_after_matchlog_was_imported(
    served: tuple[Served, UUID, UUID],
):
    """The client's types are built while Dudo is not known (a notebook that installs it, or
    `registering` it, afterwards); its lines through the server still read, as Dudo's events."""
    server, dudo, _ = served
    script = f"""
from importlib.metadata import entry_points
from matchlog.events import plugins

plugins.reload([point for point in entry_points(group=plugins.GROUP) if point.name != "dudo"])
import matchlog.log, matchlog.server  # the client's types, built while no dudo is installed
plugins.reload()  # installed since

import matchlog
with matchlog.open({str(server.db)!r}, token={server.admin!r}) as log:
    assert type(log).__name__ == "ServerLog", type(log)
    lines = log.lines({str(dudo)!r}, as_seat=0)
print(sorted({{type(line.event).__module__ for line in lines if line.type.startswith("dudo.")}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['dudo.events']"]


def test_the_service_takes_a_batch_of_a_game_found_after_it_was_imported(tmp_path: Path):
    """The service's request types are built while Dudo is not known (installed, or `registering`
    it, afterwards): a referee's batch of Dudo's events is still judged and appended, and an event
    of no game installed is refused with the codec's code."""
    script = f"""
import json, warnings
from importlib.metadata import entry_points
from matchlog.events import plugins

plugins.reload([point for point in entry_points(group=plugins.GROUP) if point.name != "dudo"])
import matchlog.service.app  # the service's types, built while no dudo is installed
plugins.reload()  # installed since

from litestar.testing import TestClient
from matchlog.file import FileLog
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    app = matchlog.service.app.create_app(FileLog({str(tmp_path / "live.duckdb")!r}, mode="create"), "t" * 43)
admin = {{"Authorization": "Bearer " + "t" * 43}}
seats = [{{"name": "a", "player": "p"}}, {{"name": "b", "player": "p"}}]
with TestClient(app, timeout=60) as client:
    created = client.post("/api/matches", json={{"game": "dudo", "seats": seats, "chance": "referee"}}, headers=admin)
    assert created.status_code == 201, created.text
    match_id = created.json()["match_id"]
    rolled = {{"type": "dudo.dice_rolled", "seat": 0, "dice": [1, 2, 3]}}
    batch = {{"expected_seq": 1, "events": [{{"event": rolled}}]}}
    appended = client.post(f"/api/matches/{{match_id}}/events", json=batch, headers=admin)
    unknown = {{"expected_seq": 2, "events": [{{"event": {{"type": "nosuch.thing", "seat": 0}}}}]}}
    refused = client.post(f"/api/matches/{{match_id}}/events", json=unknown, headers=admin)
    print(json.dumps([appended.status_code, appended.json().get("last_seq"), refused.status_code,
                      refused.json()["code"], refused.json()["message"]]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    appended, last_seq, refused, code, message = json.loads(done.stdout)
    assert (appended, last_seq) == (200, 1), done.stderr
    assert (refused, code) == (400, "event.decode") and "nosuch.thing" in message, message
