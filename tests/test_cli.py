"""The matchlog command, through typer's runner: every command, its --json, and its errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.main import get_command
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.cli.base import MAX_SEAT
from matchlog.engines import get as get_engine
from matchlog.engines import parse_options
from matchlog.engines.contract import MAX_SEATS
from matchlog.engines.porrinha import CLOSED_HAND
from matchlog.events import MatchStarted, Seat, UsageError, uuid7
from matchlog.store import Store

runner = CliRunner()


def invoke(*args: str, code: int = 0) -> tuple[str, str]:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result.stdout, result.stderr


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "matches.duckdb")


@pytest.fixture
def played(db: str) -> list[str]:
    """A log with three recorded matches; returns their ids."""
    out, _ = invoke(
        "play",
        "porrinha",
        "-p",
        "random",
        "-p",
        "reasoner",
        "-p",
        "alice=random",
        "--games",
        "3",
        "--seed",
        "4",
        "--db",
        db,
        "--json",
    )
    return [m["match_id"] for m in json.loads(out)["matches"]]


def commands() -> dict[str, object]:
    """Every command of `matchlog` by its full name (`play porrinha`, `list`, ...), groups included."""
    found: dict[str, object] = {}

    def walk(command: object, path: tuple[str, ...]) -> None:
        if path:
            found[" ".join(path)] = command
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, (*path, name))

    walk(get_command(app), ())
    return found


#: Every command of `matchlog` today, by name: a new one is added here, and the help's test and the
#: command-line fuzzer (test_guarantees.py) check that each is listed and tried.
EVERY_COMMAND = (
    *("play", "resume", "tournament", "duel", "duel-report", "ratings"),
    *("list", "show", "replay", "stats", "sql", "schema", "games", "annotations"),
    *("verify", "audit", "key", "checkpoint", "receipt", "prove", "check"),
    *("analyse", "annotate", "undo", "abandon", "fork"),
    *("export", "import", "dataset", "archive", "demo", "serve", "client"),
)


def test_help_lists_every_command_in_the_section_a_person_looks_in():
    out, _ = invoke("--help")
    sections = [line.rstrip(":") for line in out.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert sections == ["Options", "Play", "Read", "Check", "Analyse", "Share", "Serve"]
    top = [name for name in commands() if " " not in name]
    assert set(EVERY_COMMAND) <= set(top), set(EVERY_COMMAND) - set(top)
    listed = re.findall(r"^  (\S+)  ", out.split("Play:")[1], re.M)
    assert sorted(listed) == sorted(top) and "Other:" not in out
    play_section = out.split("Play:")[1].split("Read:")[0]
    assert play_section.split()[0] == "play" and "duel" in play_section
    out, _ = invoke("play", "porrinha", "--help")
    assert "--chopsticks" in out and "--policy" in out and "path/to/file.py:Class" in out


def test_every_numeric_option_of_every_command_has_bounds():
    unbounded = [
        (name, parameter.opts)
        for name, command in commands().items()
        for parameter in getattr(command, "params", [])
        if parameter.type_descriptor.annotation in (int, float) and (parameter.min is None or parameter.max is None)
    ]
    assert unbounded == []
    assert MAX_SEAT == MAX_SEATS - 1


GAME_OPTIONS = {  # a command's option -> the game's option it sets
    ("play porrinha", "chopsticks"): ("porrinha", "chopsticks"),
    ("play fish", "rows"): ("fish", "rows"),
    ("play fish", "cols"): ("fish", "columns"),
    ("play fish", "holes"): ("fish", "holes"),
    ("play fish", "one_fish"): ("fish", "one_fish"),
    ("serve fish", "rows"): ("fish", "rows"),
}


def _bounds(game: str, field: str) -> tuple[int, int]:
    options = get_engine(game).spec.options
    meta = typing.get_type_hints(options, include_extras=True)[field].__metadata__[0]
    return meta.ge, meta.le


@pytest.mark.parametrize(("command", "option"), list(GAME_OPTIONS))
def test_a_games_option_has_the_bounds_of_its_options_type_on_the_command_line(command: str, option: str):
    parameter = next(p for p in commands()[command].params if p.name == option)  # type: ignore[attr-defined]
    assert (parameter.min, parameter.max) == _bounds(*GAME_OPTIONS[command, option])


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_games_options_out_of_their_bounds_are_refused_with_a_clear_error(data: st.DataObject):
    game, field = data.draw(st.sampled_from(sorted(set(GAME_OPTIONS.values()) | {("knockout", "largest")})))
    low, high = _bounds(game, field)
    value = data.draw(st.one_of(st.integers(max_value=low - 1), st.integers(min_value=high + 1)))
    with pytest.raises(UsageError) as refused:
        parse_options(get_engine(game).spec, {field: value})
    assert refused.value.code == "usage.options" and field in str(refused.value)
    assert parse_options(get_engine(game).spec, {field: data.draw(st.integers(low, high))}) is not None


def test_a_match_recorded_before_its_options_had_bounds_still_reads_and_audits(db: str):
    """The bounds are on what matchlog starts; a record it holds already, from a version without
    them, reads as it was recorded."""
    match_id = uuid7()
    seats = (Seat(name="a", player="random"), Seat(name="b", player="random"))
    with Store(db) as store:
        store.append(match_id, [MatchStarted(game="porrinha", options={"chopsticks": 20_000}, seats=seats)], 0)
    out, _ = invoke("show", str(match_id), "--db", db)
    assert "20000" in out.replace(",", "")
    assert "no findings" in invoke("audit", "--all", "--db", db)[0]
    with pytest.raises(UsageError) as refused:
        parse_options(get_engine("porrinha").spec, {"chopsticks": 20_000})
    assert "chopsticks is at most 100" in str(refused.value)


def test_play_porrinha_with_100000_chopsticks_is_refused_before_it_plays(db: str):
    _, err = invoke("play", "porrinha", "-p", "random", "-p", "random", "--chopsticks", "100000", "--db", db, code=2)
    assert err.startswith("error[usage]") and "--chopsticks" in err and "100" in err
    assert not Path(db).exists()


SLOW_PLAYER = """
import time


class Player:
    def hand(self, table):
        time.sleep(1)
        return 0

    def guess(self, table):
        return 0
"""


def test_a_removed_player_is_shown_in_plays_and_tournaments_output_with_why(db: str, tmp_path: Path):
    (tmp_path / "slow.py").write_text(SLOW_PLAYER)
    slow = f"slow={tmp_path / 'slow.py'}:Player"
    common = ["--timeout", "0.2", "--seed", "1", "--in-process", "--db", db]
    out, _ = invoke("play", "porrinha", "-p", "random", "-p", slow, "--games", "2", *common)
    removed = [line for line in out.splitlines() if "slow removed: player.timeout" in line]
    assert len(removed) == 2 and all("no answer within 0.2 s" in line for line in removed), out
    assert "slow: removed in 2 of 2 matches: player.timeout" in out
    report = json.loads(invoke("play", "porrinha", "-p", "random", "-p", slow, "--json", *common)[0])
    [ruling] = report["matches"][0]["rulings"]
    assert ruling["name"] == "slow" and ruling["ruling"] == "removed" and ruling["code"] == "player.timeout"
    assert "within 0.2 s" in ruling["why"] and ruling["seat"] == 1
    out, _ = invoke("tournament", "porrinha", "-p", "random", "-p", slow, "--games", "2", "--jobs", "1", *common)
    assert "slow: removed in 2 of 2 matches: player.timeout (hand() gave no answer within 0.2 s)" in out
    report = json.loads(
        invoke("tournament", "porrinha", "-p", "random", "-p", slow, "--games", "2", "--jobs", "1", "--json", *common)[
            0
        ]
    )
    assert [(r["name"], r["code"], r["matches"]) for r in report["rulings"]] == [("slow", "player.timeout", 2)]


HEAVY = ("duckdb", "pyarrow", "numpy", "litestar", "httpx", "cryptography", "matchlog.store.log", "matchlog.replay")


@pytest.mark.parametrize("asked", [["--version"], ["--help"], ["play", "--help"], ["sql", "--help"]])
def test_version_and_help_load_none_of_the_libraries_commands_work_with(asked: list[str]):
    probe = (
        "import sys\n"
        f"sys.argv = ['matchlog', *{asked!r}]\n"
        "from matchlog.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', [name for name in {HEAVY!r} if name in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "LOADED []" in out, out.splitlines()[-1]
    assert ("matchlog 0." in out) if asked == ["--version"] else ("Usage: matchlog" in out)


def test_the_mat_and_the_sgf_of_one_game_import_as_one_match(db: str, tmp_path: Path):
    invoke("play", "backgammon", "-p", "heuristic", "-p", "random", "--seed", "2", "-q", "--db", db)
    [match] = json.loads(invoke("list", "--json", "--db", db)[0])
    for suffix in ("mat", "sgf"):
        invoke("export", match["match_id"], "--format", suffix, "-o", str(tmp_path / f"game.{suffix}"), "--db", db)
    copy = str(tmp_path / "copy.duckdb")
    invoke("import", str(tmp_path / "game.mat"), "--db", copy)
    out, err = invoke("import", str(tmp_path / "game.sgf"), "--db", copy)
    assert "imported 0 events of 0 matches" in out and "already: not imported again" in err
    [imported] = json.loads(invoke("list", "--json", "--db", copy)[0])
    assert imported["events"] == match["events"]
    assert "no findings" in invoke("audit", "--all", "--db", copy)[0]
    # Either record alone gives the game's time to the minute (SGF's DT holds only a date).
    alone = str(tmp_path / "sgf.duckdb")
    invoke("import", str(tmp_path / "game.sgf"), "--db", alone)
    [from_sgf] = json.loads(invoke("list", "--json", "--db", alone)[0])
    assert from_sgf["created_at"] == imported["created_at"] == match["created_at"][:-4] + ":00Z"
    # Two games of the same players are two matches, however alike they end.
    invoke("play", "porrinha", "-p", "random", "-p", "random", "--games", "3", "--seed", "4", "-q", "--db", db)
    for number, listed in enumerate(json.loads(invoke("list", "--game", "porrinha", "--json", "--db", db)[0])):
        record = tmp_path / f"game{number}.txt"
        invoke("export", listed["match_id"], "--format", "text", "-o", str(record), "--db", db)
        assert "imported 0 events" not in invoke("import", str(record), "--db", copy)[0]
    assert len(json.loads(invoke("list", "--game", "porrinha", "--json", "--db", copy)[0])) == 3


def test_play_records_matches_and_prints_places(db: str):
    out, _ = invoke("play", "porrinha", "-p", "random", "-p", "reasoner", "--games", "2", "--seed", "1", "--db", db)
    assert out.count("match ") == 2 and "2 matches recorded" in out
    assert "1st" in out and "reasoner" in out


def test_play_json_and_the_log_it_leaves(db: str, played: list[str]):
    with Store(db, read_only=True) as store:
        assert {str(m.match_id) for m in store.matches()} == set(played)
        assert store.verify() == []
        assert all(m.series_id for m in store.matches())


def test_play_mixes_built_ins_and_a_user_class_from_a_file(db: str, tmp_path: Path):
    ai = tmp_path / "my_ai.py"
    ai.write_text(
        "class Zero:\n    def hand(self, t):\n        return 0\n    def guess(self, t):\n"
        "        return next(g for g in range(99) if t.valid_guess(g))\n"
    )
    out, _ = invoke(
        "play",
        "porrinha",
        "-p",
        "random",
        "-p",
        "reasoner",
        "-p",
        f"zero={ai}:Zero",
        "-p",
        "random",
        "-p",
        "reasoner",
        "--db",
        db,
        "--json",
    )
    seats = json.loads(out)["seats"]
    assert [s["name"] for s in seats] == ["random", "reasoner", "zero", "random#2", "reasoner#2"]


BACKGAMMON_PLAYER = """
class FirstMove:
    def move(self, board):
        return board.legal_moves()[0]
"""


def test_play_backgammon_with_a_user_class_and_show_the_board(db: str, tmp_path: Path):
    player = tmp_path / "bg_player.py"
    player.write_text(BACKGAMMON_PLAYER)
    out, err = invoke(
        "play",
        "backgammon",
        "-p",
        f"{player}:FirstMove",
        "-p",
        "heuristic",
        "--games",
        "2",
        "--seed",
        "3",
        "--rules",
        "pygammon",
        "--db",
        db,
        "--json",
    )
    report = json.loads(out)
    assert [s["name"] for s in report["seats"]] == ["FirstMove", "heuristic"]
    # The seed is said to be no secret from the user's player it was given with; not with built-ins.
    assert "warning: --seed 3 makes every roll, shuffle and deal reproducible" in err, err
    _, quiet = invoke("play", "backgammon", "-p", "heuristic", "-p", "random", "--seed", "3", "-q", "--db", db)
    assert "warning" not in quiet
    match_id = report["matches"][0]["match_id"]
    shown, _ = invoke("show", match_id, "--at", "4", "--db", db)
    assert "Backgammon (pygammon rules)" in shown and "bar: X" in shown
    replayed, _ = invoke("replay", match_id, "--to", "4", "--db", db)
    assert "opening roll" in replayed and "plays" in replayed
    invoke("verify", "--db", db)
    invoke("play", "backgammon", "-p", "random", "--db", db, code=2)  # one side is not a game


def test_list_show_and_replay(db: str, played: list[str]):
    out, _ = invoke("list", "--db", db)
    assert all(match_id[:18] in out for match_id in played)
    listed = json.loads(invoke("list", "--db", db, "--json")[0])
    assert {m["match_id"] for m in listed} == set(played)
    assert listed[0]["status"] == "finished" and listed[0]["outcome"]["winners"]
    match_id = played[0]
    out, _ = invoke("show", match_id[:13], "--db", db)
    assert "Porrinha · over" in out
    out, _ = invoke("show", match_id, "--at", "3", "--db", db)
    assert "seq 3 of" in out and "round 1" in out
    shown = json.loads(invoke("show", match_id, "--at", "3", "--db", db, "--json")[0])
    assert shown["seq"] == 3 and shown["to_act"] == {"seat": 0, "decision": "guess"}
    out, _ = invoke("replay", match_id, "--to", "8", "--db", db)
    lines = out.strip().splitlines()
    assert len(lines) == 9 and "match starts" in lines[0] and "closes a hand on" in lines[1]
    steps = json.loads(invoke("replay", match_id, "--db", db, "--json")[0])
    assert steps[0]["type"] == "match.started" and steps[-1]["type"] == "match.ended"


def test_show_and_replay_as_a_seat_hide_other_hands(db: str, played: list[str]):
    match_id = played[0]
    out, _ = invoke("replay", match_id, "--to", "3", "--as-seat", "1", "--db", db)
    lines = out.strip().splitlines()
    mine = [line for line in lines if "closes a hand on" in line]
    assert len(mine) == 1 and "reasoner" in mine[0]
    assert sum("closes a hand" in line for line in lines) == 3
    shown = json.loads(invoke("show", match_id, "--at", "2", "--as-seat", "0", "--db", db, "--json")[0])
    hands = shown["state"]["hands"]
    # Seat 1 has closed its hand (on a number seat 0 may not see); seat 2 has not yet.
    assert hands[1] == CLOSED_HAND and hands[2] is None and hands[0] >= 0
    invoke("show", match_id, "--as-seat", "9", "--db", db, code=2)


def test_verify_passes_then_names_an_edited_event(db: str, played: list[str]):
    out, _ = invoke("verify", "--db", db)
    assert out.startswith("ok: 3 matches")
    assert json.loads(invoke("verify", "--db", db, "--json")[0])["ok"] is True
    with Store(db) as store:
        store.query(
            "UPDATE events SET payload = replace(payload, 'hand', 'Hand') WHERE match_id = ? AND seq = 2", [played[1]]
        )
    out, _ = invoke("verify", "--db", db, code=1)
    assert f"FAIL match {played[1]} seq 2 [chain.hash_mismatch]" in out
    report = json.loads(invoke("verify", "--db", db, "--json", code=1)[0])
    assert report["findings"][0]["seq"] == 2
    invoke("verify", played[0], "--db", db)


def test_undo_and_fork(db: str, played: list[str]):
    match_id = played[2]
    _, err = invoke("undo", match_id, "--reason", "appeal", "--db", db, code=2)  # its end showed the hands
    assert err.startswith("error[audit.undo_past_reveal]: "), err
    forked = json.loads(invoke("fork", match_id, "--at", "3", "--db", db, "--json")[0])
    out, _ = invoke("show", forked["match_id"], "--db", db, "--json")
    assert json.loads(out)["match"]["origin"] == {"match_id": match_id, "seq": 3}
    out, _ = invoke("list", "--status", "running", "--db", db)
    assert forked["match_id"][:18] in out
    undone = json.loads(invoke("undo", forked["match_id"], "--reason", "appeal", "--db", db, "--json")[0])
    assert undone["undone"] == [3] and undone["seq"] == 4
    invoke("fork", match_id, "--at", "99999", "--db", db, code=2)


def test_export_import_round_trip(db: str, played: list[str], tmp_path: Path):
    target = tmp_path / "all.jsonl"
    out, _ = invoke("export", "--all", "--format", "jsonl", "-o", str(target), "--db", db)
    assert "events written" in out
    copy = str(tmp_path / "copy.duckdb")
    report = json.loads(invoke("import", str(target), "--db", copy, "--json")[0])
    assert report["matches"] == 3
    invoke("verify", "--db", copy)
    one, _ = invoke("export", played[0], "--db", db)
    assert all(json.loads(line)["match_id"] == played[0] for line in one.splitlines())
    parquet = tmp_path / "all.parquet"
    invoke("export", "--all", "--format", "parquet", "-o", str(parquet), "--db", db)
    assert parquet.stat().st_size > 0
    # A tampered file is refused whole.
    lines = target.read_text().splitlines()
    lines[5] = lines[5].replace('"seat":', '"seat": ')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    empty = str(tmp_path / "empty.duckdb")
    Store(empty).close()
    _, err = invoke("import", str(bad), "--db", empty, code=2)
    assert err.startswith("error[store.import_rejected]")
    with Store(empty, read_only=True) as store:
        assert store.count() == 0


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO events SELECT * FROM events",
        "UPDATE events SET seq = seq + 1",
        "DELETE FROM events",
        "ATTACH '/tmp/other.duckdb' AS other",
        "COPY events TO '/tmp/stolen.csv'",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "DROP TABLE events",
        "SET enable_external_access = true",
        "INSTALL httpfs",
    ],
)
def test_sql_is_read_only_and_cannot_touch_files(db: str, played: list[str], statement: str):
    _, err = invoke("sql", statement, "--db", db, code=2)
    # Refused as not a SELECT (sql.not_select), or as touching a file (sql.error).
    assert err.startswith(("error[sql.not_select]", "error[sql.error]"))
    with Store(db, read_only=True) as store:
        assert store.verify() == []
        assert len(store.matches()) == 3


def test_sql_answers_queries(db: str, played: list[str]):
    rows = json.loads(invoke("sql", "SELECT game, count(*) AS n FROM matches GROUP BY game", "--db", db, "--json")[0])
    assert rows == [{"game": "porrinha", "n": 3}]
    out, _ = invoke("sql", "SELECT count(*) AS n FROM events WHERE type = 'match.ended'", "--db", db, "--csv")
    assert out.splitlines() == ["n", "3"]


def test_stats(db: str, played: list[str]):
    out, _ = invoke("stats", "--db", db)
    assert "porrinha" in out and "reasoner" in out
    summary = json.loads(invoke("stats", "porrinha", "--db", db, "--json")[0])
    assert summary["games"][0]["finished"] == 3
    assert sum(p["wins"] for p in summary["rates"]) == 3
    invoke("stats", "chess", "--db", db, code=2)


def test_schema_lists_the_event_types_and_prints_every_schema_or_one():
    listed = invoke("schema")[0].splitlines()
    from matchlog.events import EVENT_TYPES

    assert [line.split()[0] for line in listed] == sorted(cls.__struct_config__.tag for cls in EVENT_TYPES)
    document = json.loads(invoke("schema", "--json")[0])
    assert "GuessMade" in document["$defs"]
    one = json.loads(invoke("schema", "porrinha.guess_made")[0])
    assert one["$ref"].endswith("GuessMade") and list(one["$defs"]) == ["GuessMade"]  # that one, not every event
    started = json.loads(invoke("schema", "match.started")[0])
    assert "MatchStarted" in started["$defs"] and "Seat" in started["$defs"] and "GuessMade" not in started["$defs"]
    _, err = invoke("schema", "chess.moved", code=2)
    assert "error[usage.tag]" in err


def test_what_a_new_user_met_first(db: str, played: list[str], tmp_path: Path):
    """--version; a usage mistake is the one-line error every other error is; a misspelt game is
    said to be one; Parquet is for analysis, and importing it leaves nothing behind."""
    from importlib.metadata import version

    assert invoke("--version")[0].strip() == f"matchlog {version('matchlog')}"
    for args, said in (
        (["list", "--frob"], "no such option: --frob"),
        (["list", "--limit", "x"], "invalid value for '--limit'"),
        (["show"], "missing argument"),
        (["play", "porrinha", "-p", "random", "--games", "0"], "'--games'"),
    ):
        _, err = invoke(*args, "--db", db, code=2)
        assert err.startswith(f"error[usage]: matchlog {args[0]}") and said in err and err.count("\n") == 1, err
    _, err = invoke("list", "--game", "porrina", "--db", db, code=2)
    assert err.startswith("error[usage.game]") and "porrina" in err
    parquet = tmp_path / "all.parquet"
    invoke("export", "--all", "--format", "parquet", "-o", str(parquet), "--db", db)
    elsewhere = tmp_path / "new.duckdb"
    _, err = invoke("import", str(parquet), "--db", str(elsewhere), code=2)
    assert "Parquet" in err and not elsewhere.exists()


def test_games_lists_games_players_and_options():
    listing = {entry["game"]: entry for entry in json.loads(invoke("games", "--json")[0])}
    assert "reasoner" in listing["porrinha"]["builtin_players"]
    assert "heuristic" in listing["backgammon"]["builtin_players"]
    assert listing["backgammon"]["options"] == {
        "rules": "standard",
        "move_by_turn_rolls": True,
        "cube": False,
        "resignations": False,
        "jacoby": False,
    }
    said = {line.split(":")[0]: line for line in invoke("games")[0].splitlines() if not line.startswith(" ")}
    assert "Backgammon, 2 players" in said["backgammon"] and " to 2 " not in said["backgammon"]
    assert "2 to 4 players" in said["fish"] and "2 or more players" in said["porrinha"]


def test_replay_refuses_a_range_that_ends_before_it_starts(db: str, played: list[str]):
    _, err = invoke("replay", played[0], "--from", "30", "--to", "10", "--db", db, code=2)
    assert err.startswith("error[usage.range]") and "--to 10" in err and "--from 30" in err
    with matchlog.open(db) as log, pytest.raises(UsageError) as refused:
        log.lines(played[0], start=30, stop=10)
    assert refused.value.code == "usage.range"
    assert invoke("replay", played[0], "--from", "3", "--to", "3", "--db", db)[0].count("\n") == 1


def test_proof_commands_say_what_is_missing_first_and_the_key_reads_as_json(db: str, played: list[str], tmp_path: Path):
    _, err = invoke("check", str(tmp_path / "nofile.bundle"), "--key", "x", code=2)
    assert err.startswith("error[usage.file]") and "nofile.bundle" in err  # the file, before the key
    key = json.loads(invoke("key", "--json", "--db", db)[0])
    assert key["key"] == invoke("key", "--db", db)[0].strip()
    assert key["key"].startswith(f"{key['name']}+{key['key_id']}+") and len(key["key_id"]) == 8
    checkpoint = tmp_path / "held.checkpoint"
    invoke("checkpoint", "-o", str(checkpoint), "--db", db)
    Path(db + ".key").unlink()  # a log whose key is kept elsewhere
    _, err = invoke("verify", "--against", str(checkpoint), "--db", db, code=2)
    assert "--key" in err, err
    assert (
        "the log is what the 1 checkpoint"
        in invoke("verify", "--against", str(checkpoint), "--key", key["key"], "--db", db)[0]
    )


def test_a_text_record_holds_a_resumed_match_and_imports_it(db: str, played: list[str], tmp_path: Path):
    # A fork in play (an ended match is not undone: its last hands were shown), resumed to its end.
    forked = json.loads(invoke("fork", played[0], "--at", "3", "--db", db, "--json")[0])["match_id"]
    invoke("resume", forked, "-p", "random", "-p", "random", "-p", "random", "--seed", "1", "--db", db)
    record = tmp_path / "resumed.txt"
    invoke("export", forked, "--format", "text", "-o", str(record), "--db", db)
    assert 'resumed players "random" "random" "random" unconfined' in record.read_text()
    copy = str(tmp_path / "copy.duckdb")
    invoke("import", str(record), "--db", copy)
    assert "no findings" in invoke("audit", "--all", "--db", copy)[0]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["show", "0000", "--db", "{db}"], "store.unknown_match"),
        (["show", "not-hex!", "--db", "{db}"], "store.unknown_match"),
        (["show", "{match}", "--at", "100000", "--db", "{db}"], "usage.seq"),
        (["play", "porrinha", "-p", "random", "--db", "{db}"], "usage.players"),
        (["play", "porrinha", "-p", "random", "-p", "nobody", "--db", "{db}"], "usage.player"),
        (["export", "--db", "{db}"], "usage.export"),
        (["export", "--all", "--format", "parquet", "--db", "{db}"], "usage.export"),
        (["import", "/no/such/file.jsonl", "--db", "{db}"], "usage.file"),
        (["list", "--db", "{missing}"], "store.missing"),
    ],
)
def test_errors_print_one_line_with_their_code(db: str, played: list[str], tmp_path: Path, args: list[str], code: str):
    filled = [a.format(db=db, match=played[0], missing=tmp_path / "none.duckdb") for a in args]
    result = runner.invoke(app, filled)
    assert result.exit_code == 2, result.stdout
    assert result.stderr.startswith(f"error[{code}]: ")
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stdout + result.stderr


def test_bad_arguments_are_refused_by_the_parser(db: str):
    result = runner.invoke(app, ["play", "porrinha", "-p", "random", "-p", "random", "--chopsticks", "0", "--db", db])
    assert result.exit_code == 2
    assert "Traceback" not in result.stdout + result.stderr


def test_a_busy_log_gets_a_clear_message(db: str, played: list[str]):
    hold = (
        f"from matchlog.store import Store; import time; s = Store({db!r}); print('open', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        result = runner.invoke(app, ["list", "--db", db])
        assert result.exit_code == 2
        assert result.stderr.startswith("error[store.busy]: the log")
        assert f"(pid {holder.pid})" in result.stderr
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_the_default_log_comes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "env.duckdb"
    monkeypatch.setenv("MATCHLOG_DB", str(path))
    invoke("play", "porrinha", "-p", "random", "-p", "random", "-q")
    assert path.exists()
    assert "1 match" in invoke("verify")[0]


def test_the_demo_runs_the_main_job(db: str):
    out, _ = invoke("demo", "--games", "2", "--db", db)
    assert out.count("2 matches recorded") == 4, "two matches of each game"
    assert "win rates by player" in out and "dice fairness" in out and "guess accuracy" in out
    assert "match starts" in out and "Fish · 5x5" in out
    assert "audited 8 matches" in out and "no findings" in out
    # A new seed each time, said so the same matches can be played again.
    seed = int(out.split()[1])
    other = invoke("demo", "--games", "1", "--db", db + ".2")[0]
    assert int(other.split()[1]) != seed


def test_play_davinci_with_a_human_at_the_terminal_then_replay_as_that_seat(db: str):
    result = runner.invoke(
        app, ["play", "davinci", "-p", "human", "-p", "seed-ai", "--seed", "2", "--db", db], input="zebra\n0 5\nquit\n"
    )
    assert result.exit_code == 0, result.stdout
    assert "Your guess (position number, e.g. 0 7 for seed-ai's tile 0; a number is 0-11)" in result.stdout
    assert "Give position number, e.g. 0 7 for seed-ai's tile 0." in result.stdout
    assert "1st seed-ai, 2nd human" in result.stdout
    listed = json.loads(invoke("list", "--db", db, "--json")[0])
    match_id = listed[0]["match_id"]
    out, _ = invoke("replay", match_id, "--as-seat", "0", "--db", db)
    assert "seed-ai draws a" in out and "shuffles 24 tiles face down" in out
    lines = invoke("export", match_id, "--as-seat", "0", "--db", db)[0].splitlines()
    types = {json.loads(line)["type"] for line in lines}
    assert "davinci.tiles_shuffled" not in types and "davinci.tiles_shuffled_hidden" in types
    invoke("export", match_id, "--as-seat", "0", "--format", "parquet", "-o", "x.parquet", "--db", db, code=2)


# -- Fish ------------------------------------------------------------------------------------


def test_play_fish_records_a_game_and_show_draws_the_hex_board(db: str):
    out, _ = invoke(
        "play", "fish", "-p", "maximin:1", "-p", "random", "--rows", "4", "--cols", "4", "--random-board",
        "--holes", "2", "--seed", "5", "--db", db, "--json",
    )  # fmt: skip
    match_id = json.loads(out)["matches"][0]["match_id"]
    board, _ = invoke("show", match_id, "--at", "2", "--db", db)  # after the commitment and the board
    rows = [line for line in board.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == 4 and rows[1].index(rows[1].split()[1]) > rows[0].index(rows[0].split()[1]), "odd rows shift"
    assert sum(line.split()[1:].count(".") for line in rows) == 2, "two holes"
    _, err = invoke("play", "fish", "-p", "random", "-p", "random", "--holes", "2", "--db", db, code=2)
    assert "error[usage.options]" in err and "--random-board" in err


def test_a_fish_knockout_from_the_command_line(db: str):
    args = ["tournament", "fish", "--knockout", "--seed", "2", "-o", "random_board=true", "-o", "holes=3"]
    for spec in ("maximin:1", "random", "random", "maximin", "random"):
        args += ["-p", spec]
    out, _ = invoke(*args, "--db", db, "--json")
    report = json.loads(out)
    assert report["findings"] == [] and report["winners"] and len(report["games"]) >= 2
    assert [len(g["players"]) for g in report["games"][:2]] == [3, 2], "five players: tables of 3 and 2"
    listed = json.loads(invoke("list", "--game", "knockout", "--db", db, "--json")[0])
    assert [m["match_id"] for m in listed] == [report["tournament_id"]]
    text, _ = invoke("replay", report["tournament_id"], "--db", db)
    assert "round 1 table 2" in text and "match over" in text


def test_remote_commands_explain_what_went_wrong(db: str):
    _, err = invoke("serve", "fish", "--port", "0", "--min-players", "2", "--wait", "0.1", "--db", db, code=2)
    assert "error[remote.too_few]" in err
    _, err = invoke("client", "fish", "--name", "R2-D2", "--port", "9", code=2)
    assert "error[usage.name]" in err


def test_a_tournament_prints_its_results_table(db: str):
    out, _ = invoke("tournament", "porrinha", "-p", "alice=random", "-p", "reasoner", "--games", "12", "-q", "--db", db)
    header, *rows = [line for line in out.splitlines() if line.strip()][:3]
    assert header.split()[:3] == ["player", "strategy", "matches"] and "win rate (95% CI)" in header
    assert sorted(row.split()[:2] for row in rows) == [["alice", "random"], ["reasoner", "reasoner"]]
    assert "12 matches in" in out and "every hash chain verifies" in out
    out, _ = invoke("tournament", "porrinha", "-p", "random", "-p", "reasoner", "--games", "4", "-q", "--db", db)
    assert out.split()[:2] == ["player", "matches"]  # names that are their strategies need no second column


def test_a_tournament_refused_for_its_table_size_prints_only_the_error(db: str):
    out, err = invoke("tournament", "fish", *["-p", "random"] * 5, "--seats", "5", "--db", db, code=2)
    assert out == "" and err.strip() == "error[usage.seats]: Fish is played by 2 to 4 players, not 5"


def test_serve_refuses_a_checkpoint_period_that_would_keep_a_core_busy(db: str):
    """`--checkpoint-every 0.0001` was taken, and woke the server ten thousand times a second."""
    _, err = invoke("serve", "--checkpoint-every", "0.0001", "--port", "0", "--db", db, code=2)
    assert err.startswith("error[usage.checkpoint_every]: --checkpoint-every is 0") and "0.0001" in err, err
