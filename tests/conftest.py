"""Shared fixtures: a store per backend, helpers to play recorded matches, a real server, and
`wait_for`: how a test waits for what it needs however busy the machine is."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import typer
import typer.main
import typer.testing
from hypothesis import HealthCheck, settings
from playwright.sync_api import Browser, Page, expect, sync_playwright

from matchlog.referee import play_series
from matchlog.store import Store

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("ci")

# -- waiting, however busy the machine ------------------------------------------------------------

#: The longest a test waits for something that takes a second or so on a quiet machine (a server
#: listening, a child's first answer, a few matches recorded). Generous on purpose: CI may share its
#: 2 cores with other work, and a test that waited this long has failed whatever the machine.
PATIENCE = 120.0
#: The longest a test waits for work that takes tens of seconds on a quiet machine (a Ray Data job,
#: an archive written by two processes, a tournament that stops and verifies its log).
LONG_PATIENCE = 600.0

_T = TypeVar("_T")


def wait_for(condition: Callable[[], _T], what: str, *, deadline: float = PATIENCE, every: float = 0.05) -> _T:
    """Call `condition` until it returns something true, and return that; fail the test, naming
    `what` it waited for, once `deadline` seconds have passed without it."""
    give_up = time.monotonic() + deadline
    while not (result := condition()):
        if time.monotonic() >= give_up:
            pytest.fail(f"waited {deadline:g} s for {what}")
        time.sleep(every)
    return result


def log_bytes(db: Path) -> int:
    """How many bytes the log at `db` holds on disk, its write-ahead log included (where what was
    written lands until a checkpoint): how a test sees a log that another process writes grow."""
    wal = db.with_name(db.name + ".wal")
    return sum(path.stat().st_size for path in (db, wal) if path.exists())


_EMPTY: list[int] = []


def recorded_bytes(db: Path) -> int:
    """How many bytes more than an empty log the log at `db` holds on disk: what has been recorded
    in it. (An empty log its idle writer has checkpointed is most of a megabyte of tables already,
    so the log's own size says nothing of matches recorded.)"""
    if not _EMPTY:
        empty = Path(tempfile.mkdtemp()) / "empty.duckdb"
        Store(empty).close()
        _EMPTY.append(log_bytes(empty))
        shutil.rmtree(empty.parent)
    return log_bytes(db) - _EMPTY[0]


# An HTTP request a test makes without a timeout of its own waits as patiently as the rest of the
# suite, not httpx's 5 s: a server sharing busy cores may answer later, and that is not a failure.
# (Every httpx default refers to this one Timeout, so changing it here changes them all.)
_DEFAULT_HTTP_TIMEOUT = httpx._config.DEFAULT_TIMEOUT_CONFIG
assert isinstance(_DEFAULT_HTTP_TIMEOUT, httpx.Timeout), "httpx keeps its default timeout elsewhere now"
_DEFAULT_HTTP_TIMEOUT.connect = _DEFAULT_HTTP_TIMEOUT.read = PATIENCE
_DEFAULT_HTTP_TIMEOUT.write = _DEFAULT_HTTP_TIMEOUT.pool = PATIENCE

# typer's CliRunner turns the typer app into its click command on every `invoke`: for matchlog's
# forty commands that is most of the cost of a short command run in-process (the suite runs
# thousands). A `matchlog` process turns it once, at start; so does the suite, once per app.
_TURNED: dict[int, tuple[typer.Typer, Any]] = {}
_turn = typer.testing._get_command
assert _turn is typer.main.get_command, "typer's CliRunner turns its app into a command elsewhere now"


def _turned_once(app: typer.Typer) -> Any:
    """The click command `app` turns into, made the first time a test runs it."""
    held = _TURNED.get(id(app))
    if held is None or held[0] is not app:
        held = _TURNED[id(app)] = (app, _turn(app))
    return held[1]


typer.testing._get_command = _turned_once  # type: ignore[assignment]

# A suite started in the background by a shell without job control (`./.ci/run &`, nohup) inherits
# Ctrl-C ignored, and every `matchlog` it starts would too (an ignored signal stays ignored across
# exec): the tests that press Ctrl-C on a command would wait for nothing. Python's own handler
# here, as in a terminal, so that the commands start with the signal's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

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
_FIGURE = "figure"


@pytest.fixture
def report(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Add a line to the summary pytest prints at the end of the run."""
    # (Kept with the test's report, which reaches the process that prints the summary also when
    # pytest-xdist runs the test in a worker of its own.)
    return lambda line: request.node.user_properties.append((_FIGURE, line))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown":
        _REPORTED.extend(line for key, line in report.user_properties if key == _FIGURE)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _REPORTED:
        terminalreporter.write_sep("-", "figures the tests measured")
        for line in _REPORTED:
            terminalreporter.write_line(line)


# -- one process for the Ray cluster's tests, under pytest-xdist --------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`--dist loadgroup`), every test on the Ray cluster runs in one worker:
    one cluster at a time on the machine (a second would start beside it on the same ports)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))


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
                self.process.wait(PATIENCE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return self.process.returncode


def start_server(db: Path, *extra: str) -> Served:
    """Start `matchlog serve --db DB --port 0` and wait (patiently) until it says where it listens."""
    server_file = db.parent / f"{db.name}.server"
    process = subprocess.Popen(
        [sys.executable, "-m", "matchlog.cli", "serve", "--db", str(db), "--port", "0", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    def listening() -> bool:
        if process.poll() is not None:
            with process.stderr:  # type: ignore[union-attr]
                said = process.stderr.read().decode()  # type: ignore[union-attr]
            raise RuntimeError(f"matchlog serve exited {process.returncode}: {said}")
        return server_file.exists()

    try:
        wait_for(listening, "matchlog serve to say where it listens")
    except BaseException:
        process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
        raise
    return Served(db, process, json.loads(server_file.read_text())["url"])


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


def serve_copy(filled: Path, folder: Path, *extra: str) -> Served:
    """A server of its own over a copy of `filled` (`extra`: more options of `matchlog serve`)."""
    db = folder / "served.duckdb"
    shutil.copyfile(filled, db)
    return start_server(db, *extra)


@pytest.fixture(scope="session")
def served(filled_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One real server for the session, over a log with matches of every game (tests may add more),
    serving from two front processes while a third keeps the log (`--fronts`): what every test of it
    proves holds with several fronts; the servers tests start of their own have one process."""
    server = serve_copy(filled_log, tmp_path_factory.mktemp("served"), "--fronts", "2")
    yield server
    server.stop()


# -- one Chromium for the session ---------------------------------------------------------------
# Every module that drives the viewer shares these: Playwright's sync API keeps an event loop
# running in the main thread while a browser is open, so a second `sync_playwright()` in the same
# session (a module's own fixture of the same name) fails with "Sync API inside the asyncio loop".

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
    # Every wait for the page (and every `expect`) as patient as the rest of the suite: Chromium on
    # busy cores draws late, which is not a failure.
    opened.set_default_timeout(PATIENCE * 1000)
    expect.set_options(timeout=PATIENCE * 1000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == [], errors
