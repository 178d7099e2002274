"""GNU Backgammon's analysis, both ways, with the real gnubg (`gnubg -t`, Debian's).

One module-scoped fixture records one backgammon match, has `matchlog analyse` judge it (gnubg run
as a process at 0 plies, to keep the suite quick: the default evaluation is the benchmark's), and
exports it as .mat and as analysed SGF. Then one run of gnubg's embedded Python (`gnubg -p`)
imports the same .mat and runs its own `analyse match`, and loads matchlog's analysed SGF; it
prints, move by move, the equities, the mark and the luck it holds each time. matchlog's
annotations must say what gnubg says, move by move, and gnubg must read them back from the SGF.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
from typer.testing import CliRunner

from matchlog.analysis.gnubg import gnubg_program
from matchlog.cli import app
from matchlog.events import Decision, Luck
from matchlog.file import FileLog
from matchlog.referee import play_series

runner = CliRunner()

_SCRIPT = r"""
import json, os
import gnubg

job = json.load(open(os.environ["MATCHLOG_GNUBG_JOB"]))

def moves():
    found = []
    for game in gnubg.match(analysis=1, boards=0, statistics=0, verbose=0)["games"]:
        for record in game["game"]:
            if record["action"] != "move":
                continue
            analysis = record.get("analysis", {})
            found.append({
                "player": "XO".index(record["player"]),
                "dice": sorted(record["dice"]),
                "scores": [m["score"] for m in analysis.get("moves", [])],
                "win": [m["probs"][0] for m in analysis.get("moves", [])],
                "played": analysis.get("imove"),
                "skill": analysis.get("skill"),
                "luck": analysis.get("luck-value"),
            })
    return found

for command in [
    "set threads 1", "set confirm new off",
    "set analysis chequerplay evaluation plies 0", "set analysis cubedecision evaluation plies 0",
    "import mat " + job["mat"], "analyse match",
]:
    gnubg.command(command)
out = {"own": moves()}
gnubg.command("load match " + job["sgf"])
out["ours"] = moves()
json.dump(out, open(job["out"], "w"))
"""


def cli(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One match, matchlog's annotations of it, and what gnubg said of it both ways."""
    folder = tmp_path_factory.mktemp("gnubg-analysis")
    db = folder / "log.duckdb"
    with FileLog(db, mode="create") as log:
        match_id = play_series("backgammon", ["heuristic", "random"], seed=11, store=log.store).matches[0].match_id
    cli("analyse", str(match_id), "--analyser", "gnubg:0", "--db", str(db))
    cli("annotate", str(match_id), "a coach's remark", "--seq", "4", "--mark", "?!", "--db", str(db))
    cli("export", str(match_id), "--format", "mat", "-o", str(folder / "match.mat"), "--db", str(db))
    cli("export", str(match_id), "--format", "sgf", "-o", str(folder / "match.sgf"), "--db", str(db))
    job = {"mat": str(folder / "match.mat"), "sgf": str(folder / "match.sgf"), "out": str(folder / "out.json")}
    (folder / "job.json").write_text(json.dumps(job))
    (folder / "script.py").write_text(_SCRIPT)
    subprocess.run(
        [gnubg_program(), "-t", "-q", "-r", "-s", str(folder), "-p", str(folder / "script.py")],
        env={**os.environ, "MATCHLOG_GNUBG_JOB": str(folder / "job.json")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=600,
        check=True,
    )
    with FileLog(db) as log:
        annotations = log.annotations_of(match_id)
    return {
        "gnubg": json.loads((folder / "out.json").read_text()),
        "annotations": annotations,
        "sgf": (folder / "match.sgf").read_text(),
    }


def _ours(annotations: list[Any]) -> list[tuple[Luck, Decision | None]]:
    """matchlog's notes turn by turn: each roll's luck, and the play that follows it (None: no play)."""
    turns: list[tuple[Luck, Decision | None]] = []
    for annotation in annotations:
        note = annotation.note
        if isinstance(note, Luck):
            turns.append((note, None))
        elif isinstance(note, Decision):
            assert turns and turns[-1][1] is None and turns[-1][0].seat == note.seat
            turns[-1] = (turns[-1][0], note)
    return turns


def test_matchlogs_analysis_is_gnubgs_own_move_by_move(analysed: dict[str, Any]):
    own = analysed["gnubg"]["own"]
    turns = _ours(analysed["annotations"])
    assert len(turns) == len(own) > 20, "a turn for every roll gnubg read from the .mat"
    marked = 0
    for number, ((luck, decision), said) in enumerate(zip(turns, own, strict=True)):
        where = f"turn {number + 1}"
        assert luck.seat == said["player"], where
        assert luck.luck == pytest.approx(said["luck"], abs=1e-5), where  # gnubg's SGF keeps 5 decimals
        if said["played"] is None:
            assert decision is None, f"{where}: gnubg weighed no play (the roll could not be played)"
            continue
        assert decision is not None, where
        assert decision.after == pytest.approx(said["scores"][said["played"]], abs=1e-6), where
        assert decision.before == pytest.approx(max(said["scores"]), abs=1e-6), where
        assert decision.loss == pytest.approx(max(said["scores"]) - said["scores"][said["played"]], abs=2e-6), where
        assert decision.chance == pytest.approx(said["win"][said["played"]], abs=1e-6), where
        assert decision.mark == said["skill"], where
        assert decision.forced == (len(said["scores"]) == 1), where
        marked += decision.mark is not None
    assert marked > 0, "the match has marked plays: the marks were compared, not only their absence"


def test_gnubg_opens_matchlogs_analysed_sgf_with_the_marks(analysed: dict[str, Any]):
    own, read = analysed["gnubg"]["own"], analysed["gnubg"]["ours"]
    assert len(read) == len(own)
    for number, (mine, theirs) in enumerate(zip(read, own, strict=True)):
        where = f"turn {number + 1}"
        assert mine["skill"] == theirs["skill"], where
        assert mine["luck"] == pytest.approx(theirs["luck"], abs=1e-5), where
        if theirs["played"] is not None:
            # The plays it reads back are the best few and the one made, with gnubg's equities.
            assert mine["scores"][mine["played"]] == pytest.approx(theirs["scores"][theirs["played"]], abs=1e-6)
            assert max(mine["scores"]) == pytest.approx(max(theirs["scores"]), abs=1e-6), where
    assert "C[comment by admin: a coach's remark ?!]" in analysed["sgf"]


def test_every_note_names_gnubg_and_its_version_and_the_event_it_speaks_of(analysed: dict[str, Any]):
    version = subprocess.run([gnubg_program(), "--version"], capture_output=True, text=True, check=True).stdout
    authors = {a.author for a in analysed["annotations"] if a.author != "admin"}
    assert authors == {f"gnubg:0 {version.split()[2]}"}
    for annotation in analysed["annotations"]:
        assert annotation.event_hash is not None and annotation.hash is not None
    decisions = [a for a in analysed["annotations"] if isinstance(a.note, Decision)]
    assert all(a.seq <= (a.note.last_seq or a.seq) for a in decisions)
    assert all(" " not in a.note.played or "/" in a.note.played for a in decisions), "mat notation: 13/8 6/1*"


def test_match_play_with_the_cube_and_resignations_is_analysed_turn_by_turn():
    """Matches of match play (imported from GNU Backgammon's records: doubles, takes, drops,
    resignations, a roll resigned before it was played) are judged as gnubg reads them: its cube
    nodes are passed over, and every roll (a roll not played too) and every play is one note."""
    from matchlog.analysis.gnubg import GnubgAnalyser
    from matchlog.events import CheckerMoved, DiceRolled, DoubleOffered, OpeningRolled
    from matchlog.formats.gnubg import Roll, game_of

    from .gnubg_roundtrip import match_play

    matches = [match_play(seed) for seed in range(1, 9)]
    assert any(isinstance(r.event, DoubleOffered) for m in matches for r in m), "a match with a double"
    unplayed = [m for m in matches if any(isinstance(a, Roll) and not a.steps for a in game_of(m).actions)]
    assert unplayed, "a match with a roll resigned before it was played"
    for records, judged in zip(matches, GnubgAnalyser(0).analyse_many(matches), strict=True):
        rolls = [a for a in game_of(records).actions if isinstance(a, Roll)]
        events = {r.seq: r.event for r in records}
        lucks = [j for j in judged if isinstance(j.note, Luck)]
        decisions = [j for j in judged if isinstance(j.note, Decision)]
        assert {j.seq for j in lucks} <= {roll.seq for roll in rolls}
        assert all(isinstance(events[j.seq], DiceRolled | OpeningRolled) for j in lucks)
        assert [j.seq for j in decisions] == [roll.step_seqs[0] for roll in rolls if roll.steps]
        assert all(isinstance(events[j.seq], CheckerMoved) and j.seat == events[j.seq].seat for j in decisions)
