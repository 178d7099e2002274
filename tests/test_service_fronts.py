"""The service in several processes (`matchlog serve --fronts N`): one keeps the log, the fronts
serve the requests. No front answers a request made after an acknowledgement with what came before
it; killing the owner at any moment loses nothing acknowledged and takes the fronts with it; a front
that dies stops the service with everything acknowledged in the log. (The session's `served` and the
load test run with fronts too: every test of them holds with several.)"""

from __future__ import annotations

import concurrent.futures
import os
import random
import signal
import threading
from pathlib import Path

import httpx
import msgspec
import pytest

from matchlog.events import ConcurrencyError, Event, draft, encode, uuid7, uuid7_text
from matchlog.referee import MemoryRecorder, make_player, play_match, seats_from_specs
from matchlog.store import Store
from matchlog.store.remote import RemoteStore, StoreServer

from .conftest import PATIENCE, Served, start_server, wait_for


def _porrinha(seed: int) -> list[Event]:
    """The events of a real Porrinha match of 3 random players, match.started first."""
    seats = seats_from_specs("porrinha", ["random"] * 3)
    players = [make_player("porrinha", s.player, random.Random(seed * 7 + i)) for i, s in enumerate(seats)]
    recorder = MemoryRecorder()
    play_match("porrinha", seats, players, recorder=recorder, timeout=None)
    return [d.event for d in recorder.drafts]


def _fronts_of(server: Served) -> list[int]:
    """The pids of the server's fronts (its children but the multiprocessing resource tracker)."""
    pid = server.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie (dead, not yet reaped by a parent that died too) is gone as well.
    return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"


def test_a_commit_is_announced_to_every_front_before_it_is_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """What lets a front trust its caches: when an append's answer arrives, its commit notice is in
    every front's connection already, so `catch_up` (which every cached read makes first) applies
    it. The fronts' own listeners are held off here, so only what was sent before the answer counts."""
    monkeypatch.setattr(RemoteStore, "_listen", lambda self: None)
    events = _porrinha(2)
    with Store(tmp_path / "log.duckdb") as store:
        server = StoreServer(store, str(tmp_path / "store.socket"), b"key")
        fronts = [RemoteStore(server.address, b"key") for _ in range(2)]
        heard: list[list[list[tuple[object, int]]]] = [[], []]
        for front, notes in zip(fronts, heard, strict=True):
            front.on_commit(notes.append)
        try:
            match_id = uuid7()
            for seq, event in enumerate(events[:6]):
                appended = fronts[seq % 2].append_async(match_id, [draft(event)], seq).result(PATIENCE)
                for front, notes in zip(fronts, heard, strict=True):
                    front.catch_up()
                    assert notes[-1] == [(match_id, appended.last_seq)]
            with pytest.raises(ConcurrencyError) as refused:  # the owner's typed errors cross as they are
                fronts[0].append(match_id, [draft(events[6])], 2)
            assert refused.value.code == "store.concurrency"
            assert [r.seq for r in fronts[1].records()] == list(range(6))  # an iterator, through a handle
            assert fronts[0].tree_head() == store.tree_head()
        finally:
            for front in fronts:
                front.close()
            server.close()


def test_a_callbacks_own_calls_are_never_queued_behind_the_calls_waiting_for_it(tmp_path: Path):
    """Receipts of matches ending at once: each front call to `checkpoint` waits in the owner for the
    writer, which calls back the front's signer, which reads the latest checkpoint through the
    owner. With the owner's calls all taken by waiting checkpoints, the signer's read must still be
    answered (it once waited for a call of theirs to be free: the service hung)."""
    with Store(tmp_path / "log.duckdb") as store:
        server = StoreServer(store, str(tmp_path / "store.socket"), b"key", workers=2)
        front = RemoteStore(server.address, b"key")

        def sign(size: int, root: bytes) -> str:
            front.checkpoints(limit=1)  # as replay/proofs.py's signer asks
            return f"note {size} {root.hex()}"

        pool = concurrent.futures.ThreadPoolExecutor(6)
        try:
            signing = [pool.submit(front.checkpoint, sign) for _ in range(6)]
            done, _ = concurrent.futures.wait(signing, timeout=PATIENCE)
            assert len(done) == 6, "checkpoints waited for one another's signers"
            assert all(len(future.result()) == 4 for future in done)
        finally:
            front.close()  # (what still waits is answered store.closed)
            server.close()
            pool.shutdown()


def test_no_front_answers_with_what_an_acknowledged_append_moved_past(served: Served):
    """Each event appended, then the match read on a new connection (any front may take it): the
    row has the event and the state's ETag has moved, every time."""
    events = _porrinha(5)
    seats = [{"name": f"s{i}", "player": "random"} for i in range(3)]
    fresh = httpx.Limits(max_keepalive_connections=0)  # a new connection, so any front, each request
    with httpx.Client(base_url=served.url, headers=served.headers(), timeout=PATIENCE, limits=fresh) as client:
        match_id = client.post("/api/matches", json={"game": "porrinha", "seats": seats}).json()["match_id"]
        tag = client.get(f"/api/matches/{match_id}/state").headers["etag"]
        for seq, event in enumerate(events[1:25], start=1):
            body = {"expected_seq": seq, "events": [{"event": msgspec.to_builtins(event)}]}
            answer = client.post(f"/api/matches/{match_id}/events", json=body)
            assert answer.status_code == 200, answer.text
            assert client.get(f"/api/matches/{match_id}").json()["last_seq"] == seq
            state = client.get(f"/api/matches/{match_id}/state", headers={"if-none-match": tag})
            assert state.status_code == 200 and state.json()["seq"] == seq, state.text
            assert state.headers["etag"] != tag
            tag = state.headers["etag"]


def _record_until_killed(server: Served, victim: int, templates: list[list[Event]]) -> dict[str, list[bytes]]:
    """Post whole matches in bulk from 4 clients until `victim` is killed (after 8 acknowledged
    posts); returns every match acknowledged, with its events as sent."""
    acknowledged: dict[str, list[bytes]] = {}
    lock = threading.Lock()
    posted = threading.Semaphore(0)
    rng = random.Random(3)

    def client_loop(number: int) -> None:
        with httpx.Client(base_url=server.url, headers=server.headers(), timeout=PATIENCE) as client:
            while True:
                match_id, template = str(uuid7()), templates[(number + rng.randrange(99)) % len(templates)]
                payloads = [encode(e) for e in template]
                events = [
                    {"event_id": uuid7_text(), "at_us": 1_700_000_000_000_000 + i, "payload": p.decode()}
                    for i, p in enumerate(payloads)
                ]
                try:
                    answer = client.post(
                        "/api/batches", json=[{"match_id": match_id, "expected_seq": 0, "events": events}]
                    )
                except httpx.HTTPError:
                    return  # the service is gone
                if answer.status_code != 200:
                    return
                with lock:
                    acknowledged[match_id] = payloads
                posted.release()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        running = [pool.submit(client_loop, n) for n in range(4)]
        for _ in range(8):
            assert posted.acquire(timeout=PATIENCE), "the service acknowledged no posts"
        os.kill(victim, signal.SIGKILL)
        for future in running:
            future.result(timeout=PATIENCE)
    return acknowledged


def _holds(db: Path, acknowledged: dict[str, list[bytes]]) -> None:
    """Every acknowledged match is in the log as sent, and the chains and the tree verify."""
    with Store(db) as store:
        assert store.verify() == []
        assert store.verify_tree() == []
        for match_id, payloads in acknowledged.items():
            records = store.read(match_id)
            assert [encode(r.event) for r in records] == payloads


def test_the_owner_killed_mid_appends_loses_nothing_acknowledged_and_takes_its_fronts_with_it(tmp_path: Path):
    templates = [_porrinha(seed) for seed in range(4)]
    server = start_server(tmp_path / "log.duckdb", "--fronts", "2")
    try:
        fronts = _fronts_of(server)
        assert len(fronts) == 2
        acknowledged = _record_until_killed(server, server.process.pid, templates)
        server.process.wait(PATIENCE)
        wait_for(lambda: all(_gone(pid) for pid in fronts), "the fronts to die with their owner")
    finally:
        server.stop()
    assert len(acknowledged) >= 8
    _holds(tmp_path / "log.duckdb", acknowledged)


def test_a_front_that_dies_stops_the_service_with_everything_acknowledged_in_the_log(tmp_path: Path):
    templates = [_porrinha(seed) for seed in range(4)]
    server = start_server(tmp_path / "log.duckdb", "--fronts", "2")
    try:
        fronts = _fronts_of(server)
        acknowledged = _record_until_killed(server, fronts[0], templates)
        assert server.process.wait(PATIENCE) != 0  # it says it stopped for a front, not for a Ctrl-C
        said = server.process.stderr.read().decode()  # type: ignore[union-attr]
        assert "error[store.fronts]" in said, said
        assert all(_gone(pid) for pid in fronts)
    finally:
        server.stop()
    assert not (tmp_path / "log.duckdb.server").exists()
    _holds(tmp_path / "log.duckdb", acknowledged)


def test_a_clerk_decides_what_it_writes_itself_against_the_log_as_another_clerk_left_it(tmp_path: Path):
    """Undo, abandon and the owner's draw choose their own seq. Two fronts keep a judge each for one
    match (so do a service and a command on its file): one that kept a match's judge while the other
    wrote decides against the log as it is, never at the seq it last knew (the suite's command test
    once failed so: an abandon after an undo made on the other front, `store.concurrency`)."""
    from matchlog.engines import CHANCE
    from matchlog.replay import audit
    from matchlog.replay.clerk import Clerk
    from matchlog.replay.judge import Judge

    from .test_attack import started

    with Store(tmp_path / "log.duckdb") as store:
        one, other = Clerk(store), Clerk(store)
        match_id = uuid7()
        events = _porrinha(3)
        answer = next(seq for seq, event in enumerate(events) if event.actor is not None and event.actor >= 0)
        one.append(match_id, events[: answer + 1], 0)  # (one keeps the judge)
        other.undo(match_id, reason="appeal")  # written around it
        one.abandon(match_id, reason="what-if over")
        assert store.info(match_id).status == "abandoned" and store.info(match_id).last_seq == answer + 2

        one, other = Clerk(store, key=b"k" * 32), Clerk(store, key=b"k" * 32)
        match_id, _ = one.start(started("backgammon", 2), owner_chance=True)
        for _ in range(3):  # the owner's draws, each by a clerk that missed the other's last moves
            one.draw(match_id)[0].result()
            judge = Judge.of(store.read(match_id), seeds=[one.seed(match_id)], service_chance=True)
            moves = []
            while (turn := judge.engine.to_act(judge.state)) is not None and turn.seat != CHANCE:
                moves.append(judge.engine.legal(judge.state, turn.seat)[0])
                judge.take(moves[-1])
            other.submit(match_id, moves, judge.next_seq - len(moves))[0].result()
        (report,) = audit(store, [match_id])
        assert report.findings == [] and report.events == store.info(match_id).last_seq + 1 > 3 * 2
