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
import time
from pathlib import Path

import httpx
import msgspec
import pytest
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.engines import CHANCE
from matchlog.engines import get as get_engine
from matchlog.store import Store

from .conftest import PATIENCE, Served, fill_log, start_server

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


def test_a_1000_match_tournament_records_through_the_server_while_everyone_else_reads(tmp_path: Path):
    """The issue's "done": with `matchlog serve --db X` running, a 1,000-match tournament records
    through it while `matchlog list --db X`, GET /api/matches and a follow stream of a running
    match all answer; its log verifies and audits clean."""
    from matchlog.events import encode
    from matchlog.referee import MemoryRecorder, make_player, play_match, seats_from_specs

    db = tmp_path / "tournament.duckdb"
    server = start_server(db)
    seats = seats_from_specs("porrinha", ["random", "random"])
    recorder = MemoryRecorder()
    play_match(
        "porrinha", seats, [make_player("porrinha", "random", random.Random(i)) for i in range(2)], recorder=recorder
    )
    moves = [d.event for d in recorder.drafts][1:-1]  # a match to play live, but not to its end
    seen: list[int] = []
    try:
        with httpx.Client(base_url=server.url, headers=server.headers(), timeout=60) as client:
            body = {"game": "porrinha", "seats": [{"name": s.name, "player": s.player} for s in seats]}
            match_id = client.post("/api/matches", json=body).json()["match_id"]

            def follow() -> None:
                url = f"{server.url}/api/matches/{match_id}/follow"
                with httpx.Client(timeout=60) as anyone, anyone.stream("GET", url) as stream:
                    for line in stream.iter_lines():
                        if line.startswith("id: "):
                            seen.append(int(line[4:]))
                        if line.startswith("event: end"):
                            return

            follower = threading.Thread(target=follow)
            follower.start()
            command = [sys.executable, "-m", "matchlog.cli", "tournament", "porrinha", "-p", "random", "-p", "reasoner"]
            tournament = subprocess.Popen(
                [*command, "--games", "1000", "--db", str(db), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            listed = played = 0
            while tournament.poll() is None:
                answer = subprocess.run(
                    [sys.executable, "-m", "matchlog.cli", "list", "--db", str(db), "--json", "--limit", "3"],
                    capture_output=True,
                    check=False,
                )
                assert answer.returncode == 0, answer.stderr.decode()
                assert client.get("/api/matches", params={"limit": 3}).status_code == 200
                listed += 1
                if played < len(moves):  # the running match goes on, one answer at a time
                    event = {"event": msgspec.json.decode(encode(moves[played]))}
                    step = client.post(
                        f"/api/matches/{match_id}/events", json={"expected_seq": played + 1, "events": [event]}
                    )
                    assert step.status_code == 200, step.text
                    played += 1
            out, err = tournament.communicate()
            assert tournament.returncode == 0, err.decode()
            result = json.loads(out)
            assert result["finished"] == 1000 and not result["findings"] and not result["failures"]
            assert listed >= 2, "the tournament ended before anyone read: nothing was tested"
            client.post(f"/api/matches/{match_id}/abandon", json={"reason": "the test is over"})
            follower.join(PATIENCE)
            assert not follower.is_alive(), "the follower did not see the match end"
            assert seen == list(range(played + 2))  # its start, every answer played live, its end
        assert invoke("verify", "--db", str(db)).startswith("ok: 1001 matches")
        assert "no findings" in invoke("audit", "--all", "--db", str(db))
    finally:
        assert server.stop() == 0


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
        log = matchlog.open(db, write=True)  # a served log is read-only unless asked
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


# -- errors answered with their codes, not a 500 -------------------------------------------------


def _error(answer: httpx.Response) -> tuple[int, str]:
    body = answer.json()
    assert body["status"] == answer.status_code and body["message"], body
    return answer.status_code, body["code"]


def test_bad_requests_get_their_codes_before_anything_is_written_or_streamed(served: Served):
    """Each of these was a 500 (or a stream broken after its 200) found by schemathesis or review."""
    with httpx.Client(base_url=served.url, headers=served.headers(), timeout=30) as client:
        davinci = client.get("/api/matches", params={"game": "davinci", "limit": 1}).json()[0]
        before = client.get("/api/health").json()["events"]
        # A tournament's batch whose payload is not an event, or whose time no log can hold.
        bad = [{"match_id": str(matchlog.events.uuid7()), "expected_seq": 0, "events": []}]
        bad[0]["events"] = [{"event_id": str(matchlog.events.uuid7()), "at_us": 0, "payload": ""}]
        assert _error(client.post("/api/batches", json=bad)) == (400, "store.bad_event")
        bad[0]["events"][0].update(at_us=2**61, payload='{"type":"match.started","game":"porrinha"}')
        assert _error(client.post("/api/batches", json=bad)) == (400, "usage.request")
        assert client.get("/api/health").json()["events"] == before
        # A follow stream or an export of a seat the match does not have, or a seat's view as Parquet.
        match_id = davinci["match_id"]
        assert _error(client.get(f"/api/matches/{match_id}/follow", params={"as_seat": 7})) == (400, "usage.seat")
        exported = client.get("/api/export", params={"match": match_id, "as_seat": 7})
        assert _error(exported) == (400, "usage.seat")
        parquet = client.get("/api/export", params={"format": "parquet", "as_seat": -1})
        assert _error(parquet) == (400, "usage.export")
        # A time with an offset that moves it before year 1 is before every match.
        since = client.get("/api/matches", params={"since": "0001-01-01T00:30:00+01:00", "limit": 3})
        assert since.status_code == 200 and len(since.json()) == 3
        # SQL values JSON has no form for as they come (a map keyed by booleans).
        answer = client.post("/api/sql", json={"query": "SELECT MAP {true: 1} AS m, '\\x01'::BLOB AS b"})
        assert answer.status_code == 200 and answer.json()["rows"] == [[{"True": 1}, "01"]]


def test_a_time_with_an_offset_reads_as_the_same_moment_in_utc(monkeypatch: pytest.MonkeyPatch):
    from datetime import UTC, datetime, timedelta, timezone

    from matchlog.service.app import _utc

    monkeypatch.setenv("TZ", "Asia/Tokyo")  # the server's own zone plays no part
    time.tzset()
    try:
        moment = datetime(2026, 11, 1, 12, 0, tzinfo=timezone(timedelta(hours=-5)))
        assert _utc(moment) == datetime(2026, 11, 1, 17, 0)
        assert _utc(datetime(2026, 11, 1, 12, 0)) == datetime(2026, 11, 1, 12, 0)  # no zone: UTC already
        assert _utc(datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5)))) == datetime.max
        assert _utc(datetime(2026, 1, 1, tzinfo=UTC)) == datetime(2026, 1, 1)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_an_asyncio_server_on_our_socket_turns_nagle_off():
    """With Nagle's algorithm on, a small response's body waited ~40 ms behind its headers."""
    import asyncio
    import concurrent.futures
    import socket

    from matchlog.service.run import _bind

    async def accept_one() -> int:
        sock = _bind("127.0.0.1", 0)
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            option = writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            accepted.set_result(option)
            writer.close()

        server = await asyncio.start_server(connected, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            option = await asyncio.wait_for(accepted, 10)
            writer.close()
        return option

    # A loop of its own in a thread of its own: the session's Chromium (Playwright's sync API)
    # keeps one running in this thread once a test has opened it.
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        assert thread.submit(asyncio.run, accept_one()).result() != 0


def _start(client: httpx.Client, served: Served, game: str = "porrinha") -> tuple[str, str]:
    seats = [{"name": "a", "player": "p"}, {"name": "b", "player": "p"}]
    created = _post(client, "/api/matches", {"game": game, "seats": seats}, served.admin).json()
    return created["match_id"], created["tokens"]["referee"]


def test_a_refused_first_batch_leaves_the_match_id_free_to_start_again(served: Served):
    from matchlog.events import HandChosen, MatchStarted, Seat, uuid7

    started = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "p"), Seat("b", "p")))
    match_id = uuid7()
    with httpx.Client(base_url=served.url) as client:
        for hand, status in ((9, 422), (1, 200)):
            events = [{"event": msgspec.to_builtins(e)} for e in (started, HandChosen(seat=0, hand=hand))]
            answer = _post(
                client, f"/api/matches/{match_id}/events", {"expected_seq": 0, "events": events}, served.admin
            )
            assert answer.status_code == status, answer.text
        assert answer.json()["written"] == 2
        assert client.get(f"/api/matches/{match_id}").json()["last_seq"] == 1


def test_a_referee_appends_after_the_match_was_written_another_way(served: Served):
    """The service's live state of a match follows writes it did not judge (an admin's batch)."""
    from matchlog.events import GuessMade, HandChosen, encode, uuid7_text

    with httpx.Client(base_url=served.url) as client:
        match_id, referee = _start(client, served)
        hand = {"expected_seq": 1, "events": [{"event": msgspec.to_builtins(HandChosen(seat=0, hand=1))}]}
        assert _post(client, f"/api/matches/{match_id}/events", hand, referee).status_code == 200
        other = HandChosen(seat=1, hand=0)
        batch = [
            {
                "match_id": match_id,
                "expected_seq": 2,
                "events": [{"event_id": uuid7_text(), "at_us": 1, "payload": encode(other).decode()}],
            }
        ]
        assert _post(client, "/api/batches", batch, served.admin).status_code == 200
        guess = {"expected_seq": 3, "events": [{"event": msgspec.to_builtins(GuessMade(seat=0, guess=2))}]}
        answer = _post(client, f"/api/matches/{match_id}/events", guess, referee)
        assert answer.status_code == 200, answer.text
        stale = {"expected_seq": 3, "events": [{"event": msgspec.to_builtins(GuessMade(seat=1, guess=1))}]}
        assert _error(_post(client, f"/api/matches/{match_id}/events", stale, referee)) == (409, "store.concurrency")


def test_clients_that_go_away_mid_stream_do_not_keep_the_server_from_stopping(filled_log: Path, tmp_path: Path):
    from .conftest import serve_copy

    server = serve_copy(filled_log, tmp_path)
    try:
        with httpx.Client(base_url=server.url, headers=server.headers(), timeout=30) as client:
            match_id, _ = _start(client, server)
            for _ in range(3):
                with client.stream("GET", "/api/export") as export:
                    assert next(export.iter_raw())
                with client.stream("GET", f"/api/matches/{match_id}/follow") as follow:
                    assert next(follow.iter_lines()).startswith("id: 0")
    finally:
        assert server.stop() == 0


def test_a_refused_batch_leaves_the_live_judge_as_it_was_undo_and_all():
    """The live judge keeps no copy of a long match for each batch; a refused batch, with or
    without an undo in it, still leaves the state exactly as before, and the next batch is judged."""
    from matchlog.events import ActionsUndone, GuessMade, HandChosen, MatchStarted, Seat
    from matchlog.replay.judge import Judge

    started = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "p"), Seat("b", "p")))
    judge = Judge(started)
    assert not judge.take_all([HandChosen(seat=0, hand=1)])
    before = judge.state
    for refused in (
        [HandChosen(seat=1, hand=2), GuessMade(seat=0, guess=9)],
        [ActionsUndone(seqs=(1,), reason="x"), HandChosen(seat=1, hand=7)],
    ):
        assert judge.take_all(refused)
        assert judge.state == before and judge.next_seq == 2
    assert not judge.take_all([ActionsUndone(seqs=(1,), reason="appeal"), HandChosen(seat=0, hand=0)])
    assert judge.state.hands == (0, None) and judge.next_seq == 4


def _bad_matches(db: Path) -> list[str]:
    """Matches no referee could have recorded, written into the log directly (not through the judge,
    which refuses them; the store itself refuses a table of no seats): a Porrinha table of one seat,
    and a game this matchlog does not know."""
    from matchlog.events import HandChosen, MatchEnded, MatchStarted, Outcome, Seat, uuid7

    bad = [uuid7(), uuid7()]
    with Store(db) as store:
        solo = MatchStarted(game="porrinha", options={}, seats=(Seat("solo", "x"),))
        store.append(bad[0], [solo, HandChosen(seat=0, hand=1)], 0)
        chess = MatchStarted(game="chess", options={}, seats=(Seat("a", "x"), Seat("b", "x")))
        store.append(bad[1], [chess, MatchEnded(outcome=Outcome(places=(1, 2), winners=(0,)))], 0)
    return [str(match_id) for match_id in bad]


def test_one_bad_match_never_costs_a_reader_the_others_through_the_service(filled_log: Path, tmp_path: Path):
    """Issue 22, item 7: after one bad match, a seat's export was cut off mid-stream (and the CLI
    said `remote.unreachable`). Every reading across matches skips it and names it."""
    db = tmp_path / "bad.duckdb"
    db.write_bytes(filled_log.read_bytes())
    bad = _bad_matches(db)
    server = start_server(db)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            good = [m["match_id"] for m in client.get("/api/matches", params={"limit": 10_000}).json()]
            assert set(bad) <= set(good), "the catalogue lists every match, bad ones too"
            good = [m for m in good if m not in bad]
            for headers in ({}, server.headers()):
                exported = client.get("/api/export", params={"as_seat": -1}, headers=headers)
                assert exported.status_code == 200, exported.text[:300]
                lines = [json.loads(line) for line in exported.text.splitlines()]
                assert {line["match_id"] for line in lines if "match_id" in line} == set(good)
                assert {line["skipped"]["match_id"] for line in lines if "skipped" in line} == set(bad)
                audits = client.get("/api/audit", headers=headers)
                assert audits.status_code == 200, audits.text[:300]
                reports = {report["match_id"]: report for report in audits.json()}
                assert set(reports) == set(good) | set(bad)
                assert all(reports[m]["findings"] for m in bad)
                stats = client.get("/api/stats", headers=headers)
                assert stats.status_code == 200, stats.text[:300]
                assert any(bad[1] in skip for skip in stats.json()["skipped"]), stats.json()["skipped"]
                for kind in ("results", "seats"):
                    assert client.get(f"/api/frames/{kind}", headers=headers).status_code == 200
        # The CLI through the server: every good match written, each bad one named, exit 0.
        result = runner.invoke(app, ["export", "--all", "--as-seat", "-1", "--server", server.url])
        assert result.exit_code == 0, result.stderr
        assert {json.loads(line)["match_id"] for line in result.stdout.splitlines()} == set(good)
        assert all(f"match {m} left out" in result.stderr for m in bad), result.stderr
    finally:
        server.stop()
