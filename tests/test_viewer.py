"""The replay viewer: the drawing models and frames (every seq, every view, the same as the engine's
state through `log.state`), the API the pages ask, and the pages themselves in a real headless
Chromium (Debian's `chromium`, driven by Playwright; never a downloaded browser): every game steps
back and forth with the board right, seat views hold nothing they must not, a running match is
followed live, rulings and audit findings stand out and link to the dispute report, the list and
statistics pages, and an exported HTML file that replays from file:// with no network."""

from __future__ import annotations

import json
import random
import re
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from fnmatch import fnmatch
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import msgspec
import pytest
from playwright.sync_api import Page, expect
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.engines import get as get_engine
from matchlog.engines.backgammon import pips
from matchlog.engines.boards import DavinciBoard
from matchlog.engines.porrinha import PorrinhaRule
from matchlog.events import AnswerRejected, GuessMade, HandReset, MatchEnded, MatchStarted, Seat, draft, uuid7
from matchlog.referee import play_series, run_knockout
from matchlog.referee.fish import RandomPlayer as FishRandom
from matchlog.replay import fork, undo
from matchlog.replay.frames import frame_of, frames
from matchlog.service.pages import STATIC
from matchlog.store import Store

from .conftest import Served, fill_log, start_server
from .gnubg_roundtrip import match_play

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("backgammon", "fish", "porrinha", "davinci", "knockout")


# -- a log with something of everything ---------------------------------------------------------


class Ruled(msgspec.Struct):
    """The hand-made Porrinha match: a rejected hand (a ruling) and an accepted illegal guess (a finding)."""

    match_id: UUID
    rejected: int
    finding: int


def ruled_porrinha(store: Store) -> Ruled:
    """A Porrinha match whose first hand is rejected (and counts as 0, as the lenient policy says)
    and whose first repeated guess was accepted, which the audit finds."""
    engine = get_engine("porrinha")
    started = MatchStarted(
        game="porrinha",
        options={"chopsticks": 2, "policy": "lenient"},
        seats=(Seat("ann", "random"), Seat("bob", "random")),
    )
    state = engine.start(started)
    events: list[Any] = [started]
    rng = random.Random(5)
    rejected = finding = -1
    while (turn := engine.to_act(state)) is not None:
        if turn.decision == "hand" and rejected < 0:
            rejected = len(events)
            batch = [
                AnswerRejected(
                    seat=turn.seat, decision="hand", answer="7", code=PorrinhaRule.HAND_OUT_OF_RANGE, message="no"
                ),
                HandReset(seat=turn.seat),
            ]
        elif turn.decision == "guess" and finding < 0 and any(g >= 0 for g in state.guesses):
            finding = len(events)
            batch = [GuessMade(seat=turn.seat, guess=next(g for g in state.guesses if g >= 0))]
        else:
            batch = [rng.choice(engine.legal(state, turn.seat))]
        for event in batch:
            state = engine.apply(state, event)
            events.append(event)
    events.append(MatchEnded(outcome=engine.outcome(state)))
    match_id = uuid7()
    store.append(match_id, [draft(e) for e in events], 0)
    return Ruled(match_id, rejected, finding)


@pytest.fixture(scope="session")
def shown(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Ruled, UUID]]:
    """A server over matches of every game, more Porrinha matches than one page of the list, the
    hand-made ruled match, a match with an undo, and a backgammon match with the cube; with the
    ruled match and the undone one."""
    db = tmp_path_factory.mktemp("viewer") / "viewer.duckdb"
    fill_log(db)
    with Store(db) as store:
        play_series("porrinha", ["random", "random"], games=20, seed=9, store=store, timeout=5.0)
        ruled = ruled_porrinha(store)
        undone = _undone(store, store.matches(game="fish", limit=1)[0].match_id)
        knockout_into(store)
        cubed = next(r for r in map(match_play, range(11, 60)) if any(e.event.tag.endswith("taken") for e in r))
        store.append(cubed[0].match_id, [draft(record.event) for record in cubed], 0)
    server = start_server(db)
    yield server, ruled, undone
    server.stop()


def knockout_into(store: Store) -> None:
    """A Fish knockout of five random players (the tournament is a match of its own)."""
    seats = [Seat(f"k{i}", "random") for i in range(5)]
    run_knockout("fish", seats, [FishRandom(random.Random(i)) for i in range(5)], store=store, seed=5)


def _undone(store: Store, source: UUID) -> UUID:
    """A running copy of a Fish match's first moves, its last move taken back."""
    copy = fork(store, source, 14)
    undo(store, copy, reason="a slip of the mouse")
    return copy


# -- reading the page ---------------------------------------------------------------------------

_DATA = """() => [...document.querySelectorAll("svg.board *")]
    .filter((element) => Object.keys(element.dataset).length)
    .map((element) => ({class: element.getAttribute("class") || "", ...element.dataset}))"""


def drawn(page: Page) -> dict[str, Any]:
    """What the board on the page says, read from its SVG's data attributes."""
    svg = page.locator("svg.board")
    items = page.evaluate(_DATA)
    of = lambda kind: [item for item in items if kind in item["class"].split()]  # noqa: E731
    game = svg.get_attribute("data-game")
    seq = int(svg.get_attribute("data-seq") or -1)
    if game == "backgammon":
        return {
            "seq": seq,
            "points": [(int(p["checkers"]), p["owner"]) for p in sorted(of("point"), key=lambda p: int(p["point"]))],
            "bar": [int(b["checkers"]) for b in of("bar")],
            "off": [int(o["checkers"]) for o in of("off")],
            "pips": [int(p["pips"]) for p in of("pips")],
            "dice": of("dice")[0]["dice"],
        }
    if game == "fish":
        return {
            "seq": seq,
            "tiles": {(int(t["row"]), int(t["column"])): int(t["fish"]) for t in of("tile")},
            "penguins": sorted((int(p["seat"]), int(p["row"]), int(p["column"])) for p in of("penguin")),
            "scores": [int(s["score"]) for s in of("score")],
        }
    if game == "porrinha":
        players = of("player")
        return {
            "seq": seq,
            "chopsticks": [int(p["chopsticks"]) for p in players],
            "hands": {int(p["seat"]): int(p["hand"]) for p in players if "hand" in p},
            "guesses": sorted((int(g["seat"]), int(g["guess"])) for g in of("guess-line") if g["guess"] != "invalid"),
        }
    if game == "davinci":
        return {
            "seq": seq,
            "tiles": {
                (int(t["seat"]), int(t["index"])): (int(t["colour"]), t["revealed"] == "true", t.get("number"))
                for t in of("tile")
                if "seat" in t
            },
            "pile": int(of("pile")[0]["pile"]),
        }
    if game == "knockout":
        return {
            "seq": seq,
            "entrants": len(of("entrant")),
            "tables": [t["played"] == "true" for t in sorted(of("table"), key=lambda t: int(t["table"]))],
            "games": [g["match"] for g in page.evaluate(_LINKS)],
        }
    raise AssertionError(f"no reader for {game}")


_LINKS = """() => [...document.querySelectorAll("svg.board a[data-match]")].map((a) => ({match: a.dataset.match}))"""


def expected(game: str, state: Any, seq: int) -> dict[str, Any]:
    """What the board must say, from the engine's state (as the reader sees it)."""
    if game == "backgammon":
        return {
            "seq": seq,
            "points": [(abs(v), "0" if v > 0 else "1" if v < 0 else "") for v in state.points],
            "bar": list(state.bar),
            "off": list(state.off),
            "pips": [pips(state, 0), pips(state, 1)],
            "dice": ",".join(map(str, state.dice)),
        }
    if game == "fish":
        return {
            "seq": seq,
            "tiles": {(r, c): fish for r, row in enumerate(state.board) for c, fish in enumerate(row)},
            "penguins": sorted((seat, r, c) for seat, placed in enumerate(state.penguins) for r, c in placed),
            "scores": list(state.scores or (0,) * len(state.names)),
        }
    if game == "porrinha":
        return {
            "seq": seq,
            "chopsticks": list(state.chopsticks),
            # A hand the view keeps closed (CLOSED_HAND) is drawn as no hand at all.
            "hands": {seat: hand for seat, hand in enumerate(state.hands) if hand is not None and hand >= 0},
            "guesses": sorted((seat, guess) for seat, guess in enumerate(state.guesses) if guess >= 0),
        }
    if game == "knockout":
        return {
            "seq": seq,
            "entrants": len(state.names),
            "tables": [index < state.played for index in range(len(state.groups))],
            "games": list(state.games),
        }
    return {
        "seq": seq,
        "tiles": {
            (seat, index): (tile % 2, state.revealed[seat][index], str(tile // 2) if 0 <= tile < 24 else None)
            for seat, row in enumerate(state.rows)
            for index, tile in enumerate(row)
        },
        "pile": len(state.pile),
    }


def at(page: Page, seq: int) -> None:
    """Wait until the board shows `seq`."""
    page.wait_for_selector(f'svg.board[data-seq="{seq}"]')


def boxes(page: Page, selector: str) -> list[dict[str, float]]:
    """The boxes of what `selector` finds, measured at one moment: the viewer draws its board again
    whenever something arrives (annotations, the follow stream), so elements measured one call at a
    time can belong to two drawings, or to none (a box of an element just replaced is None)."""
    return page.eval_on_selector_all(
        selector,
        "found => found.map(e => { const r = e.getBoundingClientRect();"
        " return { x: r.x, y: r.y, width: r.width, height: r.height }; })",
    )


def first_of(served: Served, game: str) -> Any:
    with matchlog.open(served.db) as log:
        return log.matches(game=game, status="finished")[-1]


# -- the drawing model --------------------------------------------------------------------------


def test_frames_are_what_log_state_gives_at_every_seq_and_view(tmp_path: Path):
    """One fold makes every frame; each is what `log.state` gives at its seq (checked at a spread
    of seqs of every match, each view: `log.state` folds from a snapshot per call), and a seat's
    frames never hold another seat's hidden tile or hand."""
    db = tmp_path / "log.duckdb"
    fill_log(db)
    with Store(db) as store:
        ruled = ruled_porrinha(store)
        undone = _undone(store, store.matches(game="fish", limit=1)[0].match_id)
        knockout_into(store)
    log = matchlog.open(db)
    try:
        for info in log.matches():
            records = log.read(info.match_id)
            spread = {*range(0, info.last_seq + 1, max(1, info.last_seq // 12)), info.last_seq}
            if info.match_id in (ruled.match_id, undone):
                spread = set(range(info.last_seq + 1))
            for view in (None, -1, *range(len(info.players))):
                made = frames(records, view)
                assert [f.seq for f in made] == list(range(info.last_seq + 1))
                assert [made[s] for s in sorted(spread)] == [
                    frame_of(log.state(info.match_id, s, as_seat=view)) for s in sorted(spread)
                ]
                assert frames(records, view, start=3, stop=5) == made[3:6]
                if view is not None and info.game in ("davinci", "porrinha"):
                    _holds_no_secret(made, view)
    finally:
        log.close()


def _holds_no_secret(made: list[Any], view: int) -> None:
    """No frame of `view` has another seat's hidden tile or hand."""
    for frame in made:
        board = frame.board
        if isinstance(board, DavinciBoard):
            for seat, row in enumerate(board.rows):
                for tile in row:
                    if seat != view and not tile.revealed:
                        assert tile.number is None and not tile.joker and not tile.known, (frame.seq, seat)
            assert all(not tile.known for tile in board.pile)
        else:
            assert all(hand is None for seat, hand in enumerate(board.hands) if seat != view), frame.seq


def test_the_viewer_api_answers_only_the_views_a_token_allows(shown):
    served, ruled, _ = shown
    with httpx.Client(base_url=served.url) as client:
        match_id = str(ruled.match_id)
        tokens = client.get(f"/api/matches/{match_id}/tokens", headers=served.headers()).json()
        seat1 = {"Authorization": f"Bearer {tokens['seats'][1]}"}
        assert client.get(f"/api/matches/{match_id}/views").json() == {"views": [-1], "default": -1}
        assert client.get(f"/api/matches/{match_id}/views", headers=seat1).json() == {"views": [-1, 1], "default": 1}
        assert client.get(f"/api/matches/{match_id}/views", headers=served.headers()).json() == {
            "views": [None, -1, 0, 1],
            "default": None,
        }
        refused = client.get(f"/api/matches/{match_id}/frames", params={"as_seat": 0}, headers=seat1)
        assert refused.status_code == 403 and refused.json()["code"] == "auth.view"
        mine = client.get(f"/api/matches/{match_id}/frames", params={"start": 2, "stop": 4}, headers=seat1).json()
        assert [f["seq"] for f in mine] == [2, 3, 4] and all(f["board"]["hands"][0] is None for f in mine)
        beyond = client.get(f"/api/matches/{match_id}/frames", params={"start": 10_000})
        assert beyond.status_code == 400 and beyond.json()["code"] == "usage.seq"


def test_the_page_assets_ship_in_the_package():
    """Every file under service/static is named by the package data pyproject gives setuptools
    (so `pip install .` puts it in the wheel), and the modules import only each other."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["matchlog.service"]
    shipped = [p.relative_to(STATIC.parent).as_posix() for p in STATIC.rglob("*") if p.is_file()]
    assert shipped and all(any(fnmatch(path, pattern) for pattern in patterns) for path in shipped), shipped
    scripts = {p.relative_to(STATIC / "js").as_posix() for p in (STATIC / "js").rglob("*.js")}
    for path in (STATIC / "js").rglob("*.js"):
        for name in re.findall(r'from "matchlog/([^"]+)"', path.read_text()):
            assert name in scripts, (path.name, name)


# -- the pages in a browser ---------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_every_game_steps_back_and_forth_with_the_board_as_the_engine_has_it(shown, page: Page, game: str):
    served = shown[0]
    info = first_of(served, game)
    middle = info.last_seq // 2
    log = matchlog.open(served.db)
    try:

        def check(seq: int) -> None:
            at(page, seq)
            assert drawn(page) == expected(game, log.state(info.match_id, seq).state, seq)
            # The current line is seq's (a backgammon turn's line holds each of its checkers' seqs).
            current = page.locator("ol.events li.current").get_attribute("data-seqs") or ""
            assert str(seq) in current.split()
            assert f"seq={seq}" in page.url

        page.goto(f"{served.url}/matches/{info.match_id}?seq={middle}&token={served.admin}")
        check(middle)
        page.keyboard.press("ArrowRight")
        check(middle + 1)
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        check(middle - 1)
        page.click('button[data-action="first"]')
        check(0)
        page.click('button[data-action="forward"]')
        check(1)
        page.click('button[data-action="last"]')
        check(info.last_seq)
        line = page.locator(f'ol.events li[data-seqs~="{middle + 2}"]')
        ends = int(line.get_attribute("data-seq") or -1)  # a line steps to where it ends
        line.click()
        check(ends)
        page.locator("input.slider").evaluate(
            "(slider, seq) => { slider.value = seq; slider.dispatchEvent(new Event('input')); }", middle - 2
        )
        check(middle - 2)
        # Autoplay at the fastest speed moves on by itself, and stops when asked: short of the end,
        # where it stops by itself. (A short match may end before the click lands on a busy machine;
        # the click then plays it again from the start, and the next one stops it.)
        page.select_option("select.speed", "100")
        play = page.locator('button[data-action="play"]')
        play.click()
        page.wait_for_function(f"document.querySelector('svg.board')?.dataset.seq >= {middle + 1}")
        for _ in range(10):
            play.click()
            playing = play.get_attribute("aria-pressed") == "true"  # (only a click starts it again)
            stopped = int(page.locator("svg.board").get_attribute("data-seq") or -1)
            if not playing and stopped < info.last_seq:
                break
        else:
            pytest.fail("autoplay never stopped when asked, short of the end")
        check(stopped)
        page.wait_for_timeout(250)
        assert page.locator("svg.board").get_attribute("data-seq") == str(stopped)
        if game == "knockout":  # each game it played links to its own match
            page.click('button[data-action="last"]')
            page.locator("svg.board a[data-match]").first.click()
            page.wait_for_selector('svg.board[data-game="fish"]')
    finally:
        log.close()


@pytest.mark.parametrize("game", ["davinci", "porrinha"])
def test_a_seat_sees_its_own_secrets_and_nothing_of_the_others(shown, page: Page, game: str):
    served = shown[0]
    info = first_of(served, game)
    seq = info.last_seq // 2
    with matchlog.open(served.db) as log:
        whole = {line.text for line in log.lines(info.match_id)}
        seen = [{line.text for line in log.lines(info.match_id, as_seat=s)} for s in range(2)]
        state = [log.state(info.match_id, seq, as_seat=s).state for s in range(2)]
        tokens = httpx.get(f"{served.url}/api/matches/{info.match_id}/tokens", headers=served.headers()).json()
    # The admin starts with the whole record, then looks as seat 0.
    page.goto(f"{served.url}/matches/{info.match_id}?seq={seq}&token={served.admin}")
    at(page, seq)
    assert page.locator("select.seats option").count() == 2 + len(info.players)
    page.select_option("select.seats", "0")
    page.wait_for_selector('svg.board[data-view="0"]')
    at(page, seq)
    assert drawn(page) == expected(game, state[0], seq)
    secrets = whole - seen[0]
    assert secrets, "the whole record says more than seat 0 sees"
    dom = page.content()
    assert not [text for text in secrets if text in dom], "no line only the whole record has"
    assert all(text in dom for text in list(seen[0])[:20])
    # Seat 1's own token: the selector offers a spectator and seat 1, and seat 0 is refused.
    page.goto(f"{served.url}/matches/{info.match_id}?seq={seq}&token={tokens['seats'][1]}")
    at(page, seq)
    assert [o.get_attribute("value") for o in page.locator("select.seats option").all()] == ["-1", "1"]
    assert drawn(page) == expected(game, state[1], seq)
    assert not [text for text in whole - seen[1] if text in page.content()]
    page.goto(f"{served.url}/matches/{info.match_id}?seq={seq}&as_seat=0&token={tokens['seats'][1]}")
    expect(page.locator("p.error")).to_contain_text("error[auth.view]")
    assert page.locator("svg.board").count() == 0
    assert not [text for text in whole - seen[1] if text in page.content()]


def _mine(page: Page, label: str, seat: int) -> int:
    """How many of `seat`'s checkers the board shows on the point labelled `label`."""
    point = page.locator(f'svg.board .point[data-label="{label}"]')
    return int(point.get_attribute("data-checkers") or 0) if point.get_attribute("data-owner") == str(seat) else 0


def test_a_backgammon_boards_labels_name_the_points_replays_words_name_from_either_side(shown, page: Page):
    """Drawn from the mover's side, the points a turn's line names ("heuristic plays 13/8 6/5") are
    the points so labelled: a checker leaves the one and reaches the other. The event list holds the
    turn as that one line, and the board turns round to either side (`?side=`, the flip control)."""
    served = shown[0]
    info = first_of(served, "backgammon")
    with matchlog.open(served.db) as log:
        lines = log.lines(info.match_id)
    turns: list[tuple[Any, Any]] = []
    for line in lines:
        if line.joins:
            turns[-1] = (turns[-1][0], line)
        elif line.type == "backgammon.checker_moved":
            turns.append((line, line))
    for seat in (0, 1):
        first, last, start, end = next(
            (first, last, *found[0])
            for first, last in turns
            if last.actor == seat and (found := re.findall(r" (\d+)/(\d+)\*?(?= |$)", last.text))
        )
        counts = []
        for seq in (first.seq - 1, last.seq):
            page.goto(f"{served.url}/matches/{info.match_id}?seq={seq}&side={seat}&token={served.admin}")
            at(page, seq)
            assert page.locator("svg.board").get_attribute("data-side") == str(seat)
            counts.append((_mine(page, start, seat), _mine(page, end, seat)))
        (start_before, end_before), (start_after, end_after) = counts
        assert start_after < start_before and end_after > end_before, (last.text, counts)
        turn = page.locator(f'ol.events li[data-seq="{last.seq}"]')
        expect(turn.locator(".text")).to_have_text(last.text)
        assert turn.get_attribute("data-seqs") == " ".join(str(s) for s in range(first.seq, last.seq + 1))
    page.click('button[data-action="flip"]')
    page.wait_for_selector('svg.board[data-side="0"]')
    assert "side=0" in page.url


def test_the_cube_shows_offered_then_on_the_takers_side(shown, page: Page):
    served = shown[0]
    with matchlog.open(served.db) as log:
        info = next(m for m in log.matches(game="backgammon") if json.loads(m.options).get("cube"))
        lines = log.lines(info.match_id)
    offered = next(line for line in lines if line.type == "backgammon.double_offered")
    taken = lines[offered.seq + 1]
    assert taken.type == "backgammon.double_taken"
    page.goto(f"{served.url}/matches/{info.match_id}?seq={offered.seq}&token={served.admin}")
    at(page, offered.seq)
    cube = page.locator("svg.board g.cube")
    assert cube.get_attribute("data-offered") == str(offered.event.cube)  # type: ignore[attr-defined]
    page.keyboard.press("ArrowRight")
    at(page, taken.seq)
    cube = page.locator("svg.board g.cube")
    assert (cube.get_attribute("data-cube"), cube.get_attribute("data-owner")) == (
        str(offered.event.cube),  # type: ignore[attr-defined]
        str(taken.actor),
    )
    assert cube.get_attribute("data-offered") == ""
    expect(page.locator("svg.board .cube-value")).to_have_text(str(offered.event.cube))  # type: ignore[attr-defined]


def test_rulings_stand_out_and_findings_link_to_their_dispute_report(shown, page: Page):
    served, ruled, undone = shown
    page.goto(f"{served.url}/matches/{ruled.match_id}?token={served.admin}")
    rejected = page.locator(f'ol.events li[data-seq="{ruled.rejected}"]')
    expect(rejected).to_have_class(re.compile(r"\bruling\b"))
    assert "ruling" not in (page.locator('ol.events li[data-seq="0"]').get_attribute("class") or "")
    flagged = page.locator(f'ol.events li[data-seq="{ruled.finding}"]')
    expect(flagged).to_have_class(re.compile(r"\bfinding\b"))
    expect(page.locator(f'.marks .mark[data-seq="{ruled.finding}"]')).to_have_count(1)
    page.locator(f'.marks .mark[data-seq="{ruled.finding}"]').click()
    page.wait_for_url(re.compile(rf"/audit/{ruled.finding}"))
    report = page.locator("article.dispute")
    expect(report).to_contain_text("porrinha.guess_taken")
    with matchlog.open(served.db) as log:
        record = log.read(ruled.match_id, start=ruled.finding, stop=ruled.finding)[0]
        before = log.state(ruled.match_id, ruled.finding - 1).state
    expect(report.locator(".proof")).to_contain_text(bytes(record.hash).hex())
    assert drawn(page)["chopsticks"] == list(before.chopsticks)
    # A spectator's report: the ruling and the rule, but no hash over what it may not see.
    with matchlog.open(served.db) as log:
        said = log.lines(ruled.match_id, start=ruled.rejected, stop=ruled.rejected)[0].text
        hidden = log.read(ruled.match_id, start=ruled.rejected, stop=ruled.rejected)[0].hash
    page.goto(f"{served.url}/matches/{ruled.match_id}/audit/{ruled.rejected}")
    # Not even the rule: under the lenient policy a rejected hand counts as 0, so the rule a hand
    # broke tells the others what that hand is.
    expect(page.locator("article.dispute")).to_contain_text("not yours to see")
    assert "porrinha.hand_out_of_range" not in page.content()
    assert "answered 7" in said and said not in page.content() and bytes(hidden).hex() not in page.content()
    # An undo is a ruling, and what it took back is struck through.
    page.goto(f"{served.url}/matches/{undone}")
    last = page.locator("ol.events li").last
    expect(last).to_have_class(re.compile(r"\bruling\b"))
    expect(page.locator("ol.events li.undone")).to_have_count(1)


def test_a_running_match_is_followed_live_and_stepping_back_pauses_it(shown, page: Page):
    served = shown[0]
    engine = get_engine("porrinha")
    with httpx.Client(base_url=served.url, headers=served.headers()) as client:
        seats = [{"name": "amy", "player": "remote"}, {"name": "ben", "player": "remote"}]
        new = {"game": "porrinha", "seats": seats, "options": {"chopsticks": 1}}
        created = client.post("/api/matches", json=new).json()
        match_id, referee = created["match_id"], created["tokens"]["referee"]
        rng = random.Random(3)

        def play(moves: int) -> int:
            """Append `moves` legal answers as the referee (the end when the rules say so); returns the last seq."""
            for _ in range(moves):
                if client.get(f"/api/matches/{match_id}").json()["status"] != "running":
                    break
                position = client.get(f"/api/matches/{match_id}/state").json()
                state = msgspec.convert(position["state"], engine.spec.state)
                turn = engine.to_act(state)
                event: Any = (
                    MatchEnded(outcome=engine.outcome(state))
                    if turn is None
                    else rng.choice(engine.legal(state, turn.seat))
                )
                body = {"expected_seq": position["seq"] + 1, "events": [{"event": msgspec.to_builtins(event)}]}
                answer = client.post(
                    f"/api/matches/{match_id}/events", json=body, headers={"Authorization": f"Bearer {referee}"}
                )
                assert answer.status_code == 200, answer.text
            return client.get(f"/api/matches/{match_id}").json()["last_seq"]

        page.goto(f"{served.url}/matches/{match_id}")
        at(page, 0)
        expect(page.locator(".live")).to_have_attribute("data-live", "following")
        last = play(3)
        at(page, last)
        expect(page.locator("ol.events li")).to_have_count(last + 1)
        page.keyboard.press("ArrowLeft")
        expect(page.locator(".live")).to_have_attribute("data-live", "paused")
        more = play(2)
        expect(page.locator("ol.events li")).to_have_count(more + 1)
        at(page, last - 1)
        page.keyboard.press("End")
        at(page, more)
        expect(page.locator(".live")).to_have_attribute("data-live", "following")
        # To the end: the stream closes and the match shows as finished.
        final = play(200)
        at(page, final)
        expect(page.locator(".status")).to_have_attribute("data-status", "finished")
        expect(page.locator(".live")).to_have_count(0)
        with matchlog.open(served.db) as log:
            assert drawn(page) == expected("porrinha", log.state(match_id, final, as_seat=-1).state, final)


def test_the_list_filters_and_pages_and_the_statistics_draw_their_charts(shown, page: Page):
    served = shown[0]
    page.goto(f"{served.url}/")
    rows = page.locator("table.matches tbody tr")
    expect(rows).to_have_count(25)
    with matchlog.open(served.db) as log:
        newest = log.matches(limit=26)
        fish = log.matches(game="fish")
        statistics = log.stats()
    assert [r.get_attribute("data-match") for r in rows.all()] == [str(m.match_id) for m in newest[:25]]
    page.click("a[rel=next]")
    expect(rows.first).to_have_attribute("data-match", str(newest[25].match_id))
    page.select_option("select[name=game]", "fish")
    expect(rows).to_have_count(len(fish))
    assert {r.get_attribute("data-game") for r in rows.all()} == {"fish"}
    rows.first.locator("a").click()
    page.wait_for_selector("svg.board")
    assert page.locator("svg.board").get_attribute("data-game") == "fish"
    page.goto(f"{served.url}/stats")
    expect(page.locator("svg.chart.rates g.rate")).to_have_count(len(statistics.rates) + len(statistics.seats))
    faces = {
        (g.get_attribute("data-subject"), int(f.get_attribute("data-face") or 0)): int(
            f.get_attribute("data-count") or 0
        )
        for g in page.locator("g.dice-chart").all()
        for f in g.locator("g.face").all()
    }
    assert faces == {(d.subject, face + 1): count for d in statistics.dice for face, count in enumerate(d.counts)}


def export_html(served: Served, match_id: UUID, out: Path, *options: str) -> None:
    """`matchlog export MATCH --format html -o OUT` through the server."""
    command = ["export", str(match_id), "--format", "html", "-o", str(out), "--db", str(served.db), *options]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.stdout + result.stderr


def test_an_exported_file_replays_from_file_with_no_network(shown, page: Page, tmp_path: Path):
    served, ruled, _ = shown
    info = first_of(served, "davinci")
    out = tmp_path / "davinci.html"
    export_html(served, info.match_id, out, "--as-seat", "0")
    with matchlog.open(served.db) as log:
        secrets = {line.text for line in log.lines(info.match_id)} - {
            line.text for line in log.lines(info.match_id, as_seat=0)
        }
        states = {seq: log.state(info.match_id, seq, as_seat=0).state for seq in (5, 6, info.last_seq)}
    text = out.read_text()
    assert not [secret for secret in secrets if json.dumps(secret, ensure_ascii=False)[1:-1] in text]
    assert '"type":"davinci.tiles_shuffled_hidden"' in text and '"type":"davinci.tiles_shuffled"' not in text
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{out.as_uri()}?seq=5")
    at(page, 5)
    assert drawn(page) == expected("davinci", states[5], 5)
    page.keyboard.press("ArrowRight")
    at(page, 6)
    assert drawn(page) == expected("davinci", states[6], 6)
    page.keyboard.press("End")
    at(page, info.last_seq)
    assert drawn(page) == expected("davinci", states[info.last_seq], info.last_seq)
    assert [o.get_attribute("value") for o in page.locator("select.seats option").all()] == ["0"]
    assert {url.split(":", 1)[0] for url in requests} <= {"file", "data"}, requests
    # The whole record holds every view, and the dispute reports of its findings.
    whole = tmp_path / "ruled.html"
    export_html(served, ruled.match_id, whole)
    page.goto(whole.as_uri())
    expect(page.locator("select.seats option")).to_have_count(4)
    assert [o.get_attribute("value") for o in page.locator("select.seats option").all()] == ["all", "-1", "0", "1"]
    page.locator(f'.marks .mark[data-seq="{ruled.finding}"]').click()
    expect(page.locator("dialog[open] article.dispute")).to_contain_text("porrinha.guess_taken")
    assert {url.split(":", 1)[0] for url in requests} <= {"file", "data"}, requests


def test_an_html_export_refuses_what_it_cannot_hold(shown, tmp_path: Path):
    served, ruled, _ = shown
    runner = CliRunner()
    db = ["--db", str(served.db)]
    every = runner.invoke(app, ["export", "--all", "--format", "html", "-o", str(tmp_path / "all.html"), *db])
    assert every.exit_code == 2 and "error[usage.export]" in every.stderr
    seat = runner.invoke(app, ["export", str(ruled.match_id), "--format", "html", "--as-seat", "2", *db])
    assert seat.exit_code == 2 and "error[usage.seat]" in seat.stderr
    parquet = runner.invoke(app, ["export", str(ruled.match_id), "--format", "parquet", "--as-seat", "0", *db])
    assert parquet.exit_code == 2 and "error[usage.export]" in parquet.stderr
    assert not list(tmp_path.iterdir())
    # To stdout, like JSON Lines: one page, its data inlined.
    page = runner.invoke(app, ["export", str(ruled.match_id), "--format", "html", "--as-seat", "-1", *db])
    assert page.exit_code == 0 and page.stdout.startswith("<!doctype html>") and str(ruled.match_id) in page.stdout


# -- what a newcomer read on the pages ----------------------------------------------------------


def test_the_da_vinci_board_says_tile_to_place_no_turn_at_the_end_and_what_its_borders_mean(shown, page: Page):
    served = shown[0]
    info = first_of(served, "davinci")
    with matchlog.open(served.db) as log:
        lines = log.lines(info.match_id)
        drawn_at = next(line.seq for line in lines if line.type == "davinci.tile_drawn")
        waiting = log.state(info.match_id, drawn_at, as_seat=-1).state
        guessing = next(
            line.seq for line in lines if log.state(info.match_id, line.seq, as_seat=-1).state.phase == "guess"
        )
    assert waiting.pending, "with hidden jokers every drawn tile waits to be placed"
    page.goto(f"{served.url}/matches/{info.match_id}?seq={drawn_at}&as_seat=-1")
    at(page, drawn_at)
    notes = page.locator("svg.board").text_content() or ""
    assert f"tile to place: {waiting.names[waiting.pending[0][0]]}" in notes and "joker" not in notes
    page.goto(f"{served.url}/matches/{info.match_id}?seq={guessing}&as_seat=-1")
    at(page, guessing)
    assert "on turn" in (page.locator("svg.board").text_content() or "")  # while it goes on, someone is
    page.goto(f"{served.url}/matches/{info.match_id}?seq={info.last_seq}&as_seat=-1")
    at(page, info.last_seq)
    board = page.locator("svg.board")
    assert board.get_attribute("data-phase") == "over"
    assert "on turn" not in board.text_content() and board.locator("g.on-turn").count() == 0
    assert "gold border: turned up, every player sees it" in board.text_content()
    page.goto(f"{served.url}/matches/{info.match_id}?seq={drawn_at}&token={served.admin}")  # the whole record
    at(page, drawn_at)
    assert "dashed border: hidden from the others, shown to this view" in page.locator("svg.board").text_content()


def test_a_backgammon_boards_two_legends_never_overlap(shown, page: Page):
    served = shown[0]
    info = first_of(served, "backgammon")
    page.goto(f"{served.url}/matches/{info.match_id}?seq={info.last_seq}")
    at(page, info.last_seq)
    legends = boxes(page, "svg.board text.pips")
    assert len(legends) == 2 and all(box["width"] > 0 and box["height"] > 0 for box in legends)
    first, second = legends
    assert first["y"] + first["height"] <= second["y"] or second["y"] + second["height"] <= first["y"]
    assert " · won" in page.locator("svg.board text.pips").all_text_contents()[info.outcome.winners[0]]


def test_an_unknown_match_is_a_404_page_and_the_list_gives_iso_8601_times(shown, page: Page):
    served = shown[0]
    for path in ("/matches/zzzz", "/matches/0123abcd", "/matches/zzzz/audit/3"):
        answer = page.goto(f"{served.url}{path}")
        assert answer is not None and answer.status == 404, path
        expect(page.locator("h1")).to_have_text("No such match")
        assert page.locator("svg.board").count() == 0 and page.locator("a[href='/']").count() == 1
    page.goto(f"{served.url}/")
    rows = page.locator("table.matches tbody tr")
    expect(rows).to_have_count(25)
    with matchlog.open(served.db) as log:
        newest = log.matches(limit=1)[0]
    started = rows.first.locator("td").nth(1).text_content()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", started), started
    assert started == datetime.fromtimestamp(newest.created_us / 1e6, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_statistics_page_shows_long_names_whole_and_its_win_rate_axis_has_values(page: Page, tmp_path: Path):
    db = tmp_path / "names.duckdb"
    long_name = "a-player-whose-name-is-as-long-as-can-be"  # 40 characters, the most a name has
    with Store(db) as store:
        play_series("porrinha", [f"{long_name}=random", "reasoner"], games=2, seed=1, store=store, timeout=5.0)
    served = start_server(db)
    try:
        page.goto(f"{served.url}/stats")
        chart = page.locator("svg.chart.rates").first
        expect(chart.locator("g.rate")).to_have_count(2)
        edge = chart.bounding_box()
        label = chart.locator("text.rate-label", has_text=long_name)
        box = label.bounding_box()
        assert edge and box and box["x"] >= edge["x"] - 0.5, (box, edge)  # nothing of it left of the chart
        assert long_name in label.text_content()
        ticks = chart.locator("text.tick").all_text_contents()
        assert ticks == ["0.0%", "25.0%", "50.0%", "75.0%", "100.0%"]
    finally:
        served.stop()
