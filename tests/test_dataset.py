"""`matchlog dataset`: step rows a learner loads as they are, each provable against the checkpoint the
dataset names, split by match; and the encodings they use, which the environments share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.dataset import parse_split, split_of
from matchlog.engines import GAMES
from matchlog.engines.encodings import ENCODINGS, encoding
from matchlog.events import UsageError
from matchlog.proofs import verifier
from matchlog.referee import play_series
from matchlog.referee.duel import run_duel
from matchlog.testing import check_encoding

from .conftest import Served
from .twins import played

runner = CliRunner()


@pytest.fixture
def log_copy(filled_log: Path, tmp_path: Path) -> Path:
    """A copy of the session's log of every game, to write a dataset (and its checkpoint) from."""
    db = tmp_path / "matches.duckdb"
    shutil.copyfile(filled_log, db)
    return db


def dataset(db: Path, out: Path, *options: str) -> dict:
    result = runner.invoke(app, ["dataset", "-o", str(out), "--db", str(db), "--json", *options])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def steps_of(out: Path) -> list[dict]:
    return [row for path in sorted((out / "data").glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


def matches_of(out: Path) -> list[dict]:
    return [row for path in sorted((out / "matches").glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


# -- provenance ----------------------------------------------------------------------------------


def test_every_step_row_checks_against_the_named_checkpoint_with_the_stand_alone_verifier(
    log_copy: Path, tmp_path: Path
):
    out = tmp_path / "rows"
    summary = dataset(log_copy, out, "--split", "train=0.5,test=0.5")
    with matchlog.open(log_copy) as log:
        key = verifier.parse_verifier_key(log.key())
        note = (out / "checkpoint").read_text()
        signed = verifier.read_note(note, key)  # signed by the log's key
        assert signed.size == summary["checkpoint_size"]
        tree = log.store.tree()
        rows = steps_of(out)
        assert {r["game"] for r in rows} == {"porrinha", "backgammon", "davinci", "fish"}
        for row in rows:
            assert row["hash"] is not None and row["leaf"] is not None, row  # a seat sees its own answer whole
            proof = tree.inclusion(row["leaf"], signed.size)
            leaf = verifier.leaf_hash(bytes.fromhex(row["hash"]))
            assert verifier.verify_inclusion(row["leaf"], signed.size, leaf, proof, signed.root), row
        for match in matches_of(out):
            assert (match["checkpoint_size"], match["checkpoint_root"]) == (signed.size, signed.root.hex())

    # One row end to end, as a third party would: a seat's proof against the dataset's checkpoint.
    row = next(r for r in rows if r["game"] == "davinci")
    bundle = tmp_path / "row.proof"
    proved = runner.invoke(
        app,
        ["prove", row["match_id"], "--seq", str(row["seq"]), "--as-seat", str(row["seat"]), "--against",
         str(out / "checkpoint"), "--db", str(log_copy), "-o", str(bundle)],
    )  # fmt: skip
    assert proved.exit_code == 0, proved.output
    entry = json.loads(bundle.read_text())["entries"][0]
    assert (entry["hash"], entry["leaf"]) == (row["hash"], row["leaf"])
    checked = verifier.check_bundle(json.loads(bundle.read_text()), key)
    assert checked.ok, checked


def test_a_per_seat_dataset_holds_that_seats_decisions_only(log_copy: Path, tmp_path: Path):
    out = tmp_path / "seat1"
    summary = dataset(log_copy, out, "--as-seat", "2")
    rows = steps_of(out)
    assert rows and {r["seat"] for r in rows} == {2}
    assert {r["game"] for r in rows} == {"porrinha"}  # the only table of three
    assert {m["view_of"] for m in matches_of(out)} == {2}
    assert len(summary["skipped"]) == 6 and all("has no seat 2" in why for _, why in summary["skipped"])


# -- what a learner loads ------------------------------------------------------------------------


def test_a_backgammon_dataset_loads_with_datasets_and_polars(
    log_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets
    import polars

    out = tmp_path / "bg"
    summary = dataset(log_copy, out, "--game", "backgammon", "--split", "train=0.5,test=0.5")
    loaded = datasets.load_dataset("parquet", data_dir=str(out), cache_dir=str(tmp_path / "cache"))
    assert {name: len(loaded[name]) for name in loaded} == {k: v for k, v in summary["steps"].items() if v}
    matches = datasets.load_dataset(str(out), "matches", cache_dir=str(tmp_path / "cache"))
    assert sum(len(matches[name]) for name in matches) == 2

    frame = polars.read_parquet(out / "data" / "*.parquet")
    assert frame.height == sum(summary["steps"].values())
    assert set(frame["game"]) == {"backgammon"}
    assert frame["observation"].list.len().unique().to_list() == [62]
    assert frame["action_count"].unique().to_list() == [150]
    played = frame.filter(~polars.col("rejected"))
    assert all(a in legal for a, legal in zip(played["action"], played["legal_actions"], strict=True))
    terminal = frame.filter(polars.col("terminal"))
    assert sorted(terminal["reward"].to_list())[0] < 0 < sorted(terminal["reward"].to_list())[-1]
    assert polars.read_parquet(out / "matches" / "*.parquet")["observation_shape"].to_list() == [[62], [62]]
    card = (out / "README.md").read_text()
    assert "matchlog dataset --game backgammon --split train=0.5,test=0.5" in card
    assert "Licence: left to whoever publishes" in card and "### backgammon" in card


def test_a_duels_games_say_their_duel_pair_and_game_and_other_matches_none(tmp_path: Path):
    db = tmp_path / "duel.duckdb"
    with matchlog.open(db, write=True, mode="create") as log:
        run = run_duel("porrinha", "reasoner", "random", store=log, pairs=2, seed=3, in_process=True)
        play_series("porrinha", ["random"] * 2, games=1, seed=4, store=log)
    dataset(db, tmp_path / "out", "--split", "train=1")
    rows = matches_of(tmp_path / "out")
    duel = sorted((m["duel_pair"], m["duel_game"]) for m in rows if m["duel_id"] == run.duel_id)
    assert duel == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert {m["series_id"] for m in rows if m["duel_id"] is not None} == {run.duel_id}  # what --series takes
    others = [m for m in rows if m["duel_id"] is None]
    assert len(others) == 1 and others[0]["duel_pair"] is None and others[0]["duel_game"] is None
    assert "its duel (id, pair and game in the pair" in (tmp_path / "out" / "README.md").read_text()


def test_splits_are_by_match_and_the_same_on_every_export(log_copy: Path, tmp_path: Path):
    first = dataset(log_copy, tmp_path / "a", "--split", "train=0.6,validation=0.2,test=0.2")
    again = dataset(log_copy, tmp_path / "b", "--split", "train=0.6,validation=0.2,test=0.2")
    assert first["matches"] == again["matches"] and first["steps"] == again["steps"]
    where: dict[str, set[str]] = {}
    for path in (tmp_path / "a" / "data").glob("*.parquet"):
        for match_id in pq.read_table(path, columns=["match_id"])["match_id"].to_pylist():
            where.setdefault(match_id, set()).add(path.name.split("-")[0])
    assert all(len(splits) == 1 for splits in where.values())
    splits = parse_split("train=0.6,validation=0.2,test=0.2")
    assert all(split_of(m, splits) == next(iter(s)) for m, s in where.items())


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (["--as-seat", "0", "--per-seat"], "usage.arguments"),
        (["--split", "train=0.8,test"], "usage.split"),
        (["--split", "train=-1"], "usage.split"),
        (["--game", "knockout"], "usage.encoding"),
        (["--game", "fish", "--since", "2999-01-01"], "usage.empty"),
    ],
)
def test_a_bad_request_is_one_clear_error_and_writes_nothing(log_copy: Path, tmp_path: Path, options, code):
    out = tmp_path / "nothing"
    result = runner.invoke(app, ["dataset", "-o", str(out), "--db", str(log_copy), *options])
    assert result.exit_code == 2 and f"error[{code}]" in result.output, result.output
    assert not out.exists() and not (tmp_path / "nothing.partial").exists()


def test_an_existing_directory_with_files_is_never_written_into(log_copy: Path, tmp_path: Path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    result = runner.invoke(app, ["dataset", "-o", str(out), "--db", str(log_copy)])
    assert result.exit_code == 2 and "error[usage.output]" in result.output
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


# -- the encodings -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", sorted(ENCODINGS))
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_every_decision_encodes_within_its_space_and_its_legal_answers_round_trip(game: str, seed: int):
    """For every decision of random matches: the tensor has the shape and bounds its match declares,
    the legal answers computed from the seat's view are the rules' own (from the whole state), and
    each legal answer's index proposes that answer again (the contract kit's check)."""
    assert check_encoding(game, seed) > 0


def test_an_index_outside_the_action_space_is_a_usage_error():
    code = encoding("backgammon")
    records = played("backgammon", 3)
    state = GAMES["backgammon"].start(records[0].event)  # type: ignore[arg-type]
    for index in (-1, 150):
        with pytest.raises(UsageError) as raised:
            code.event_of(state, 0, index)
        assert raised.value.code == "usage.action"
    with pytest.raises(UsageError) as raised:
        encoding("knockout")
    assert raised.value.code == "usage.encoding"


def test_a_log_a_server_owns_is_refused_with_a_clear_error_and_nothing_written(served: Served, tmp_path: Path):
    out = tmp_path / "served"
    result = runner.invoke(app, ["dataset", "-o", str(out), "--db", str(served.db)])
    assert result.exit_code == 2 and "error[usage.dataset]" in result.output, result.output
    assert not out.exists()
