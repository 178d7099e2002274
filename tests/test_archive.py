"""The archive: ended matches sealed into a Delta Lake table, read back as a log.

Archiving is idempotent and whole per batch (a kill leaves the table and the log consistent, and
the log unchanged); several logs archive into one table at once through Delta's commit protocol;
every reading of the archive (`--archive`, `matchlog.open`) answers as the log did.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.events import HandChosen, SqlError, StoreError
from matchlog.lake.seal import archive_log
from matchlog.referee import play_series, resume_match
from matchlog.referee.tournament import Setup, play_numbered, run_tournament
from matchlog.store import Store

from .conftest import LONG_PATIENCE, PATIENCE, Served, fill_log, wait_for

CLI = [sys.executable, "-m", "matchlog.cli"]


def run_cli(*args: str, timeout: float = LONG_PATIENCE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, check=False)


def invoke(*args: str, code: int = 0) -> tuple[str, str]:
    """A command run through typer's runner: its output and errors."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (args, result.exit_code, result.stdout, result.stderr)
    return result.stdout, result.stderr


def answers(log: matchlog.Log) -> dict[str, Any]:
    """Every reading a user makes of a log, as plain data (the `projected` count of `stats` says
    what that call had to work out first, not what the log holds, so it is left out)."""
    infos = log.matches()
    found: dict[str, Any] = {
        "matches": msgspec.to_builtins(infos),
        "finished fish": msgspec.to_builtins(log.matches(game="fish", status="finished", limit=1)),
        "count": log.count(),
        "verify": msgspec.to_builtins(log.verify()),
        "audit": msgspec.to_builtins(list(log.audit())),
    }
    for by in ("player", "seat"):
        for game in (None, "porrinha", "backgammon", "davinci", "fish"):
            stats = msgspec.to_builtins(log.stats(game, by=by))
            stats.pop("projected")
            found[f"stats {game} by {by}"] = stats
    for table in ("events", "matches", "seats", "figures", "match_results", "seat_results", "dice_faces", "rulings"):
        found[f"sql {table}"] = log.sql(f"SELECT * FROM {table} ORDER BY ALL", max_rows=100_000).rows
    for info in infos:
        key = str(info.match_id)
        found[f"lines {key}"] = msgspec.to_builtins(log.lines(key))
        found[f"lines {key} as seat 1"] = msgspec.to_builtins(log.lines(key, as_seat=1))
        found[f"state {key}"] = msgspec.to_builtins(log.state(key))
        found[f"state {key} at 5 as seat 0"] = msgspec.to_builtins(log.state(key, 5, as_seat=0))
        found[f"dispute {key}"] = msgspec.to_builtins(log.dispute(key, 3))
    found["results"] = log.results_frame().to_pylist()
    # (seats_frame orders by match, not by seat within a match: sorted here)
    found["seats"] = sorted(
        log.seats_frame(game="porrinha").to_pylist(), key=lambda row: (row["match_id"], row["seat"])
    )
    found["events frame"] = log.events_frame(matches=[infos[0].match_id, infos[-1].match_id]).to_pylist()
    return found


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A log with matches of every game, and its archive."""
    folder = tmp_path_factory.mktemp("archive")
    db = folder / "log.duckdb"
    fill_log(db)
    with matchlog.open(db, write=True) as log:
        log.stats()  # the log's own figures projected, as `matchlog stats` would
    done = run_cli("archive", "--to", str(folder / "archive"), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    return db, folder / "archive"


def test_the_archive_answers_every_reading_as_the_log_did(archived: tuple[Path, Path]):
    db, archive = archived
    with matchlog.open(db) as log, matchlog.open(archive) as sealed:
        assert isinstance(sealed, matchlog.ArchiveLog) and not sealed.writable
        from_log, from_archive = answers(log), answers(sealed)
    assert from_log.keys() == from_archive.keys()
    for reading, answer in from_log.items():
        assert from_archive[reading] == answer, reading


def test_the_commands_read_an_archive_with_the_same_output(archived: tuple[Path, Path]):
    db, archive = archived
    first = json.loads(invoke("list", "--db", str(db), "--json")[0])[0]["match_id"]
    for command in (
        ["stats", "--json"],
        ["stats", "davinci", "--by", "seat", "--csv"],
        ["sql", "SELECT game, type, count(*) FROM events GROUP BY ALL ORDER BY ALL", "--csv"],
        ["list", "--json"],
        ["show", first[:13], "--at", "4", "--as-seat", "1"],
        ["replay", first, "--json"],
        ["audit", "--all", "--json"],
        ["audit", first, "--seq", "2"],
        ["verify"],
    ):
        from_archive, from_log = invoke(*command, "--archive", str(archive)), invoke(*command, "--db", str(db))
        if command[0] == "audit" and "--seq" in command:  # the proof line: the log's tree proves it; an
            from_archive, from_log = _without_proof(from_archive), _without_proof(from_log)  # archive has no tree
            assert "proof: seq 2 is leaf" in invoke(*command, "--db", str(db))[0]
        assert from_archive == from_log, command
    assert invoke("stats", "--archive", str(db.parent / "nowhere"), code=2)[1].startswith("error[archive.missing]")
    refused = invoke("archive", "--to", str(db.parent / "x"), "--db", str(db), "--before", "soon", code=2)
    assert refused[1].startswith("error[usage.before]")


def _without_proof(output: tuple[str, str]) -> tuple[str, str]:
    out, err = output
    return "\n".join(line for line in out.splitlines() if not line.startswith("proof:")), err


def test_a_log_that_a_service_owns_archives_through_it(served: Served, tmp_path: Path):
    archive = tmp_path / "archive"
    with matchlog.open(served.url, token=served.admin) as log:
        ended = [info for info in log.matches() if info.status != "running"]
        done = archive_log(log, str(archive))
        assert done.matches == len(ended) and done.refused == ()
        with matchlog.open(archive) as sealed:
            assert sealed.verify().ok
            assert msgspec.to_builtins(sealed.matches()) == msgspec.to_builtins(ended)
            for info in ended[:6]:
                assert answers_of_one(sealed, info.match_id) == answers_of_one(log, info.match_id)


def test_an_archive_is_read_only(archived: tuple[Path, Path]):
    _, archive = archived
    sealed = matchlog.open(archive)
    info = sealed.matches(limit=1)[0]
    for attempt in (lambda: sealed.undo(info.match_id), lambda: sealed.fork(info.match_id, 2)):
        with pytest.raises(StoreError) as caught:
            attempt()
        assert caught.value.code == "archive.read_only"
    with pytest.raises(SqlError) as caught:
        sealed.sql("DELETE FROM matches")
    assert caught.value.code == "sql.not_select"
    _, refused = invoke("sql", "COPY events TO '/tmp/out.csv'", "--archive", str(archive), code=2)
    assert refused.startswith("error[sql.not_select]")
    with pytest.raises(StoreError):
        matchlog.open(archive, write=True)


def test_archiving_again_adds_nothing_and_a_match_that_went_on_adds_its_new_events(tmp_path: Path):
    db, archive = tmp_path / "log.duckdb", tmp_path / "archive"
    with Store(db) as store:
        play_series("porrinha", ["random", "reasoner", "random"], games=3, seed=7, store=store, timeout=5.0)
    # A fork cut right after a round's hands (nothing revealed since), abandoned: an arbiter may undo that.
    with matchlog.open(db, write=True) as log:
        source = log.matches(limit=1)[0].match_id
        records = log.read(source)
        cut = max(
            r.seq for r in records[3:] if all(isinstance(x.event, HandChosen) for x in records[r.seq - 2 : r.seq + 1])
        )
        forked = log.fork(source, cut)
        log.abandon(forked, reason="the referee stopped")
    with matchlog.open(db) as log:
        first = archive_log(log, str(archive), batch_events=100)
        assert first.matches == 4 and first.commits >= 2 and first.refused == ()
        version = DeltaTable(str(archive)).version()
        again = archive_log(log, str(archive))
        assert (again.matches, again.events, again.already, again.commits) == (0, 0, 4, 0)
    assert DeltaTable(str(archive)).version() == version
    # An arbiter takes back its last hand and the abandonment, and it is played on to an end.
    with matchlog.open(db, write=True) as log:
        target = log.info(forked)
        log.undo(target.match_id, reason="appeal")
        resume_match(log.store, target.match_id, ["random", "reasoner", "random"], seed=3, timeout=5.0)
        longer = log.info(target.match_id)
        assert longer.last_seq > target.last_seq
        grown = archive_log(log, str(archive))
        assert (grown.matches, grown.events, grown.already) == (1, longer.last_seq - target.last_seq, 3)
        from_log = answers_of_one(log, target.match_id)
    with matchlog.open(archive) as sealed:
        assert answers_of_one(sealed, target.match_id) == from_log
        assert sealed.verify().ok


def answers_of_one(log: matchlog.Log, match_id: Any) -> Any:
    return msgspec.to_builtins(
        [log.info(match_id), log.lines(match_id), log.state(match_id), next(log.audit([match_id]))]
    )


def test_verify_finds_rows_added_or_rewritten_behind_matchlogs_back(archived: tuple[Path, Path], tmp_path: Path):
    _, archive = archived
    copy = tmp_path / "archive"
    shutil.copytree(archive, copy)
    # A row appended to the table by another tool: one more event after a match's head.
    table = DeltaTable(str(copy)).to_pyarrow_table()
    heads = table.filter(pc.invert(pc.is_null(table.column("match"))))
    head = heads.slice(0, 1).to_pylist()[0]
    forged = {**head, "seq": head["seq"] + 1, "payload": head["payload"], "match": None, "seats": None}
    forged |= {"figures": None, "sealed": None}
    write_deltalake(str(copy), pa.Table.from_pylist([forged], schema=table.schema), mode="append")
    out, _ = invoke("verify", "--archive", str(copy), code=1)
    assert out.splitlines() == [
        f"FAIL match {head['match_id']} seq {head['seq'] + 1} [chain.hash_mismatch] seq {head['seq'] + 1}: the stored "
        "hash is not the hash of its row and the row before"
    ]
    # The head rows saved beside the table (a cache) changed: verify reads them from the table.
    saved = next((copy / "_matchlog").glob("heads-*.parquet"))
    cached = pq.read_table(saved)
    winners = cached.column("match").to_pylist()
    changed = {**winners[0], "winners": [1 - w for w in winners[0]["winners"] or [0]]}
    column = pa.array([changed, *winners[1:]], cached.schema.field("match").type)
    pq.write_table(cached.set_column(cached.schema.get_field_index("match"), "match", column), saved)
    out, _ = invoke("verify", "--archive", str(copy), code=1)
    assert f"FAIL match {cached.column('match_id')[0].as_py()} [archive.saved_heads]" in out
    shutil.rmtree(copy / "_matchlog")  # it is a cache: without it, the head rows are read from the table
    assert len(invoke("verify", "--archive", str(copy), code=1)[0].splitlines()) == 1  # the forged row
    # A data file rewritten in place no longer matches what the table's log says of it.
    victim = sorted(copy.glob("game=*/month=*/*.parquet"))[0]
    rows = pq.read_table(victim)
    pq.write_table(rows.slice(1), victim)
    _, err = invoke("verify", "--archive", str(copy), code=2)
    assert err.startswith("error[archive.unreadable]"), err
    assert invoke("verify", "--archive", str(archive))[0].startswith("ok: ")


def _archive_in_a_process(db: Path, archive: Path, batch_events: int) -> subprocess.Popen[str]:
    code = (
        "import sys, matchlog; from matchlog.lake.seal import archive_log; "
        "done = archive_log(matchlog.open(sys.argv[1]), sys.argv[2], batch_events=int(sys.argv[3])); "
        "print(done.matches, done.events, done.commits, done.retries)"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, str(db), str(archive), str(batch_events)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_kill_while_archiving_leaves_whole_batches_and_the_log_unchanged(tmp_path: Path):
    db, archive = tmp_path / "log.duckdb", tmp_path / "archive"
    with Store(db) as store:
        play_series("porrinha", ["random", "reasoner", "random"], games=40, seed=11, store=store, timeout=5.0)
    before = _digest(db)
    process = _archive_in_a_process(db, archive, batch_events=60)
    commits = archive / "_delta_log"
    wait_for(lambda: len(list(commits.glob("*.json"))) >= 3 or process.poll() is not None, "three commits", every=0.01)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=PATIENCE)
    assert process.returncode == -signal.SIGKILL, "the archiving finished before it could be killed"
    assert _digest(db) == before  # the log is only read
    with matchlog.open(archive) as sealed:  # what is there is whole: every chain, every head row
        assert sealed.verify().ok
        kept = {info.match_id: info.last_seq for info in sealed.matches()}
    table = DeltaTable(str(archive))
    assert 0 < len(kept) < 40
    assert all(table.transaction_version(f"matchlog:{m}") == last for m, last in kept.items())
    with matchlog.open(db) as log:  # archiving again finishes the job, and adds nothing twice
        rest = archive_log(log, str(archive))
        assert (rest.already, rest.matches) == (len(kept), 40 - len(kept))
        from_log = {key: value for key, value in answers(log).items() if not key.startswith("stats")}
    with matchlog.open(archive) as sealed:
        from_archive = {key: value for key, value in answers(sealed).items() if not key.startswith("stats")}
    assert from_archive == from_log
    assert _digest(db) == before


def test_two_logs_archive_into_one_table_at_once(tmp_path: Path):
    first, second, archive = tmp_path / "first.duckdb", tmp_path / "second.duckdb", tmp_path / "archive"
    with Store(first) as store:
        play_series("porrinha", ["random", "reasoner", "random"], games=24, seed=5, store=store, timeout=5.0)
        shared = [info.match_id for info in store.matches()][-6:]  # the oldest six ...
    with Store(second) as store:
        play_series("davinci", ["random", "seed-ai"], games=10, seed=6, store=store, timeout=5.0)
    with matchlog.open(first) as log, tempfile.TemporaryFile() as out:  # ... are in the second log too
        log.export(out, shared)
        out.seek(0)
        with matchlog.open(second, write=True) as other:
            other.import_jsonl(out)
    processes = [_archive_in_a_process(db, archive, batch_events=80) for db in (first, second)]
    outputs = [process.communicate(timeout=LONG_PATIENCE) for process in processes]
    for process, (_, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
    archived_now = [int(out.split()[0]) for out, _ in outputs]
    # The commit that made the table holds no match: one that did would have no snapshot to be
    # checked against, and two such racing commits both landed (versions 0 and 1, same matches).
    made = [json.loads(line) for line in (archive / "_delta_log" / f"{0:020d}.json").read_text().splitlines()]
    assert not [action for action in made if "add" in action or "txn" in action]
    assert sum(archived_now) == 24 + 10  # the shared six were archived once, by whichever got there first
    with matchlog.open(archive) as sealed:
        assert sealed.verify().ok
        infos = sealed.matches()
        assert Counter(info.game for info in infos) == {"porrinha": 24, "davinci": 10}
        once = sealed.sql("SELECT count(*) = count(DISTINCT (match_id, seq)) FROM events").rows
        assert once == [[True]]
        with matchlog.open(first) as log_one, matchlog.open(second) as log_two:
            assert sealed.count() == log_one.count() + log_two.count() - sum(
                log_one.info(m).last_seq + 1 for m in shared
            )
            for game, log in (("porrinha", log_one), ("davinci", log_two)):
                on_log, on_archive = msgspec.to_builtins(log.stats(game)), msgspec.to_builtins(sealed.stats(game))
                on_log.pop("projected"), on_archive.pop("projected")
                assert on_archive == on_log, game


def test_a_commit_that_races_another_archiving_of_the_same_matches_is_refused_by_delta_and_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    first, second, third = (tmp_path / f"{name}.duckdb" for name in ("first", "second", "third"))
    archive = tmp_path / "archive"
    with Store(first) as store:
        play_series("porrinha", ["random", "reasoner"], games=4, seed=5, store=store, timeout=5.0)
    with Store(third) as store:
        play_series("backgammon", ["random", "heuristic"], games=1, seed=7, store=store, timeout=5.0)
    with matchlog.open(first) as log, tempfile.TemporaryFile() as out:
        log.export(out)
        out.seek(0)
        with Store(second) as store:  # the second log holds the first's matches too, and two of its own
            store.import_jsonl(out)
            play_series("fish", ["random", "random"], games=2, seed=6, store=store, timeout=5.0)
    with matchlog.open(third) as log:
        archive_log(log, str(archive))  # the table exists before the race
    from matchlog.lake import seal

    rows = seal._rows
    raced: list[int] = []

    def rows_then_a_rival(*args: Any) -> Any:
        made = rows(*args)
        if not raced:  # between the second log's snapshot and its commit, the first log archives
            raced.append(1)
            with matchlog.open(first) as rival:
                assert archive_log(rival, str(archive)).matches == 4
        return made

    monkeypatch.setattr(seal, "_rows", rows_then_a_rival)
    with matchlog.open(second) as log:
        done = archive_log(log, str(archive))
    assert raced and (done.retries, done.matches, done.commits) == (1, 2, 1)
    with matchlog.open(archive) as sealed:
        assert sealed.verify().ok
        assert Counter(info.game for info in sealed.matches()) == {"porrinha": 4, "fish": 2, "backgammon": 1}
        assert sealed.sql("SELECT count(*) = count(DISTINCT (match_id, seq)) FROM events").rows == [[True]]


# -- stats over the archive equal stats over the log, for any small tournament ------------------


class _Collected:
    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def put(self, message: tuple[Any, ...]) -> None:
        self.items.append(message)


class _Never:
    def is_set(self) -> bool:
        return False


class _HerePool:
    """A tournament `Pool` that plays every match in this process, one at a time."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.next = 0

    def start(self) -> None:
        pass

    def hand_out(self, done: int) -> None:
        pass

    def receive(self, timeout: float) -> list[tuple[Any, ...]] | None:
        if self.next == self.setup.total:
            return None
        played = _Collected()
        play_numbered(self.setup, self.next, played, _Never())
        self.next += 1
        return played.items

    def stop(self) -> Iterator[tuple[Any, ...]]:
        return iter(())

    def shortfall(self, missing: int, games: int) -> str:
        return f"{missing} of {games} not played"


PLAYERS = {
    "porrinha": ["random", "reasoner", "random"],
    "backgammon": ["random", "heuristic", "random"],
    "davinci": ["random", "seed-ai", "random"],
    "fish": ["random", "maximin:1", "random"],
}


@settings(max_examples=8, deadline=None)
@given(
    game=st.sampled_from(sorted(PLAYERS)),
    players=st.integers(2, 3),
    games=st.integers(1, 6),
    seed=st.integers(0, 2**32),
    taken_back=st.booleans(),
)
def test_stats_on_the_archive_equal_stats_on_the_log(game: str, players: int, games: int, seed: int, taken_back: bool):
    with tempfile.TemporaryDirectory() as folder:
        db, archive = Path(folder) / "log.duckdb", Path(folder) / "archive"
        with Store(db) as store:
            result = run_tournament(game, PLAYERS[game][:players], games=games, store=store, seed=seed, pool=_HerePool)
            assert result.finished == games
        if taken_back:  # a fork of a match, abandoned: no referee recorded its figures
            with matchlog.open(db, write=True) as log:
                match = log.matches(limit=1)[0].match_id
                log.abandon(log.fork(match, 3), reason="appeal upheld")
        with matchlog.open(db) as log:  # read-only: the archive works the missing figures out itself
            assert archive_log(log, str(archive)).matches == games + taken_back
        with matchlog.open(db, write=True) as log, matchlog.open(archive) as sealed:
            for asked in ({}, {"game": game}, {"by": "seat"}, {"game": game, "by": "seat"}):
                on_log = msgspec.to_builtins(log.stats(**asked))
                on_archive = msgspec.to_builtins(sealed.stats(**asked))
                on_log.pop("projected"), on_archive.pop("projected")
                assert on_archive == on_log, asked
