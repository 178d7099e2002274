"""A player sees only what the protocol gives it: players that try to read the log's folder (the log,
its WAL, DB.token, DB.server, the proof key), another process's memory or environment (the referee's,
the other player's), to open the log for writing, to reach a service on 127.0.0.1, or to see other
processes, find nothing in the default mode, as a program and as a Python class, and play exactly as
an honest player plays. Unconfined (`--unconfined`, asked for aloud) the same attacks work, and the
match records that its players were unconfined; a machine that cannot confine refuses, saying why."""

from __future__ import annotations

import os
import random
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from matchlog.events import PlayerRemoved, Seat, UsageError
from matchlog.referee import Limits, play_match, sandbox, seats_from_specs
from matchlog.referee.players import make_player
from matchlog.replay import audit_records
from matchlog.store import Store

HONEST = '''
import random


class Honest:
    """A random Porrinha player: a random hand, a random valid guess."""

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def hand(self, table):
        return self.rng.randint(0, table.chopsticks(table.index))

    def guess(self, table):
        return self.rng.choice([g for g in range(table.chopstick_count + 1) if table.valid_guess(g)])
'''

#: Every attack, as a function that lists what worked; the same text is a class and a program.
PROBES = """
import json, os, socket, sys

LOG = LOG_PATH
REFEREE = REFEREE_PID
REFEREE_COMMAND = REFEREE_CMDLINE
OTHERS = OTHER_PIDS
PORT = SERVICE_PORT


def _read_memory(pid):
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            span, mode = line.split()[:2]
            if mode.startswith("r"):
                start = int(span.split("-")[0], 16)
                with open(f"/proc/{pid}/mem", "rb") as memory:
                    memory.seek(start)
                    return len(memory.read(16)) > 0
    return False


def probes():
    found = []
    for suffix in ("", ".wal", ".token", ".server", ".key"):
        try:
            with open(LOG + suffix, "rb") as stolen:
                stolen.read(16)
            found.append("read " + os.path.basename(LOG + suffix))
        except OSError:
            pass
    try:  # the folder may be there, holding the player's own file, but none of the log's
        if names := [name for name in os.listdir(os.path.dirname(LOG)) if name.startswith("log.duckdb")]:
            found.append(f"listed the log's folder ({len(names)} of the log's files)")
    except OSError:
        pass
    for suffix in ("", ".wal"):
        try:
            with open(LOG + suffix, "r+b"):
                found.append("opened " + os.path.basename(LOG + suffix) + " for writing")
        except OSError:
            pass
    for who, pid in [("the referee", REFEREE)] + [("the other player", p) for p in OTHERS]:
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if environ.read(16):
                    found.append(f"read the environment of {who}")
        except OSError:
            pass
        try:
            if _read_memory(pid):
                found.append(f"read the memory of {who}")
        except (OSError, ValueError):
            pass
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=5).close()
        found.append("reached the service on 127.0.0.1")
    except OSError:
        pass
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as text:
                    command = text.read()
            except OSError:
                continue
            if command == REFEREE_COMMAND:
                found.append("saw the referee in /proc")
            elif b"honest.py" in command:
                found.append("saw the other player in /proc")
    return sorted(set(found))


class Prober(Honest):
    \"\"\"An honest player that tries every attack first, and gives up saying what worked, if any did.\"\"\"

    def begin_game(self, table):
        found = probes()
        if found:
            raise RuntimeError("; ".join(found))


def program(probe):
    \"\"\"The same as a program: hand 0, the smallest valid guess; or {"error": what worked}.\"\"\"
    for line in sys.stdin:
        message = json.loads(line)
        answer = None
        if message["call"] == "begin_game" and probe and (found := probes()):
            answer = {"error": "; ".join(found)}
        elif message["call"] == "hand":
            answer = 0
        elif message["call"] == "guess":
            said = set(message["table"]["guesses"])
            answer = next(g for g in range(message["table"]["chopstick_count"] + 1) if g not in said)
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    program("--probe" in sys.argv)
"""


@pytest.fixture
def service() -> Iterator[int]:
    """A service on 127.0.0.1 (it only listens: a connection that reaches it is the attack)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener.getsockname()[1]


@pytest.fixture
def log_folder(tmp_path: Path) -> Path:
    """A log's folder as a served, signing log has it: the log, its token, server note and key."""
    folder = tmp_path / "logs"
    folder.mkdir()
    log = folder / "log.duckdb"
    with Store(log):
        pass
    for suffix, text in ((".token", "admin-token"), (".server", "http://127.0.0.1:1"), (".key", "private key")):
        Path(f"{log}{suffix}").write_text(text)
        os.chmod(f"{log}{suffix}", 0o600)
    return folder


def _pids_of(marker: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if str(marker).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _attack(
    tmp_path: Path,
    log_folder: Path,
    port: int,
    kind: str,
    limits: Limits,
    *,
    probe: bool = True,
    beside: bool = False,
) -> tuple[list[PlayerRemoved], tuple[int, ...], tuple[Seat, ...]]:
    """Play a Porrinha match in the log's folder's log: the prober (or, not `probe`, the same
    player without its probes) at seat 0 against an honest child player; its removals, places, seats.
    `beside`: the prober's file lies in the log's folder, the referee's folder, named relatively."""
    players = tmp_path / "players"
    players.mkdir(exist_ok=True)
    honest = players / "honest.py"
    honest.write_text(HONEST)
    log = log_folder / "log.duckdb"
    with Store(log) as store:
        other = make_player("porrinha", f"{honest}:Honest", random.Random(2), limits=limits)
        with other:  # type: ignore[attr-defined]
            source = HONEST + PROBES.replace("LOG_PATH", repr(str(log))).replace(
                "REFEREE_PID", str(os.getpid())
            ).replace("REFEREE_CMDLINE", repr(Path(f"/proc/{os.getpid()}/cmdline").read_bytes())).replace(
                "OTHER_PIDS", repr(_pids_of(honest))
            ).replace("SERVICE_PORT", str(port))
            prober = (log_folder if beside else players) / "prober.py"
            prober.write_text(source)
            named = "prober.py" if beside else str(prober)
            if kind == "class":
                spec = f"{named}:{'Prober' if probe else 'Honest'}"
            else:
                spec = f"cmd:{sys.executable} {named}" + (" --probe" if probe else "")
            seats = seats_from_specs("porrinha", [spec, f"{honest}:Honest"], limits=limits)
            me = make_player("porrinha", seats[0].player, random.Random(1), limits=limits)
            with me:  # type: ignore[attr-defined]
                result = play_match("porrinha", seats, [me, other], seed=9, store=store)
        records = list(store.records([result.match_id]))
        assert store.verify() == []
    assert audit_records(records).passed
    removals = [r.event for r in records if isinstance(r.event, PlayerRemoved)]
    return removals, result.outcome.places, result.seats


@pytest.mark.parametrize("kind", ["class", "program"])
def test_a_confined_player_reaches_nothing_and_plays_as_an_honest_one(
    tmp_path: Path, log_folder: Path, service: int, kind: str
):
    removals, places, seats = _attack(tmp_path, log_folder, service, kind, Limits())
    assert removals == [], removals[0].reason
    _, honest_places, _ = _attack(tmp_path, log_folder, service, kind, Limits(), probe=False)
    assert places == honest_places
    assert not any(seat.unconfined for seat in seats)
    assert sorted(p.name for p in log_folder.iterdir()) == [
        "log.duckdb",
        "log.duckdb.key",
        "log.duckdb.server",
        "log.duckdb.token",
    ]


@pytest.mark.parametrize("kind", ["class", "program"])
def test_a_confined_player_beside_the_log_in_the_referees_folder_sees_only_its_own_file(
    tmp_path: Path, log_folder: Path, service: int, kind: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(log_folder)
    removals, _, _ = _attack(tmp_path, log_folder, service, kind, Limits(), beside=True)
    assert removals == [], removals[0].reason


@pytest.mark.parametrize("kind", ["class", "program"])
def test_unconfined_the_same_attacks_work_and_the_match_says_so(
    tmp_path: Path, log_folder: Path, service: int, kind: str
):
    removals, _, seats = _attack(tmp_path, log_folder, service, kind, Limits(unconfined=True))
    assert [r.seat for r in removals] == [0]
    reason = removals[0].reason
    for worked in ("read log.duckdb", "read log.duckdb.token", "opened log.duckdb for writing", "listed"):
        assert worked in reason, reason
    assert [seat.unconfined for seat in seats] == [True, True]


def test_a_machine_that_cannot_confine_refuses_and_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from typer.testing import CliRunner

    from matchlog.cli import app

    honest = tmp_path / "honest.py"
    honest.write_text(HONEST)
    cannot = sandbox.Confinement(root=False, pids_cgroup=None, kill_cgroup=None, jail=None, why_not="no bwrap here")
    monkeypatch.setattr(sandbox, "confinement", lambda: cannot)
    with pytest.raises(UsageError) as refused:
        seats_from_specs("porrinha", ["random", f"{honest}:Honest"])
    assert refused.value.code == "usage.confinement" and "no bwrap here" in refused.value.message
    assert "--unconfined" in refused.value.message
    db = tmp_path / "log.duckdb"
    result = CliRunner().invoke(app, ["play", "porrinha", "-p", "random", "-p", f"{honest}:Honest", "--db", str(db)])
    assert result.exit_code != 0 and "error[usage.confinement]" in result.output and "no bwrap here" in result.output
    # Built-in players need no confinement: they are matchlog's own code.
    result = CliRunner().invoke(app, ["play", "porrinha", "-p", "random", "-p", "reasoner", "--db", str(db)])
    assert result.exit_code == 0, result.output
    # Said aloud, the match is played unconfined and records it.
    args = ["play", "porrinha", "-p", "random", "-p", f"me={honest}:Honest", "--db", str(db), "--unconfined"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "unconfined" in result.output
    with Store(db) as store:
        newest = store.matches(limit=1)[0]
        started = next(iter(store.records([newest.match_id]))).event
    assert [(s.name, s.unconfined) for s in started.seats] == [("random", False), ("me", True)]


def test_the_confinement_probe_says_why_bwrap_cannot_run(tmp_path: Path):
    missing = sandbox.find_jail(str(tmp_path / "no-bwrap"))
    assert missing[0] is None and "not installed" in missing[1] and "scripts/system-packages" in missing[1]
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    found = sandbox.find_jail(str(broken))
    assert found[0] is None and "No permissions to create a new namespace" in found[1]
    assert sandbox.confinement().jail is not None, sandbox.confinement().why_not  # this machine confines


def test_a_confined_player_sees_every_package_of_matchlog():
    import importlib.util
    import tomllib

    from matchlog.referee.jail import jail_argv

    declared = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["tool"]["setuptools"]
    run = {"python": {"spec": "matchlog.referee.players:RandomPlayer", "args": {}}}
    argv = jail_argv("/usr/bin/bwrap", run, None)
    shown = {argv[i + 2] for i, word in enumerate(argv) if word == "--ro-bind"}
    for name in declared["packages"]:  # every package, the ones added after the jail was written too
        folders = importlib.util.find_spec(name).submodule_search_locations
        assert any(folder in shown or any(folder.startswith(f"{s}/") for s in shown) for folder in folders), name


def test_a_confined_program_has_no_descriptor_but_its_pipes_and_runs_where_the_referee_does(tmp_path: Path):
    import time

    script = tmp_path / "look.sh"
    script.write_text("read line\necho $(ls /proc/self/fd) $(pwd) $(ls /proc | grep -c '^[0-9]')\n")
    child = sandbox.Child({"exec": ["/bin/sh", str(script)]}, Limits())
    try:
        seen = child.exchange(b"look\n", time.monotonic() + 60).decode().split()
    finally:
        child.close()
    # 0, 1, 2 and ls's own; the referee's folder; only the sandbox's few processes (its init, sh and the pipe).
    assert seen[:4] == ["0", "1", "2", "3"] and seen[4] == os.getcwd() and int(seen[5]) <= 8, seen


def test_a_match_resumed_with_unconfined_players_records_which(tmp_path: Path):
    from uuid import UUID

    from matchlog.events import HandChosen, MatchResumed, encode
    from matchlog.referee import play_series, resume_match
    from matchlog.replay import fork

    def after_hands(match_id: UUID, since: int = 0) -> UUID:
        """A copy of the match cut after the first round's hands past seq `since` (in play: an
        ended match's last hands were shown, and no undo takes that back)."""
        records = store.read(match_id)
        cut = next(
            r.seq
            for r in records[since + 2 :]
            if isinstance(r.event, HandChosen) and isinstance(records[r.seq - 1].event, HandChosen)
        )
        return fork(store, match_id, cut)

    honest = tmp_path / "honest.py"
    honest.write_text(HONEST)
    with Store(":memory:") as store:
        source = play_series("porrinha", ["random", "random"], seed=1, store=store).matches[0].match_id
        first = after_hands(source)
        specs = ["random", f"{honest}:Honest"]
        resume_match(store, first, specs, seed=2, limits=Limits(unconfined=True))
        resumed_at = next(r.seq for r in store.read(first) if isinstance(r.event, MatchResumed))
        match_id = after_hands(first, resumed_at)  # (its first resume copied with it)
        resume_match(store, match_id, specs, seed=3)
        resumed = [r.event for r in store.read(match_id) if isinstance(r.event, MatchResumed)]
    assert [event.unconfined for event in resumed] == [(1,), ()]
    assert b"unconfined" not in encode(resumed[1])  # none: the event's bytes are as before


def test_a_class_of_a_package_sees_its_package_and_nothing_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "mybots"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "book.txt").write_text("2\n")
    (tmp_path / "secret.txt").write_text("the log's neighbour\n")
    (package / "bot.py").write_text(
        HONEST
        + """
from pathlib import Path


class Booked(Honest):
    def begin_game(self, table):
        if Path(__file__).with_name("book.txt").read_text() != "2\\n":
            raise RuntimeError("its own package's file is missing")
        if Path(__file__).parents[1].joinpath("secret.txt").exists():
            raise RuntimeError("it sees the file beside its package")
"""
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    seats = seats_from_specs("porrinha", ["mybots.bot:Booked", "random"])
    with make_player("porrinha", seats[0].player, random.Random(1)) as me:  # type: ignore[attr-defined]
        result = play_match("porrinha", seats, [me, make_player("porrinha", "random", random.Random(2))], seed=3)
    assert result.outcome.removed == ()


#: A player of a plugin's game that uses the game's own package: its built-in player, and its rules
#: from the registry (which must know the game inside the sandbox as outside).
_PERUDO_PLAYER = """
from pathlib import Path

from matchlog.engines import get
from perudo.players import Counter


class Studied(Counter):
    def act(self, decision):
        if get("perudo").spec.name != "perudo":
            raise RuntimeError("the registry does not know perudo")
        if Path(__file__).parents[1].joinpath("dev", "secret.txt").exists():
            raise RuntimeError("it sees the file beside the game's package")
        return super().act(decision)
"""


def test_a_confined_player_of_a_plugin_game_installed_outside_site_packages_imports_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from matchlog.events import plugins

    # Dudo's package under another name, with its metadata in a folder on the path and not in a
    # site-packages (as `pip install --target` or a development install leaves a game).
    dev = tmp_path / "dev"
    source = Path(__file__).parents[1] / "examples" / "dudo" / "dudo"
    (dev / "perudo").mkdir(parents=True)
    for file in source.iterdir():
        if file.suffix in (".py", ".js"):
            (dev / "perudo" / file.name).write_text(file.read_text().replace("dudo", "perudo"))
    metadata = dev / "matchlog_perudo-0.1.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: matchlog-perudo\nVersion: 0.1\n")
    (metadata / "entry_points.txt").write_text("[matchlog.games]\nperudo = perudo.game:GAME\n")
    (dev / "secret.txt").write_text("beside the game, not its own\n")
    players = tmp_path / "players"
    players.mkdir()
    (players / "studied.py").write_text(_PERUDO_PLAYER)
    monkeypatch.syspath_prepend(str(dev))
    plugins.reload()
    try:
        seats = seats_from_specs("perudo", [f"{players / 'studied.py'}:Studied", "counter"])
        with make_player("perudo", seats[0].player, random.Random(1)) as me:  # type: ignore[attr-defined]
            others = make_player("perudo", "counter", random.Random(2))
            with Store(":memory:") as store:
                result = play_match("perudo", seats, [me, others], seed=3, store=store)
                records = list(store.read(result.match_id))
        assert result.outcome.removed == ()
        played = [r.event for r in records if r.event.tag in ("perudo.bid_made", "perudo.doubted")]
        assert any(event.seat == 0 for event in played)  # it played, not only its opponent
        assert audit_records(records).findings == []
    finally:
        monkeypatch.undo()
        plugins.reload()
