"""Shared fixtures: a store per backend, and helpers to play recorded matches."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

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
