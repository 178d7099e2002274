"""Players in processes of their own: a C bot and Python classes play through docs/protocol.md, and
whatever a player does (reads the referee's frames, exits, forks, floods, hangs, eats memory, keeps
answering illegally) ends in a ruling for its seat only, the match finishes, and no process is left."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from matchlog.engines import Rule
from matchlog.engines.davinci import ENGINE as DAVINCI
from matchlog.engines.davinci import HIDDEN
from matchlog.events import AnswerRejected, MatchEnded, PlayerRemoved, Seat, UsageError, uuid7
from matchlog.referee import ChildPlayer, Limits, MemoryRecorder, play_match, play_series, seats_from_specs
from matchlog.referee.davinci import DavinciMessages
from matchlog.referee.players import make_player
from matchlog.referee.sandbox import confinement
from matchlog.referee.tournament import run_tournament
from matchlog.replay import audit_records, timeline
from matchlog.store import Store

from .conftest import PATIENCE, wait_for

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "porrinha-bot"

PLAYERS = '''
import os, sys, time, random


class Cautious:
    """Holds a random hand; guesses its hand plus half the others' chopsticks. Notes its pid."""

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def begin_game(self, table):
        with open(os.environ.get("NOTES", "/dev/null"), "a") as notes:
            notes.write(f"{os.getpid()}\\n")

    def hand(self, table):
        return self.rng.randint(0, table.chopsticks(table.index))

    def guess(self, table):
        target = table.my_hand + (table.chopstick_count - table.chopsticks(table.index)) // 2
        for distance in range(table.chopstick_count + 1):
            for guess in (target - distance, target + distance):
                if table.valid_guess(guess):
                    return guess


class Honest:
    """A random player: a random hand, a random valid guess."""

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def hand(self, table):
        return self.rng.randint(0, table.chopsticks(table.index))

    def guess(self, table):
        return self.rng.choice([g for g in range(table.chopstick_count + 1) if table.valid_guess(g)])


class FrameReader(Honest):
    """Honest, unless the referee's state can be read from the frames of the process: then it says
    the true total of the hands, and notes in MARKER that it cheated."""

    def guess(self, table):
        for frame in sys._current_frames().values():
            while frame is not None:
                for value in list(frame.f_locals.values()):
                    state = getattr(value, "state", None)
                    hands = getattr(state, "hands", None)
                    if type(state).__name__ == "PorrinhaState" and None not in [
                        hands[s] for s in state.active_seats
                    ]:
                        total = sum(hands[s] for s in state.active_seats)
                        with open(MARKER, "a") as marker:
                            marker.write("read the referee's hands\\n")
                        if table.valid_guess(total):
                            return total
                frame = frame.f_back
        return super().guess(table)


class Exits(Honest):
    def hand(self, table):
        os._exit(3)


class Hangs(Honest):
    def hand(self, table):
        time.sleep(600)


class Floods(Honest):
    def hand(self, table):
        print("x" * 5_000_000)
        return 0


class Hungry(Honest):
    def hand(self, table):
        return len(bytearray(4 << 30))


class Slow(Honest):
    def hand(self, table):
        time.sleep(0.15)
        return 0


class ForkBomb(Honest):
    """Forks sleeping copies of itself, 200 at most, until the system says no."""

    def hand(self, table):
        for _ in range(200):
            if os.fork() == 0:
                time.sleep(600)
                os._exit(0)
        return 0

    def end_game(self, table):
        time.sleep(600)


class Stubborn:
    """A backgammon player that answers the same illegal move for ever."""

    def move(self, board):
        return (9, 99)
'''


@pytest.fixture(scope="module")
def players(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test players' file (its path also marks their processes in /proc)."""
    folder = tmp_path_factory.mktemp("players")
    path = folder / "process_players.py"
    path.write_text(PLAYERS.replace("MARKER", repr(str(folder / "marker"))))
    return path


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example C bot, built with its Makefile."""
    folder = tmp_path_factory.mktemp("c-bot")
    for name in ("Makefile", "porrinha_bot.c"):
        shutil.copy(EXAMPLE / name, folder / name)
    subprocess.run(["make", "-s", "-C", str(folder)], check=True, capture_output=True, timeout=120)
    return folder / "porrinha-bot"


def processes_of(marker: Path) -> list[int]:
    """Live processes whose command line names `marker` (zombies have none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if str(marker).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def events(recorder: MemoryRecorder) -> list:
    return [draft.event for draft in recorder.drafts]


def audited(recorder: MemoryRecorder) -> None:
    report = audit_records(recorder.records(uuid7()))
    assert report.passed, report.findings


# -- playing through the protocol --------------------------------------------------------------


def test_a_c_bot_and_a_python_class_in_a_child_play_porrinha_and_audit_clean(
    players: Path, c_bot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    notes = tmp_path / "notes"
    monkeypatch.setenv("NOTES", str(notes))  # the child's environment has no NOTES: it notes nothing
    specs = ["random", f"bot=cmd:{c_bot} --seed 3", "reasoner", f"cautious={players}:Cautious"]
    with Store() as store:
        series = play_series("porrinha", specs, games=3, seed=5, store=store)
        assert store.verify() == []
        for match in series.matches:
            records = list(store.records([match.match_id]))
            assert not [r for r in records if isinstance(r.event, PlayerRemoved | AnswerRejected)]
            report = audit_records(records)
            assert report.passed and report.checked["answers"] > 20, report
    assert sum(series.places["bot"].values()) == 3 and sum(series.places["cautious"].values()) == 3
    assert not notes.exists()  # ran in a process of its own, with an environment of its own
    assert processes_of(c_bot) == [] and processes_of(players) == []


def test_the_command_line_plays_programs_and_classes_in_or_out_of_process(players: Path, c_bot: Path, tmp_path: Path):
    from typer.testing import CliRunner

    from matchlog.cli import app

    db = tmp_path / "log.duckdb"
    for hosting in ([], ["--in-process"], ["--memory", "256"]):
        specs = ["-p", "random", "-p", f"bot=cmd:{c_bot}", "-p", f"{players}:Cautious"]
        result = CliRunner().invoke(app, ["play", "porrinha", *specs, "--games", "2", "--db", str(db), *hosting])
        assert result.exit_code == 0, result.output
        assert "2 matches recorded" in result.output and "their hash chains verify" in result.output
    result = CliRunner().invoke(app, ["play", "porrinha", "-p", "random", "-p", "cmd:./nowhere", "--db", str(db)])
    assert result.exit_code != 0 and "error[usage.player]" in result.output


def test_the_frame_reading_player_learns_nothing_and_plays_as_a_random_one(players: Path):
    marker = players.parent / "marker"
    cheat = [f"{players}:FrameReader", "random"]
    honest = [f"{players}:Honest", "random"]
    # In this process it reads the referee's hands and wins nearly every game...
    inside = play_series("porrinha", cheat, games=20, seed=11, in_process=True)
    assert marker.exists() and inside.places["FrameReader"].get(1, 0) >= 18
    marker.unlink()
    # ...in a child it finds nothing, and every game goes as it goes for a random player.
    child = play_series("porrinha", cheat, games=20, seed=11)
    same = play_series("porrinha", honest, games=20, seed=11)
    assert not marker.exists()
    assert [m.outcome.places for m in child.matches] == [m.outcome.places for m in same.matches]


@pytest.mark.parametrize(
    ("game", "spec", "options"),
    [
        ("backgammon", "matchlog.referee.backgammon:HeuristicPlayer", {}),
        ("davinci", "matchlog.referee.davinci:SeedAIPlayer", {"jokers": True}),
        ("fish", "matchlog.referee.fish:HousePlayer", {"random_board": True, "holes": 3}),
    ],
)
def test_every_game_plays_through_the_protocol(game: str, spec: str, options: dict):
    recorder = MemoryRecorder()
    seats = seats_from_specs(game, [spec, "random"])
    child = make_player(game, seats[0].player, random.Random(1))
    with child:
        assert isinstance(child, ChildPlayer)
        result = play_match(
            game,
            seats,
            [child, make_player(game, "random", random.Random(2))],
            options=options,
            recorder=recorder,
            seed=4,
        )
    assert result.outcome.result != "abandoned" and result.outcome.removed == ()
    assert sum(isinstance(e, AnswerRejected) and e.seat == 0 for e in events(recorder)) == 0
    audited(recorder)


OBSERVERS = '''
from matchlog.referee.backgammon import GameState, DieRolls, OutputType, Side, RandomPlayer as Backgammon
from matchlog.referee.davinci import SeedAIPlayer
from matchlog.referee.fish import RandomPlayer as Fish
from matchlog.engines import GameTree


class Listener(Backgammon):
    """Checks every pygammon output arrives as pygammon's types."""

    def __init__(self, seed=None):
        super().__init__()
        self.heard = 0

    def observe(self, output, data, side):
        expected = {OutputType.GAME_STATE: GameState, OutputType.TURN_ROLLS: DieRolls,
                    OutputType.MOVE_ROLLS: DieRolls, OutputType.GAME_WON: Side}
        if output in expected and not isinstance(data, expected[output]):
            raise TypeError(f"{output} came with {data!r}")
        self.heard += 1

    def end_game(self, board):
        if self.heard < 10:
            raise RuntimeError(f"heard only {self.heard} outputs")

    def move(self, board):
        return "undo" if board.dice_played and self.rng.random() < 0.2 else super().move(board)


class Watcher(SeedAIPlayer):
    def observe(self, view, text):
        if not isinstance(text, str) or view.turn < -1:
            raise TypeError(text)


class Follower(Fish):
    def listen(self, tree):
        if not isinstance(tree, GameTree) or tree.state.phase not in ("place", "move", "over"):
            raise TypeError(tree)

    def finalize(self, end):
        end.winners()
'''


@pytest.mark.parametrize(("game", "name"), [("backgammon", "Listener"), ("davinci", "Watcher"), ("fish", "Follower")])
def test_notifications_reach_a_child_as_the_objects_its_class_expects(game: str, name: str, tmp_path: Path):
    path = tmp_path / "observers.py"
    path.write_text(OBSERVERS)
    recorder = MemoryRecorder()
    seats = seats_from_specs(game, [f"{path}:{name}", "random"])
    with make_player(game, seats[0].player, random.Random(3)) as child:  # type: ignore[attr-defined]
        result = play_match(
            game, seats, [child, make_player(game, "random", random.Random(2))], recorder=recorder, seed=7
        )
    assert result.outcome.removed == (), [e for e in events(recorder) if isinstance(e, PlayerRemoved)]
    audited(recorder)


def test_a_da_vinci_message_carries_nothing_its_seat_may_not_see():
    recorder = MemoryRecorder()
    seats = (Seat("a", "seed-ai"), Seat("b", "random"), Seat("c", "random"))
    play_match(
        "davinci",
        seats,
        [make_player("davinci", s.player, random.Random(i)) for i, s in enumerate(seats)],
        options={"jokers": True},
        recorder=recorder,
        seed=2,
    )
    checked = 0
    for step in timeline(recorder.records(uuid7())):
        state = step.after
        for seat in range(3):
            view = DavinciMessages(seat).request("guess", (DAVINCI.view(state, seat),))["view"]
            assert all(tile in HIDDEN for tile in view["pile"])
            for owner, row in enumerate(view["rows"]):
                for position, tile in enumerate(row):
                    if owner != seat and not state.revealed[owner][position]:
                        assert tile in HIDDEN
                        checked += 1
    assert checked > 100


# -- whatever a player does, a ruling for its seat -----------------------------------------------


@pytest.mark.parametrize(
    ("name", "code", "detail", "limits"),
    [
        ("Exits", "player.exited", "exited with status 3", Limits()),
        ("Hangs", "player.timeout", "hand() gave no answer within 0.5 s", Limits()),
        ("Floods", "player.output", "more than 1048576 bytes to stderr", Limits()),
        ("Hungry", "player.memory", "ran out of memory", Limits(memory=256 << 20)),
        ("Slow", "player.match_time", "for the match", Limits(match_seconds=0.5)),
    ],
)
def test_a_misbehaving_player_is_ruled_out_and_the_match_finishes(
    players: Path, name: str, code: str, detail: str, limits: Limits
):
    recorder = MemoryRecorder()
    seats = seats_from_specs("porrinha", ["random", f"{players}:{name}", "random"])
    table = [make_player("porrinha", s.player, random.Random(i), limits=limits) for i, s in enumerate(seats)]
    try:
        # Only the player that hangs needs a short timeout; the others' rulings must not race one.
        timeout = 0.5 if name == "Hangs" else PATIENCE
        result = play_match("porrinha", seats, table, recorder=recorder, timeout=timeout)
    finally:
        table[1].close()  # type: ignore[attr-defined]
    removals = [e for e in events(recorder) if isinstance(e, PlayerRemoved)]
    assert [(e.seat, e.code) for e in removals] == [(1, code)] and detail in removals[0].reason, removals
    assert isinstance(events(recorder)[-1], MatchEnded) and result.outcome.removed == (1,)
    audited(recorder)
    assert processes_of(players) == []


def test_a_fork_bomb_is_bounded_and_ended_with_its_player(players: Path):
    recorder = MemoryRecorder()
    seats = seats_from_specs("porrinha", [f"{players}:ForkBomb", "random"])
    bomb = make_player("porrinha", seats[0].player, random.Random(1), limits=Limits(processes=16))
    found = confinement()
    bounded = found.pids_cgroup or not found.root
    with bomb:  # type: ignore[attr-defined]
        play_match(
            "porrinha",
            seats,
            [bomb, make_player("porrinha", "random", random.Random(2))],
            recorder=recorder,
            timeout=PATIENCE if bounded else 2.0,  # (unbounded, it ends only at its timeout)
        )
    removal = next(e for e in events(recorder) if isinstance(e, PlayerRemoved))
    if bounded:  # a bound holds: its 17th process was refused
        assert removal.code == "player.exception" and "Resource temporarily unavailable" in removal.reason
    else:  # root with no writable cgroup: nothing bounds it, but it still ends with its player
        assert removal.code == "player.timeout"
    assert isinstance(events(recorder)[-1], MatchEnded)
    assert processes_of(players) == []


REFEREE = """
import random, sys
from matchlog.referee import make_player, play_match, seats_from_specs
seats = seats_from_specs("porrinha", [sys.argv[1], "random"])
bomb = make_player("porrinha", seats[0].player, random.Random(1))
print("playing", flush=True)
play_match("porrinha", seats, [bomb, make_player("porrinha", "random", random.Random(2))], timeout=60)
"""


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_no_player_process_outlives_its_referee(players: Path, tmp_path: Path, how: signal.Signals):
    # The bomb forks its copies in hand(), then sleeps in end_game: the match never ends by itself.
    folder = tmp_path / "forks"
    folder.mkdir()
    copy = folder / "sleepers.py"
    copy.write_text(PLAYERS.replace("MARKER", repr(str(folder / "marker"))).replace("range(200)", "range(5)"))
    script = tmp_path / "referee.py"
    script.write_text(REFEREE)
    referee = subprocess.Popen(
        [sys.executable, str(script), f"{copy}:ForkBomb"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: len(processes_of(copy)) >= 6, "the player and its 5 copies")
        referee.send_signal(how)
        referee.wait(timeout=PATIENCE)
        if confinement().root or confinement().jail or how == signal.SIGINT:
            wait_for(lambda: processes_of(copy) == [], "the player's processes to end with the referee")
        else:  # unconfined, without a PID namespace, the copies of a killed referee's player may linger
            wait_for(lambda: len(processes_of(copy)) <= 5, "the player itself to end with the referee")
    finally:
        referee.kill()
        referee.wait()
        for pid in processes_of(copy):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("program", "code", "detail"),
    [
        ("/bin/true", "player.exited", "exited with status 0"),
        ("/bin/sh -c 'while read line; do echo oops; done'", "player.malformed", "which is not JSON"),
        # Two answers to the first call in one write, so the second is there before the next call
        # whatever the timing (lines printed at start could race the first call and pass as answers).
        (
            "/bin/sh -c 'read line; printf \"0\\n0\\n\"; while read line; do echo 0; done'",
            "player.malformed",
            "before it was asked",
        ),
        ('/bin/sh -c \'read line; echo \\{\\"error\\": \\"I give up\\"\\}\'', "player.failed", "I give up"),
    ],
)
def test_a_program_that_breaks_the_protocol_is_ruled_out(program: str, code: str, detail: str):
    recorder = MemoryRecorder()
    seats = seats_from_specs("porrinha", ["random", f"cmd:{program}"])
    table = [make_player("porrinha", s.player, random.Random(i)) for i, s in enumerate(seats)]
    with table[1]:  # type: ignore[attr-defined]
        play_match("porrinha", seats, table, recorder=recorder, timeout=PATIENCE)
    removal = next(e for e in events(recorder) if isinstance(e, PlayerRemoved))
    assert (removal.seat, removal.code) == (1, code) and detail in removal.reason, removal
    audited(recorder)


def test_player_specs_that_cannot_run_are_usage_errors(tmp_path: Path):
    dies = tmp_path / "dies.py"
    dies.write_text("import os\nos._exit(3)\n")
    with pytest.raises(UsageError, match="not a program this user can run"):
        seats_from_specs("porrinha", ["random", "cmd:./no-such-bot --fast"])
    with pytest.raises(UsageError, match=r"did not start: .*exited with status 3"):
        seats_from_specs("porrinha", ["random", f"{dies}:Dies"])
    with pytest.raises(UsageError, match="No closing quotation"):
        seats_from_specs("porrinha", ["random", "cmd:./bot 'unclosed"])


def test_a_tournament_plays_child_players_in_its_workers(players: Path, tmp_path: Path):
    with Store(tmp_path / "log.duckdb") as store:
        result = run_tournament(
            "porrinha", ["random", f"{players}:Cautious", "reasoner"], games=6, store=store, jobs=2, seed=3
        )
    assert result.finished == 6 and result.failures == () and result.findings == ()
    assert processes_of(players) == []


# -- the limit on rejected answers ---------------------------------------------------------------


def test_a_player_that_keeps_answering_illegally_is_removed_at_the_limit(players: Path):
    recorder = MemoryRecorder()
    seats = seats_from_specs("backgammon", [f"{players}:Stubborn", "heuristic"], in_process=True)
    outcome = play_match(
        "backgammon",
        seats,
        [make_player("backgammon", s.player, random.Random(1), in_process=True) for s in seats],
        recorder=recorder,
        seed=1,
    ).outcome
    removal = next(e for e in events(recorder) if isinstance(e, PlayerRemoved))
    assert (removal.seat, removal.code) == (0, Rule.REJECTION_LIMIT) and removal.reason.startswith("100 ")
    assert outcome.winners == (1,)
    audited(recorder)
    # A removal that claims more rejected answers than the log holds is an audit finding.
    records = recorder.records(uuid7())
    index = next(i for i, r in enumerate(records) if isinstance(r.event, PlayerRemoved))
    fewer = [r for i, r in enumerate(records) if not (index - 50 <= i < index)]
    report = audit_records([msgspec.structs.replace(r, seq=seq) for seq, r in enumerate(fewer)])
    assert [f.rule for f in report.findings] == ["audit.unexplained_removal"]


def test_the_fish_client_runs_the_users_class_in_the_clients_process(tmp_path: Path):
    from typer.testing import CliRunner

    from matchlog.cli import app
    from matchlog.referee.fish import HousePlayer
    from matchlog.referee.fish_remote import play_remote

    from .test_fish_tournament import Server, in_background

    path = tmp_path / "mine.py"
    path.write_text("from matchlog.referee.fish import RandomPlayer\n\nclass Mine(RandomPlayer):\n    pass\n")
    with Store(tmp_path / "remote.duckdb") as store:
        server = Server(
            store, min_players=2, max_players=2, wait=PATIENCE, timeout=PATIENCE, options={"rows": 3, "columns": 4}
        )
        alice = in_background(lambda: play_remote(HousePlayer(), "alice", port=server.port, timeout=PATIENCE))
        wait_for(lambda: server.sign_ups, "alice's sign-up")
        args = ["client", "fish", "--name", "bob", "-p", f"{path}:Mine", "--port", str(server.port), "--quiet"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "bob played 1 game(s)" in result.output
        assert server.join().kicked == [] and alice().games == 1
