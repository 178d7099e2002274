"""matchlog attacked as an adversary would (issue 18), one test per break, each failing on the code
before its fix: hidden values leaking to other seats, results printed before they were stored,
derived tables that lie, imports no referee could have recorded, Ctrl-C that lost a match, runaway
worker counts, and bad input that escaped as `error[internal]`.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.events import (
    Event,
    HandChosen,
    HandHidden,
    MatchEnded,
    MatchlogError,
    MatchStarted,
    Outcome,
    PenguinMoved,
    Seat,
    encode,
    uuid7,
)
from matchlog.referee import play_match
from matchlog.referee.porrinha import RandomPlayer as PorrinhaRandom
from matchlog.store import GENESIS, Store, chain_hash

from .conftest import PATIENCE, wait_for

runner = CliRunner()


def cli(*args: object, code: int | None = 0) -> tuple[str, str]:
    """Run a matchlog command; check its exit status (None: any) and return (stdout, stderr)."""
    result = runner.invoke(app, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (args, result.exit_code, result.stdout[-800:], result.stderr[-800:])
    return result.stdout, result.stderr


def ids(db: Path, game: str) -> list[str]:
    return [m["match_id"] for m in json.loads(cli("list", "--game", game, "--db", db, "--json")[0])]


# -- 1. hidden values leaked to other seats ------------------------------------------------------


def test_a_seat_cannot_tell_that_another_seats_drawn_tile_is_a_joker(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    cli("play", "davinci", "-p", "random", "-p", "random", "--jokers", "--games", "4", "--seed", "5", "-q", "--db", db)
    after_joker, after_number = set(), set()
    for match_id in ids(db, "davinci"):
        full = json.loads(cli("replay", match_id, "--db", db, "--json")[0])
        mine = json.loads(cli("replay", match_id, "--as-seat", "0", "--db", db, "--json")[0])
        for seq, step in enumerate(full[:-1]):
            event = step["event"]
            if step["type"] != "davinci.tile_drawn" or event["seat"] != 1:
                continue
            joker = event["tile"] in (24, 25)
            (after_joker if joker else after_number).add(mine[seq + 1]["type"])
            # Seat 0 sees nothing that names a joker of seat 1's...
            assert "joker" not in mine[seq]["text"] + mine[seq + 1]["text"], mine[seq : seq + 2]
            if not joker:
                continue
            # ...nor a decision only a joker asks for.
            shown = json.loads(cli("show", match_id, "--at", seq, "--as-seat", "0", "--db", db, "--json")[0])
            assert shown["to_act"] is None or shown["to_act"]["decision"] != "place_joker", shown["to_act"]
            assert "24" not in json.dumps(shown["state"]["pending"]) and "25" not in json.dumps(
                shown["state"]["pending"]
            )
    assert after_joker, "seat 1 drew no joker in these matches: the attack was not tried"
    # What follows a drawn joker is what follows any drawn tile: the steps do not tell them apart.
    assert after_joker <= after_number, (after_joker, after_number)


class FirstHand(PorrinhaRandom):
    """A Porrinha player whose first hand is `first` (99 is not a hand: lenient, it counts as 0)."""

    def __init__(self, first: int, rng: random.Random) -> None:
        super().__init__(rng)
        self.first: int | None = first

    def hand(self, table: Any) -> int:
        first, self.first = self.first, None
        return first if first is not None else super().hand(table)


def test_a_seat_cannot_tell_that_another_seats_hand_was_reset_to_0(tmp_path: Path):
    """Two worlds: seat 0 answers 99 (rejected, counted as 0) or a valid 0. Seat 1 must see the
    same until it has guessed."""
    db = tmp_path / "log.duckdb"
    with Store(db) as store:
        worlds = []
        for first in (99, 0):
            players = [
                FirstHand(first, random.Random(1)),
                PorrinhaRandom(random.Random(2)),
                PorrinhaRandom(random.Random(3)),
            ]
            seats = tuple(Seat(f"p{i}", "random") for i in range(3))
            worlds.append(play_match("porrinha", seats, players, store=store, seed=7).match_id)
    seen = []
    for match_id in worlds:
        lines = json.loads(cli("replay", match_id, "--as-seat", "1", "--db", db, "--json")[0])
        until = next(i for i, line in enumerate(lines) if line["type"] == "porrinha.guess_made" and line["actor"] == 1)
        seen.append([{k: v for k, v in line.items() if k != "at"} for line in lines[: until + 1]])
    full = json.loads(cli("replay", worlds[0], "--db", db, "--json")[0])
    assert any(step["type"] == "match.answer_rejected" for step in full), "the 99 was not rejected"
    assert seen[0] == seen[1]


# -- 2. results printed before they were stored; 5. Ctrl-C during play ----------------------------

MATCHLOG = [sys.executable, "-c", "from matchlog.cli import main; main()"]
UNBUFFERED = {**os.environ, "PYTHONUNBUFFERED": "1"}  # what a terminal shows: every line as it is printed


def play_command(game: str, db: Path) -> list[str]:
    players = ["-p", "random"] * (3 if game == "porrinha" else 2)
    return [*MATCHLOG, "play", game, *players, "--games", "1000000", "--seed", "3", "--db", str(db)]


def test_every_match_play_prints_is_in_the_log_whenever_it_is_killed(tmp_path: Path):
    rng = random.Random(18)
    for attempt in range(3):
        db = tmp_path / f"log{attempt}.duckdb"
        child = subprocess.Popen(
            play_command("porrinha", db), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=UNBUFFERED
        )
        try:
            # Some matches printed first (a fixed sleep raced the first durable batch on a busy
            # machine), then the kill at a random moment.
            first = [child.stdout.readline() for _ in range(6)]  # type: ignore[union-attr]
            assert all(line.startswith("match ") for line in first), first
            time.sleep(rng.uniform(0.0, 1.0))
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        printed = [*first, *child.stdout]  # type: ignore[union-attr]
        child.stdout.close()  # type: ignore[union-attr]
        with Store(db) as store:
            assert store.verify() == []
            for line in printed:
                info = store.match(line.split()[1])
                assert info.status == "finished", line


def test_ctrl_c_during_play_exits_130_and_ends_the_match_in_play_as_abandoned(tmp_path: Path):
    rng = random.Random(5)
    for attempt, game in enumerate(["backgammon", "porrinha", "davinci", "backgammon"]):
        db = tmp_path / f"log{attempt}.duckdb"
        child = subprocess.Popen(
            play_command(game, db), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=UNBUFFERED
        )
        first = child.stdout.readline()  # type: ignore[union-attr]
        time.sleep(rng.uniform(0.0, 0.6))
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=PATIENCE)
        assert child.returncode == 130, (game, child.returncode, err[-500:])
        assert err.startswith("error[interrupted]") and "Traceback" not in err and "bad_start" not in err, err
        with Store(db) as store:
            assert store.verify() == []
            assert store.matches(status="running", limit=None) == [], "the match in play was left running"
            assert len(store.matches(status="abandoned", limit=None)) <= 1
            for line in [first, *out.splitlines()]:
                assert store.match(line.split()[1]).status == "finished", line


# -- 6. tournament --jobs 300 ---------------------------------------------------------------------


def test_tournament_jobs_beyond_the_cores_are_refused_unless_forced(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    _, err = cli("tournament", "porrinha", "-p", "random", "-p", "random", "--jobs", "300", "--db", db, code=2)
    assert err.startswith("error[usage.jobs]") and "--force-jobs" in err
    assert not db.exists() or Store(db).count() == 0


def children(pid: int) -> set[int]:
    """The live (not zombie) processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_every_tournament_worker_ends_when_the_tournament_is_interrupted(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    jobs = 5  # beyond the cores of the test machine, forced
    command = [*MATCHLOG, "tournament", "porrinha", "-p", "random", "-p", "reasoner", "--games", "1000000"]
    child = subprocess.Popen(
        [*command, "--jobs", str(jobs), "--force-jobs", "-q", "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: set[int] = set()

    def started() -> bool:
        seen.update(children(child.pid))
        return len(seen) >= jobs or child.poll() is not None

    wait_for(started, f"{jobs} worker processes to start", every=0.1)
    assert len(seen) >= jobs, f"only {len(seen)} worker processes started"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=PATIENCE)
    assert child.returncode == 130, err[-500:]
    wait_for(lambda: not any(alive(pid) for pid in seen), "the worker processes to end with the tournament", every=0.1)
    with Store(db) as store:
        assert store.verify() == [] and store.matches(status="running", limit=None) == []


# -- 4. imports no referee could have recorded; 7. bad input as error[internal] -----------------


def forged(game: str, items: list[Any], *, at_us: int = 1_790_000_000_000_000) -> bytes:
    """A JSON Lines export of one match whose hash chain verifies: what an attacker who read
    store/chain.py writes. Each item is an Event (written canonically) or (tag, raw JSON text,
    actor, seat) written as given."""
    match_id, prev, out = str(uuid7()), GENESIS, []
    for seq, item in enumerate(items):
        if isinstance(item, Event):
            tag, payload, actor, seat = item.tag, encode(item).decode(), item.actor, getattr(item, "seat", None)
        else:
            tag, payload, actor, seat = item
        event_id = str(uuid7())
        digest = chain_hash(prev, match_id, seq, event_id, at_us, actor, game, tag, 1, seat, payload)
        envelope = json.dumps(
            {"match_id": match_id, "seq": seq, "event_id": event_id, "at_us": at_us, "actor": actor, "game": game,
             "type": tag, "version": 1, "seat": seat, "hash": digest.hex()},
            separators=(",", ":"),
        )  # fmt: skip
        out.append(envelope[:-1] + ',"event":' + payload + "}")
        prev = digest
    return ("\n".join(out) + "\n").encode()


def started(game: str, players: int, **options: Any) -> MatchStarted:
    return MatchStarted(game=game, options=options, seats=tuple(Seat(f"p{i}", "random") for i in range(players)))


def ended(players: int) -> MatchEnded:
    return MatchEnded(outcome=Outcome(places=tuple(range(1, players + 1)), winners=(0,)))


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A log holding a few good matches, for imports to try to spoil."""
    db = tmp_path / "log.duckdb"
    cli("play", "porrinha", "-p", "random", "-p", "random", "--games", "2", "--seed", "1", "-q", "--db", db)
    return db


NESTED = '{"type":"match.started","game":"porrinha","options":{"x":' + "[" * 100_000 + "]" * 100_000 + "}"
NESTED += ',"seats":[{"name":"a","player":"r"},{"name":"b","player":"r"}],"series":null,"origin":null}'
DUPLICATED = '{"type":"porrinha.guess_made","seat":0,"guess":99,"guess":1}'  # SQL reads 99, msgspec 1
BIG_FIELD = '{"type":"porrinha.hand_chosen","seat":0,"hand":1,"note":"' + "x" * 20_000_000 + '"}'

FORGERIES = {
    "a game matchlog does not know": (
        "chess",
        [started("chess", 2), ended(2)],
        "'chess' is not a game this matchlog knows",
    ),
    "a table the game cannot take": ("davinci", [started("davinci", 3005), ended(3005)], "cannot start"),
    # (The judge's one rule for seats, as every write path and the audit apply it.)
    "an outcome that places 2 of 3,005 seats": (
        "porrinha",
        [started("porrinha", 3005), ended(2)],
        "names places [1, 2], but the match has seats 0 to 3004 [match.no_such_seat]",
    ),
    "an event for seat 99": (
        "porrinha",
        [started("porrinha", 2), HandChosen(seat=99, hand=1)],
        "names seat 99, but the match has seats 0 to 1 [match.no_such_seat]",
    ),
    "a second start inside the match": (
        "porrinha",
        [started("porrinha", 2), started("porrinha", 2)],
        "a second match.started inside the match [audit.restarted]",
    ),
    "an event of another game": (
        "porrinha",
        [started("porrinha", 2), PenguinMoved(seat=0, source=(0, 0), target=(1, 1))],
        "is not an event of a Porrinha match [match.wrong_game]",
    ),
    "what only a view shows": ("porrinha", [started("porrinha", 2), HandHidden(seat=0)], "what a view shows"),
    "a duplicated key": (
        "porrinha",
        [started("porrinha", 2), ("porrinha.guess_made", DUPLICATED, 0, 0)],
        "not written the one way",
    ),
    "a 20 MB unknown field": (
        "porrinha",
        [started("porrinha", 2), ("porrinha.hand_chosen", BIG_FIELD, 0, 0)],
        "not written the one way",
    ),
    "a name with terminal escapes": (
        "porrinha",
        [MatchStarted(game="porrinha", options={}, seats=(Seat("\x1b[2J\x1b[31mX", "random"), Seat("b", "random")))],
        "control character (U+001B)",
    ),
    "deeply nested JSON": ("porrinha", [("match.started", NESTED, None, None)], "nested too deeply"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_an_import_of_what_no_referee_could_have_recorded_is_refused_naming_the_line(victim: Path, name: str):
    game, items, says = FORGERIES[name]
    path = victim.with_name("forged.jsonl")
    path.write_bytes(forged(game, items))
    with Store(victim) as store:
        before = store.count()
    _, err = cli("import", path, "--db", victim, code=2)
    assert err.startswith("error[store.import_rejected]: line ") and says in err, err[:300]
    with Store(victim) as store:
        assert store.count() == before and store.verify() == []


def test_an_import_at_a_time_past_year_9999_is_refused(victim: Path):
    path = victim.with_name("forged.jsonl")
    path.write_bytes(forged("porrinha", [started("porrinha", 2)], at_us=10**18))
    _, err = cli("import", path, "--db", victim, code=2)
    assert err.startswith("error[store.import_rejected]: line 1: at_us")


def test_an_import_of_3005_seats_the_game_can_take_keeps_stats_working(victim: Path):
    path = victim.with_name("forged.jsonl")
    # (Abandoned: the judge takes only the outcome the rules give, and no round was played.)
    abandoned = MatchEnded(outcome=Outcome(places=(1,) * 3005, winners=(), result="abandoned"))
    path.write_bytes(forged("porrinha", [started("porrinha", 3005), abandoned]))
    cli("import", path, "--db", victim)
    stats = json.loads(cli("stats", "--db", victim, "--json")[0])
    assert [(g["finished"], g["abandoned"]) for g in stats["games"]] == [(2, 1)]


def test_one_bad_match_already_in_a_log_never_breaks_a_command_about_the_others(victim: Path):
    """A log written before these checks (or by hand) may hold what no referee could record."""
    with Store(victim) as store:
        store.append(uuid7(), [started("chess", 2), ended(2)], 0)
        name = "\x1b[2J\x1b[31mmallory[/x]"
        odd = MatchStarted(game="porrinha", options={}, seats=(Seat(name, "random"), Seat("b", "random")))
        store.append(uuid7(), [odd, HandChosen(seat=0, hand=1)], 0)
    out, err = cli("stats", "--db", victim)
    assert "porrinha" in out and "chess" in err
    out, _ = cli("verify", "--deep", "--db", victim, code=1)
    assert "[derived.unreadable]" in out and "chess" in out
    out, err = cli("export", "--all", "--as-seat", "0", "--db", victim)
    assert out.count("\n") > 20 and "chess" in err
    for command in (["list"], ["replay", ids(victim, "porrinha")[0]], ["show", ids(victim, "porrinha")[0]], ["stats"]):
        out, err = cli(*command, "--db", victim, code=None)
        assert "\x1b" not in out + err, command
    out, _ = cli("list", "--db", victim)
    assert "\\x1b[2J" in out and "[/x]" in out


def test_every_screen_escapes_what_it_prints(victim: Path):
    out, _ = cli("sql", "SELECT '[/x]' AS a, chr(27) || '[2J' AS b", "--db", victim)
    assert "[/x]" in out and "\x1b" not in out and "\\x1b[2J" in out
    out, _ = cli("sql", "SELECT chr(27) || '[2J' AS b", "--csv", "--db", victim)
    assert "\x1b" not in out


def test_a_huge_list_limit_is_no_limit(victim: Path):
    out, _ = cli("list", "--limit", "99999999999999999999999", "--db", victim, "--json")
    assert len(json.loads(out)) == 2


def test_a_fish_sign_up_of_garbage_is_refused_without_a_traceback():
    from matchlog.referee.fish_remote import serve

    caught: list[BaseException] = []
    previous = threading.excepthook
    threading.excepthook = lambda hook: caught.append(hook.exc_value)  # type: ignore[assignment]
    refused: list[str] = []

    hung_up: list[bytes] = []
    senders: list[threading.Thread] = []

    def send(client: socket.socket, garbage: bytes) -> None:
        with client:
            client.sendall(garbage)
            client.settimeout(PATIENCE)
            try:
                hung_up.append(client.recv(10))  # the server refuses it and hangs up...
            except ConnectionResetError:
                hung_up.append(b"")  # ...with what it did not read still unread

    def send_garbage(host: str, bound: int) -> None:
        # Both connect before sign-ups open, so both are taken in however busy the machine is.
        for garbage in (b"1" * 5000, b"[" * 100_000):
            client = socket.create_connection((host, bound))
            senders.append(threading.Thread(target=send, args=(client, garbage), daemon=True))
            senders[-1].start()

    try:
        with pytest.raises(MatchlogError) as too_few:
            # Sign-ups stay open 2 s: reading each garbage takes milliseconds on a quiet machine.
            serve(
                port=0, min_players=2, wait=2, periods=1, name_timeout=5, on_listening=send_garbage,
                on_signup=lambda signed: refused.append(signed.refused),
            )  # fmt: skip
        for sender in senders:
            sender.join(PATIENCE)
    finally:
        threading.excepthook = previous
    assert too_few.value.code == "remote.too_few"
    assert caught == [] and len(refused) == 2 and all("read" in r or "JSON" in r for r in refused), refused
    assert hung_up == [b"", b""]


@pytest.mark.parametrize("garbage", [b"1" * 5000, b"[" * 100_000])
def test_client_fish_against_a_server_sending_garbage_says_so(garbage: bytes):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def answer() -> None:
            connection, _ = server.accept()
            with connection:
                connection.recv(100)  # the name
                connection.sendall(garbage)
                time.sleep(1)

        threading.Thread(target=answer, daemon=True).start()
        _, err = cli("client", "fish", "--name", "alice", "--port", port, "--timeout", "5", code=2)
    assert err.startswith("error[remote.") and "internal" not in err, err


# -- 3. derived tables that lie ------------------------------------------------------------------


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """A log with finished matches of two games, and one long match with cached snapshots."""
    db = tmp_path_factory.mktemp("derived") / "log.duckdb"
    cli(
        "play",
        "porrinha",
        "-p",
        "random",
        "-p",
        "random",
        "-p",
        "random",
        "--games",
        "3",
        "--seed",
        "2",
        "-q",
        "--db",
        db,
    )
    cli("play", "backgammon", "-p", "random", "-p", "random", "--seed", "4", "-q", "--db", db)
    cli("play", "porrinha", "-p", "random", "-p", "random", "--chopsticks", "9", "--seed", "3", "-q", "--db", db)
    long = ids(db, "porrinha")[0]
    with Store(db) as store:
        last = store.match(long).last_seq
        assert last > 256, "the long match is too short to cache a snapshot"
    cli("show", long, "--db", db)  # time travel caches its snapshots
    with Store(db) as store:
        assert store.query("SELECT count(*) FROM snapshots")[0][0] >= 1
    return db, long, last


FIRST = "WHERE match_id = (SELECT min(match_id) FROM matches)"
EDITS = {
    "matches.winners": f"UPDATE matches SET winners = [1] {FIRST}",
    "matches.result": f"UPDATE matches SET result = replace(result, '\"winners\":[', '\"winners\":[2,') {FIRST}",
    "matches.status": f"UPDATE matches SET status = 'abandoned' {FIRST}",
    "matches.players": f"UPDATE matches SET players = ['x', 'y', 'z'] {FIRST}",
    "seats (seat 0).place": f"UPDATE seats SET place = 9 {FIRST} AND seat = 0",
    "figures (": f"UPDATE figures SET value = value * 10 {FIRST}",
}


@pytest.mark.parametrize("column", sorted(EDITS))
def test_verify_deep_names_an_edited_row_of_every_derived_table(
    honest: tuple[Path, str, int], column: str, tmp_path: Path
):
    source, _, _ = honest
    db = tmp_path / "log.duckdb"
    db.write_bytes(source.read_bytes())
    with Store(db) as store:
        store.query(EDITS[column])
        edited = str(store.query("SELECT min(match_id) FROM matches")[0][0])
    cli("verify", "--db", db)  # the chains are whole...
    cli("audit", "--all", "--db", db)  # ...and every match followed the rules
    out, _ = cli("verify", "--deep", "--db", db, code=1)
    assert f"FAIL match {edited}" in out and f"{column}" in out, out
    assert cli("verify", "--deep", "--db", source)[0].startswith("ok:")


def test_a_snapshot_that_lies_is_never_trusted_and_verify_deep_names_it(honest: tuple[Path, str, int], tmp_path: Path):
    from matchlog.store.chain import snapshot_digest

    source, long, last = honest
    truth, _ = cli("show", long, "--at", last, "--json", "--db", source)
    for heavy in (False, True):
        db = tmp_path / f"log{heavy}.duckdb"
        db.write_bytes(source.read_bytes())
        with Store(db) as store:
            seq, state = store.query("SELECT seq, state FROM snapshots ORDER BY seq DESC LIMIT 1")[0]
            if heavy:  # garbage, with a digest recomputed as the attacker can
                head = store.query(f"SELECT hash FROM events WHERE match_id = '{long}' AND seq = {seq}")[0][0]
                garbage = bytes(range(256)) * 4
                store.query(
                    "UPDATE snapshots SET state = ?, digest = ? WHERE seq = ?",
                    [garbage, snapshot_digest(bytes(head), "porrinha:1", garbage), seq],
                )
            else:  # a byte changed
                store.query("UPDATE snapshots SET state = ? WHERE seq = ?", [bytes(state)[:-1] + b"\x00", seq])
        if heavy:
            out, _ = cli("verify", "--deep", "--db", db, code=1)
            assert "derived.snapshot" in out and "dropped" in out, out
            with Store(db) as store:  # put it back: time travel must not trust it either
                store.query(
                    "INSERT OR REPLACE INTO snapshots VALUES (?, ?, 'porrinha:1', ?, ?)",
                    [long, seq, garbage, snapshot_digest(bytes(head), "porrinha:1", garbage)],
                )
        shown, err = cli("show", long, "--at", last, "--json", "--db", db)
        assert shown == truth and "internal" not in err
