"""Play goes on: a match undone by the arbiter, a fork, and a match a crash left running are each
played on to their end and audit clean, every draw re-derived from its segment's own seed; the
players given must fit the match's seats; each game picks up mid-round or mid-turn and tells its
players where play stands; and the audit still catches a commitment that is not at a resume."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import msgspec
import pytest
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.events import (
    ActionsUndone,
    ChanceCommitted,
    ChanceRevealed,
    CheckerMoved,
    DiceRolled,
    HandChosen,
    IllegalAction,
    MatchResumed,
    PenguinMoved,
    UsageError,
    draft,
    uuid7,
)
from matchlog.referee import backgammon as bg
from matchlog.referee import fish as fish_players
from matchlog.referee import play_series, resume_match
from matchlog.referee import porrinha as porrinha_players
from matchlog.replay import audit, fold, fork, undo
from matchlog.replay.judge import Judge
from matchlog.replay.projections import figures_of, stale
from matchlog.store import Store

runner = CliRunner()

#: A quick table of each game, and what its players are.
GAMES = {
    "porrinha": (["random", "reasoner", "random"], {}),
    "backgammon": (["heuristic", "random"], {}),
    "davinci": (["seed-ai", "random"], {"jokers": True}),
    "fish": (["maximin:1", "random"], {"rows": 4, "columns": 4}),
}


@pytest.fixture(scope="module")
def log() -> Iterator[Store]:
    with Store(":memory:") as store:
        yield store


def played(store: Store, game: str, seed: int = 1) -> UUID:
    specs, options = GAMES[game]
    return play_series(game, specs, seed=seed, store=store, options=options).matches[0].match_id


def judged(store: Store, match_id: UUID) -> Any:
    (report,) = audit(store, [match_id])
    return report


def chance_events(store: Store, match_id: UUID) -> int:
    return judged(store, match_id).checked["chance"]


def crashed_copy(store: Store, match_id: UUID, upto: int) -> UUID:
    """A new match holding `match_id`'s events up to seq `upto` and nothing after: what a referee
    killed there leaves (no seed revealed, no end)."""
    records = store.read(match_id, stop=upto)
    copy = uuid7()
    store.append(copy, [draft(r.event, at_us=r.at_us) for r in records], 0)
    return copy


@pytest.mark.parametrize("game", sorted(GAMES))
def test_an_arbiters_undo_of_an_ended_match_is_refused_for_its_reveals_stay(log: Store, game: str):
    # Every game's end reveals something (a chance seed, Porrinha's last hands): no undo takes it back.
    match_id = played(log, game)
    before = log.read(match_id)
    with pytest.raises(IllegalAction) as refused:
        undo(log, match_id, reason="appeal")
    assert refused.value.code in ("audit.undo_past_reveal", "chance.hidden_revealed"), refused.value
    assert log.read(match_id) == before


def undoable_copy(store: Store, match_id: UUID) -> UUID:
    """A crashed copy of `match_id` (from its middle on) whose last answer reveals nothing, so the
    arbiter may take it back."""
    records = store.read(match_id)
    for upto in range(len(records) // 2, len(records)):
        judge = Judge.of(records[: upto + 1])
        try:
            seqs = judge.undoable()
        except UsageError:
            continue
        if not judge.take_all([ActionsUndone(seqs=seqs, reason="appeal")]):
            return crashed_copy(store, match_id, upto)
    raise AssertionError("no answer to take back")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_match_undone_by_the_arbiter_plays_on_to_its_end_and_audits_clean(log: Store, game: str):
    match_id = undoable_copy(log, played(log, game))
    undo(log, match_id, reason="appeal")
    before = log.read(match_id)
    assert log.match(match_id).status == "running"
    result = resume_match(log, match_id, GAMES[game][0], seed=7)
    records = log.read(match_id)
    resumed = len(before)
    assert isinstance(records[resumed].event, MatchResumed) and records[resumed].event.players == tuple(GAMES[game][0])
    committed = [r.seq for r in records if isinstance(r.event, ChanceCommitted)]
    assert committed == ([1, resumed + 1] if game != "porrinha" else []), "one commitment a segment"
    info = log.match(match_id)
    assert info.status == "finished" and info.outcome == result.outcome
    report = judged(log, match_id)
    assert report.passed, report.findings
    if game != "porrinha":  # the crashed referee's seed died with it: the resumed segment is re-derived
        (note,) = report.notes
        assert note.startswith("the chance seed of the first segment was never revealed"), note
    # The figures the referee recorded are the log's own (its effective history), so stats need no refresh.
    assert (match_id, info.last_seq) not in stale(log)
    recorded = log.query("SELECT seat, figure, value FROM figures WHERE match_id = ? ORDER BY ALL", [str(match_id)])
    assert sorted(recorded, key=lambda r: (r[0] is not None, r)) == sorted(
        figures_of(records), key=lambda r: (r[0] is not None, r)
    )


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_fork_plays_on_to_its_end_and_audits_clean_with_its_origins_draws(log: Store, game: str):
    source = played(log, game, seed=2)
    records = log.read(source)
    at = len(records) // 2
    fork_id = fork(log, source, at)
    result = resume_match(log, fork_id, GAMES[game][0], seed=8)
    assert log.read(source) == records, "the origin is untouched"
    assert log.match(fork_id).status == "finished" and result.match_id == fork_id
    report = judged(log, fork_id)
    assert report.passed and report.notes == [], (report.findings, report.notes)
    assert report.checked["chance_rederived"] == report.checked["chance"]
    if game != "porrinha":  # the origin's seed, public there, is revealed in the fork too
        reveals = [r.event.seed for r in log.read(fork_id) if isinstance(r.event, ChanceRevealed)]
        origin_seed = next(r.event.seed for r in records if isinstance(r.event, ChanceRevealed))
        assert reveals[0] == origin_seed and len(reveals) == 2


def test_a_match_a_crash_left_running_plays_on_and_says_which_draws_it_cannot_re_derive(log: Store):
    source = played(log, "backgammon", seed=3)
    copy = crashed_copy(log, source, 40)
    resume_match(log, copy, ["random", "random"], seed=9)
    report = judged(log, copy)
    assert report.passed, report.findings
    (note,) = report.notes
    assert note.startswith("the chance seed of the first segment was never revealed"), "it died with its referee"
    draws_after = sum(isinstance(r.event, DiceRolled) for r in log.read(copy)[41:])
    assert report.checked["chance_rederived"] == draws_after > 0, "the resumed segment is re-derived"


def test_the_players_must_fit_the_match_seats_and_an_ended_match_is_not_resumed(log: Store):
    match_id = played(log, "porrinha", seed=4)
    names = [seat.name for seat in log.read(match_id, stop=0)[0].event.seats]  # type: ignore[attr-defined]
    with pytest.raises(UsageError) as ended:
        resume_match(log, match_id, GAMES["porrinha"][0])
    assert ended.value.code == "usage.ended" and "fork" in ended.value.message
    match_id = undoable_copy(log, match_id)
    undo(log, match_id)
    length = len(log.read(match_id))
    refusals = [
        (["random", "random"], "3 seats"),
        ([f"{names[0]}=random", "bob=random", "random"], f"seat 1 is {names[1]}, not bob"),
        (["random", "random", "nobody"], "unknown player"),
    ]
    for specs, fragment in refusals:
        with pytest.raises(UsageError) as caught:
            resume_match(log, match_id, specs)
        assert fragment in caught.value.message and caught.value.code in ("usage.players", "usage.player")
    assert len(log.read(match_id)) == length, "nothing recorded"
    resume_match(log, match_id, [f"{names[0]}=random", f"{names[1]}=reasoner", "random"], seed=1)
    assert log.match(match_id).players == tuple(names), "the seats keep their names"


# -- picking up mid-round, mid-turn --------------------------------------------------------------------


class PorrinhaWatcher(porrinha_players.RandomPlayer):
    def __init__(self) -> None:
        super().__init__(random.Random(5))
        self.heard: list[tuple[str, int, int | None]] = []

    def begin_game(self, table: Any) -> None:
        self.heard.append(("begin_game", table.round, table.my_hand))

    def hand(self, table: Any) -> int:
        self.heard.append(("hand", table.round, None))
        return super().hand(table)


def test_porrinha_picks_up_mid_round_and_a_player_learns_the_hand_it_already_closed(log: Store):
    source = played(log, "porrinha", seed=5)
    records = log.read(source)
    first_hand = next(r for r in records if isinstance(r.event, HandChosen))
    copy = crashed_copy(log, source, first_hand.seq)
    seat, hand = first_hand.event.seat, first_hand.event.hand  # type: ignore[attr-defined]
    watchers = [PorrinhaWatcher() for _ in range(3)]
    resume_match(log, copy, ["random"] * 3, players=watchers)
    heard = watchers[seat].heard
    assert heard[0] == ("begin_game", 1, hand), "begin_game shows the table with its own closed hand"
    assert ("hand", 1, None) not in heard, "it is not asked again for the hand it closed"
    assert judged(log, copy).passed


class BackgammonWatcher(bg.RandomPlayer):
    def __init__(self) -> None:
        super().__init__(random.Random(6))
        self.boards: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        self.outputs: list[str] = []

    def begin_game(self, board: Any) -> None:
        self.boards.append((board.dice, board.dice_played))

    def observe(self, output: Any, data: Any, side: Any) -> None:
        self.outputs.append(output.name)


def test_backgammon_picks_up_mid_turn_and_tells_the_board_and_the_dice(log: Store):
    source = played(log, "backgammon", seed=6)
    records = log.read(source)
    # A move that leaves the turn's other die to play.
    states = {r.seq: r for r in records}
    cut = next(
        r.seq
        for r in records
        if isinstance(r.event, CheckerMoved) and isinstance(states[r.seq + 1].event, CheckerMoved)
    )
    copy = crashed_copy(log, source, cut)
    watchers = [BackgammonWatcher(), BackgammonWatcher()]
    resume_match(log, copy, ["random", "random"], players=watchers)
    mover = records[cut].event.seat  # type: ignore[attr-defined]
    dice, played_dice = watchers[mover].boards[0]
    assert dice and played_dice, "begin_game's board has the turn's dice and the one already played"
    assert watchers[mover].outputs[:2] == ["GAME_STATE", "MOVE_ROLLS"], "then the board and the dice, as pygammon"
    assert "TURN_ROLLS" not in watchers[mover].outputs, "no opening roll again"
    assert judged(log, copy).passed


class FishWatcher(fish_players.RandomPlayer):
    def __init__(self) -> None:
        super().__init__(random.Random(7))
        self.initialized: list[Any] = []

    def initialize(self, board: Any, players: int, color: str) -> int:
        self.initialized.append((board, players, color))
        return super().initialize(board, players, color)


def test_fish_picks_up_mid_game_and_initializes_its_players_with_the_board(log: Store):
    source = played(log, "fish", seed=7)
    records = log.read(source)
    cut = next(r.seq for r in records if isinstance(r.event, PenguinMoved))
    copy = crashed_copy(log, source, cut)
    watchers = [FishWatcher(), FishWatcher()]
    resume_match(log, copy, ["random", "random"], players=watchers)
    expected = fold(log.read(copy, stop=cut)).board  # after the first move, with its hole
    assert [w.initialized for w in watchers] == [[(expected, 2, "red")], [(expected, 2, "white")]]
    assert judged(log, copy).passed


# -- the audit still catches what is wrong -------------------------------------------------------------


def planted(store: Store, match_id: UUID, change) -> tuple[UUID, int]:
    events, seq = change([r.event for r in store.read(match_id)])
    copy = uuid7()
    store.append(copy, [draft(e) for e in events], 0)
    return copy, seq


def test_a_commitment_that_is_not_at_a_resume_and_a_resumed_draw_changed_are_found(log: Store):
    source = played(log, "backgammon", seed=8)
    match_id = fork(log, source, len(log.read(source)) // 3)
    resume_match(log, match_id, ["random", "random"], seed=3)
    events = [r.event for r in log.read(match_id)]
    resumed = next(i for i, e in enumerate(events) if isinstance(e, MatchResumed))

    def second_commitment(events: list) -> tuple[list, int]:
        at = resumed + 5
        return [*events[:at], ChanceCommitted(algorithm="sha256-ctr/1", commitment="0" * 64), *events[at:]], at

    def other_dice(events: list) -> tuple[list, int]:
        at = next(i for i, e in enumerate(events) if i > resumed and isinstance(e, DiceRolled) and e.dice != (6, 6))
        return [*events[:at], msgspec.structs.replace(events[at], dice=(6, 6)), *events[at + 1 :]], at

    def resumed_without_commitment(events: list) -> tuple[list, int]:
        return [*events[: resumed + 1], *events[resumed + 2 :]], resumed

    for change, rule in [
        (second_commitment, "chance.committed_twice"),
        (other_dice, "chance.not_from_seed"),
        (resumed_without_commitment, "chance.uncommitted"),
    ]:
        copy, seq = planted(log, match_id, change)
        findings = judged(log, copy).findings
        assert (seq, rule) in [(f.seq, f.rule) for f in findings], (change.__name__, findings[:3])
        assert min(f.seq for f in findings if f.seq is not None) >= seq, "nothing is flagged before the fault"


# -- the commands --------------------------------------------------------------------------------------


def test_resume_and_fork_play_on_from_the_command_line(tmp_path: Any):
    db = str(tmp_path / "log.duckdb")
    assert runner.invoke(app, ["play", "fish", "-p", "maximin:1", "-p", "random", "--rows", "4", "--cols", "4",
                               "--seed", "1", "--db", db]).exit_code == 0  # fmt: skip
    listed = json.loads(runner.invoke(app, ["list", "--db", db, "--json"]).stdout)
    match_id = listed[0]["match_id"]
    result = runner.invoke(app, ["resume", match_id[:13], "-p", "random", "-p", "random", "--db", db])
    assert result.exit_code == 2 and "error[usage.ended]" in result.stderr
    result = runner.invoke(app, ["undo", match_id, "--db", db])  # its end revealed the board's seed
    assert result.exit_code == 2 and "error[audit.undo_past_reveal]" in result.stderr, result.stderr
    result = runner.invoke(app, ["fork", match_id, "--at", "9", "-p", "random", "-p", "random", "--db", db, "--json"])
    forked = json.loads(result.stdout)
    assert result.exit_code == 0 and forked["played"]["verified"] and forked["origin"]["seq"] == 9
    result = runner.invoke(app, ["fork", match_id, "--at", "9", "-p", "random", "--db", db])
    assert result.exit_code == 2 and "error[usage.players]" in result.stderr and "2 seats" in result.stderr
    assert len(json.loads(runner.invoke(app, ["list", "--db", db, "--json"]).stdout)) == 2, "no fork left unplayed"
    result = runner.invoke(app, ["audit", "--all", "--db", db])
    assert result.exit_code == 0 and "no findings" in result.stdout
    with Store(db, read_only=True) as store:
        kinds = [type(r.event) for r in store.read(UUID(forked["match_id"]))]
    assert MatchResumed in kinds and ActionsUndone not in kinds, "the fork was cut, and resumed"


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_game_applies_match_resumed_without_a_change(log: Store, game: str):
    from matchlog.engines import get as get_engine

    records = log.read(played(log, game, seed=9))
    engine = get_engine(game)
    middle = fold(records[: len(records) // 2])
    assert engine.apply(middle, MatchResumed(players=tuple(GAMES[game][0]))) == middle
    assert "resumes the match" in engine.describe(middle, MatchResumed(players=("a",) * 4), middle)
