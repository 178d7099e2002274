"""Proofs a third party can check, end to end: the tree grows with the log and survives a kill and an
old log; checkpoints, receipts and bundles are made through the `Log` interface and the CLI; a log
rewritten four ways (a tail cut, a match deleted, an event edited with every later hash and the tree
recomputed, the log reordered) is caught by `verify --against` and by `check`, each naming the match
and seq; a bundle checks on another machine with the public key alone; and no proof gives a seat a
hidden value."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import duckdb
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.events import Forbidden, MatchStarted, ProofError, Seat, decode, encode
from matchlog.file import FileLog
from matchlog.proofs import verifier
from matchlog.proofs.tree import Frontier
from matchlog.referee import MemoryRecorder, make_player, play_match, play_series, seats_from_specs
from matchlog.store import Store, chain_hash
from matchlog.store.schema import SCHEMA_VERSION
from matchlog.store.writer import insert_tree

runner = CliRunner()


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result.stdout


def recomputed_root(store: Store) -> tuple[int, bytes]:
    """The tree's size and root recomputed from the events alone, in leaf order."""
    frontier = Frontier()
    for _, _, _, hashes in store.tree_leaves():
        frontier.extend(hashes)
    return frontier.size, frontier.root()


# -- the tree as the log grows ------------------------------------------------------------------


def test_every_event_is_one_leaf_in_commit_order_however_it_was_appended(tmp_path: Path):
    with Store(tmp_path / "log.duckdb") as store:
        play_series("porrinha", ["random", "reasoner", "random"], games=4, seed=2, store=store, timeout=5.0)
        recorder = MemoryRecorder()  # the same match again, appended in bulk and one event at a time
        seats = seats_from_specs("porrinha", ["random", "random"])
        players = [make_player("porrinha", s.player, random.Random(n)) for n, s in enumerate(seats)]
        play_match("porrinha", seats, players, recorder=recorder, seed=5)
        assert len(recorder.drafts) > 20
        bulk_id, live_id = UUID(int=1 << 120), UUID(int=2 << 120)
        store.append_bulk([(bulk_id, recorder.drafts, 0)])
        for seq, draft in enumerate(recorder.drafts[:20]):
            store.append(live_id, [draft.event], seq)
        exported = tmp_path / "one.jsonl"
        with exported.open("wb") as out:
            store.export_jsonl(out, [bulk_id])
        with Store(tmp_path / "other.duckdb") as other:
            other.import_jsonl(exported.read_bytes().splitlines())
            assert other.tree_head()[0] == other.count() and other.verify_tree() == []
        size, root = store.tree_head()
        assert size == store.count() > 256  # past a kept subtree
        assert store.verify_tree() == []
        assert recomputed_root(store) == (size, root)
        leaves = store.tree().leaves_of(live_id)
        assert [leaves[seq] for seq in range(20)] == list(range(size - 20, size)), "the last 20 leaves, in order"


def test_a_version_1_log_is_read_as_it_was_and_gets_its_tree_on_first_open_for_writing(tmp_path: Path):
    path = tmp_path / "old.duckdb"
    with Store(path) as store:
        play_series("porrinha", ["random", "random", "random"], games=5, seed=4, store=store, timeout=5.0)
        head = store.tree_head()
    with duckdb.connect(str(path)) as con:  # the log as matchlog before proofs left it
        con.execute("ALTER TABLE events DROP COLUMN leaf; DROP TABLE tree_nodes; DROP TABLE checkpoints")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with Store(path, read_only=True) as store:
        assert store.verify() == [] and len(store.matches()) == 5
        with pytest.raises(ProofError) as no_tree:
            store.tree()
        assert no_tree.value.code == "proof.no_tree"
    with Store(path) as store:
        assert store.tree_head() == head, "the same tree: the events in the order they were committed"
        assert store.verify_tree() == []
        assert store.query("SELECT value FROM meta WHERE key = 'schema_version'") == [(SCHEMA_VERSION,)]


# -- a log, its checkpoint and receipts, and four ways to rewrite it ----------------------------


@dataclass
class Recorded:
    """A log of ended matches (and one in play), a checkpoint and every ended match's receipt taken
    while it was honest, and more played after them."""

    root: Path
    db: Path
    key: str
    checkpoint: Path
    receipts: dict[str, Path]
    matches: list[str]  # the ended matches whose receipts were taken, in the order they were played
    running: str


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    root = tmp_path_factory.mktemp("proofs")
    db = root / "log.duckdb"
    with FileLog(db, mode="create") as log:
        series = play_series("porrinha", ["random", "reasoner", "random"], games=5, seed=11, store=log, timeout=5.0)
        # A match in play: its first events only.
        recorder = MemoryRecorder()
        seats = seats_from_specs("porrinha", ["random", "random", "random"])
        players = [make_player("porrinha", s.player, random.Random(n)) for n, s in enumerate(seats)]
        play_match("porrinha", seats, players, recorder=recorder, seed=12)
        assert len(recorder.drafts) > 12
        running = UUID(int=(series.matches[-1].match_id.int + 1))
        log.append(running, recorder.drafts[:12], 0)
        checkpoint = root / "honest.checkpoint"
        checkpoint.write_text(log.checkpoint())
        matches = [str(m.match_id) for m in series.matches]
        receipts = {}
        for match_id in matches:
            receipts[match_id] = root / f"{match_id}.receipt"
            receipts[match_id].write_text(log.receipt(match_id))
        play_series("porrinha", ["random", "random"], games=2, seed=13, store=log, timeout=5.0)
        key = log.key()
    return Recorded(root, db, key, checkpoint, receipts, matches, str(running))


def _copy(recorded: Recorded, to: Path) -> Path:
    db = to / "copy.duckdb"
    shutil.copy(recorded.db, db)
    shutil.copy(f"{recorded.db}.key", f"{db}.key")
    return db


def _leaf_order(con: duckdb.DuckDBPyConnection) -> list[tuple[str, int]]:
    return con.execute("SELECT match_id::VARCHAR, seq FROM events ORDER BY leaf").fetchall()


def _rewrite_tree(con: duckdb.DuckDBPyConnection, order: list[tuple[str, int]], *, checkpoints: bool = False) -> None:
    """What an attacker with matchlog's own code does last: the tree again, over the leaves in
    `order`, and no checkpoint left that the new tree would contradict (unless `checkpoints`)."""
    hashes = {(m, s): bytes(h) for m, s, h in con.execute("SELECT match_id::VARCHAR, seq, hash FROM events").fetchall()}
    order = [event for event in order if event in hashes]
    con.execute(
        "UPDATE events SET leaf = renumbered.leaf FROM (SELECT unnest(?::VARCHAR[])::UUID AS match_id,"
        " unnest(?::BIGINT[]) AS seq, unnest(range(?)) AS leaf) renumbered"
        " WHERE events.match_id = renumbered.match_id AND events.seq = renumbered.seq",
        [[m for m, _ in order], [s for _, s in order], len(order)],
    )
    con.execute("DELETE FROM tree_nodes")
    if not checkpoints:
        con.execute("DELETE FROM checkpoints")
    insert_tree(con, Frontier().extend([hashes[event] for event in order]))


def _rechain(con: duckdb.DuckDBPyConnection, match_id: str, from_seq: int) -> None:
    """Recompute every hash of a match from `from_seq`, and its catalogue head."""
    rows = con.execute(
        "SELECT seq, event_id::VARCHAR, epoch_us(recorded_at), actor, game, type, version, seat, payload, hash"
        " FROM events WHERE match_id = ? ORDER BY seq",
        [match_id],
    ).fetchall()
    prev = bytes(rows[from_seq - 1][9]) if from_seq else bytes(32)
    for seq, event_id, at_us, actor, game, type_, version, seat, payload, _ in rows[from_seq:]:
        prev = chain_hash(prev, match_id, seq, event_id, at_us, actor, game, type_, version, seat, payload)
        con.execute("UPDATE events SET hash = ? WHERE match_id = ? AND seq = ?", [prev, match_id, seq])
    con.execute("UPDATE matches SET last_seq = ?, head_hash = ? WHERE match_id = ?", [len(rows) - 1, prev, match_id])


def cut_a_tail(con: duckdb.DuckDBPyConnection, recorded: Recorded) -> tuple[str, int, str]:
    target = recorded.matches[1]
    last = con.execute("SELECT max(seq) FROM events WHERE match_id = ?", [target]).fetchall()[0][0]
    keep = last - 6
    order = _leaf_order(con)
    con.execute("DELETE FROM events WHERE match_id = ? AND seq > ?", [target, keep])
    con.execute(
        "UPDATE matches SET status = 'running', ended_at = NULL, ended_seq = NULL, result = NULL, winners = NULL"
        " WHERE match_id = ?",
        [target],
    )
    _rechain(con, target, keep)
    _rewrite_tree(con, order)
    return target, keep + 1, "match.cut"


def delete_a_match(con: duckdb.DuckDBPyConnection, recorded: Recorded) -> tuple[str, int, str]:
    target = recorded.matches[2]
    order = _leaf_order(con)
    for table in ("events", "matches", "seats", "figures", "projected"):
        con.execute(f"DELETE FROM {table} WHERE match_id = ?", [target])
    _rewrite_tree(con, order)
    return target, 0, "match.deleted"


def edit_an_event(con: duckdb.DuckDBPyConnection, recorded: Recorded) -> tuple[str, int, str]:
    target = recorded.matches[3]
    seq, payload = con.execute(
        "SELECT seq, payload FROM events WHERE match_id = ? AND type = 'porrinha.guess_made'"
        " ORDER BY seq LIMIT 1 OFFSET 3",
        [target],
    ).fetchall()[0]
    event = decode(payload.encode())
    edited = encode(msgspec.structs.replace(event, guess=event.guess + 1)).decode()  # type: ignore[attr-defined]
    con.execute("UPDATE events SET payload = ? WHERE match_id = ? AND seq = ?", [edited, target, seq])
    _rechain(con, target, seq)
    _rewrite_tree(con, _leaf_order(con))
    return target, seq, "event.changed"


def reorder_the_log(con: duckdb.DuckDBPyConnection, recorded: Recorded) -> tuple[str, int, str]:
    target = recorded.matches[0]  # its events now come after every other match's
    order = _leaf_order(con)
    _rewrite_tree(con, [leaf for leaf in order if leaf[0] != target] + [leaf for leaf in order if leaf[0] == target])
    return target, 0, "event.moved"


@pytest.mark.parametrize("rewrite", [cut_a_tail, delete_a_match, edit_an_event, reorder_the_log])
def test_a_rewritten_log_is_caught_by_verify_against_and_by_check_naming_the_match_and_seq(
    recorded: Recorded, tmp_path: Path, rewrite
):
    db = _copy(recorded, tmp_path)
    with duckdb.connect(str(db)) as con:
        target, seq, code = rewrite(con, recorded)
    where = f"match {target} seq {seq} [{code}]"
    # The file is consistent with itself: without what was held elsewhere, nothing shows.
    assert invoke("verify", "--db", str(db)).startswith("ok:")
    # Against the checkpoint alone, the rewrite shows; with the receipts, where it was.
    alone = invoke("verify", "--db", str(db), "--against", str(recorded.checkpoint), code=1)
    assert "[log.rewritten]" in alone or "[log.shrunk]" in alone
    held = [arg for path in recorded.receipts.values() for arg in ("--against", str(path))]
    found = invoke("verify", "--db", str(db), "--against", str(recorded.checkpoint), *held, code=1)
    assert where in found, found
    # The disputant asks the rewritten log for a proof against their receipt, and checks it alone.
    bundle = tmp_path / "dispute.proof"
    invoke("prove", target, "--db", str(db), "--against", str(recorded.receipts[target]), "-o", str(bundle))
    checked = invoke("check", str(bundle), "--key", recorded.key, code=1)
    assert where in checked, checked
    assert "[log.rewritten]" in checked or "[log.shrunk]" in checked


def delete_a_match_with_sql(con: duckdb.DuckDBPyConnection, recorded: Recorded) -> tuple[str, int, str, bool]:
    target = recorded.matches[2]
    for table in ("events", "matches", "seats", "figures", "projected"):
        con.execute(f"DELETE FROM {table} WHERE match_id = ?", [target])
    return target, 0, "match.deleted", False


def cut_a_tail_with_sql(con: duckdb.DuckDBPyConnection, recorded: Recorded) -> tuple[str, int, str, bool]:
    target = recorded.matches[1]
    last = con.execute("SELECT max(seq) FROM events WHERE match_id = ?", [target]).fetchall()[0][0]
    con.execute("DELETE FROM events WHERE match_id = ? AND seq > ?", [target, last - 6])
    return target, last - 5, "match.cut", True


@pytest.mark.parametrize("removal", [delete_a_match_with_sql, cut_a_tail_with_sql])
def test_events_removed_with_plain_sql_are_named_where_they_were_never_at_the_next_match(
    recorded: Recorded, tmp_path: Path, removal
):
    db = _copy(recorded, tmp_path)
    with duckdb.connect(str(db)) as con:
        target, seq, code, catalogued = removal(con, recorded)
    receipts = [arg for path in recorded.receipts.values() for arg in ("--against", str(path))]
    checkpoint = ["--against", str(recorded.checkpoint)]
    # With the receipts: the match and the first seq gone, and the leaves' gap named at that event.
    said = json.loads(invoke("verify", "--db", str(db), *checkpoint, *receipts, "--json", code=1))["against"]
    assert {(p["match_id"], p["seq"]) for p in said if p["code"] in (code, "tree.leaf_gap")} == {(target, seq)}, said
    assert all(p["match_id"] in (None, target) for p in said), said
    # With the checkpoint alone: which leaves are gone, blamed on no other match; the catalogue, when it
    # still names the match, says which.
    said = json.loads(invoke("verify", "--db", str(db), *checkpoint, "--json", code=1))["against"]
    gaps = [p for p in said if p["code"] == "tree.leaf_gap"]
    assert gaps and all(p["match_id"] is None and "are gone" in p["message"] for p in gaps), said
    assert all(p["match_id"] in (None, target) for p in said), said
    assert any((p["match_id"], p["seq"], p["code"]) == (target, seq, code) for p in said) == catalogued, said


def test_a_forked_log_is_named_a_fork_not_a_rewrite_or_a_removal(recorded: Recorded, tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = _copy(recorded, tmp_path / "a"), _copy(recorded, tmp_path / "b")
    with FileLog(a, mode="write") as log:  # one copy of the log goes one way ...
        play_series("porrinha", ["random", "random"], games=1, seed=21, store=log, timeout=5.0)
        (tmp_path / "a.checkpoint").write_text(log.checkpoint())
    with FileLog(b, mode="write") as log:  # ... the other another, further, under the same key
        forked = play_series("porrinha", ["random", "random"], games=3, seed=22, store=log, timeout=5.0)
        (tmp_path / "b.checkpoint").write_text(log.checkpoint())
        (tmp_path / "b.receipt").write_text(log.receipt(forked.matches[0].match_id))
    # B is bigger than A's checkpoint, and its own signed tree does not extend it: the key signed two histories.
    said = invoke("verify", "--db", str(b), "--against", str(tmp_path / "a.checkpoint"), code=1)
    assert "[log.forked]" in said and "[log.rewritten]" not in said, said
    # A is smaller than B's checkpoint: a checkpoint alone cannot tell a removal from a fork, and says so ...
    said = invoke("verify", "--db", str(a), "--against", str(tmp_path / "b.checkpoint"), code=1)
    assert "[log.shrunk]" in said and "fork" in said, said
    # ... and with a receipt of B's tree whose leaves A holds otherwise, it is a fork.
    said = invoke(
        "verify",
        "--db",
        str(a),
        "--against",
        str(tmp_path / "b.checkpoint"),
        "--against",
        str(tmp_path / "b.receipt"),
        code=1,
    )
    assert "[log.forked]" in said and "[log.shrunk]" not in said, said


def test_a_changed_log_will_not_sign_a_checkpoint_that_contradicts_its_last(recorded: Recorded, tmp_path: Path):
    db = _copy(recorded, tmp_path)
    with duckdb.connect(str(db)) as con:
        target = recorded.matches[3]
        con.execute(
            "UPDATE events SET recorded_at = recorded_at + INTERVAL 1 SECOND WHERE match_id = ? AND seq = 5", [target]
        )
        _rechain(con, target, 5)
        _rewrite_tree(con, _leaf_order(con), checkpoints=True)
    refused = runner.invoke(app, ["checkpoint", "--db", str(db)])
    assert refused.exit_code == 2 and "error[proof.inconsistent]" in refused.stderr, refused.stderr
    # Proving still works, against the checkpoint the log signed before; the check shows the change.
    bundle = tmp_path / "b"
    invoke("prove", target, "--db", str(db), "--against", str(recorded.receipts[target]), "-o", str(bundle))
    said = invoke("check", str(bundle), "--key", recorded.key, code=1)
    assert f"match {target} seq 5 [event.changed]" in said and "[event.not_in_tree]" in said


def test_an_honest_log_holds_against_everything_it_signed(recorded: Recorded, tmp_path: Path):
    db = _copy(recorded, tmp_path)
    held = [arg for path in recorded.receipts.values() for arg in ("--against", str(path))]
    said = invoke("verify", "--db", str(db), "--against", str(recorded.checkpoint), *held, "--key", recorded.key)
    assert said.startswith("ok:") and "6 checkpoint(s) and receipt(s)" in said
    target = recorded.matches[4]
    bundle = tmp_path / "match.proof"
    invoke("prove", target, "--db", str(db), "--against", str(recorded.receipts[target]), "-o", str(bundle))
    assert invoke("check", str(bundle), "--key", recorded.key).startswith(f"ok: match {target}, seqs 0 to")
    module = subprocess.run(
        [sys.executable, "-m", "matchlog.proofs.verifier", str(bundle), "--key", recorded.key],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert module.returncode == 0 and module.stdout.startswith(f"ok: match {target}"), module
    # The dispute report carries the event's bundle: whole in --json, a line in the text.
    report = json.loads(invoke("audit", target, "--seq", "3", "--db", str(db), "--json"))
    assert report["proof"]["entries"][0]["seq"] == 3
    assert verifier.check_bundle(report["proof"], verifier.parse_verifier_key(recorded.key)).ok
    assert "proof: seq 3 is leaf " in invoke("audit", target, "--seq", "3", "--db", str(db))
    # A receipt or checkpoint of another log (another key) is refused as such.
    stranger = FileLog(":memory:", mode="write")
    seats = (Seat(name="a", player="random"), Seat(name="b", player="random"))
    stranger.append(UUID(int=7), [MatchStarted(game="porrinha", options={}, seats=seats)], 0)
    foreign = tmp_path / "foreign.checkpoint"
    foreign.write_text(stranger.checkpoint())
    said = invoke("verify", "--db", str(db), "--against", str(foreign), code=1)
    assert "[against.signature]" in said


def test_a_bundle_made_here_checks_elsewhere_with_the_public_key_alone(recorded: Recorded, tmp_path: Path):
    target = recorded.matches[0]
    bundle = FileLog(recorded.db).prove(target, seq=5, against=recorded.receipts[target].read_text())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "bundle.json").write_text(json.dumps(bundle))
    (elsewhere / "log.pub").write_text(recorded.key + "\n")
    shutil.copy(verifier.__file__, elsewhere / "verifier.py")
    # Only the verifier's file: matchlog, DuckDB, msgspec and pyarrow cannot be imported there (and,
    # run as `bare.py`, nor can cryptography).
    (elsewhere / "run.py").write_text(
        textwrap.dedent(
            """
            import importlib.abc, runpy, sys

            ABSENT = ("matchlog", "duckdb", "msgspec", "pyarrow")
            if sys.argv[0].endswith("bare.py"):
                ABSENT += ("cryptography",)

            class Refuse(importlib.abc.MetaPathFinder):
                def find_spec(self, name, path, target=None):
                    if name.split(".")[0] in ABSENT:
                        raise ImportError(f"{name} is not on this machine")

            sys.meta_path.insert(0, Refuse())
            try:
                runpy.run_path("verifier.py", run_name="__main__")
            finally:
                assert not any(m.split(".")[0] == "matchlog" for m in sys.modules)
            """
        )
    )

    shutil.copy(elsewhere / "run.py", elsewhere / "bare.py")

    def check(*args: str, runner: str = "run.py") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-I", runner, *args],
            cwd=elsewhere,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    done = check("bundle.json", "--key", "log.pub")
    assert done.returncode == 0 and done.stdout.startswith(f"ok: match {target}, seq 5 "), done
    # The same bundle with its event's row changed by one character fails there, at that seq.
    bundle["entries"][0]["row"]["payload"] = bundle["entries"][0]["row"]["payload"].replace('"seat":', '"seat": ')
    (elsewhere / "bundle.json").write_text(json.dumps(bundle))
    done = check("bundle.json", "--key", "log.pub")
    assert done.returncode == 1 and f"match {target} seq 5 [event.hash]" in done.stdout, done
    # Without cryptography: one line that says what the verifier needs, and status 2.
    bare = check("bundle.json", "--key", "log.pub", runner="bare.py")
    assert bare.returncode == 2 and not bare.stdout, bare
    assert bare.stderr.splitlines() == [f"error[verifier.needs]: this verifier needs {verifier.NEEDS}"], bare


# -- a bundle says nothing that is not bound ----------------------------------------------------


def _statement(text: str | bytes | Any, key: verifier.VerifierKey) -> tuple[Any, ...] | None:
    """What a bundle (its text, or its JSON read) proves, or None when checking it fails with a clear
    finding; anything else (an exception that is not one of the verifier's) fails the test."""
    if isinstance(text, str | bytes):
        try:
            text = verifier.load_bundle(text)
        except verifier.NoteError as error:
            refused = error
        else:
            refused = None
        if refused is not None:
            assert refused.code in ("bundle.json", "bundle.bounds") and str(refused)
            return None
    checked = verifier.check_bundle(text, key)
    if not checked.ok:
        assert all(problem.code and problem.message for problem in checked.problems)
        return None
    assert checked.statement is not None
    return checked.statement


@pytest.fixture(scope="module")
def bundles(recorded: Recorded) -> dict[str, dict[str, Any]]:
    """A bundle of each kind the log makes: one event against the receipt of its match, a seat's whole
    match (its hidden events sealed) against the checkpoint, and the whole record."""
    log = FileLog(recorded.db)
    target = recorded.matches[0]
    return {
        "one event": log.prove(target, seq=5, against=recorded.receipts[target].read_text()),
        "a seat's match": log.prove(recorded.matches[1], as_seat=0, against=recorded.checkpoint.read_text()),
        "the whole record": log.prove(recorded.matches[2]),
    }


def test_a_bundle_changed_where_the_attack_changed_it_fails_with_a_clear_finding(
    recorded: Recorded, bundles: dict[str, dict[str, Any]], tmp_path: Path
):
    key = verifier.parse_verifier_key(recorded.key)
    bundle = bundles["a seat's match"]
    assert verifier.check_bundle(bundle, key).ok
    # A proof index one past the nodes (a digit changed): a finding that names it, not an IndexError.
    changed = copy.deepcopy(bundle)
    changed["entries"][3]["proof"][0] = len(bundle["nodes"])
    said = verifier.check_bundle(changed, key)
    assert [p.code for p in said.problems] == ["bundle.format"] and "entries[3].proof[0]" in str(said.problems[0])
    # The log's word on where the match ends, whether it ended, whose view it is: nothing binds it.
    for name, value in (("last_seq", 3), ("ended", False), ("as_seat", 0), ("missing", True)):
        said = verifier.check_bundle({**bundle, name: value}, key)
        assert [p.code for p in said.problems] == ["bundle.format"] and name in str(said.problems[0]), name
    # A whole entry's row under another name would read as a sealed entry.
    renamed = copy.deepcopy(bundle)
    whole = next(entry for entry in renamed["entries"] if "row" in entry)
    whole["rows"] = whole.pop("row")
    assert [p.code for p in verifier.check_bundle(renamed, key).problems] == ["bundle.format"]
    # A key given twice, a number that is not an integer, JSON nested deeper than a bundle: refused on reading.
    text = json.dumps(bundle)
    for wrong in (text.replace('"seq": ', '"seq": 1, "seq": ', 1), text.replace('"leaf": ', '"leaf": 1.5, "x": ', 1)):
        with pytest.raises(verifier.NoteError) as refused:
            verifier.load_bundle(wrong)
        assert refused.value.code == "bundle.json"
    with pytest.raises(verifier.NoteError) as deep:
        verifier.load_bundle("[" * 100_000 + "]" * 100_000)
    assert deep.value.code == "bundle.bounds"
    # The stand-alone verifier says each as a finding or one error line, never a traceback.
    (tmp_path / "index.json").write_text(json.dumps(changed))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for name, status, said_as in (("index.json", 1, "[bundle.format]"), ("deep.json", 2, "error[bundle.bounds]")):
        done = subprocess.run(
            [sys.executable, verifier.__file__, str(tmp_path / name), "--key", recorded.key],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == status and said_as in done.stdout + done.stderr, done
        assert "Traceback" not in done.stderr
    invoked = runner.invoke(app, ["check", str(tmp_path / "deep.json"), "--key", recorded.key])
    assert invoked.exit_code == 2 and "error[bundle.bounds]" in invoked.stderr, invoked.stderr


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: each object's field and each list's item, nested ones too."""
    found = [path]
    if isinstance(value, dict):
        for name, item in value.items():
            found += _paths(item, (*path, name))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            found += _paths(item, (*path, number))
    return found


def _mutations(value: Any) -> list[Any]:
    """Other values for a place: of its type and one off, of every other type, emptied, cut short."""
    others: list[Any] = [None, True, False, 0, -1, 1 << 63, 1.5, "", "0", [], {}, [0], {"x": 1}]
    if type(value) is int:
        others += [value + 1, value - 1, value * 10 + 1, str(value)]
    elif isinstance(value, str):
        others += [value[:-1], value + "0", value.upper(), value.replace("0", "1", 1), value.replace("a", "b", 1)]
        others += [value[:-3] + "\n" + value[-2:] if len(value) > 3 else value, " " + value]
    elif isinstance(value, list):
        others += [value[:-1], value[1:], value + value[-1:], list(reversed(value))]
    elif isinstance(value, dict):
        others += [{name: item for name, item in value.items() if name != first} for first in value]
        others += [{**value, "extra": 1}, {name.upper(): item for name, item in value.items()}]
    return [other for other in others if other != value or type(other) is not type(value)]


def _replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    if not path:
        return value
    *parents, last = path
    place = changed
    for step in parents:
        place = place[step]
    place[last] = value
    return changed


@given(data=st.data())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_bundle_changed_in_any_field_fails_or_proves_exactly_the_same(
    recorded: Recorded, bundles: dict[str, dict[str, Any]], data: st.DataObject
):
    key = verifier.parse_verifier_key(recorded.key)
    kind = data.draw(st.sampled_from(sorted(bundles)), label="bundle")
    bundle = bundles[kind]
    proven = _statement(bundle, key)
    assert proven is not None
    path = data.draw(st.sampled_from(_paths(bundle)), label="where")
    here = bundle
    for step in path:
        here = here[step]
    if data.draw(st.booleans(), label="rename or drop the field") and path and isinstance(path[-1], str):
        changed = parent = copy.deepcopy(bundle)
        for step in path[:-1]:
            parent = parent[step]
        name = path[-1]
        moved = parent.pop(name)
        new_name = data.draw(st.sampled_from([None, name + "s", name.upper(), "x" + name]), label="new name")
        if new_name is not None:
            parent[new_name] = moved
    else:
        changed = _replaced(bundle, path, data.draw(st.sampled_from(_mutations(here)), label="value"))
    for form in (changed, json.dumps(changed)):
        said = _statement(form, key)
        assert said is None or said == proven or _sealed(said, proven), (path, said)


def _sealed(said: tuple[Any, ...], proven: tuple[Any, ...]) -> bool:
    """Whether `said` is `proven` with some whole events sealed: the one change that still checks, as
    withholding what an event says can never be refused (a seat's bundle seals what it may not see)."""
    (checkpoint, match, entries, against, annotations) = said
    (checkpoint_, match_, entries_, against_, annotations_) = proven
    return (
        (checkpoint, match, against, annotations) == (checkpoint_, match_, against_, annotations_)
        and [entry[:3] for entry in entries] == [entry[:3] for entry in entries_]
        and all(entry[3] in (None, entry_[3]) for entry, entry_ in zip(entries, entries_, strict=True))
        and entries != entries_
    )


def test_a_bundle_changed_in_any_byte_fails_or_proves_exactly_the_same(
    recorded: Recorded, bundles: dict[str, dict[str, Any]]
):
    key = verifier.parse_verifier_key(recorded.key)
    text = json.dumps(bundles["one event"], separators=(",", ":")).encode()
    proven = _statement(text, key)
    assert proven is not None
    same = failed = 0
    for at in range(len(text)):
        for flip in (1, 2, 0x20):
            changed = _statement(text[:at] + bytes([text[at] ^ flip]) + text[at + 1 :], key)
            assert changed in (None, proven), (at, flip)
            same, failed = same + (changed is not None), failed + (changed is None)
    # What can change and prove the same is how JSON or base64 writes a value, never the value.
    assert failed > 10 * same and failed + same == 3 * len(text)


# -- hidden information -------------------------------------------------------------------------


def test_no_proof_gives_a_seat_a_hidden_value(recorded: Recorded):
    log = FileLog(recorded.db)
    key = verifier.parse_verifier_key(recorded.key)
    # A match in play: a seat proves the events it saw, one at a time, and nothing else.
    rows = log.store.rows(UUID(recorded.running))
    theirs = next(r[0] for r in rows if r[5] == "porrinha.hand_chosen" and r[7] != 0)
    mine = next(r[0] for r in rows if r[5] == "porrinha.hand_chosen" and r[7] == 0)
    with pytest.raises(ProofError) as running:
        log.prove(recorded.running, as_seat=0)
    assert running.value.code == "proof.running"
    with pytest.raises(Forbidden):
        log.prove(recorded.running, seq=theirs, as_seat=0)
    with pytest.raises(ProofError):
        log.receipt(recorded.running)
    assert verifier.check_bundle(log.prove(recorded.running, seq=mine, as_seat=0), key).ok
    # An ended match: whole what the seat saw, sealed (a hash, no content, id or time) the rest.
    target = recorded.matches[0]
    bundle = log.prove(target, as_seat=0)
    assert verifier.check_bundle(bundle, key).ok
    rows = {r[0]: r for r in log.store.rows(UUID(target))}
    sealed = {e["seq"] for e in bundle["entries"] if "row" not in e}
    hidden = {
        seq
        for seq, r in rows.items()
        if r[7] != 0
        and (
            r[5] in ("porrinha.hand_chosen", "porrinha.hand_reset")
            or (r[5], '"decision":"hand"' in r[8]) == ("match.answer_rejected", True)
        )
    }
    assert sealed == hidden and hidden
    text = json.dumps(bundle)
    assert not any(rows[seq][1] in text or rows[seq][8] in text for seq in sealed)
    # The whole record (the referee's, the admin's) holds every event whole.
    assert all("row" in e for e in log.prove(target)["entries"])


# -- through a server ---------------------------------------------------------------------------


def test_keys_checkpoints_receipts_and_bundles_through_the_service(served, tmp_path: Path):
    import httpx

    key = httpx.get(f"{served.url}/api/key").text.strip()
    verifying = verifier.parse_verifier_key(key)
    checkpoint = httpx.get(f"{served.url}/api/checkpoint").text
    assert isinstance(verifier.read_note(checkpoint, verifying), verifier.Checkpoint)
    refused = httpx.post(f"{served.url}/api/checkpoint")
    assert refused.status_code == 403 and refused.json()["code"] == "auth.admin"
    signed = httpx.post(f"{served.url}/api/checkpoint", headers=served.headers()).text
    assert verifier.read_note(signed, verifying).size >= verifier.read_note(checkpoint, verifying).size
    with matchlog.open(served.url) as public:
        ended = public.matches(game="porrinha", status="finished")[0].match_id
        receipt = public.receipt(ended)
        assert verifier.read_note(receipt, verifying).match_id == str(ended)
        tokens = httpx.get(f"{served.url}/api/matches/{ended}/tokens", headers=served.headers()).json()
    # A seat's token gets its own view: its hand whole, the others' sealed; the bundle checks.
    with matchlog.open(served.url, token=tokens["seats"][1]) as seat:
        bundle = seat.prove(ended, against=receipt)
        hands = [e["row"]["seat"] for e in bundle["entries"] if e.get("row", {}).get("type") == "porrinha.hand_chosen"]
        assert hands and set(hands) == {1} and any("row" not in e for e in bundle["entries"])
        assert verifier.check_bundle(bundle, verifying).ok
        with pytest.raises(Forbidden):
            seat.prove(ended, as_seat=0)
    # The CLI through the server (the admin's, found beside the log): prove, check, verify --against.
    db = str(served.db)
    path = tmp_path / "receipt"
    path.write_text(receipt)
    invoke("prove", str(ended), "--db", db, "--against", str(path), "-o", str(tmp_path / "b"))
    assert invoke("check", str(tmp_path / "b"), "--key", key).startswith("ok:")
    assert invoke("verify", "--db", db, "--against", str(path)).startswith("ok:")
    # A receipt of a match this log does not have gets a bundle that says so (and another log's key).
    with FileLog(":memory:", mode="write") as elsewhere:
        other = play_series("porrinha", ["random", "random"], games=1, seed=4, store=elsewhere, timeout=5.0)
        foreign = elsewhere.receipt(other.matches[0].match_id)
    absent = httpx.post(f"{served.url}/api/matches/{other.matches[0].match_id}/proof", json={"against": foreign})
    assert absent.status_code == 200 and absent.json()["entries"] == []
    said = verifier.check_bundle(absent.json(), verifying)
    assert [p.code for p in said.problems] == ["against.signature"]
    # A match in play has no receipt yet; ending it (here, abandoning it) answers with its receipt.
    created = httpx.post(
        f"{served.url}/api/matches",
        headers=served.headers(),
        json={"game": "porrinha", "seats": [{"name": "a", "player": "x"}, {"name": "b", "player": "y"}]},
    ).json()
    answer = httpx.get(f"{served.url}/api/matches/{created['match_id']}/receipt")
    assert answer.status_code == 409 and answer.json()["code"] == "proof.running"
    done = httpx.post(f"{served.url}/api/matches/{created['match_id']}/abandon", headers=served.headers(), json={})
    assert verifier.read_note(done.json()["receipt"], verifying).match_id == created["match_id"]


def test_the_service_signs_a_checkpoint_at_its_interval_as_the_log_grows(tmp_path: Path):
    import httpx

    from .conftest import start_server, wait_for

    server = start_server(tmp_path / "log.duckdb", "--checkpoint-every", "0.2")
    try:
        key = verifier.parse_verifier_key(httpx.get(f"{server.url}/api/key").text)
        invoke("play", "porrinha", "-p", "random", "-p", "random", "--seed", "3", "--db", str(server.db), "-q")
        events = httpx.get(f"{server.url}/api/health").json()["events"]

        def signed() -> int:
            return verifier.read_note(httpx.get(f"{server.url}/api/checkpoint").text, key).size

        wait_for(lambda: signed() == events, "a checkpoint of the grown tree", every=0.1)
        assert signed() == events > 0, "a checkpoint of the grown tree, signed by the service unasked"
    finally:
        assert server.stop() == 0


def test_a_log_whose_key_was_replaced_signs_anew_and_a_read_only_log_signs_nothing(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    with FileLog(db, mode="create") as log:
        play_series("porrinha", ["random", "random"], games=1, seed=3, store=log, timeout=5.0)
        first = log.checkpoint()
        assert log.checkpoint() == first, "the tree has not grown: the same checkpoint"
    Path(f"{db}.key").unlink()
    with FileLog(db, mode="write") as log:
        second = log.checkpoint()
        assert second != first and verifier.read_note(second, verifier.parse_verifier_key(log.key()))
    assert Path(f"{db}.key").stat().st_mode & 0o777 == 0o600
    with FileLog(db, mode="read") as log:
        assert log.checkpoint() == second, "a reader gets the latest kept"
        match = log.matches()[0].match_id
        assert verifier.check_bundle(log.prove(match), verifier.parse_verifier_key(log.key())).ok
