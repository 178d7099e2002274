"""The service against a real server on a loopback port: the API over HTTP (httpx), the CLI working
through the server while it owns the log, recording for a referee written as a plain HTTP client,
tokens, follow streams, and stopping cleanly."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import msgspec
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.engines import CHANCE
from matchlog.engines import get as get_engine
from matchlog.store import Store

from .conftest import Served, fill_log, start_server

runner = CliRunner()


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result.stdout


def test_the_api_is_described_by_its_openapi_document(served: Served):
    document = httpx.get(f"{served.url}/api/openapi.json").json()
    paths = set(document["paths"])
    for path in (
        "/api/matches",
        "/api/matches/{match_id}",
        "/api/matches/{match_id}/events",
        "/api/matches/{match_id}/state",
        "/api/matches/{match_id}/audit",
        "/api/matches/{match_id}/follow",
        "/api/verify",
        "/api/stats",
        "/api/sql",
        "/api/export",
        "/api/import",
        "/api/matches/{match_id}/undo",
        "/api/matches/{match_id}/abandon",
        "/api/matches/{match_id}/fork",
    ):
        assert path in paths, path


def test_every_command_works_through_the_server_while_it_owns_the_log(served: Served, tmp_path: Path):
    db = str(served.db)
    listed = json.loads(invoke("list", "--db", db, "--json", "--limit", "500"))
    assert {m["game"] for m in listed} >= {"porrinha", "backgammon", "davinci", "fish"}
    first = listed[-1]["match_id"]
    assert "seq" in invoke("show", first, "--db", db)
    assert invoke("replay", first, "--db", db, "--to", "3").count("\n") == 4
    assert invoke("verify", "--db", db).startswith("ok:")
    assert "no findings" in invoke("audit", "--all", "--db", db)
    assert json.loads(invoke("audit", first, "--seq", "2", "--db", db, "--json"))["seq"] == 2
    assert "win rates" in invoke("stats", "--db", db)
    assert json.loads(invoke("sql", "SELECT count(*) AS n FROM events", "--db", db, "--json"))[0]["n"] > 0
    exported = tmp_path / "one.jsonl"
    invoke("export", first, "-o", str(exported), "--db", db)
    assert exported.read_bytes().count(b"\n") == listed[-1]["events"]
    # Recording through the server: play, a fork, an undo and an abandon, and an import elsewhere.
    played = json.loads(invoke("play", "porrinha", "-p", "random", "-p", "random", "--seed", "8", "--db", db, "--json"))
    match_id = played["matches"][0]["match_id"]
    forked = json.loads(invoke("fork", match_id, "--at", "6", "--db", db, "--json"))["match_id"]
    assert json.loads(invoke("undo", forked, "--db", db, "--json"))["undone"]
    invoke("abandon", forked, "--reason", "what-if over", "--db", db)
    assert json.loads(invoke("list", "--db", db, "--json", "--status", "abandoned"))[0]["match_id"] == forked
    copy = tmp_path / "copy.duckdb"
    invoke("import", str(exported), "--db", str(copy))
    assert invoke("verify", "--db", str(copy)).startswith("ok: 1 match,")
    # The log holds it all, and nothing is busy.
    assert json.loads(invoke("verify", "--db", db, "--json"))["ok"]


def test_a_tournament_records_through_the_server_while_others_read(served: Served):
    db = str(served.db)
    reads: list[int] = []
    stop = threading.Event()

    def reader() -> None:
        with httpx.Client(base_url=served.url) as client:
            while not stop.is_set():
                reads.append(client.get("/api/matches", params={"limit": 5}).status_code)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        out = json.loads(
            invoke("tournament", "porrinha", "-p", "random", "-p", "reasoner", "--games", "40", "--db", db, "--json")
        )
    finally:
        stop.set()
        thread.join()
    assert out["finished"] == 40 and not out["findings"]
    assert reads and set(reads) == {200}


def _post(client: httpx.Client, path: str, body: object, token: str) -> httpx.Response:
    return client.post(path, content=msgspec.json.encode(body), headers={"Authorization": f"Bearer {token}"})


def test_a_referee_written_as_a_plain_http_client_records_a_backgammon_game_that_audits_clean(served: Served):
    """The referee knows the rules itself (here, it borrows the engine to choose legal moves) and
    sends JSON; the service draws the dice, judges every move, and ends the game."""
    engine = get_engine("backgammon")
    rng = random.Random(11)
    with httpx.Client(base_url=served.url) as client:
        seats = [{"name": "north", "player": "remote-bot"}, {"name": "south", "player": "remote-bot"}]
        created = _post(client, "/api/matches", {"game": "backgammon", "seats": seats}, served.admin)
        assert created.status_code == 201, created.text
        match_id = created.json()["match_id"]
        referee = created.json()["tokens"]["referee"]
        seq = created.json()["last_seq"] + 1
        ended = False
        for _ in range(5_000):
            state = get_engine("backgammon")
            position = client.get(f"/api/matches/{match_id}/state", headers={"Authorization": f"Bearer {referee}"})
            state = msgspec.convert(position.json()["state"], engine.spec.state)
            turn = engine.to_act(state)
            if turn is None:
                break
            if turn.seat == CHANCE:
                answer = _post(client, f"/api/matches/{match_id}/chance", {}, referee)
            else:
                move = rng.choice(engine.legal(state, turn.seat))
                body = {"expected_seq": seq, "events": [{"event": msgspec.to_builtins(move)}]}
                answer = _post(client, f"/api/matches/{match_id}/events", body, referee)
            assert answer.status_code in (200, 201), answer.text
            seq = answer.json()["last_seq"] + 1
            ended = answer.json()["ended"]
            if ended:
                break
        assert ended
        audit = client.get(f"/api/matches/{match_id}/audit", headers=served.headers()).json()
        assert audit["findings"] == [] and audit["checked"]["chance_rederived"] > 0
        info = client.get(f"/api/matches/{match_id}").json()
        assert info["status"] == "finished"


def test_the_rules_stale_seqs_and_resends_are_answered_with_their_codes(served: Served):
    engine = get_engine("porrinha")
    with httpx.Client(base_url=served.url) as client:
        seats = [{"name": "a", "player": "p"}, {"name": "b", "player": "p"}]
        created = _post(client, "/api/matches", {"game": "porrinha", "seats": seats}, served.admin).json()
        match_id, referee = created["match_id"], created["tokens"]["referee"]
        with matchlog.open(served.db) as log:
            state = engine.start(log.read(match_id)[0].event)
        hand = engine.legal(state, 0)[0]
        too_many = msgspec.structs.replace(hand, hand=9)
        body = {"expected_seq": 1, "events": [{"event": msgspec.to_builtins(too_many)}]}
        refused = _post(client, f"/api/matches/{match_id}/events", body, referee)
        assert refused.status_code == 422 and refused.json()["code"].startswith("porrinha.")
        good = {
            "expected_seq": 1,
            "events": [{"event": msgspec.to_builtins(hand), "event_id": str(matchlog.events.uuid7())}],
        }
        assert _post(client, f"/api/matches/{match_id}/events", good, referee).json()["written"] == 1
        resent = _post(client, f"/api/matches/{match_id}/events", good, referee)
        assert resent.status_code == 200 and resent.json()["written"] == 0
        stale = {"expected_seq": 1, "events": [{"event": msgspec.to_builtins(hand)}]}
        conflict = _post(client, f"/api/matches/{match_id}/events", stale, referee)
        assert conflict.status_code == 409 and conflict.json()["code"] == "store.concurrency"
        assert client.get(f"/api/matches/{match_id}").json()["last_seq"] == 1


def test_tokens_decide_who_sees_and_does_what(served: Served):
    with httpx.Client(base_url=served.url) as client:
        porrinha = client.get("/api/matches", params={"game": "porrinha", "status": "finished"}).json()[0]
        match_id = porrinha["match_id"]
        tokens = client.get(f"/api/matches/{match_id}/tokens", headers=served.headers()).json()
        assert client.get(f"/api/matches/{match_id}/tokens").status_code == 403
        assert client.post("/api/sql", json={"query": "SELECT 1"}).status_code == 403
        assert client.post(f"/api/matches/{match_id}/undo", json={}).status_code == 403
        assert client.get("/api/matches", headers={"Authorization": "Bearer forged"}).status_code == 401
        seat1 = {"Authorization": f"Bearer {tokens['seats'][1]}"}
        assert client.get(f"/api/matches/{match_id}/events", params={"as_seat": 0}, headers=seat1).status_code == 403
        mine = client.get(f"/api/matches/{match_id}/events", headers=seat1).json()
        assert {line["as_seat"] for line in mine} == {1}
        public = client.get(f"/api/matches/{match_id}/events").json()
        assert {line["as_seat"] for line in public} == {-1} and all(line["hash"] is None for line in public)
        assert client.get(f"/api/matches/{match_id}/events", headers=served.headers()).json()[0]["hash"]


def test_a_follow_stream_sends_each_event_once_and_resumes_after_last_event_id(served: Served):
    with httpx.Client(base_url=served.url, timeout=30) as client:
        match_id = client.get("/api/matches", params={"game": "fish"}).json()[0]["match_id"]
        last = client.get(f"/api/matches/{match_id}").json()["last_seq"]
        with client.stream(
            "GET", f"/api/matches/{match_id}/follow", headers={"Last-Event-ID": str(last - 3)}
        ) as stream:
            text = "".join(stream.iter_text())
    ids = [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]
    assert ids == [last - 2, last - 1, last]
    assert "event: end" in text


def test_the_server_stops_on_sigterm_and_ctrl_c_with_everything_acknowledged(tmp_path: Path):
    db = tmp_path / "stop.duckdb"
    for sig in (signal.SIGTERM, signal.SIGINT):
        server = start_server(db)
        log = matchlog.open(db)
        played = matchlog.referee.play_series("porrinha", ["random", "random"], games=2, seed=1, store=log)
        log.close()
        assert server.stop(sig) == 0
        assert not (tmp_path / "stop.duckdb.server").exists()
        with Store(db, read_only=True) as store:
            assert not store.verify()
            assert {m.match_id for m in played.matches} <= {m.match_id for m in store.matches()}


def test_a_log_you_may_not_write_is_read_read_only_and_a_mistyped_db_leaves_nothing(tmp_path: Path):
    db = tmp_path / "theirs.duckdb"
    fill_log(db)
    missing = tmp_path / "typo.duckdb"
    invoke("list", "--db", str(missing), code=2)
    assert not missing.exists()
    # A log this process may read but not write, in a folder it may not write either: root without
    # the capability that lets it write anything (util-linux's setpriv), with the file read-only.
    os.chmod(db, 0o444)
    os.chmod(tmp_path, 0o555)
    try:
        result = subprocess.run(
            [
                "setpriv",
                "--bounding-set=-dac_override,-dac_read_search",
                sys.executable,
                "-m",
                "matchlog.cli",
                "list",
                "--db",
                str(db),
                "--json",
            ],
            capture_output=True,
            check=False,
        )
    finally:
        os.chmod(tmp_path, 0o755)
    assert result.returncode == 0, result.stderr.decode()
    assert len(json.loads(result.stdout)) == 9


def test_the_service_and_its_client_turn_nagle_off():
    """With Nagle's algorithm on, each answer's body waited for the client's delayed ACK of its head
    (~40 ms a request on loopback; a POST's body likewise for the server's): the listening socket
    says it is TCP, which is what lets asyncio set TCP_NODELAY on every connection it accepts, and
    the client's transport sets it on its own."""
    import socket

    from matchlog.server import ServerLog
    from matchlog.service.run import _bind

    listening = _bind("127.0.0.1", 0)
    try:
        assert listening.proto == socket.IPPROTO_TCP
    finally:
        listening.close()
    client = ServerLog("http://127.0.0.1:9")
    try:
        pool = client._http._transport._pool  # httpx's own transport, as configured
        assert (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1) in pool._socket_options
    finally:
        client.close()
