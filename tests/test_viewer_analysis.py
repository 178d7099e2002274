"""The analysis in the viewer, in a real headless Chromium (tests/test_viewer.py's browser): the
evaluation graph under the board takes the reader to a point when clicked, the marks stand in the
event list, the best move is drawn over the board before a decision, each player's summary and the
comments show; a seat sees only its own analysis; an exported HTML file carries it all."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from playwright.sync_api import Page, expect

import matchlog
from matchlog.analysis.marks import GLYPHS
from matchlog.analysis.run import analyse_matches
from matchlog.events import Decision
from matchlog.file import FileLog
from matchlog.referee import play_series

from .conftest import Served, start_server  # and the session browser and page, there
from .test_viewer import at, export_html


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, UUID]]]:
    """A server over an analysed backgammon match (gnubg at 0 plies) with a comment and a ruling,
    and an analysed Da Vinci Code match."""
    db = tmp_path_factory.mktemp("viewer-analysis") / "log.duckdb"
    with FileLog(db, mode="create") as log:
        backgammon = play_series("backgammon", ["heuristic", "random"], seed=11, store=log.store).matches[0]
        davinci = play_series("davinci", ["seed-ai", "random"], seed=4, store=log.store).matches[0]
        analyse_matches(log, [log.info(backgammon.match_id)], "gnubg:0")
        analyse_matches(log, [log.info(davinci.match_id)])
        log.annotate(backgammon.match_id, 5, "an early slip", mark="?!")
        log.annotate(backgammon.match_id, 9, "the roll stands", ruling=True)
    server = start_server(db)
    yield server, {"backgammon": backgammon.match_id, "davinci": davinci.match_id}
    server.stop()


def _decisions(served: Served, match_id: UUID, as_seat: int | None = None) -> list[Any]:
    with matchlog.open(served.url, token=served.admin) as log:
        return [a for a in log.annotations_of(match_id, as_seat=as_seat) if isinstance(a.note, Decision)]


def test_the_graph_marks_best_move_summaries_and_comments(analysed, page: Page):
    served, matches = analysed
    match_id = matches["backgammon"]
    decided = _decisions(served, match_id)
    marked = [a for a in decided if a.note.mark]
    assert marked, "the match has marked plays"
    page.goto(f"{served.url}/matches/{match_id}?seq=0&token={served.admin}")
    at(page, 0)
    expect(page.locator("svg.graph")).to_have_attribute("data-points", str(len(decided)))
    expect(page.locator("svg.graph circle.graph-mark")).to_have_count(len(marked))
    # A marked point of the graph takes the reader there, and the line says the mark.
    target = marked[len(marked) // 2]
    page.locator(f'svg.graph circle.graph-mark[data-seq="{target.seq}"]').click()
    at(page, target.seq)
    expect(page.locator("svg.graph line.graph-now")).to_have_attribute("data-seq", str(target.seq))
    glyph = page.locator(f'ol.events li[data-seqs~="{target.seq}"] .glyph')
    expect(glyph).to_have_text(GLYPHS[target.note.mark])
    expect(glyph).to_have_attribute("data-mark", target.note.mark)
    expect(page.locator(".decision")).to_contain_text(target.note.played)
    # Clicking the graph's background goes to the nearest analysed point.
    page.locator("svg.graph").click(position={"x": 2, "y": 50})
    at(page, decided[0].seq)
    # Before a decision, its best move is drawn over the board.
    page.goto(f"{served.url}/matches/{match_id}?seq={target.seq - 1}&token={served.admin}")
    at(page, target.seq - 1)
    steps = ",".join(":".join("null" if i is None else str(i) for i in step) for step in target.note.steps)
    expect(page.locator("svg.board g.best-move")).to_have_attribute("data-steps", steps)
    expect(page.locator(".decision")).to_have_attribute("data-best", target.note.best)
    page.keyboard.press("ArrowRight")
    at(page, target.seq)
    expect(page.locator("svg.board g.best-move")).to_have_count(0)
    # Each player's summary, and the comments, each a link to its seq.
    rows = page.locator("table.summary tr[data-seat]")
    expect(rows).to_have_count(2)
    expect(page.locator(".summaries h2 small")).to_have_text(re.compile(r"gnubg:0 \d"))
    comments = page.locator("ol.comment-list li")
    expect(comments).to_have_count(2)
    expect(comments.nth(1)).to_have_class(re.compile("ruling"))
    comments.nth(0).click()
    at(page, 5)
    expect(page.locator('ol.events li[data-seqs~="5"] .comment-mark')).to_have_attribute(
        "title", "admin: an early slip"
    )


def test_a_seat_sees_its_own_analysis_and_nobody_elses(analysed, page: Page):
    served, matches = analysed
    match_id = matches["davinci"]
    with matchlog.open(served.url, token=served.admin) as log:
        tokens = log._request("GET", f"/api/matches/{match_id}/tokens").json()  # type: ignore[attr-defined]
    mine = _decisions(served, match_id, as_seat=1)
    assert mine and {a.note.seat for a in mine} == {1}
    page.goto(f"{served.url}/matches/{match_id}?seq=0&token={tokens['seats'][1]}")
    at(page, 0)
    expect(page.locator("svg.graph")).to_have_attribute("data-points", str(len(mine)))
    expect(page.locator("table.summary tr[data-seat]")).to_have_count(1)
    expect(page.locator("table.summary tr[data-seat]")).to_have_attribute("data-seat", "1")
    seats = {int(s) for s in page.locator("svg.graph polyline").evaluate_all("ls => ls.map(l => l.dataset.seat)")}
    assert seats == {1}
    page.goto(f"{served.url}/matches/{match_id}?seq=0")  # a spectator: no analysis at all
    at(page, 0)
    expect(page.locator("svg.graph")).to_have_count(0)
    expect(page.locator("table.summary")).to_have_count(0)


def test_an_exported_file_carries_the_analysis(analysed, page: Page, tmp_path: Path):
    served, matches = analysed
    match_id = matches["backgammon"]
    decided = _decisions(served, match_id)
    out = tmp_path / "analysed.html"
    export_html(served, match_id, out)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{out.as_uri()}?seq=0")
    at(page, 0)
    expect(page.locator("svg.graph")).to_have_attribute("data-points", str(len(decided)))
    expect(page.locator("ol.comment-list li")).to_have_count(2)
    marked = next(a for a in decided if a.note.mark)
    page.locator(f'svg.graph circle.graph-mark[data-seq="{marked.seq}"]').click()
    at(page, marked.seq)
    expect(page.locator(f'ol.events li[data-seqs~="{marked.seq}"] .glyph')).to_have_text(GLYPHS[marked.note.mark])
    assert {url.split(":", 1)[0] for url in requests} <= {"file", "data"}, requests
