"""Shared fixtures: a store per backend, and helpers to play recorded matches."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from playwright.sync_api import Browser, Page, sync_playwright

from matchlog.referee import play_series
from matchlog.store import Store

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("ci")

BACKENDS = ["memory", "file"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A store on each backend: in memory, and in a file."""
    path = ":memory:" if request.param == "memory" else tmp_path / "log.duckdb"
    with Store(path) as opened:
        yield opened


@pytest.fixture
def file_store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "log.duckdb") as opened:
        yield opened


def play(store: Store | None, specs: list[str], *, games: int = 1, seed: int = 1, **options: object):
    """Play a Porrinha series into `store`."""
    return play_series("porrinha", specs, games=games, seed=seed, store=store, options=dict(options), timeout=5.0)


# -- figures a test reports (the tamper matrix's count, ...) ------------------------------------

_REPORTED: list[str] = []


@pytest.fixture
def report() -> Callable[[str], None]:
    """Add a line to the summary pytest prints at the end of the run."""
    return _REPORTED.append


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _REPORTED:
        terminalreporter.write_sep("-", "figures the tests measured")
        for line in _REPORTED:
            terminalreporter.write_line(line)


# -- a real server ------------------------------------------------------------------------------


class Served:
    """A `matchlog serve` running in its own process on a loopback port."""

    def __init__(self, db: Path, process: subprocess.Popen[bytes], url: str) -> None:
        self.db = db
        self.process = process
        self.url = url
        self.admin = (db.parent / f"{db.name}.token").read_text().strip()

    def headers(self, token: str | None = None) -> dict[str, str]:
        """The Authorization header for `token` (default: the admin's)."""
        return {"Authorization": f"Bearer {token or self.admin}"}

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Stop the server as Ctrl-C (or `sig`) would; returns its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return self.process.returncode


def start_server(db: Path, *extra: str) -> Served:
    """Start `matchlog serve --db DB --port 0` and wait (at most 30 s) until it says where it listens."""
    server_file = db.parent / f"{db.name}.server"
    process = subprocess.Popen(
        [sys.executable, "-m", "matchlog.cli", "serve", "--db", str(db), "--port", "0", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            with process.stderr:  # type: ignore[union-attr]
                said = process.stderr.read().decode()  # type: ignore[union-attr]
            raise RuntimeError(f"matchlog serve exited {process.returncode}: {said}")
        if server_file.exists():
            url = json.loads(server_file.read_text())["url"]
            return Served(db, process, url)
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("matchlog serve did not start within 30 s")


def fill_log(db: Path) -> None:
    """Matches of every game in `db`, all of them finished."""
    with Store(db) as store:
        play_series("porrinha", ["random", "reasoner", "random"], games=3, seed=3, store=store, timeout=5.0)
        play_series("backgammon", ["heuristic", "random"], games=2, seed=4, store=store, timeout=5.0)
        play_series(
            "davinci", ["seed-ai", "random"], games=2, seed=5, store=store, timeout=5.0, options={"jokers": True}
        )
        play_series("fish", ["maximin:1", "random"], games=2, seed=6, store=store, timeout=5.0)


@pytest.fixture(scope="session")
def filled_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log with matches of every game (`fill_log`), made once: copy it, never write it."""
    db = tmp_path_factory.mktemp("filled") / "filled.duckdb"
    fill_log(db)
    return db


def serve_copy(filled: Path, folder: Path) -> Served:
    """A server of its own over a copy of `filled`."""
    db = folder / "served.duckdb"
    shutil.copyfile(filled, db)
    return start_server(db)


@pytest.fixture(scope="session")
def served(filled_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One real server for the session, over a log with matches of every game (tests may add more)."""
    server = serve_copy(filled_log, tmp_path_factory.mktemp("served"))
    yield server
    server.stop()


# -- the viewer in a browser (test_viewer.py, test_viewer_analysis.py) ---------------------------

CHROMIUM = "/usr/bin/chromium"
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


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the session: the system's, never one Playwright downloads."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page whose script errors fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == [], errors
