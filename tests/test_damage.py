"""A damaged log stays readable (issue 22, item 3): one deleted event row made every command fail,
`verify` included. Opening a log never depends on its rows being whole; `verify` names the damage
at its match and seq; every other command goes on for the matches that are whole, and names a
damaged one it cannot read; and nothing is appended where the Merkle tree could not be extended
truthfully, or to a match that is not whole.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.referee import play_series
from matchlog.store import Store
from matchlog.store.schema import SCHEMA_VERSION

from .conftest import start_server

runner = CliRunner()


def cli(*args: object, code: int | set[int] | None = 0) -> tuple[str, str]:
    """Run a command; check its exit status (one, a set of them, or None: any but a bug's)."""
    result = runner.invoke(app, [str(a) for a in args])
    said = (args, result.exit_code, result.stdout[-1500:], result.stderr[-1500:], result.exception)
    assert result.exit_code in (0, 1, 2, 130), said  # 3 is a bug: error[internal]
    assert "error[internal]" not in result.stderr and "Traceback" not in result.stdout + result.stderr, said
    assert "error[store.unreadable]" not in result.stderr, said
    if isinstance(code, int):
        assert result.exit_code == code, said
    elif code is not None:
        assert result.exit_code in code, said
    return result.stdout, result.stderr


def copy_log(source: Path, target: Path) -> Path:
    """A copy of the log at `source`, with its signing key (which lives beside it)."""
    shutil.copyfile(source, target)
    shutil.copyfile(source.with_name(source.name + ".key"), target.with_name(target.name + ".key"))
    return target


def damage(db: Path, sql: str, params: list[Any] | None = None) -> None:
    """Change the file with plain SQL, as anyone who can write it can."""
    with duckdb.connect(str(db)) as con:
        con.execute(sql, params or [])


# -- the case the issue found: one event deleted from the newest leaves --------------------------


@pytest.fixture(scope="module")
def thousand(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A log of more than 1,004 events (Porrinha) and a checkpoint of it held elsewhere."""
    folder = tmp_path_factory.mktemp("thousand")
    db = folder / "log.duckdb"
    with Store(db) as store:
        seed = 1
        while store.count() < 1004:
            play_series("porrinha", ["random", "random"], games=1, seed=seed, store=store)
            seed += 1
    checkpoint = folder / "held.checkpoint"
    cli("checkpoint", "--db", db, "-o", checkpoint)
    return db, checkpoint


def event_at(db: Path, leaf: int) -> tuple[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        match_id, seq = con.execute("SELECT match_id::VARCHAR, seq FROM events WHERE leaf = ?", [leaf]).fetchall()[0]
    return match_id, seq


@pytest.mark.parametrize("leaf", [900, 1003, "last", 10, "a match's last"])
def test_one_deleted_event_never_stops_verify_or_the_commands_about_whole_matches(
    thousand: tuple[Path, Path], tmp_path: Path, leaf: int | str
):
    source, checkpoint = thousand
    db = copy_log(source, tmp_path / "log.duckdb")
    with duckdb.connect(str(db), read_only=True) as con:
        last = con.execute("SELECT max(leaf) FROM events").fetchall()[0][0]
        # (the last event of a match in the middle: the next leaf is the next match's start)
        ends = con.execute("SELECT e.leaf FROM events e JOIN matches m USING (match_id) WHERE e.seq = m.last_seq")
        end = sorted(row[0] for row in ends.fetchall())[5]
    leaf = {"last": last, "a match's last": end}.get(leaf, leaf)  # type: ignore[arg-type]
    damaged, seq = event_at(db, leaf)
    damage(db, "DELETE FROM events WHERE leaf = ?", [leaf])

    out, _ = cli("verify", "--db", db, code=1)
    assert f"FAIL match {damaged} seq {seq} " in out, out
    # Every finding names the match that lost the event, never the one whose event comes next.
    assert all(line.startswith(f"FAIL match {damaged} ") for line in out.splitlines() if line.startswith("FAIL")), out
    out, _ = cli("verify", "--against", checkpoint, "--db", db, code=1)
    assert f"FAIL match {damaged} seq {seq} " in out, out
    cli("verify", "--deep", "--db", db, code=1)
    listed = [m["match_id"] for m in json.loads(cli("list", "--db", db, "--json", "--limit", "1000")[0])]
    assert damaged in listed and len(listed) > 20
    whole = [m for m in listed if m != damaged]
    for match in (whole[0], whole[-1]):
        cli("show", match, "--db", db)
        cli("replay", match, "--db", db)
        cli("audit", match, "--db", db)
    stats = json.loads(cli("stats", "--db", db, "--json")[0])
    assert stats["games"][0]["finished"] >= len(whole)
    with Store(source, read_only=True) as store:
        count = store.count()
    assert cli("sql", "SELECT count(*) AS n FROM events", "--db", db, "--csv")[0].split() == ["n", str(count - 1)]
    cli("export", "--all", "--db", db, "-o", tmp_path / "all.jsonl")
    out, _ = cli("audit", "--all", "--db", db, code=1)
    # The damaged match itself: named, never misread.
    for command in ("show", "replay"):
        _, err = cli(command, damaged, "--db", db, code=2)
        assert err.startswith("error[store.damaged]: ") and damaged in err and f"seq {seq}" in err, err
    out, _ = cli("audit", damaged, "--db", db, code=1)
    assert f"seq {seq}" in out


def test_a_damaged_log_is_served_and_read_through_the_server(thousand: tuple[Path, Path], tmp_path: Path):
    """`matchlog serve` opens the damaged log too; every command through it behaves as on the file."""
    source, _ = thousand
    db = copy_log(source, tmp_path / "log.duckdb")
    damaged, seq = event_at(db, 900)
    damage(db, "DELETE FROM events WHERE leaf = 900")
    server = start_server(db)
    try:
        out, _ = cli("verify", "--db", db, code=1)
        assert f"FAIL match {damaged} seq {seq} " in out, out
        listed = [m["match_id"] for m in json.loads(cli("list", "--db", db, "--json", "--limit", "1000")[0])]
        whole = next(m for m in listed if m != damaged)
        cli("replay", whole, "--db", db)
        _, err = cli("replay", damaged, "--db", db, code=2)
        assert err.startswith("error[store.damaged]: ") and f"seq {seq}" in err, err
        _, err = cli("play", "porrinha", "-p", "random", "-p", "random", "--db", db, "-q", code=2)
        assert err.startswith("error[store.damaged]: "), err
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("leaf", [900, "last"])
def test_nothing_is_appended_where_the_tree_could_not_be_extended_truthfully(
    thousand: tuple[Path, Path], tmp_path: Path, leaf: int | str
):
    """Leaf 900 is among the newest 255, whose hashes no kept subtree holds: without it the tree's
    right edge cannot be computed. The last leaf gone, the tree would give its number to the next
    event. Either way a new match is refused, saying why, and the log is left as it was."""
    source, _ = thousand
    db = copy_log(source, tmp_path / "log.duckdb")
    with duckdb.connect(str(db)) as con:
        last = con.execute("SELECT max(leaf) FROM events").fetchall()[0][0]
        con.execute("DELETE FROM events WHERE leaf = ?", [last if leaf == "last" else leaf])
        count = con.execute("SELECT count(*) FROM events").fetchall()[0][0]
    _, err = cli("play", "porrinha", "-p", "random", "-p", "random", "--db", db, "-q", code=2)
    assert err.startswith("error[store.damaged]: ") and "matchlog verify" in err, err
    _, err = cli("checkpoint", "--db", db, code=2)
    assert err.startswith("error[store.damaged]: "), err
    with Store(db, read_only=True) as store:
        assert store.count() == count


def test_a_whole_match_of_a_log_with_an_old_gap_takes_appends_and_the_tree_stays_true(
    thousand: tuple[Path, Path], tmp_path: Path
):
    """Leaf 10 gone: its hash lives on in the kept subtree of leaves 0-255, so the tree's right edge
    is still what it was. A new match extends that tree, which still proves the checkpoint held
    before; the match the event was taken from takes nothing more."""
    source, _ = thousand
    db = copy_log(source, tmp_path / "log.duckdb")
    with Store(db, read_only=True) as store:
        size, root = store.tree_head()
    damaged, _ = event_at(db, 10)
    damage(db, "DELETE FROM events WHERE leaf = 10")
    cli("play", "porrinha", "-p", "random", "-p", "random", "--db", db, "-q")
    with Store(db) as store:
        now, _ = store.tree_head()
        assert now > size
        assert store.tree().subtree(0, size) == root
        leaves = sorted(leaf for (leaf,) in store.query("SELECT leaf FROM events"))
        assert leaves == [leaf for leaf in range(now) if leaf != 10]
    _, err = cli("abandon", damaged, "--reason", "test", "--db", db, code=2)
    assert err.startswith("error[store.damaged]: ") and damaged in err, err
    out, _ = cli("verify", "--db", db, code=1)
    assert f"FAIL match {damaged} " in out and out.count("FAIL") <= 3, out


# -- any one row of any table ------------------------------------------------------------------


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, dict[str, str]]]:
    """A log of every game, with a long match (snapshots cached, kept subtrees), a checkpoint held
    elsewhere, and what `show` and `replay` print of each match while it is whole."""
    folder = tmp_path_factory.mktemp("kept")
    db = folder / "log.duckdb"
    with Store(db) as store:
        play_series("porrinha", ["random"] * 3, games=2, seed=3, store=store, timeout=5.0)
        play_series("backgammon", ["random", "random"], games=1, seed=4, store=store, timeout=5.0)
        play_series(
            "davinci", ["random", "random"], games=1, seed=5, store=store, timeout=5.0, options={"jokers": True}
        )
        play_series("fish", ["random", "random"], games=1, seed=6, store=store, timeout=5.0)
        play_series("porrinha", ["random", "random"], seed=3, store=store, timeout=5.0, options={"chopsticks": 9})
        assert max(info.last_seq for info in store.matches()) > 256, "no match long enough to cache a snapshot"
    ids = [m["match_id"] for m in json.loads(cli("list", "--db", db, "--json")[0])]
    shown = {m: {c: cli(c, m, "--db", db)[0] for c in ("show", "replay")} for m in ids}  # (caches snapshots)
    checkpoint = folder / "held.checkpoint"
    cli("checkpoint", "--db", db, "-o", checkpoint)
    with Store(db, read_only=True) as store:
        for table in ("snapshots", "tree_nodes", "checkpoints", "seats", "figures", "projected"):
            assert store.query(f"SELECT count(*) FROM {table}")[0][0] > 0, table
    return db, checkpoint, shown


TABLES = ("events", "matches", "seats", "figures", "projected", "snapshots", "tree_nodes", "checkpoints", "meta")


def _edits(kind: str, column: str, nullable: bool) -> list[str]:
    """SQL expressions for another value of `column`, a column of DuckDB type `kind`."""
    c = f'"{column}"'
    other = f"(SELECT {c} FROM {{table}} ORDER BY rowid DESC LIMIT 1)"  # the last row's value
    found = [other] + (["NULL"] if nullable else [])
    if kind in ("BIGINT", "INTEGER", "SMALLINT"):
        return [
            *found,
            f"{c} + 1",
            f"{c} - 1",
            "0",
            "-1",
            "32000",
            *(["9223372036854775807"] if kind == "BIGINT" else []),
        ]
    if kind == "DOUBLE":
        return [*found, f"{c} * 10", "-1"]
    if kind == "VARCHAR":
        return [
            *found,
            f"{c} || 'x'",
            f"left({c}, length({c}) // 2)",
            f"replace({c}, '1', '2')",
            f"""replace({c}, '"seat":0', '"seat":9')""",
            "''",
            "'3'",
            "'fish'",
            "'chess'",
            """'{"type":"match.ended"}'""",
        ]
    if kind == "BLOB":
        return [*found, "''::BLOB", "unhex(sha256('x'))"]
    if kind == "UUID":
        return [*found, "uuid()"]
    if kind == "TIMESTAMP":
        return [*found, f"{c} + INTERVAL 1 MICROSECOND", "'1970-01-01'::TIMESTAMP"]
    if kind == "BOOLEAN":
        return [*found, f"NOT {c}"]
    if kind.endswith("[]"):
        return [*found, "[]", f"list_concat({c}, {c})"]
    return found


class NoDamage(Exception):
    """Plain SQL cannot make that change (a key or NOT NULL refuses it), or it changed nothing."""


def spoil(db: Path, table: str, change: str, row: int, column: int, value: int) -> tuple[str, set[str], int]:
    """Delete, copy or edit (the `column`-th column, to the `value`-th of its edits) the `row`-th row
    of `table`, each counted around; returns what was done, the matches it touched, and the size of
    the tree before.

    Raises:
        NoDamage: the change cannot be made, or changes nothing.
    """
    with duckdb.connect(str(db)) as con:
        rowids = [r for (r,) in con.execute(f"SELECT rowid FROM {table} ORDER BY rowid").fetchall()]
        rowid = rowids[row % len(rowids)]
        columns = con.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = ?"
            " ORDER BY ordinal_position",
            [table],
        ).fetchall()
        names = [name for name, _, _ in columns]
        before = con.execute(f"SELECT * FROM {table} WHERE rowid = ?", [rowid]).fetchall()[0]
        touched = {str(before[names.index("match_id")])} if "match_id" in names else set()
        size = con.execute("SELECT max(leaf) + 1 FROM events").fetchall()[0][0]
        said = f"{change} row {rowid} of {table}"
        try:
            if change == "delete":
                con.execute(f"DELETE FROM {table} WHERE rowid = ?", [rowid])
            elif change == "duplicate":
                con.execute(f"INSERT INTO {table} SELECT * FROM {table} WHERE rowid = ?", [rowid])
            else:
                name, kind, nullable = columns[column % len(columns)]
                edits = _edits(kind, name, nullable == "YES")
                edit = edits[value % len(edits)].replace("{table}", table)
                said = f"set {table}.{name} = {edit} at row {rowid}"
                con.execute(f'UPDATE {table} SET "{name}" = {edit} WHERE rowid = ?', [rowid])
                after = con.execute(f"SELECT * FROM {table} WHERE rowid = ?", [rowid]).fetchall()
                if not after or after[0] == before or (table == "meta" and edit == "'3'"):
                    raise NoDamage  # (no change; a newer schema is the next test's)
                if name == "match_id":
                    touched.add(str(after[0][names.index("match_id")]))
        except duckdb.ConstraintException:
            raise NoDamage from None
    return said, touched, size


def check_damaged(
    db: Path, checkpoint: Path, shown: dict[str, dict[str, str]], table: str, touched: set[str], size: int
):
    """Every reading command opens the damaged log and ends in a result or a clear error; what is
    whole reads as it did, what is not is named; a new match is refused as damage or extends the tree."""
    out, _ = cli("verify", "--db", db, code=1 if table == "events" else {0, 1})
    assert table != "events" or "FAIL match " in out, out
    cli("verify", "--deep", "--db", db, code={0, 1})
    cli("verify", "--against", checkpoint, "--db", db, code={0, 1})
    cli("audit", "--all", "--db", db, code={0, 1})
    cli("list", "--db", db, "--json")
    cli("stats", "--db", db, "--json")
    cli("sql", "SELECT count(*) FROM events", "--db", db)
    cli("export", "--all", "--db", db, "-o", db.with_name("all.jsonl"))
    whole = [match for match in shown if match not in touched]
    for match, printed in shown.items():
        # (every match replayed; shown, those damaged and one that is not: `show` folds as `replay` does)
        for command, text in (
            printed.items() if match in touched or match == whole[0] else [("replay", printed["replay"])]
        ):
            out, err = cli(command, match, "--db", db, code=None if match in touched else 0)
            if match not in touched:
                assert out == text, (command, match)
            if err:
                assert err.startswith("error[") and match[:8] in err, err
    # Appending: a new match is taken or refused as damage; taken, its leaves follow the tree's
    # (never a number the tree had already given).
    out, err = cli("play", "porrinha", "-p", "random", "-p", "random", "--db", db, "-q", "--json", code={0, 2})
    if err:
        assert err.startswith("error[store.damaged]: "), err
    else:
        new = json.loads(out)["matches"][0]["match_id"]
        with Store(db, read_only=True) as store:
            mine = sorted(leaf for (leaf,) in store.query("SELECT leaf FROM events WHERE match_id = ?", [new]))
        assert mine[0] >= size and mine == list(range(mine[0], mine[0] + len(mine)))


@settings(max_examples=30)
@given(
    table=st.sampled_from(TABLES),
    change=st.sampled_from(["delete", "duplicate", "edit"]),
    row=st.integers(0, 10**6),
    column=st.integers(0, 20),
    value=st.integers(0, 20),
)
def test_damage_to_any_one_row_never_stops_a_command_about_what_is_whole(
    kept: tuple[Path, Path, dict[str, dict[str, str]]],
    tmp_path_factory: pytest.TempPathFactory,
    table: str,
    change: str,
    row: int,
    column: int,
    value: int,
):
    source, checkpoint, shown = kept
    db = copy_log(source, tmp_path_factory.mktemp("damaged") / "log.duckdb")
    try:
        said, touched, size = spoil(db, table, change, row, column, value)
    except NoDamage:
        assume(False)
    note(said)
    check_damaged(db, checkpoint, shown, table, touched, size)


def test_a_log_of_a_newer_schema_is_refused_and_one_without_its_version_row_opens(
    kept: tuple[Path, Path, dict[str, dict[str, str]]], tmp_path: Path
):
    source, _, shown = kept
    db = copy_log(source, tmp_path / "log.duckdb")
    newer = str(int(SCHEMA_VERSION) + 1)
    damage(db, f"UPDATE meta SET value = '{newer}' WHERE key = 'schema_version'")
    _, err = cli("list", "--db", db, code=2)
    assert err.startswith("error[store.version]: ") and f"version {newer}" in err
    damage(db, "DELETE FROM meta")
    cli("verify", "--db", db)
    match, printed = next(iter(shown.items()))
    assert cli("show", match, "--db", db)[0] == printed["show"]
