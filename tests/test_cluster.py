"""Tournaments and audits on a Ray cluster: three nodes simulated on this machine, on 127.0.0.1
only, started once for the module and always shut down. One node is killed while a tournament
plays (the last test: the cluster has two nodes after it)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import matchlog
from matchlog.cluster import audit_on_ray, ray_pool
from matchlog.referee.tournament import run_tournament
from matchlog.store import Store

from .conftest import LONG_PATIENCE, PATIENCE, Served, recorded_bytes, wait_for

LOOPBACK = "127.0.0.1"
#: Ray's own switch for "no cluster beyond this machine": every Ray process binds to and dials
#: 127.0.0.1 (otherwise Ray advertises the machine's outward address, even on one machine).
LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
CLI = [sys.executable, "-m", "matchlog.cli"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head and two worker nodes of one CPU each, with this process connected as the driver."""
    saved = os.environ.get(LOCAL_ONLY)
    os.environ[LOCAL_ONLY] = "0"  # for this process's Ray and every process it starts
    import ray
    from ray._private import ray_constants
    from ray.cluster_utils import Cluster

    local_only = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False  # (read when ray was imported, if it was before)
    made = None
    try:
        # Ray's own startup has deadlines no setting changes (its raylet gives the node's agents 15 s
        # to say their ports, then aborts; a node has 30 s to register), which a busy machine can
        # miss: then the cluster is started again, up to three times in all.
        for attempt in range(1, 4):
            try:
                made = Cluster(initialize_head=False)
                made.add_node(
                    num_cpus=1,
                    node_ip_address=LOOPBACK,
                    include_dashboard=False,
                    # A dead node is noticed within about two seconds, not thirty.
                    _system_config={
                        "health_check_initial_delay_ms": 0,
                        "health_check_period_ms": 500,
                        "health_check_failure_threshold": 3,
                    },
                )
                for _ in range(2):
                    made.add_node(num_cpus=1, node_ip_address=LOOPBACK)
                ray.init(address=made.address, logging_level=logging.ERROR, log_to_driver=False)
                break
            except Exception:  # Ray says a missed deadline with Exception and TimeoutError
                ray.shutdown()
                if made is not None:
                    made.shutdown()
                    made = None
                if attempt == 3:
                    raise
        yield made
    finally:
        ray.shutdown()
        if made is not None:
            made.shutdown()
        ray_constants.ENABLE_RAY_CLUSTER = local_only
        if saved is None:
            os.environ.pop(LOCAL_ONLY, None)
        else:
            os.environ[LOCAL_ONLY] = saved


def _outcomes(db: Path) -> list[Any]:
    with Store(db, read_only=True) as store:
        return sorted(
            (m.series_game, m.players, msgspec.to_builtins(m.outcome), m.last_seq) for m in store.matches(limit=None)
        )


def test_a_tournament_on_the_cluster_records_what_worker_processes_record(cluster: Any, tmp_path: Path):
    """A match's seed depends only on the tournament's seed and its number: the same tournament
    played by Ray tasks and by worker processes records the same matches and the same standings."""
    results = {}
    for where in ("ray", "jobs"):
        with Store(tmp_path / f"{where}.duckdb") as store:
            results[where] = run_tournament(
                "porrinha",
                ["random", "reasoner", "random"],
                games=24,
                seats=2,
                store=store,
                seed=5,
                jobs=2,
                pool=ray_pool(cluster.address) if where == "ray" else None,
            )
    on_ray, on_jobs = results["ray"], results["jobs"]
    assert (on_ray.finished, on_ray.unfinished, on_ray.findings, on_ray.failures) == (24, 0, (), ())
    assert on_ray.standings == on_jobs.standings and on_ray.events == on_jobs.events
    assert _outcomes(tmp_path / "ray.duckdb") == _outcomes(tmp_path / "jobs.duckdb")
    with matchlog.open(tmp_path / "ray.duckdb") as log:
        here = msgspec.to_builtins(list(log.audit()))
        spread = msgspec.to_builtins(list(audit_on_ray(log, address=cluster.address, batch=5)))
    assert spread == here and len(spread) == 24 and all(not report["findings"] for report in spread)


def test_a_tournament_on_the_cluster_records_through_the_service_that_owns_the_log(cluster: Any, served: Served):
    with matchlog.open(served.url, token=served.admin) as log:
        result = run_tournament(
            "davinci", ["random", "seed-ai"], games=8, store=log, seed=3, pool=ray_pool(cluster.address)
        )
        assert (result.finished, result.findings, result.failures) == (8, (), ())
        ours = [info for info in log.matches(limit=None) if info.series_id == result.tournament_id]
        assert sorted(info.series_game for info in ours) == list(range(1, 9))
        assert all(info.status == "finished" for info in ours)
        ids = [info.match_id for info in ours]
        assert log.verify(ids).ok
        spread = list(audit_on_ray(log, ids, address=cluster.address, batch=3))  # the events come over HTTP
        assert msgspec.to_builtins(spread) == msgspec.to_builtins(list(log.audit(sorted(ids))))


def test_the_commands_on_the_cluster_ctrl_c_included(cluster: Any, tmp_path: Path):
    db = tmp_path / "log.duckdb"
    command = [*CLI, "tournament", "backgammon", "-p", "random", "-p", "heuristic", "--games", "100000"]
    process = subprocess.Popen(
        [*command, "--ray", cluster.address, "--db", str(db), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Some matches are recorded (or it ended: what it said is checked below).
        wait_for(lambda: process.poll() is not None or recorded_bytes(db) >= 300_000, "matches recorded", every=0.1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=LONG_PATIENCE)
    finally:
        process.kill()  # (a no-op once it has exited) never leave it holding the log
    assert process.returncode == 130, err
    assert "interrupted:" in out and "Traceback" not in err
    with Store(db) as store:
        assert store.verify() == []
        statuses = Counter(m.status for m in store.matches(limit=None))
        assert statuses["finished"] >= 1 and statuses["running"] == 0
        for match in store.matches(status="abandoned"):
            assert store.read(match.match_id)[-1].event.reason == "tournament interrupted"
    audited = subprocess.run(
        [*CLI, "audit", "--all", "--ray", cluster.address, "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=LONG_PATIENCE,
        check=False,
    )
    assert audited.returncode == 0, audited.stderr
    with matchlog.open(db) as log:
        assert json.loads(audited.stdout)["matches"] == json.loads(msgspec.json.encode(list(log.audit())))
    unreachable = subprocess.run(
        [*CLI, "audit", "--all", "--ray", f"{LOOPBACK}:1", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    assert unreachable.returncode == 2 and unreachable.stderr.startswith("error[cluster.unreachable]")


def test_a_match_that_keeps_killing_its_worker_is_reported_not_replayed_for_ever(cluster: Any, tmp_path: Path):
    player = tmp_path / "fatal.py"
    player.write_text("import os\n\nclass Fatal:\n    def __init__(self):\n        os._exit(3)\n")
    figures: list[Any] = []
    with Store(tmp_path / "log.duckdb") as store:
        result = run_tournament(
            "porrinha",
            ["random", f"{player}:Fatal"],
            games=1,
            store=store,
            seed=1,
            pool=ray_pool(cluster.address, figures=figures.append),
            in_process=True,  # in its worker: a user's class in a child of its own could not take the worker down
        )
        assert (result.finished, result.unfinished) == (0, 0) and figures[0].replayed == 3
        assert len(result.failures) == 1 and "lost 4 times with its node or worker" in result.failures[0]
        assert store.matches() == [] and store.verify() == []


SLOW_PLAYER = """
import os
import random
import time
import uuid

HELD = HELD_FOLDER


class Slow:
    \"\"\"A Porrinha player that thinks 10 ms a call: every node stays busy while the games last.
    While the test holds play (a file `hold` in HELD), each call waits, with a file that says so.\"\"\"

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def think(self):
        time.sleep(0.01)
        if os.path.exists(os.path.join(HELD, "hold")):
            mark = os.path.join(HELD, f"held-{uuid.uuid4().hex}")
            open(mark, "w").close()
            while os.path.exists(os.path.join(HELD, "hold")):
                time.sleep(0.01)
            os.remove(mark)

    def hand(self, table):
        self.think()
        return self.rng.randint(0, table.chopsticks(table.index))

    def guess(self, table):
        self.think()
        return next(g for g in range(table.chopstick_count + 1) if table.valid_guess(g))
"""


def test_a_node_killed_mid_tournament_loses_only_its_games_in_flight(cluster: Any, tmp_path: Path):
    """Runs after the tournaments: it leaves the cluster a node short."""
    games = 30
    held = tmp_path / "held"
    held.mkdir()
    player = tmp_path / "slow.py"
    player.write_text(SLOW_PLAYER.replace("HELD_FOLDER", repr(str(held))))
    figures: list[Any] = []
    killed: list[int] = []

    def kill_a_node(done: int, total: int) -> None:
        if killed or done < games // 3:
            return
        # Hold play until a game waits on every node (one CPU each: one game at most on each, and
        # a held game cannot end), so the node killed has one in flight however busy the machine.
        (held / "hold").touch()
        try:
            wait_for(lambda: len(list(held.glob("held-*"))) >= 3, "a game held in flight on every node")
            killed.append(done)
            cluster.remove_node(next(iter(cluster.worker_nodes)), allow_graceful=False)
        finally:
            (held / "hold").unlink()

    with Store(tmp_path / "log.duckdb") as store:
        result = run_tournament(
            "porrinha",
            [f"{player}:Slow", "reasoner", f"{player}:Slow"],
            games=games,
            store=store,
            seed=8,
            pool=ray_pool(cluster.address, figures=figures.append),
            on_progress=kill_a_node,
            timeout=PATIENCE,  # a held call is slow, not a player to remove
            in_process=True,  # in its worker: a confined child could not see the test's files
        )
        assert killed and figures[0].cpus == 3
        assert (result.finished, result.unfinished, result.findings, result.failures) == (games, 0, (), ())
        assert figures[0].replayed >= 1  # the dead node's games in flight were played again elsewhere
        matches = store.matches(limit=None)
        assert sorted(m.series_game for m in matches) == list(range(1, games + 1))  # each once
        assert all(m.status == "finished" for m in matches) and store.verify() == []
    with matchlog.open(tmp_path / "log.duckdb") as log:
        reports = list(audit_on_ray(log, address=cluster.address))
    assert len(reports) == games and all(report.passed for report in reports)


def test_the_ray_data_code_docs_archive_gives_reads_the_archive_on_the_cluster(cluster: Any, tmp_path: Path):
    """docs/archive.md's Ray Data example, exactly as the page has it, run on the cluster. After the
    node-kill test: Ray Data leaves actors of its own on the cluster, which would change where that
    test's tasks run."""
    import re

    from matchlog.lake.seal import archive_log
    from matchlog.referee import play_series

    page = (Path(__file__).resolve().parent.parent / "docs" / "archive.md").read_text()
    code = re.search(r'```python title="read_with_ray.py"\n(.*?)^```', page, re.S | re.M)
    assert code, "docs/archive.md has no read_with_ray.py"
    (tmp_path / "read_with_ray.py").write_text(code[1])
    with Store(tmp_path / "log.duckdb") as store:
        play_series("backgammon", ["random", "heuristic"], games=2, seed=3, store=store, timeout=5.0)
        play_series("porrinha", ["random", "reasoner"], games=3, seed=4, store=store, timeout=5.0)
        _, rows, _ = store.select("SELECT count(*) FROM events WHERE type = 'backgammon.dice_rolled'")
        rolls = rows[0][0]
    with matchlog.open(tmp_path / "log.duckdb") as log:
        archive_log(log, str(tmp_path / "matchlog-archive"))
    ran = subprocess.run(
        [sys.executable, "read_with_ray.py"],
        check=False,
        cwd=tmp_path,
        # Ray Data's default shuffle starts aggregator actors, a process each, which cost a machine
        # of 2 cores a minute for this little data (10 at load 15); the task-based shuffle the page
        # suggests for a small cluster takes seconds, and the example is the page's, as written.
        env={
            **os.environ,
            "RAY_ADDRESS": cluster.address,
            "RAY_DATA_DEFAULT_SHUFFLE_STRATEGY": "sort_shuffle_pull_based",
        },
        capture_output=True,
        text=True,
        # A ceiling for a hang, not a speed: Ray Data starts a worker process per task.
        timeout=3 * LONG_PATIENCE,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    printed = ran.stdout.strip().splitlines()
    assert printed[-1] == str(rolls)  # the dice rolled, read from one game's partition
    assert "'player': 'heuristic'" in "\n".join(printed)  # wins by player, from the head rows
