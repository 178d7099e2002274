"""Take the README's screenshots of the viewer: one match of each game (Dudo from examples/dudo,
installed: `pip install examples/dudo`; OpenSpiel's Leduc poker), played into a fresh log,
served by `matchlog serve`, and photographed in the system's headless Chromium (the test extra's
Playwright drives it; it downloads nothing); and the backgammon match analysed by GNU Backgammon
(Debian's gnubg, at its default evaluation), before a marked play, with its best move, the
evaluation graph and the players' summaries.

    .venv/bin/python scripts/screenshots.py            # writes docs/screenshots/<game>.png and analysis.png
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import matchlog
from matchlog.analysis.run import analyse_matches
from matchlog.events import Decision
from matchlog.referee import play_series
from matchlog.store import Store

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Each game's match: its players, options, seed, how far into it, and the view to show.
MATCHES = {
    "backgammon": (["ann=heuristic", "bob=random"], {}, 4, 0.4, None),
    "fish": (
        ["ann=maximin:1", "bob=random", "cy=random"],
        {"random_board": True, "holes": 3, "columns": 6},
        6,
        0.5,
        None,
    ),
    "porrinha": (["ann=reasoner", "bob=random", "cy=random", "dee=reasoner"], {}, 3, 0.5, 0),
    "davinci": (["ann=seed-ai", "bob=random", "cy=random"], {"jokers": True}, 5, 0.55, 0),
    # A game from a package of its own (examples/dudo, pip-installed), drawn by the board it ships...
    "dudo": (["ann=counter", "bob=counter", "cy=random"], {"dice": 4}, 11, 0.7, 0),
    # ...and one of OpenSpiel's, which brings no drawing: its state as text beside the event list.
    "openspiel:leduc_poker": (["ann=random", "bob=random"], {}, 7, 0.6, 1),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "shots.duckdb"
        with Store(db) as store:
            played = {}
            for game, (players, options, seed, _, _) in MATCHES.items():
                match_id = play_series(game, players, options=options, seed=seed, store=store).matches[0].match_id
                played[game] = store.match(match_id)
        with matchlog.open(db, mode="write") as log:  # the backgammon match, analysed by gnubg itself
            analyse_matches(log, [played["backgammon"]])
            marked = [
                a
                for a in log.annotations_of(played["backgammon"].match_id)
                if isinstance(a.note, Decision) and a.note.mark
            ]
            log.annotate(marked[0].match_id, marked[0].seq, "the blot on the 5-point invited the shot", mark="?")
        server = subprocess.Popen([sys.executable, "-m", "matchlog.cli", "serve", "--db", str(db), "--port", "0"])
        try:
            server_file = db.with_name(db.name + ".server")
            deadline = time.monotonic() + 30
            while not server_file.exists():
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("matchlog serve did not start")
                time.sleep(0.05)
            url = json.loads(server_file.read_text())["url"]
            token = db.with_name(db.name + ".token").read_text().strip()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1200, "height": 760}, device_scale_factor=1)
                for game, match in played.items():
                    _, _, _, share, view = MATCHES[game]
                    seq = int(match.last_seq * share)
                    seat = "" if view is None else f"&as_seat={view}"
                    page.goto(f"{url}/matches/{match.match_id}?seq={seq}{seat}&token={token}")
                    page.wait_for_selector(f'.board[data-seq="{seq}"]')
                    # Backgammon is shown with dice on the board: a step or two on to a roll.
                    while game == "backgammon" and not page.locator("g.dice").get_attribute("data-dice"):
                        seq += 1
                        page.keyboard.press("ArrowRight")
                        page.wait_for_selector(f'svg.board[data-seq="{seq}"]')
                    shot = OUT / f"{game.replace(':', '-')}.png"
                    page.screenshot(path=shot)
                    print(f"{shot}: seq {seq} of {match.last_seq}")
                # The analysis: the board before the second marked play, its best move drawn.
                page.set_viewport_size({"width": 1200, "height": 1110})
                decision = marked[min(1, len(marked) - 1)]
                seq = decision.seq - 1
                page.goto(f"{url}/matches/{decision.match_id}?seq={seq}&token={token}")
                page.wait_for_selector(f'svg.board[data-seq="{seq}"] g.best-move')
                page.wait_for_selector("table.summary")
                page.screenshot(path=OUT / "analysis.png")
                print(f"{OUT / 'analysis.png'}: seq {seq}, before a play marked {decision.note.mark}")
                browser.close()
        finally:
            server.terminate()
            server.wait(20)


if __name__ == "__main__":
    main()
