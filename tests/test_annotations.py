"""Annotations sit beside the record, never in it: their own chained stream, leaves of the log's one
Merkle tree, provable with the stand-alone verifier, a view like everything else, and written by
the admin or by a seat on its own moves.

A match's `verify` is the same with or without any annotation, and every single change to an
annotation's stored row is found by `verify` at its match; `analyse --all` resumes where it stopped
and analysing again appends.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from uuid import UUID

import duckdb
import httpx
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from matchlog.analysis.run import analyse_matches
from matchlog.cli import app
from matchlog.events import Comment, Decision, Forbidden, StoreError, UsageError
from matchlog.file import FileLog
from matchlog.proofs import verifier
from matchlog.proofs.tree import Frontier
from matchlog.referee import play_series
from matchlog.replay import fork
from matchlog.store import Store
from matchlog.store.schema import SCHEMA_VERSION

from .conftest import start_server
from .test_proofs import _mutations, _paths, _replaced, _statement

runner = CliRunner()


def cli(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result.stdout + result.stderr


def _recorded(db: Path) -> list[UUID]:
    """Ended matches of Porrinha, Fish and Da Vinci Code, analysed, with a comment and a ruling."""
    with FileLog(db, mode="create") as log:
        play_series("porrinha", ["reasoner", "random", "random"], games=2, seed=2, store=log.store, timeout=5.0)
        play_series("fish", ["maximin:1", "random"], games=1, seed=3, store=log.store, timeout=5.0)
        play_series("davinci", ["seed-ai", "random"], games=1, seed=4, store=log.store, timeout=5.0)
        infos = list(reversed(log.matches()))
        analyse_matches(log, infos)
        log.annotate(infos[0].match_id, 3, "a slow start", mark="?!")
        log.annotate(infos[0].match_id, 5, "the guess stands", ruling=True)
        return [info.match_id for info in infos]


@pytest.fixture(scope="module")
def annotated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[UUID]]:
    db = tmp_path_factory.mktemp("annotated") / "log.duckdb"
    return db, _recorded(db)


def _copy(db: Path, to: Path) -> Path:
    target = to / db.name
    shutil.copy(db, target)
    return target


# -- the record is untouched, the annotations are checked ----------------------------------------


def test_a_matchs_verify_is_the_same_with_or_without_its_annotations(annotated, tmp_path: Path):
    db, matches = annotated
    with FileLog(db) as log:
        assert len(log.store.annotations()) > 50
        with_them = [log.verify(m) for m in matches]
        whole = log.verify()
    bare = _copy(db, tmp_path)
    with duckdb.connect(str(bare)) as con:
        con.execute("DELETE FROM annotations")
    with Store(bare, read_only=True) as store:
        assert store.verify() == [] and store.verify_annotations() == []
    with FileLog(bare) as log:
        assert [log.verify(m) for m in matches] == with_them
        assert all(v.ok for v in with_them) and whole.ok
        events = log.count()
    assert whole.events == events, "the annotations are not events: the counts are the record's"


#: Each single change to one stored annotation, as plain SQL makes it, and the code verify names.
CHANGES = {
    "a byte of its note": (
        "UPDATE annotations SET payload = replace(payload, 'a slow', 'A slow') {at}",
        "annotation.hash",
    ),
    "its author": ("UPDATE annotations SET author = 'someone else' {at}", "annotation.hash"),
    "its seat": ("UPDATE annotations SET seat = 1 {at}", "annotation.hash"),
    "its time": ("UPDATE annotations SET recorded_at = recorded_at + INTERVAL 1 SECOND {at}", "annotation.hash"),
    "its type": ("UPDATE annotations SET type = 'analysis.luck' {at}", "annotation.hash"),
    "the seq it speaks of": ("UPDATE annotations SET seq = seq + 1 {at}", "annotation.hash"),
    "the event hash it names": ("UPDATE annotations SET event_hash = sha256('x')::BLOB {at}", "annotation.hash"),
    "its stored hash": ("UPDATE annotations SET hash = sha256('x')::BLOB {at}", "annotation.hash"),
    "its number": ("UPDATE annotations SET number = number + 1000 {at}", "annotation.gap"),
    "removed": ("DELETE FROM annotations {at}", "annotation.gap"),
    "a copy inserted": ("INSERT INTO annotations SELECT * FROM annotations {at}", "annotation.gap"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_single_change_to_an_annotation_is_found_by_verify_at_its_match(annotated, tmp_path: Path, change: str):
    db, matches = annotated
    target = matches[0]
    changed = _copy(db, tmp_path)
    sql, code = CHANGES[change]
    with FileLog(changed) as log:
        number = next(a.number for a in log.annotations_of(target) if isinstance(a.note, Comment))
    with duckdb.connect(str(changed)) as con:
        con.execute(sql.format(at=f"WHERE match_id = '{target}' AND number = {number}"))
    with FileLog(changed) as log:
        found = log.verify(target)
        assert not found.ok
        assert any(f.match_id == target and f.code.startswith("annotation.") for f in found.findings), found
        assert code in {f.code for f in found.findings}, found.findings
        assert log.store.verify() == [], "the match's own chain is intact: only its annotations changed"


def test_a_matchs_last_annotation_removed_is_found_by_the_tree_and_the_logs_last_by_a_checkpoint(
    annotated, tmp_path: Path
):
    db, matches = annotated
    changed = _copy(db, tmp_path)
    with FileLog(changed, mode="write") as log:
        held = log.checkpoint()  # what someone keeps: it covers the ruling, the log's last entry
        log.annotate(matches[1], 1, "a later remark on another match")
    last_of_first = f"SELECT max(number) FROM annotations WHERE match_id = '{matches[0]}'"
    with duckdb.connect(str(changed)) as con:
        con.execute(f"DELETE FROM annotations WHERE match_id = '{matches[0]}' AND number = ({last_of_first})")
    with FileLog(changed) as log:
        assert log.verify(matches[0]).ok, "a match's annotations hold no head of their own..."
        assert {f.code for f in log.verify().findings} == {"tree.leaf_gap"}, "...the tree's leaves do"
    # The log's very last entry removed leaves no gap: what someone holds from before finds it.
    with duckdb.connect(str(changed)) as con:
        last_of_second = last_of_first.replace(str(matches[0]), str(matches[1]))
        con.execute(f"DELETE FROM annotations WHERE match_id = '{matches[1]}' AND number = ({last_of_second})")
        con.execute(f"DELETE FROM annotations WHERE match_id = '{matches[0]}' AND number = ({last_of_first})")
    with FileLog(changed) as log:
        assert log.verify().ok
        problems = log.verify_against([held])
    assert {p.code for p in problems} == {"log.shrunk"}, problems


def test_an_event_changed_under_its_annotations_is_found_at_both(annotated, tmp_path: Path):
    db, matches = annotated
    changed = _copy(db, tmp_path)
    with FileLog(changed) as log:
        analysed = next(a for a in log.annotations_of(matches[0]) if isinstance(a.note, Decision))
    with duckdb.connect(str(changed)) as con:
        con.execute(
            f"UPDATE events SET hash = sha256('x')::BLOB WHERE match_id = '{matches[0]}' AND seq = {analysed.seq}"
        )
    with FileLog(changed) as log:
        codes = {(f.code, f.seq) for f in log.verify(matches[0]).findings}
    assert ("annotation.event_hash", analysed.seq) in codes and ("chain.hash_mismatch", analysed.seq) in codes


# -- one tree, one proof ---------------------------------------------------------------------------


def test_annotations_are_leaves_of_the_one_tree_in_the_order_they_commit(tmp_path: Path):
    with FileLog(tmp_path / "log.duckdb", mode="create") as log:
        store = log.store
        first = play_series("porrinha", ["random", "random"], games=1, seed=1, store=store, timeout=5.0).matches[0]
        size = store.tree_head()[0]
        log.annotate(first.match_id, 2, "one")
        log.annotate(first.match_id, 3, "two")
        second = play_series("porrinha", ["random", "random"], games=1, seed=2, store=store, timeout=5.0).matches[0]
        log.annotate(second.match_id, 1, "three")
        leaves = {a.leaf: a.note.text for a in store.annotations()}
        assert leaves == {size: "one", size + 1: "two", store.tree_head()[0] - 1: "three"}
        assert store.tree().leaves_of(second.match_id)[0] == size + 2, "the next match's events come after"
        frontier = Frontier()
        for _, _, _, hashes in store.tree_leaves():
            frontier.extend(hashes)
        assert (frontier.size, frontier.root()) == store.tree_head()
        assert store.verify_tree() == []


def test_an_annotation_is_proven_with_the_public_key_and_the_verifier_alone(annotated, tmp_path: Path):
    db, matches = annotated
    work = _copy(db, tmp_path)
    with FileLog(work, mode="write") as log:
        number = next(a.number for a in log.annotations_of(matches[0]) if isinstance(a.note, Comment))
        bundle = log.prove_annotation(matches[0], number)
        key = log.key()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(verifier.__file__, elsewhere / "verifier.py")
    (elsewhere / "log.pub").write_text(key + "\n")
    (elsewhere / "run.py").write_text(
        textwrap.dedent(
            """
            import importlib.abc, runpy, sys

            class Refuse(importlib.abc.MetaPathFinder):
                def find_spec(self, name, path, target=None):
                    if name.split(".")[0] in ("matchlog", "duckdb", "msgspec", "pyarrow"):
                        raise ImportError(f"{name} is not on this machine")

            sys.meta_path.insert(0, Refuse())
            runpy.run_path("verifier.py", run_name="__main__")
            """
        )
    )

    def check(document: dict) -> subprocess.CompletedProcess[str]:
        (elsewhere / "bundle.json").write_text(json.dumps(document))
        return subprocess.run(
            [sys.executable, "-I", "run.py", "bundle.json", "--key", "log.pub"],
            cwd=elsewhere,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    done = check(bundle)
    assert done.returncode == 0 and f"annotation {number} of the match, with it" in done.stdout, done
    seq = bundle["annotations"][0]["row"]["seq"]
    edited = json.loads(json.dumps(bundle))
    edited["annotations"][0]["row"]["payload"] = edited["annotations"][0]["row"]["payload"].replace("a slow", "A slow")
    done = check(edited)
    assert done.returncode == 1 and f"match {matches[0]} seq {seq} [annotation.hash]" in done.stdout, done
    moved = json.loads(json.dumps(bundle))
    moved["annotations"][0]["leaf"] += 1
    done = check(moved)
    assert done.returncode == 1 and "[annotation.not_in_tree]" in done.stdout, done


@pytest.fixture(scope="module")
def annotation_bundle(annotated, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, verifier.VerifierKey]:
    """A bundle of one comment (not number 0: its `annotation_previous` is a hash) and the log's key."""
    db, matches = annotated
    work = _copy(db, tmp_path_factory.mktemp("annotation-bundle"))
    with FileLog(work, mode="write") as log:
        number = max(a.number for a in log.annotations_of(matches[0]) if isinstance(a.note, Comment))
        assert number > 0
        return log.prove_annotation(matches[0], number), verifier.parse_verifier_key(log.key())


@given(data=st.data())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_an_annotation_bundle_changed_in_any_field_fails_or_proves_exactly_the_same(annotation_bundle, data):
    """The annotations of a bundle are read as strictly as its events: every value bound (by the
    annotation's hash, the tree or the event it names), nothing else taken."""
    bundle, key = annotation_bundle
    proven = _statement(bundle, key)
    assert proven is not None and proven[4], "the statement holds the annotation"
    path = data.draw(st.sampled_from(_paths(bundle)), label="where")
    here = bundle
    for step in path:
        here = here[step]
    if data.draw(st.booleans(), label="rename or drop the field") and path and isinstance(path[-1], str):
        changed = parent = json.loads(json.dumps(bundle))
        for step in path[:-1]:
            parent = parent[step]
        moved = parent.pop(path[-1])
        new_name = data.draw(st.sampled_from([None, path[-1] + "s", "x" + path[-1]]), label="new name")
        if new_name is not None:
            parent[new_name] = moved
    else:
        changed = _replaced(bundle, path, data.draw(st.sampled_from(_mutations(here)), label="value"))
    for form in (changed, json.dumps(changed)):
        said = _statement(form, key)
        assert said is None or said == proven, (path, said)


def test_a_version_2_log_gets_its_annotations_table_when_first_opened_for_writing(tmp_path: Path):
    db = tmp_path / "old.duckdb"
    with Store(db) as store:
        play_series("porrinha", ["random", "random"], games=2, seed=5, store=store, timeout=5.0)
        head = store.tree_head()
    with duckdb.connect(str(db)) as con:  # the log as matchlog before annotations left it
        con.execute("DROP TABLE annotations; UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    with FileLog(db) as log:
        match = log.matches()[0].match_id
        assert log.annotations_of(match) == [] and log.verify().ok and log.store.tree_head() == head
        with pytest.raises(StoreError) as refused:
            log.annotate(match, 1, "read-only")
        assert refused.value.code == "store.read_only"
    with FileLog(db, mode="write") as log:
        assert log.store.query("SELECT value FROM meta WHERE key = 'schema_version'") == [(SCHEMA_VERSION,)]
        log.annotate(match, 1, "now it may")
        assert log.verify().ok and log.store.tree_head()[0] == head[0] + 1


# -- writing ---------------------------------------------------------------------------------------


def test_comments_and_rulings_from_the_command_line(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    with Store(db) as store:
        match = play_series("porrinha", ["random", "random"], games=1, seed=6, store=store, timeout=5.0).matches[0]
    m = str(match.match_id)
    assert "annotation 0" in cli("annotate", m, "--seq", "3", "too early", "--mark", "?!", "--db", str(db))
    cli("annotate", m, "--seq", "4", "stands", "--ruling", "--db", str(db))
    assert "error[usage.mark]" in cli("annotate", m, "--seq", "3", "x", "--mark", "!?!", "--db", str(db), code=2)
    assert "error[usage.seq]" in cli("annotate", m, "--seq", "9999", "x", "--db", str(db), code=2)
    assert "error[usage.comment]" in cli("annotate", m, "--seq", "3", "a\x1bb", "--db", str(db), code=2)
    shown = json.loads(cli("annotations", m, "--db", str(db), "--json"))
    assert [(a["seq"], a["note"]["text"], a["note"]["ruling"]) for a in shown["annotations"]] == [
        (3, "too early", False),
        (4, "stands", True),
    ]
    exported = cli("annotations", "--all", "--format", "jsonl", "--db", str(db)).splitlines()
    assert [json.loads(line)["number"] for line in exported] == [0, 1]
    text = cli("annotations", m, "--db", str(db))
    assert "comment by admin: too early ?!" in text and "ruling by admin: stands" in text


def test_a_damaged_log_takes_no_annotation_where_it_takes_no_event(annotated, tmp_path: Path):
    """Annotations are refused where events are (`store.damaged`), writing nothing: on a match whose
    events are not whole, and on the whole log while its tree's right edge is unknown (an event
    among the newest leaves deleted by hand); `verify` names the damage, what is whole is still read."""
    db, matches = annotated
    work = _copy(db, tmp_path)
    with Store(work, read_only=True) as store:
        before = len(store.annotations())
    with duckdb.connect(str(work)) as con:
        con.execute("DELETE FROM events WHERE match_id = ? AND seq = 2", [str(matches[1])])
    said = cli("annotate", str(matches[1]), "--seq", "1", "too late", "--db", str(work), code=2)
    assert said.startswith("error[store.damaged]: ") and "matchlog verify" in said, said
    with Store(work, read_only=True) as store:
        assert len(store.annotations()) == before
    assert f"FAIL match {matches[1]}" in cli("verify", "--db", str(work), code=1)
    assert "a slow start" in cli("annotations", str(matches[0]), "--db", str(work))
    # A small log, every leaf among the newest: one event gone and no match takes an annotation.
    small = tmp_path / "small.duckdb"
    with Store(small) as store:
        played = play_series("porrinha", ["random", "random"], games=2, seed=7, store=store, timeout=5.0).matches
    with duckdb.connect(str(small)) as con:
        con.execute("DELETE FROM events WHERE match_id = ? AND seq = 2", [str(played[0].match_id)])
    other = str(played[1].match_id)
    said = cli("annotate", other, "--seq", "1", "too late", "--db", str(small), code=2)
    assert said.startswith("error[store.damaged]: the log takes no new leaves"), said
    said = cli("analyse", other, "--db", str(small), code=1)  # the match it could not write is named
    assert f"match {other[:18]}: error[store.damaged]" in said and "1 failed" in said, said
    with Store(small, read_only=True) as store:
        assert store.annotations() == []


def test_analyse_all_resumes_where_it_stopped_and_again_appends(annotated, tmp_path: Path):
    db, matches = annotated
    work = _copy(db, tmp_path)
    with FileLog(work, mode="write") as log:
        before = len(log.store.annotations())
        play_series("porrinha", ["reasoner", "random"], games=2, seed=7, store=log.store, timeout=5.0)
    said = json.loads(cli("analyse", "--all", "--db", str(work), "--json"))
    written = [o for o in said if o["written"]]
    assert len(written) == 2 and {o["skipped"] for o in said if not o["written"]} == {"analysed"}
    with FileLog(work) as log:
        after = len(log.store.annotations())
    assert after > before
    said = json.loads(cli("analyse", str(matches[0]), "--again", "--db", str(work), "--json"))
    with FileLog(work) as log:
        assert len(log.store.annotations()) == after + said[0]["written"], "appended, nothing overwritten"
        assert log.verify().ok
    assert "error[usage.analyser]" in cli("analyse", "--all", "--analyser", "stockfish", "--db", str(work), code=2)


def test_analyse_on_two_jobs_writes_what_one_job_writes(tmp_path: Path):
    notes = []
    for jobs in (1, 2):
        db = tmp_path / f"jobs{jobs}.duckdb"
        with FileLog(db, mode="create") as log:
            play_series("davinci", ["seed-ai", "random"], games=3, seed=8, store=log.store, timeout=5.0)
            play_series("fish", ["maximin:1", "random"], games=2, seed=8, store=log.store, timeout=5.0)
            outcomes = analyse_matches(log, list(reversed(log.matches())), jobs=jobs)
            assert all(o.written for o in outcomes)
            notes.append(sorted((str(a.seq), a.type, a.payload) for a in log.store.annotations()))
    assert notes[0] == notes[1]


def test_a_match_in_play_is_not_analysed_and_no_seat_gets_an_analysis_before_it_ends(annotated, tmp_path: Path):
    db, matches = annotated
    work = _copy(db, tmp_path)
    with FileLog(work, mode="write") as log:
        running = fork(log.store, matches[0], 20)
        outcome = analyse_matches(log, [log.info(running)])
        assert outcome[0].skipped == "in play"
        analysed = [a for a in log.annotations_of(matches[0]) if isinstance(a.note, Decision)][:2]
        log.put_annotations(running, "someone 1", [_judged(a) for a in analysed if a.seq <= 20])
        log.annotate(running, 3, "for everyone")
        for seat in (-1, 0, 1):
            shown = log.annotations_of(running, as_seat=seat)
            assert [a.note.text for a in shown] == ["for everyone"]
        assert len(log.annotations_of(running)) == 3, "the whole record holds them"
        # Nor do the statistics count an analysis of a match in play, in a game that hides nothing.
        fish = matches[2]
        assert log.info(fish).game == "fish"
        counted = msgspec.to_builtins(log.stats(game="fish").analysis)
        assert counted, "the ended Fish match's analysis is counted"
        decided = [a for a in log.annotations_of(fish) if isinstance(a.note, Decision)]
        cut = decided[len(decided) // 2].seq
        in_play = fork(log.store, fish, cut)
        analysed = [a for a in decided if a.seq <= cut]
        log.put_annotations(in_play, "someone 1", [_judged(a) for a in analysed])
        assert analysed and msgspec.to_builtins(log.stats(game="fish").analysis) == counted


def _judged(annotation):
    from matchlog.replay.annotations import Judged

    return Judged(annotation.seq, annotation.seat, annotation.note)


# -- the service -------------------------------------------------------------------------------------


def test_annotations_through_the_service_a_view_and_a_seat_writes_only_about_its_own_moves(annotated, tmp_path: Path):
    db, matches = annotated
    with FileLog(db) as log:
        total = len(log.store.annotations())
    served = start_server(_copy(db, tmp_path))
    try:
        porrinha = matches[0]
        with httpx.Client(base_url=served.url, timeout=60) as http:
            tokens = http.get(f"/api/matches/{porrinha}/tokens", headers=served.headers()).json()
            whole = http.get(f"/api/matches/{porrinha}/annotations", headers=served.headers()).json()
            assert whole["annotations"] and all(a["hash"] for a in whole["annotations"])
            seats = {a["seat"] for a in whole["annotations"] if a["note"]["type"] == "analysis.decision"}
            assert len(seats) >= 2
            for seat, token in enumerate(tokens["seats"]):
                seen = http.get(f"/api/matches/{porrinha}/annotations", headers=served.headers(token)).json()
                assert {a["seat"] for a in seen["annotations"]} <= {seat, None}
                assert all(a["hash"] is None and a["number"] is None for a in seen["annotations"])
                assert [s["seat"] for s in seen["summaries"]] == [seat]
                forbidden = http.get(
                    f"/api/matches/{porrinha}/annotations",
                    params={"as_seat": (seat + 1) % len(tokens["seats"])},
                    headers=served.headers(token),
                )
                assert forbidden.status_code == 403 and forbidden.json()["code"] == "auth.view"
            spectator = http.get(f"/api/matches/{porrinha}/annotations").json()
            assert {a["seat"] for a in spectator["annotations"]} == {None} and spectator["summaries"] == []
            # A seat writes about its own answer, into its own view; not about another's.
            lines = http.get(f"/api/matches/{porrinha}/events", headers=served.headers()).json()
            own = next(line["seq"] for line in lines if line["actor"] == 0)
            other = next(line["seq"] for line in lines if line["actor"] == 1)
            body = {"seq": own, "text": "my hand was a bluff"}
            made = http.post(
                f"/api/matches/{porrinha}/annotations", json=body, headers=served.headers(tokens["seats"][0])
            )
            assert made.status_code == 201 and made.json()["seat"] == 0 and made.json()["author"] == "seat 0"
            # A ruling is the arbiter's word, even on the seat's own answer (a seat once wrote one).
            forged = {"seq": own, "text": "ruling: seat 1 is disqualified", "ruling": True}
            refused = http.post(
                f"/api/matches/{porrinha}/annotations", json=forged, headers=served.headers(tokens["seats"][0])
            )
            assert refused.status_code == 403 and refused.json()["code"] == "auth.ruling", refused.text
            # Each comment is a leaf of the log's tree: a seat writes a bounded number on one match.
            from matchlog.service.annotations import SEAT_COMMENTS

            for number in range(1, SEAT_COMMENTS):
                more = {"seq": own, "text": f"note {number}"}
                written = http.post(
                    f"/api/matches/{porrinha}/annotations", json=more, headers=served.headers(tokens["seats"][0])
                )
                assert written.status_code == 201, written.text
            written = http.post(
                f"/api/matches/{porrinha}/annotations", json=more, headers=served.headers(tokens["seats"][0])
            )
            assert written.status_code == 403 and written.json()["code"] == "auth.quota", written.text
            body = {"seq": other, "text": "theirs"}
            refused = http.post(
                f"/api/matches/{porrinha}/annotations", json=body, headers=served.headers(tokens["seats"][0])
            )
            assert refused.status_code == 403 and refused.json()["code"] == "auth.write"
            assert http.post(f"/api/matches/{porrinha}/annotations", json=body).status_code == 403
            ruling = http.post(
                f"/api/matches/{porrinha}/annotations",
                json={"seq": other, "text": "upheld", "ruling": True},
                headers=served.headers(),
            )
            assert ruling.status_code == 201 and ruling.json()["author"] == "admin" and ruling.json()["hash"]
            theirs = http.get(f"/api/matches/{porrinha}/annotations", headers=served.headers(tokens["seats"][1])).json()
            assert "upheld" in [a["note"].get("text") for a in theirs["annotations"]]
            assert "my hand was a bluff" not in [a["note"].get("text") for a in theirs["annotations"]]
            # A write with a malformed body is refused for who sends it, before what it holds.
            malformed = [
                (
                    f"/api/matches/{porrinha}/annotations",
                    {"seq": "x"},
                    ({}, {"Authorization": f"Bearer {tokens['referee']}"}),
                ),
                (
                    f"/api/matches/{porrinha}/analysis",
                    {"author": 5},
                    ({}, served.headers(tokens["seats"][0]), {"Authorization": f"Bearer {tokens['referee']}"}),
                ),
            ]
            for path, bad, senders in malformed:
                for headers in senders:
                    answer = http.post(path, json=bad, headers=headers)
                    assert answer.status_code == 403 and answer.json()["code"].startswith("auth."), (path, headers)
            # The analysis route and the export are the admin's.
            assert (
                http.post(f"/api/matches/{porrinha}/analysis", json={"author": "x 1", "notes": []}).status_code == 403
            )
            assert http.get("/api/annotations/export").status_code == 403
            # A request the log may not keep is the request's fault (400), never "the log cannot" (503).
            bad_author = {"author": "x\x1b[2J 1", "notes": []}
            answer = http.post(f"/api/matches/{porrinha}/analysis", json=bad_author, headers=served.headers())
            assert answer.status_code == 400 and answer.json()["code"] == "annotation.author", answer.text
            exported = http.get("/api/annotations/export", headers=served.headers()).text.splitlines()
            assert len(exported) == total + SEAT_COMMENTS + 1, "every annotation, the seat's and the ruling here too"
    finally:
        served.stop()
    with FileLog(served.db) as log:
        assert log.verify().ok


def test_the_log_interface_answers_alike_from_a_file_and_through_a_server(annotated, tmp_path: Path):
    import matchlog

    db, matches = annotated
    copy = _copy(db, tmp_path)
    with FileLog(copy) as log:
        local = [log.analysis(m, as_seat=0) for m in matches]
    served = start_server(copy)
    try:
        with matchlog.open(served.url, token=served.admin) as remote:
            assert [remote.analysis(m, as_seat=0) for m in matches] == local
            with pytest.raises(UsageError):
                remote.annotate(matches[0], 10_000, "nowhere")
        with matchlog.open(served.url) as anonymous, pytest.raises(Forbidden):
            anonymous.annotate(matches[0], 1, "who am I")
    finally:
        served.stop()


def test_annotations_as_a_frame_one_row_each_the_notes_fields_as_columns(annotated):
    db, matches = annotated
    with FileLog(db) as log:
        frame = log.annotations()
        whole = sum(len(log.annotations_of(m)) for m in matches)
        seat0 = log.annotations(matches=matches[:1], as_seat=0).to_pylist()
    assert frame.num_rows == whole
    rows = frame.to_pylist()
    decided = [r for r in rows if r["type"] == "analysis.decision"]
    assert decided and all(isinstance(r["loss"], float) and json.loads(r["choices"]) for r in decided)
    assert {r["type"] for r in rows} == {"analysis.decision", "annotation.comment"}
    assert {r["seat"] for r in seat0} == {0, None} and all(r["hash"] is None for r in seat0)


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def test_ctrl_c_stops_analyse_all_cleanly_and_the_next_run_analyses_the_rest_once(tmp_path: Path):
    import signal
    import time

    db = tmp_path / "log.duckdb"
    with FileLog(db, mode="create") as log:
        play_series("porrinha", ["reasoner", "random", "random"], games=120, seed=9, store=log.store, timeout=5.0)
    command = [sys.executable, "-m", "matchlog.cli", "analyse", "--all", "--jobs", "2", "--db", str(db)]
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not _children(running.pid) and running.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # its workers have started: it is analysing
    workers = _children(running.pid)
    running.send_signal(signal.SIGINT)
    _, err = running.communicate(timeout=120)
    if running.returncode != 0:  # it was stopped (not done already): one line, no traceback
        assert running.returncode == 130, err
        assert b"Traceback" not in err and b"error[interrupted]" in err
    time.sleep(0.2)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)]
    said = json.loads(cli("analyse", "--all", "--db", str(db), "--json"))
    with FileLog(db) as log:
        assert log.verify().ok
        runs = log.store.query("SELECT match_id, count(DISTINCT recorded_at) FROM annotations GROUP BY match_id")
    assert len(runs) == 120 and {count for _, count in runs} == {1}, "every match analysed, once"
    assert sum(1 for o in said if o["skipped"] == "analysed") + sum(1 for o in said if o["written"]) == 120


def test_a_ctrl_c_while_analyse_starts_its_workers_waits_for_them_and_then_ends_every_one(
    monkeypatch: pytest.MonkeyPatch,
):
    """The race CI met: a Ctrl-C between a worker's start and the hand-over of its arguments left it
    reading a closed pipe (a traceback), and one arriving before the last start left the ones started
    running. Here it arrives, every time, just before the second worker starts."""
    import os
    import signal

    from matchlog.analysis.run import _Workers

    workers = _Workers(2)
    process_type = type(workers.processes[0])
    start, starts = process_type.start, []

    def pressed_then_start(process: object) -> None:
        starts.append(process)
        if len(starts) == 2:
            os.kill(os.getpid(), signal.SIGINT)
        start(process)

    monkeypatch.setattr(process_type, "start", pressed_then_start)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), workers:
            pytest.fail("the block ran: the Ctrl-C was lost")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert [process.pid is not None for process in workers.processes] == [True, True], "both were started"
    assert not [process for process in workers.processes if process.is_alive()], "and both have ended"
    assert all(process.exitcode is not None for process in workers.processes)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
