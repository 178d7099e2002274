"""What matchlog guarantees, each held by a test here (or named in the README's "What matchlog
guarantees"): a kill loses nothing acknowledged and half-imports nothing; every single change made
to stored rows with SQL is found at its match and seq; bad input of every kind ends in a clear
error or a recorded ruling, never a traceback, a hang or a changed log."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.main import get_command
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.events import MatchlogError, PlayerRemoved, Seat
from matchlog.referee import make_player, play_match, play_series
from matchlog.replay import abandon, audit, audit_records
from matchlog.store import Store

from .conftest import wait_for
from .test_cli import EVERY_COMMAND

runner = CliRunner()


# -- crashes ---------------------------------------------------------------------------------

RECORDER = """
import random, sys
from matchlog.referee import make_player, play_match, seats_from_specs
from matchlog.store import Store

GAMES = [("porrinha", ["random"] * 3), ("backgammon", ["random"] * 2), ("davinci", ["random"] * 2),
         ("fish", ["random"] * 3)]
store = Store(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
while True:
    game, specs = GAMES[rng.randrange(len(GAMES))]
    seats = seats_from_specs(game, specs)
    players = [make_player(game, s.player, random.Random(rng.random())) for s in seats]
    result = play_match(game, seats, players, store=store, seed=rng.randrange(2**63))  # returns once durable
    print("ack", result.match_id, result.recorder.next_seq - 1, flush=True)
"""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_recording_killed_at_a_random_moment_loses_nothing_acknowledged(tmp_path: Path, seed: int):
    path = tmp_path / "log.duckdb"
    recorder = subprocess.Popen(
        [sys.executable, "-c", RECORDER, str(path), str(seed)], stdout=subprocess.PIPE, text=True
    )
    acknowledged: dict[str, int] = {}
    try:
        first = recorder.stdout.readline()  # type: ignore[union-attr]
        assert first.startswith("ack"), first
        time.sleep(random.Random(seed).uniform(0.2, 1.5))
        os.kill(recorder.pid, signal.SIGKILL)
        for line in [first, *recorder.stdout]:  # type: ignore[union-attr]
            _, match_id, last = line.split()
            acknowledged[match_id] = int(last)
    finally:
        recorder.kill()
        recorder.wait()
        recorder.stdout.close()  # type: ignore[union-attr]
    with Store(path) as store:
        assert store.verify() == []
        assert store.verify_tree() == [], "every event committed has its leaf in the Merkle tree"
        for match_id, last in acknowledged.items():
            info = store.match(match_id)
            assert (info.status, info.last_seq) == ("finished", last), "every acknowledged match is whole"
        assert [r.findings for r in audit(store, [store.resolve(m) for m in acknowledged])] == [[]] * len(acknowledged)
        # What was being played when the kill came is reported as running, and can be closed.
        running = [m.match_id for m in store.matches(status="running", limit=None)]
        for match_id in running:
            abandon(store, match_id, reason="the recorder was killed")
        assert store.matches(status="running", limit=None) == [] and store.verify() == []
        reports = list(audit(store, running))
        assert all(r.findings == [] and "the match has not ended" not in r.notes for r in reports)


#: `matchlog tournament` as the CLI runs it, saying on stdout how many matches have ended in the log
#: each time the writer commits a batch (once that call returns, a kill cannot take them back).
TOURNAMENT = """
from matchlog.cli import main
from matchlog.store import Store

commit = Store.append_bulk_encoded
ended = 0


def append_bulk_encoded(self, batches):
    global ended
    batches = list(batches)
    appended = commit(self, batches)
    ended += sum(p.startswith(b'{"type":"match.ended"') for _, events, _ in batches for *_, p in events)
    print("ended", ended, flush=True)
    return appended


Store.append_bulk_encoded = append_bulk_encoded
main()
"""


def test_a_tournament_killed_mid_flight_keeps_what_it_finished_and_the_rest_can_be_closed(tmp_path: Path):
    db = str(tmp_path / "log.duckdb")
    command = [
        sys.executable,
        "-c",
        TOURNAMENT,
        "tournament",
        "porrinha",
        "-p",
        "random",
        "-p",
        "reasoner",
        "--games",
        "1000000",
        "--jobs",
        "2",
        "--seed",
        "3",
        "-q",
        "--db",
        db,
    ]
    tournament = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        # The workers start and play, and the writer commits batches: the kill comes once more than
        # ten matches have ended in the log, however long a busy machine takes to get there.
        for line in tournament.stdout:  # type: ignore[union-attr]
            if int(line.split()[1]) > 10:
                break
    finally:
        os.kill(tournament.pid, signal.SIGKILL)
        tournament.wait()
        tournament.stdout.close()  # type: ignore[union-attr]

    def opened() -> Store | None:
        try:
            return Store(db)
        except MatchlogError:
            return None

    # The workers notice their writer is gone and stop; the file is free once they have.
    with wait_for(opened, "the log to be free after the tournament was killed", every=0.2) as store:
        assert store.verify() == [] and store.verify_tree() == []
        finished = store.matches(status="finished", limit=None)
        assert len(finished) > 10
        assert all(r.findings == [] for r in audit(store, [m.match_id for m in finished]))
    result = runner.invoke(app, ["abandon", "--all-running", "--db", db, "--reason", "killed"])
    assert result.exit_code == 0, result.stdout + result.stderr
    with Store(db) as store:
        assert store.matches(status="running", limit=None) == [] and store.verify() == []


IMPORTER = """
import sys
from matchlog.store import Store
with Store(sys.argv[1]) as store, open(sys.argv[2], "rb") as lines:
    store.import_jsonl(lines)
print("imported", flush=True)
"""


@pytest.fixture(scope="module")
def big_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A JSON Lines export of about 60,000 events."""
    folder = tmp_path_factory.mktemp("import")
    with Store(folder / "source.duckdb") as store:
        play_series("porrinha", ["random"] * 5, games=60, seed=1, store=store)
        templates = [store.read(m.match_id) for m in store.matches(limit=None)]
        from matchlog.events import uuid7

        copies = []
        while sum(len(c[1]) for c in copies) < 60_000:
            records = templates[len(copies) % len(templates)]
            copies.append((uuid7(), [r.event for r in records], 0))
        store.append_bulk(copies)
        path = folder / "all.jsonl"
        with path.open("wb") as out:
            count = store.export_jsonl(out)
    return path, count


@pytest.mark.parametrize("after", [0.4, 0.9, 1.6])
def test_an_import_killed_at_any_moment_leaves_all_of_it_or_nothing(
    tmp_path: Path, big_export: tuple[Path, int], after: float
):
    export, count = big_export
    target = tmp_path / "target.duckdb"
    importer = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, str(target), str(export)], stdout=subprocess.PIPE, text=True
    )
    time.sleep(after)
    os.kill(importer.pid, signal.SIGKILL)
    importer.wait()
    importer.stdout.close()  # type: ignore[union-attr]
    if not target.exists():
        return  # killed before it even created the file: nothing at all
    with Store(target) as store:
        assert store.count() in (0, count), "nothing half-imported"
        assert store.verify() == []


# -- tampering ---------------------------------------------------------------------------------

KINDS = ("payload byte", "seq", "hash", "timestamp", "deletion", "insertion", "swap")


def tamper(
    store: Store, kind: str, match_id: Any, row: tuple[Any, ...], after: tuple[Any, ...] | None, rng: random.Random
) -> Callable[[], None]:
    """Make one change to the row (of the match) with plain SQL; returns what puts it back."""
    seq, event_id, payload, digest, at = row
    where = "WHERE match_id = ? AND event_id = ?"
    key = [match_id, event_id]

    def run(sql: str, params: list[Any]) -> None:
        store.query(sql, params)

    if kind == "payload byte":
        k = rng.randrange(len(payload))
        changed = payload[:k] + ("x" if payload[k] != "x" else "y") + payload[k + 1 :]
        run(f"UPDATE events SET payload = ? {where}", [changed, *key])
        return lambda: run(f"UPDATE events SET payload = ? {where}", [payload, *key])
    if kind == "seq":
        run(f"UPDATE events SET seq = seq + 1000 {where}", key)
        return lambda: run(f"UPDATE events SET seq = ? {where}", [seq, *key])
    if kind == "hash":
        run(f"UPDATE events SET hash = ? {where}", [hashlib.sha256(os.urandom(8)).digest(), *key])
        return lambda: run(f"UPDATE events SET hash = ? {where}", [digest, *key])
    if kind == "timestamp":
        run(f"UPDATE events SET recorded_at = recorded_at + INTERVAL 1 MICROSECOND {where}", key)
        return lambda: run(f"UPDATE events SET recorded_at = ? {where}", [at, *key])
    if kind == "deletion":
        saved = store.query(f"SELECT * FROM events {where}", key)
        run(f"DELETE FROM events {where}", key)
        values = ", ".join("?" for _ in saved[0])
        return lambda: run(f"INSERT INTO events VALUES ({values})", list(saved[0]))
    if kind == "insertion":  # a stored row, copied in again (under an id of its own)
        run(f"INSERT INTO events SELECT * REPLACE (uuid() AS event_id) FROM events {where}", key)
        return lambda: run(
            "DELETE FROM events WHERE match_id = ? AND seq = ? AND event_id <> ?", [match_id, seq, event_id]
        )
    assert kind == "swap" and after is not None
    run(f"UPDATE events SET seq = ? {where}", [after[0], *key])
    run(f"UPDATE events SET seq = ? {where}", [seq, match_id, after[1]])

    def back() -> None:
        run(f"UPDATE events SET seq = ? {where}", [seq, *key])
        run(f"UPDATE events SET seq = ? {where}", [after[0], match_id, after[1]])

    return back


def test_every_single_change_to_stored_rows_is_found_at_its_match_and_seq(
    tmp_path: Path, report: Callable[[str], None]
):
    rng = random.Random(7)
    with Store(tmp_path / "log.duckdb") as store:
        for game, specs in (
            ("porrinha", ["random"] * 3),
            ("davinci", ["random"] * 2),
            ("fish", ["random"] * 2),
            ("backgammon", ["random"] * 2),
        ):
            play_series(game, specs, games=1, seed=5, store=store)
        total = found = 0
        missed: list[tuple[str, str, int]] = []
        for info in store.matches(limit=None):
            rows = store.query(
                "SELECT seq, event_id, payload, hash, recorded_at FROM events WHERE match_id = ? ORDER BY seq",
                [info.match_id],
            )
            # Every row of a short match; of a long one (backgammon), 60 rows at random and the ends.
            picked = sorted({0, len(rows) - 1, *rng.sample(range(len(rows)), min(60, len(rows)))})
            for index in picked:
                row = rows[index]
                after = rows[index + 1] if index + 1 < len(rows) else None
                for kind in KINDS:
                    if kind == "swap" and after is None:
                        continue
                    restore = tamper(store, kind, info.match_id, row, after, rng)
                    findings = store.verify()
                    restore()
                    total += 1
                    seqs = [f.seq for f in findings if f.seq is not None]
                    if (
                        findings
                        and {f.match_id for f in findings} == {info.match_id}
                        and min(seqs, default=-1) == row[0]
                    ):
                        found += 1
                    else:
                        missed.append((info.game, kind, row[0]))
        assert store.verify() == [], "every change was put back"
    report(f"tamper matrix: {found:,}/{total:,} single changes to stored rows found at their match and seq")
    assert found == total, missed[:10]


# -- bad input of every kind -------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    folder = tmp_path_factory.mktemp("fuzz")
    with Store(folder / "source.duckdb") as store:
        play_series("porrinha", ["random"] * 3, games=2, seed=1, store=store)
        play_series("fish", ["random"] * 2, games=1, seed=1, store=store)
        path = folder / "all.jsonl"
        with path.open("wb") as out:
            store.export_jsonl(out)
    return folder, path.read_bytes()


#: Changes an attacker makes to one event, then hashing the chain again (store/chain.py is public):
#: only the checks past the chain can refuse them. (text to find, its replacement)
FORGERIES = [
    ('"options":{', '"options":{"deep":' + "[" * 50_000 + "]" * 50_000 + ","),  # nested too deeply
    ('"at_us":', '"at_us":1000000000000000000'),  # after year 9999 (the digits that follow stay)
    ('"type":"porrinha.guess_made","seat":0,"guess":', '"type":"porrinha.guess_made","seat":0,"guess":99,"guess":'),
    ('"type":"porrinha.hand_chosen","seat":0,', '"type":"porrinha.hand_chosen","seat":0,"note":"x",'),
    ('"type":"porrinha.hand_chosen","seat":0,', '"type":"porrinha.hand_chosen","seat":99,'),
    ('"game":"porrinha"', '"game":"chess"'),
    ('"name":"random"', '"name":"\\u001b[2J"'),
    ('"type":"porrinha.hand_chosen","seat":1,"hand":', '"type":"porrinha.hand_hidden","seat":1,"x":'),
    ('"places":[', '"places":[1,'),
]


def rechained(data: bytes) -> bytes:
    """Every hash of a JSON Lines export computed again from its lines, the actor and seat columns
    taken from each event as the store takes them: what an attacker who edits a file then does."""
    from matchlog.events import decode
    from matchlog.store import GENESIS, chain_hash

    heads: dict[str, bytes] = {}
    lines = []
    for line in data.decode(errors="replace").splitlines():
        if ',"event":' not in line:
            lines.append(line)
            continue
        at = line.index(',"event":')
        envelope, payload = json.loads(line[:at] + "}"), line[at + 9 : -1]
        try:
            event = decode(payload.encode())
            envelope["actor"], envelope["seat"] = event.actor, getattr(event, "seat", None)
        except Exception:  # what does not decode keeps its columns
            pass
        match_id = envelope["match_id"]
        digest = chain_hash(
            heads.get(match_id, GENESIS), match_id, envelope["seq"], envelope["event_id"], envelope["at_us"],
            envelope["actor"], envelope["game"], envelope["type"], envelope["version"], envelope["seat"], payload,
        )  # fmt: skip
        heads[match_id] = digest
        envelope["hash"] = digest.hex()
        lines.append(json.dumps(envelope, separators=(",", ":"))[:-1] + ',"event":' + payload + "}")
    return ("\n".join(lines) + "\n").encode()


MUTATIONS = st.one_of(
    st.tuples(st.just("forged"), st.sampled_from(FORGERIES)),
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("byte"), st.floats(0, 1), st.binary(min_size=1, max_size=4)),
    st.tuples(st.just("invalid utf-8"), st.floats(0, 1)),
    st.tuples(
        st.just("replace"),
        st.sampled_from(['"seq":', '"type":', '"porrinha.', '"hash":"', '"seat":', '"hand":', '"version":']),
        st.sampled_from(
            [
                '"seq":"1",',
                '"type":"chess.moved",',
                '"chess.',
                '"hash":"00',
                '"seat":99999999999999999999,',
                '"hand":1e400,',
                '"version":7,',
            ]
        ),
    ),
    st.tuples(st.just("drop line"), st.floats(0, 1)),
    st.tuples(st.just("swap lines"), st.floats(0, 1)),
)


def mutate(data: bytes, mutation: tuple[Any, ...]) -> bytes:
    kind = mutation[0]
    if kind == "forged":
        find, replace = mutation[1]
        return rechained(data.replace(find.encode(), replace.encode(), 1 if find != '"game":"porrinha"' else -1))
    lines = data.split(b"\n")
    if kind == "truncate":
        return data[: int(len(data) * mutation[1])]
    if kind == "byte":
        at = int((len(data) - 1) * mutation[1])
        return data[:at] + mutation[2] + data[at + 1 :]
    if kind == "invalid utf-8":
        at = int((len(data) - 1) * mutation[1])
        return data[:at] + b"\xff\xfe" + data[at:]
    if kind == "replace":
        return data.replace(mutation[1].encode(), mutation[2].encode(), 1)
    at = int((len(lines) - 2) * mutation[1])
    if kind == "drop line":
        return b"\n".join(lines[:at] + lines[at + 1 :])
    lines[at], lines[at + 1] = lines[at + 1], lines[at]
    return b"\n".join(lines)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mutation=MUTATIONS)
@example(mutation=("forged", FORGERIES[0]))
@example(mutation=("forged", FORGERIES[1]))
@example(mutation=("forged", FORGERIES[2]))
@example(mutation=("forged", FORGERIES[3]))
@example(mutation=("forged", FORGERIES[4]))
@example(mutation=("forged", FORGERIES[5]))
@example(mutation=("forged", FORGERIES[6]))
@example(mutation=("forged", FORGERIES[7]))
@example(mutation=("forged", FORGERIES[8]))
def test_a_damaged_import_file_is_refused_whole_with_a_clear_error(
    exported: tuple[Path, bytes], mutation: tuple[Any, ...]
):
    folder, data = exported
    damaged = mutate(data, mutation)
    path = folder / "damaged.jsonl"
    path.write_bytes(damaged)
    target = folder / "target.duckdb"
    target.unlink(missing_ok=True)
    with Store(target) as store:  # a log that already holds a match of its own
        play_series("porrinha", ["random"] * 2, games=1, seed=9, store=store)
        before = store.count()
    result = runner.invoke(app, ["import", str(path), "--db", str(target)])
    assert result.exit_code in (0, 2) and "Traceback" not in result.stdout + result.stderr
    if mutation[0] == "forged":  # each forgery is one no referee could have recorded
        assert result.exit_code == 2 and result.stderr.startswith("error[store.import_rejected]: line "), result.stderr
    with Store(target) as store:
        assert store.verify() == []
        if result.exit_code == 2:
            assert result.stderr.startswith("error[") and store.count() == before, "refused whole"
        else:
            assert store.count() >= before, "a harmless change (whitespace, a blank line) imports"


def _command_names() -> list[str]:
    """Every command of `matchlog` by its full name (`play porrinha`, `list`, ...)."""
    names: list[str] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        if path:
            names.append(" ".join(path))
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, (*path, name))

    walk(get_command(app), ())
    return names


#: Commands that serve until they are stopped: the fuzzer gives them only lines that end (its examples).
SERVING = {"serve", "client"}
COMMAND_WORDS = sorted({word for name in _command_names() for word in name.split()} - SERVING)
WORDS = st.sampled_from(
    [
        *COMMAND_WORDS,
        "play",
        "porrinha",
        "fish",
        "backgammon",
        "davinci",
        "list",
        "show",
        "replay",
        "export",
        "verify",
        "audit",
        "stats",
        "sql",
        "schema",
        "games",
        "undo",
        "fork",
        "import",
        "abandon",
        "tournament",
        "-p",
        "random",
        "--games",
        "--at",
        "--seq",
        "--as-seat",
        "--json",
        "--csv",
        "--all",
        "--by",
        "--since",
        "--format",
        "--limit",
        "--rows",
        "--holes",
        "--timeout",
        "-1",
        "0",
        "3",
        "99999999999999999999",
        "99999999999999999999999",
        "nan",
        "",
        "x",
        "SELECT 1",
        "DROP TABLE events",
        "--plot",
        "/nonexistent/dir/out.png",
        "\u00ff\u0000",
        "--reason",
        "--option",
        "a=b",
        "key",
        "checkpoint",
        "receipt",
        "prove",
        "check",
        "--against",
        "--key",
        "--latest",
    ]
)


_EXAMPLES: list[list[str]] = [
    ["list", "--limit", "99999999999999999999999"],
    ["serve", "--port", "99999"],
    ["serve", "fish", "--rows", "0"],
    ["client", "fish", "--port", "0"],
    ["duel", "porrinha", "-p", "random", "-p", "random", "--pairs", "1"],
    ["duel-report", "x"],
    ["ratings", "porrinha", "--json"],
    ["dataset", "-o", "/nonexistent/dir"],
    ["play", "porrinha", "-p", "random", "-p", "random", "--chopsticks", "100000"],
    ["sql", "SELECT '[/x]'"],
    ["tournament", "porrinha", "-p", "random", "-p", "random", "--games", "3", "--jobs", "300"],
    ["analyse", "ffff", "--jobs", "0"],
    ["annotate", "x", "a comment", "--seq", "99999999999999999999"],
    ["annotations", "x", "--json"],
    ["resume", "x", "-p", "random"],
    ["archive", "--to", "/nonexistent/dir", "--before", "x"],
    ["key", "--json"],
    ["checkpoint", "--latest"],
    ["receipt", "x"],
    ["prove", "x", "--seq", "-1"],
    ["check", "/nonexistent/dir/proof.json"],
]


def _each_example(test: Any) -> Any:
    """The test with every line of `_EXAMPLES` among its examples."""
    for words in reversed(_EXAMPLES):
        test = example(words=words)(test)
    return test


@pytest.fixture(scope="module")
def fuzz_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "log.duckdb"
    with Store(path) as store:
        play_series("porrinha", ["random"] * 3, games=2, seed=1, store=store)
    return path


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(words=st.lists(WORDS, min_size=1, max_size=6))
@_each_example
def test_any_command_line_ends_in_a_result_or_a_clear_error(fuzz_log: Path, words: list[str]):
    with Store(fuzz_log) as store:
        before = (store.count(), store.verify())
    result = runner.invoke(app, [*words, "--db", str(fuzz_log)])
    output = result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2), (words, result.exit_code, output[-500:], result.exception)
    assert "Traceback" not in output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if result.exit_code == 2:
        with Store(fuzz_log) as store:
            assert (store.count(), store.verify()) == before, "a refused command changes nothing"


def test_the_command_line_fuzzer_tries_every_command():
    tried = set(COMMAND_WORDS) | {word for example in _EXAMPLES for word in example}
    assert all(set(name.split()) <= tried for name in _command_names())
    # (By name too: a command missing from the app would pass the line above.)
    assert set(EVERY_COMMAND) <= tried, set(EVERY_COMMAND) - tried


class Saboteur:
    """Any game's player: some answers come from a real player, the rest are garbage, exceptions,
    hangs past the timeout, or answers printed to stdout instead of returned."""

    def __init__(self, game: str, choices: list[int], seed: int) -> None:
        self.real = make_player(game, "random", random.Random(seed))
        self.choices = iter(choices)

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith("__"):
            raise AttributeError(method)
        real = getattr(self.real, method, None)

        def answer(*args: Any) -> Any:
            choice = next(self.choices, 0)
            if choice == 0:
                return real(*args) if callable(real) else None
            if choice == 1:
                raise RuntimeError("sabotage")
            if choice == 2:
                time.sleep(0.3)  # past the 0.05 s timeout
                return None
            if choice == 3:
                print(real(*args) if callable(real) else "hello", flush=True)  # said, not answered
                return None
            return GARBAGE[choice % len(GARBAGE)]

        return answer


GARBAGE = [
    None,
    "two",
    -1,
    10**100,
    -(10**40),
    float("nan"),
    float("inf"),
    True,
    [1, [2, [3]]],
    {"a": 1},
    (0, None),
    "x" * 100_000,
    b"\xff",
    object(),
    [[0, 0], [0, 0]],
    (99, 99),
    [1.5, 2],
]


@pytest.mark.parametrize("game", ["porrinha", "backgammon", "davinci", "fish"])
@settings(max_examples=12, deadline=None)
@given(choices=st.lists(st.integers(0, 4 + len(GARBAGE)), max_size=40), seed=st.integers(0, 1000))
def test_a_player_answering_anything_gets_a_ruling_and_the_match_ends_recorded(
    game: str, choices: list[int], seed: int
):
    seats = [
        Seat("saboteur", "Saboteur"),
        *(Seat(f"r{i}", "random") for i in range(1, 3 if game != "backgammon" else 2)),
    ]
    players = [
        Saboteur(game, choices, seed),
        *(make_player(game, "random", random.Random(seed + i)) for i in range(1, len(seats))),
    ]
    from matchlog.referee import MemoryRecorder

    recorder = MemoryRecorder()
    result = play_match(game, seats, players, recorder=recorder, timeout=0.05, seed=seed)
    assert result.outcome is not None
    removals = [d.event for d in recorder.drafts if isinstance(d.event, PlayerRemoved)]
    assert all(r.seat == 0 for r in removals), "only the saboteur is ever removed"
    records = recorder.records(result.match_id)
    assert audit_records(records).findings == [], "every ruling is the rules' own"


# -- the Fish server's sign-ups and a Fish client, sent anything ----------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
SENT = st.one_of(
    st.binary(max_size=400),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    st.sampled_from(["start", "playing-as", "setup", "take-turn", "end"]).flatmap(
        lambda name: JSON_VALUES.map(lambda args: json.dumps([name, [args]]).encode())
    ),
)


@settings(max_examples=40, deadline=None)
@given(sent=SENT)
@example(sent=b"1" * 5000)
@example(sent=b"[" * 100_000)
@example(sent=b'"alice"')
def test_a_fish_sign_up_of_anything_is_taken_or_refused_with_a_reason(sent: bytes):
    """The server's sign-up reader (one thread per connection) given any bytes: a sign-up taken or
    refused with its reason, never an exception (a thread's traceback on the server)."""
    import socket

    from matchlog.referee.fish_remote import NAME, Channel, _Lobby

    signed: list[Any] = []
    lobby = _Lobby(4, 0.5, signed.append)
    client, server = socket.socketpair()
    with client, server:
        client.sendall(sent)
        client.shutdown(socket.SHUT_WR)
        lobby._read_name(Channel(server), "fuzz")  # here, not on a thread: an exception fails the test
    assert len(signed) == 1
    assert signed[0].refused or NAME.fullmatch(signed[0].name), signed[0]


@settings(max_examples=25, deadline=None)
@given(sent=SENT)
@example(sent=b"1" * 5000)
@example(sent=b"[" * 100_000)
def test_a_fish_client_against_a_server_sending_anything_ends_in_a_result_or_a_remote_error(sent: bytes):
    import socket
    import threading

    from matchlog.events import RemoteError
    from matchlog.referee.fish_remote import play_remote

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def server() -> None:
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(5)
                connection.recv(64)  # the name
                connection.sendall(sent)

        thread = threading.Thread(target=server, daemon=True)
        thread.start()
        try:
            play_remote(make_player("fish", "random", random.Random(1)), "alice", port=port, timeout=2)
            code = "played"
        except RemoteError as error:
            code = error.code
        thread.join(5)
    assert code == "played" or code.startswith("remote."), code
