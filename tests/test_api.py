"""The Python API a notebook uses (`matchlog.open`): the same answers from a file and from a server
that owns it, matches step by step, and frames for pandas and polars."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import polars
import pyarrow as pa
import pytest

import matchlog
from matchlog.events import Forbidden, StoreError, UsageError

from .conftest import Served, fill_log, start_server


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, object], Served]]:
    """A log of every game, what the file answers, and then a server over the same file."""
    db = tmp_path_factory.mktemp("api") / "api.duckdb"
    fill_log(db)
    with matchlog.open(db) as log:
        answers = _answers(log)
    server = start_server(db)
    yield answers, server
    server.stop()


def _answers(log: matchlog.Log) -> dict[str, object]:
    """What a notebook would ask: every answer as plain data, to compare file and server."""
    infos = log.matches()
    davinci = log.matches(game="davinci", limit=1)[0]
    match = log.match(davinci.match_id)
    return {
        "matches": msgspec.to_builtins(infos),
        "porrinha": [str(i.match_id) for i in log.matches(game="porrinha", player="reasoner")],
        "events as seat 1": msgspec.to_builtins(match.events(as_seat=1)),
        "state at 9 as seat 0": msgspec.to_builtins(match.state_at(9, as_seat=0)),
        "replay": list(match.replay()),
        "audit": msgspec.to_builtins(match.audit()),
        "stats": msgspec.to_builtins(log.stats("backgammon", by="seat")),
        "results": log.results_frame().to_pylist(),
        "seats": log.seats_frame(game="fish").to_pylist(),
        "verify": msgspec.to_builtins(log.verify()),
    }


def test_a_file_and_the_server_that_owns_it_give_the_same_answers(logs: tuple[dict[str, object], Served]):
    from_file, served = logs
    with matchlog.open(served.db) as through_server:  # found through the file beside the log
        assert isinstance(through_server, matchlog.ServerLog)
        from_server = _answers(through_server)
    for question, answer in from_file.items():
        assert from_server[question] == answer, question


def test_a_file_a_server_owns_opens_read_only_unless_write_is_asked(logs: tuple[dict[str, object], Served]):
    _, served = logs
    with matchlog.open(served.db) as log:  # the admin's token is readable here, yet nothing is written
        assert isinstance(log, matchlog.ServerLog) and not log.writable
        match_id = log.matches(status="finished")[0].match_id
        before = log.info(match_id).last_seq
        with pytest.raises(StoreError) as refused:
            log.undo(match_id, reason="a notebook's slip")
        assert refused.value.code == "store.read_only" and "write=True" in str(refused.value)
        assert log.verify().findings == [] and log.sql("SELECT count(*) FROM events").rows  # reads still work
        assert log.info(match_id).last_seq == before
    with matchlog.open(served.db, write=True) as log:
        assert log.writable


def test_a_notebook_session(tmp_path: Path):
    db = tmp_path / "notebook.duckdb"
    fill_log(db)
    log = matchlog.open(db)  # read-only unless asked
    assert not log.writable
    info = log.matches(game="backgammon", status="finished")[0]
    match = log.match(info.match_id)
    assert match.id == info.match_id and "backgammon" in repr(match)
    last = match.state_at()
    assert last.seq == info.last_seq and last.outcome is not None
    assert type(last.state).__name__ == type(match.state_at(5).state).__name__  # the engine's own state type
    assert match.audit().findings == []
    frame = log.events_frame(game="backgammon", flatten=True)
    assert frame.num_rows == sum(i.last_seq + 1 for i in log.matches(game="backgammon"))
    assert frame.schema.field("seq").type == pa.int64() and frame.schema.field("recorded_at").type.unit == "us"
    # Flattened payloads are typed columns: the dice faces can be counted without JSON.
    rolls = frame.filter(pa.compute.equal(frame.column("type"), "backgammon.dice_rolled"))
    faces = polars.from_arrow(rolls).select(polars.col("dice").explode()).to_series()
    assert faces.dtype == polars.Int64 and set(faces.to_list()) <= set(range(1, 7))
    pandas_frame = log.results_frame(game="fish").to_pandas()
    assert list(pandas_frame["game"].unique()) == ["fish"] and len(pandas_frame) == 2
    with pytest.raises(UsageError):
        log.events_frame(flatten=True)  # payload fields differ between games
    with pytest.raises(UsageError):
        log.results_frame(game="porrina")
    log.close()


def test_a_server_keeps_the_events_frame_to_the_admin(logs: tuple[dict[str, object], Served]):
    _, served = logs
    with matchlog.open(served.url) as anonymous:
        assert anonymous.results_frame().num_rows == 9
        with pytest.raises(Forbidden):
            anonymous.events_frame()
    with matchlog.open(served.url, token=served.admin) as admin:
        assert admin.events_frame(game="porrinha").num_rows > 0
