"""Duels (`matchlog duel`): paired games on one committed chance, the sequential test, the report
as a projection of the log, Ctrl-C and resume, and the audit of duplicate pairs."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app
from matchlog.engines.chance import commitment
from matchlog.events import (
    ChanceCommitted,
    ChanceRevealed,
    DiceRolled,
    Duel,
    IllegalAction,
    OpeningRolled,
    Seat,
    Series,
    Sprt,
    encode,
)
from matchlog.referee import play_match
from matchlog.referee.backgammon import HeuristicPlayer, RandomPlayer
from matchlog.referee.duel import run_duel
from matchlog.referee.match import MemoryRecorder
from matchlog.referee.tournament import Setup, play_numbered
from matchlog.store import Store

runner = CliRunner()


def invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.stdout


def audit_findings(out: str) -> list[dict]:
    """Every finding of `matchlog audit --json`."""
    return [f for m in json.loads(out)["matches"] for f in m["findings"]]


@pytest.fixture(scope="module")
def decided(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    """The issue's duel: backgammon heuristic against random, SPRT 0 against 100 Elo, seed 1."""
    db = str(tmp_path_factory.mktemp("duel") / "duel.duckdb")
    out = invoke(
        "duel",
        "backgammon",
        "-p",
        "heuristic",
        "-p",
        "random",
        "--sprt",
        "elo0=0,elo1=100",
        "--seed",
        "1",
        "--db",
        db,
        "--json",
    )
    return db, json.loads(out)


def test_heuristic_against_random_stops_with_h1_and_an_interval_above_zero(decided: tuple[str, dict]) -> None:
    db, run = decided
    report = run["report"]
    assert report["verdict"] == "H1" and report["decided_at"] == report["pairs"] < 100
    assert report["llr"] >= report["upper"] == pytest.approx(2.944, abs=1e-3)
    assert report["estimate"]["elo_low"] > 0 and report["estimate"]["los"] > 0.99
    assert sum(report["counts"]) == report["pairs"] and len(report["counts"]) == 5
    assert "no game of this duel is analysed" in report["luck"] and report["luck_adjusted"] is None
    assert run["findings"] == [] and run["failures"] == []
    invoke("verify", "--db", db)
    invoke("audit", "--all", "--db", db)


def test_the_games_of_a_pair_share_one_commitment_with_the_seats_swapped(decided: tuple[str, dict]) -> None:
    db, run = decided
    with matchlog.open(db) as log:
        report = log.duel(run["report"]["duel_id"])
        for pair in report.pair_list:
            first, second = (log.read(m) for m in pair.matches)
            assert first[0].event.duel.pair == second[0].event.duel.pair == pair.pair
            assert [s.name for s in first[0].event.seats] == [s.name for s in second[0].event.seats][::-1]
            commitments = [
                next(r.event for r in game if isinstance(r.event, ChanceCommitted)) for game in (first, second)
            ]
            assert commitments[0] == commitments[1]
            # The opening roll is the same: each player met the dice the other met.
            openings = [next(r.event for r in game if isinstance(r.event, OpeningRolled)) for game in (first, second)]
            assert openings[0] == openings[1]


def test_the_report_is_a_projection_the_same_bytes_each_time(decided: tuple[str, dict]) -> None:
    db, run = decided
    duel_id = run["report"]["duel_id"]
    once = invoke("duel-report", duel_id, "--db", db, "--json")
    assert once == invoke("duel-report", duel_id, "--db", db, "--json")
    assert json.loads(once)["verdict"] == "H1"
    assert json.loads(once)["counts"] == run["report"]["counts"]


def test_an_analysed_pair_gives_the_first_players_luck_adjusted_result(
    decided: tuple[str, dict], tmp_path: Path
) -> None:
    db = str(tmp_path / "analysed.duckdb")
    shutil.copy(decided[0], db)  # the module's log keeps no analysis for the other tests
    report = decided[1]["report"]
    first = report["pair_list"][0]
    invoke("analyse", *first["matches"], "--analyser", "gnubg:0", "--db", db)
    said = json.loads(invoke("duel-report", report["duel_id"], "--db", db, "--json"))
    assert said["luck_games"] == 2 and said["luck"].startswith("luck-adjusted result of heuristic:")
    # Each game's luck-adjusted result is its result (+1 won) less the first player's luck plus the other's.
    with matchlog.open(db) as log:
        expected = []
        for seat, match in enumerate(first["matches"]):
            summary = next(s for s in log.analysis(match).summaries if s.seat == seat)
            expected.append(
                summary.result - summary.luck + next(s.luck for s in log.analysis(match).summaries if s.seat != seat)
            )
    assert said["luck_adjusted"] == pytest.approx(sum(expected) / 2)
    assert said["counts"] == report["counts"]  # analysis changes what is said of luck, never the score


def test_a_pair_whose_second_games_chance_was_changed_by_sql_is_named(
    decided: tuple[str, dict], tmp_path: Path
) -> None:
    db, run = decided
    copy = tmp_path / "tampered.duckdb"
    copy.write_bytes(Path(db).read_bytes())
    with matchlog.open(copy) as log:
        pair = log.duel(run["report"]["duel_id"]).pair_list[2]
        second = log.read(pair.matches[1])
    roll = next(r for r in second if isinstance(r.event, DiceRolled))
    changed = (roll.event.dice[0] % 6 + 1, roll.event.dice[1])
    with Store(copy) as store:
        store.query(
            "UPDATE events SET payload = replace(payload, ?, ?) WHERE match_id = ? AND seq = ?",
            [
                f'"dice":[{roll.event.dice[0]},{roll.event.dice[1]}]',
                f'"dice":[{changed[0]},{changed[1]}]',
                pair.matches[1],
                roll.seq,
            ],
        )
    out = invoke("audit", "--all", "--db", str(copy), "--json", code=1)
    findings = (
        [f for m in json.loads(out)["matches"] for f in m["findings"]]
        if out.lstrip().startswith("{")
        else [f for m in json.loads(out) for f in m["findings"]]
    )
    named = [f for f in findings if f["rule"] == "duel.chance_differs"]
    assert len(named) == 1 and named[0]["match_id"] == pair.matches[1] and named[0]["seq"] == roll.seq
    assert f"pair {pair.pair} of duel {run['report']['duel_id']}" in named[0]["message"]


def test_a_pair_game_played_on_another_seed_is_refused_and_named_though_it_audits_clean_alone(
    tmp_path: Path,
) -> None:
    # A referee that played the second game of a pair on a seed of its own: each game is
    # faithful to its own commitment; only the pair's rule sees that the luck was not shared. The
    # clerk refuses its commitment; written around the clerk, the audit names it.
    a, b = Seat("heuristic", "heuristic"), Seat("random", "random")
    sprt = Sprt(elo0=0.0, elo1=100.0)
    games = ((0, (a, b), 7), (1, (b, a), 8))
    for around in (False, True):
        db = tmp_path / f"forged-{around}.duckdb"
        with Store(db) as store:
            for game, seats, seed in games:
                players = [HeuristicPlayer(), RandomPlayer()] if game == 0 else [RandomPlayer(), HeuristicPlayer()]
                recorder = MemoryRecorder() if around else None
                table = {
                    "store": None if around else store,
                    "recorder": recorder,
                    "seed": seed,
                    "series": Series("forged-duel", game + 1, 2),
                    "duel": Duel(id="forged-duel", pair=1, game=game, games=2, sprt=sprt),
                }
                if game == 1 and not around:
                    with pytest.raises(IllegalAction) as refused:
                        play_match("backgammon", seats, players, **table)
                    assert refused.value.code == "duel.commitment_differs"
                    continue
                result = play_match("backgammon", seats, players, **table)
                if recorder is not None:
                    store.append(result.match_id, recorder.drafts, 0)  # the store itself: no judge
        if around:
            out = invoke("audit", "--all", "--db", str(db), "--json", code=1)
            rules = sorted({f["rule"] for f in audit_findings(out)})
            assert rules == ["duel.chance_differs", "duel.commitment_differs"]


def test_ctrl_c_keeps_every_finished_pair_and_a_resumed_duel_completes_its_pairs(tmp_path: Path) -> None:
    db = tmp_path / "stopped.duckdb"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "matchlog.cli",
            "duel",
            "backgammon",
            "-p",
            "random",
            "-p",
            "random",
            "--pairs",
            "2000",
            "--seed",
            "5",
            "--db",
            str(db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    said = b""
    while b"pair 3:" not in said and time.monotonic() < deadline:  # wait for three finished pairs
        said += process.stderr.readline()  # type: ignore[union-attr]
    assert b"pair 3:" in said, said
    os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C goes to the whole group
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert b"every finished pair is kept" in out and b"Traceback" not in err
    duel_id = out.split(b"duel ", 1)[1].split(b":", 1)[0].decode()
    with matchlog.open(db) as log:
        stopped = log.duel(duel_id)
    assert stopped.pairs >= 3 and stopped.verdict.startswith("undecided")
    # Resume: the games missing from begun pairs are played with their pairs' chance, then new pairs.
    target = stopped.last_pair + 2
    resumed = json.loads(
        invoke(
            "duel",
            "backgammon",
            "-p",
            "random",
            "-p",
            "random",
            "--pairs",
            str(target),
            "--resume",
            duel_id,
            "--db",
            str(db),
            "--json",
        )
    )
    report = resumed["report"]
    assert report["duel_id"] == duel_id and report["incomplete"] == 0 and report["pairs"] == target
    invoke("audit", "--all", "--db", str(db))
    # Resuming with other players is refused, naming the duel's.
    invoke("duel", "backgammon", "-p", "heuristic", "-p", "random", "--resume", duel_id, "--db", str(db), code=2)


def test_a_duel_of_four_seats_rotates_the_first_player_through_every_seat(tmp_path: Path) -> None:
    with matchlog.open(tmp_path / "fish.duckdb", write=True, mode="create") as log:
        run = run_duel(
            "fish", "maximin:1", "random", store=log, seats=4, pairs=2, seed=2, options={"random_board": True}
        )
        report = run.report
        assert report.pairs == 2 and report.seats == 4 and len(report.counts) == 2 * 4 * 3 + 1
        for pair in report.pair_list:
            seats = [[s.name for s in log.read(m)[0].event.seats] for m in pair.matches]
            assert [names.index("maximin:1") for names in seats] == [0, 1, 2, 3]
        assert all(m.passed for m in log.audit())


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["-p", "heuristic"], "usage.players"),
        (["-p", "heuristic", "-p", "random", "--sprt", "elo0=5,elo1=0"], "usage.sprt"),
        (["-p", "heuristic", "-p", "random", "--resume", "no-such-duel"], "store.unknown_match"),
    ],
)
def test_a_duel_that_makes_no_sense_is_a_clear_error(tmp_path: Path, args: list[str], code: str) -> None:
    result = runner.invoke(app, ["duel", "backgammon", *args, "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 2 and f"error[{code}]" in result.output, result.output
    assert "Traceback" not in result.output


class _Overlapping:
    """A pool that plays a duel's games one after another in this process, handing the writer the
    start and first events of each game before the end of the game before it: whenever the duel
    decides (or Ctrl-C is pressed, before game `interrupt_at` would end), one game is in play, as
    with worker processes, on any machine."""

    _events = msgspec.msgpack.Decoder(list[tuple[str, int, bytes]])

    def __init__(self, setup: Setup, interrupt_at: int | None = None) -> None:
        self.setup, self.interrupt_at = setup, interrupt_at
        self.next = 0
        self.rest: list[tuple] = []  # the game in play: what it sends after its first events

    def start(self) -> None:
        pass

    def hand_out(self, done: int) -> None:
        pass

    def _play(self, number: int) -> tuple[list[tuple], list[tuple]]:
        """Game `number` played whole: (its start and first events, everything after them)."""
        sent: list[tuple] = []
        play_numbered(self.setup, number, type("Sink", (), {"put": staticmethod(sent.append)}), _Never())
        kind, _, raw_id, _, payload = sent[1]
        assert kind == "events"
        events = self._events.decode(payload)
        encode = msgspec.msgpack.encode
        head = [sent[0], ("events", number, raw_id, 0, encode(events[:5]))]
        return head, [("events", number, raw_id, 5, encode(events[5:])), *sent[2:]]

    def receive(self, timeout: float) -> list[tuple] | None:
        if self.interrupt_at is not None and self.next == self.interrupt_at + 1:
            raise KeyboardInterrupt  # game `interrupt_at` is in play, the one before it ended
        if self.next < self.setup.total:
            head, rest = self._play(self.next)
            self.next += 1
            messages, self.rest = head + self.rest, rest
            return messages
        messages, self.rest = self.rest, []
        return messages or None

    def stop(self) -> list[tuple]:
        return []  # the game in play sent what it had

    def shortfall(self, missing: int, games: int) -> str:
        return f"{missing} of {games} games not played"


class _Never:
    @staticmethod
    def is_set() -> bool:
        return False


def _chance_of(records: list) -> tuple[str, str | None]:
    """A game's commitment, and the seed it revealed (None if none)."""
    promised = next(r.event.commitment for r in records if isinstance(r.event, ChanceCommitted))
    return promised, next((r.event.seed for r in records if isinstance(r.event, ChanceRevealed)), None)


def _abandoned(log: matchlog.Log) -> list[list]:
    """The records of each game of the log that ended abandoned."""
    return [log.read(info.match_id) for info in log.matches(status="abandoned")]


def test_a_game_in_play_when_the_duel_decides_reveals_its_seed_so_audit_re_derives_every_draw(
    tmp_path: Path,
) -> None:
    with matchlog.open(tmp_path / "decided.duckdb", write=True, mode="create") as log:
        run = run_duel(
            "backgammon", "heuristic", "random", store=log, sprt=Sprt(elo0=0.0, elo1=100.0), seed=1, pool=_Overlapping
        )
        assert run.report.verdict == "H1"
        (game,) = _abandoned(log)  # the game in play when the test decided
        promised, seed = _chance_of(game)
        assert seed is not None and commitment(bytes.fromhex(seed)) == promised
        audits = {a.match_id: a for a in log.audit()}
        assert all(a.passed for a in audits.values())
        checked = audits[str(game[0].match_id)].checked
        assert checked["chance_rederived"] == checked["chance"] > 0  # every draw, from the revealed seed


@pytest.mark.parametrize(
    ("duplicate", "in_play", "revealed"),
    [
        (True, 3, True),  # pair 2's second game: its first ended and revealed the pair's seed
        (True, 4, True),  # pair 3's first game: its partner will replay its draws, so no secret
        (False, 4, False),  # a fresh game's own seed, still secret while the duel may go on
    ],
)
def test_ctrl_c_reveals_a_seed_no_secret_keeps_the_others_and_a_resumed_duel_completes_its_pairs(
    tmp_path: Path, duplicate: bool, in_play: int, revealed: bool
) -> None:
    with matchlog.open(tmp_path / "stopped.duckdb", write=True, mode="create") as log:
        run = run_duel(
            "backgammon",
            "random",
            "random",
            store=log,
            pairs=5,
            seed=3,
            duplicate=duplicate,
            pool=lambda setup: _Overlapping(setup, interrupt_at=in_play),
        )
        assert run.interrupted and run.report.pairs == in_play // 2
        (game,) = _abandoned(log)
        assert game[0].event.duel.pair == in_play // 2 + 1
        promised, seed = _chance_of(game)
        assert (seed is not None) == revealed
        if seed is not None:
            assert commitment(bytes.fromhex(seed)) == promised
        (audited,) = log.audit([game[0].match_id])
        assert audited.passed and audited.checked["chance"] > 0
        assert audited.checked["chance_rederived"] == (audited.checked["chance"] if revealed else 0)
        # Resumed without its seed, the duel plays on to the pairs it planned, its pairs whole.
        resumed = run_duel("backgammon", "random", "random", store=log, resume=run.duel_id)
        assert resumed.report.pairs == 5 and resumed.report.incomplete == 0
        assert all(a.passed for a in log.audit())


def _moves(seed: int, players: list[object]) -> list[bytes]:
    """The events of one backgammon game between `players` on the dice of `seed`, as bytes."""
    seats = (Seat("a", "heuristic"), Seat("b", "heuristic"))
    with Store(":memory:") as store:
        result = play_match("backgammon", seats, players, store=store, seed=seed)
        return [encode(r.event) for r in store.read(result.match_id)[2:]]


def test_a_handicapped_heuristic_blunders_from_its_own_seed_and_replays_the_same() -> None:
    assert "heuristic:BLUNDER" in invoke("games")
    plain = _moves(4, [HeuristicPlayer(random.Random(1)), HeuristicPlayer(random.Random(2))])
    handicapped = _moves(4, [HeuristicPlayer(random.Random(1)), HeuristicPlayer(random.Random(2), "0.3")])
    assert handicapped != plain
    # The same seeds play the same match again: the blunders come from the player's own source.
    assert handicapped == _moves(4, [HeuristicPlayer(random.Random(1)), HeuristicPlayer(random.Random(2), 0.3)])
    # Until it blunders it breaks ties as the plain heuristic does from the same source.
    barely = _moves(4, [HeuristicPlayer(random.Random(1)), HeuristicPlayer(random.Random(2), 1e-12)])
    assert barely == plain


@pytest.mark.parametrize("spec", ["heuristic:2", "heuristic:-0.1", "heuristic:often", "heuristic:nan"])
def test_a_blunder_rate_outside_0_to_1_is_a_clear_error(tmp_path: Path, spec: str) -> None:
    result = runner.invoke(app, ["duel", "backgammon", "-p", "heuristic", "-p", spec, "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 2 and "error[usage.player]" in result.output and "blunder rate" in result.output


def test_a_duplicate_pair_shares_its_seats_randomness_so_a_player_against_itself_splits_every_pair(
    tmp_path: Path,
) -> None:
    # The heuristic breaks ties at random: only one source a seat for the pair keeps its two
    # games alike, so that the same player wins at the same seat, and every pair scores 1-1.
    with matchlog.open(tmp_path / "mirror.duckdb", write=True, mode="create") as log:
        report = run_duel("backgammon", "heuristic", "heuristic", store=log, pairs=6, seed=8).report
        assert report.counts == (0, 0, 6, 0, 0)
        for pair in report.pair_list:
            first, second = ([encode(r.event) for r in log.read(m)[2:]] for m in pair.matches)
            assert first == second  # the same game, the players swapped


def test_a_duel_is_named_by_a_unique_prefix_of_its_id_as_a_match_is(tmp_path: Path) -> None:
    db = tmp_path / "duels.duckdb"
    with matchlog.open(db, write=True, mode="create") as log:
        first = run_duel("porrinha", "random", "random", store=log, pairs=1, seed=3, jobs=1).duel_id
        second = run_duel("porrinha", "random", "random", store=log, pairs=1, seed=4, jobs=1).duel_id
    whole = invoke("duel-report", first, "--db", str(db), "--json")
    shared = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
    unique = first[: shared + 1]
    assert invoke("duel-report", unique, "--db", str(db), "--json") == whole
    assert json.loads(whole)["duel_id"] == first
    for given, says in (
        (first[:4], f"{first[:4]} is the start of more than one duel id; give more of it"),
        ("ffff", "no duel ffff in"),
        ("no-such-duel", "'no-such-duel' is not a duel id (hex digits and dashes)"),
    ):
        refused = runner.invoke(app, ["duel-report", given, "--db", str(db)])
        assert refused.exit_code == 2 and "Traceback" not in refused.output, refused.output
        assert refused.stderr.startswith(f"error[store.unknown_match]: {says}"), refused.stderr


def test_a_resumed_duel_plays_under_its_own_options_and_refuses_others(tmp_path: Path) -> None:
    """--resume plays on under the options the duel was started with (the duel's first game fixes
    them: the judge refuses a game under others), and refuses other options before anything is
    played; a resume that gave none once played on under the game's defaults, a second rule set."""
    db = str(tmp_path / "duel.duckdb")
    duel = ["duel", "porrinha", "-p", "random", "-p", "reasoner", "--db", db]
    first = json.loads(invoke(*duel, "--pairs", "1", "-o", "chopsticks=5", "--seed", "1", "--json"))
    duel_id = first["report"]["duel_id"]
    result = runner.invoke(app, [*duel, "--pairs", "2", "--resume", duel_id, "-o", "chopsticks=3"])
    assert result.exit_code == 2 and "error[usage.resume]" in result.stderr and "chopsticks=5" in result.stderr
    with matchlog.open(db) as log:
        assert len(log.matches()) == 2  # nothing played
    invoke(*duel, "--pairs", "2", "--resume", duel_id)
    with matchlog.open(db) as log:
        options = [json.loads(m.options) if isinstance(m.options, str) else m.options for m in log.matches()]
    assert len(options) == 4 and all(o["chopsticks"] == 5 for o in options), options
