"""Reading back: time travel with snapshots, undo, fork, timelines and per-seat views."""

from __future__ import annotations

from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines.porrinha import CLOSED_HAND, ENGINE
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    GuessMade,
    HandChosen,
    HandHidden,
    HandReset,
    MatchStarted,
    Seat,
    UsageError,
    uuid7,
)
from matchlog.referee import play_match, seats_from_specs
from matchlog.referee import players as players_module
from matchlog.replay import effective, fold, fork, state_at, timeline, undo, undoable
from matchlog.replay import travel as travel_module
from matchlog.store import Store

from .conftest import play


def live_match(store: Store, specs: list[str], seed: int = 5, **options: object) -> tuple[UUID, list]:
    """Play one match, returning its id and the referee's state after every seq."""
    import random

    states: list = []
    seats = seats_from_specs("porrinha", specs)
    rng = random.Random(seed)
    players = [players_module.make_player("porrinha", s.player, random.Random(rng.random())) for s in seats]
    result = play_match(
        "porrinha",
        seats,
        players,
        store=store,
        options=dict(options),
        on_event=lambda event, state: states.append(state),
    )
    return result.match_id, states


def test_state_at_every_seq_equals_the_live_state(store: Store):
    match_id, states = live_match(store, ["random", "reasoner", "random", "reasoner"])
    for seq, expected in enumerate(states):
        assert state_at(store, match_id, seq).state == expected
    assert state_at(store, match_id).seq == len(states) - 1


def test_state_at_refuses_seqs_outside_the_match(store: Store):
    match_id, states = live_match(store, ["random", "random"])
    for seq in (-1, len(states)):
        with pytest.raises(UsageError) as caught:
            state_at(store, match_id, seq)
        assert caught.value.code == "usage.seq"


def test_snapshots_speed_time_travel_and_never_change_the_answer(store: Store, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(travel_module, "SNAPSHOT_EVERY", 16)
    match_id, states = live_match(store, ["random"] * 6, chopsticks=4)
    assert len(states) > 100
    last = len(states) - 1
    assert state_at(store, match_id, last).state == states[last]
    cached = store.query("SELECT count(*) FROM snapshots WHERE match_id = ?", [match_id])[0][0]
    assert cached >= last // 16 - 1
    # The states one fold cached (in one transaction) are each tied to the log, so each is trusted.
    for seq, engine in store.query("SELECT seq, engine FROM snapshots WHERE match_id = ?", [match_id]):
        assert store.snapshot_at(match_id, seq, engine)[1], seq
    # Folds that start from a snapshot give the same states.
    for seq in range(0, last + 1, 7):
        assert state_at(store, match_id, seq).state == states[seq]
    assert store.drop_snapshots() == cached
    assert state_at(store, match_id, last, cache_snapshots=False).state == states[last]


def test_an_undo_reaching_behind_a_snapshot_falls_back_to_an_earlier_one(store: Store, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(travel_module, "SNAPSHOT_EVERY", 4)
    match_id = uuid7()
    store.append(match_id, [started(2)], 0)
    seats_events = [HandChosen(seat=0, hand=1), HandChosen(seat=1, hand=2)]
    store.append(match_id, seats_events, 1)
    store.append(match_id, [GuessMade(seat=0, guess=3), GuessMade(seat=1, guess=0)], 3)
    store.append(match_id, [HandChosen(seat=1, hand=0), HandChosen(seat=0, hand=0)], 5)
    before_undo = state_at(store, match_id).state  # writes a snapshot at seq 4 (or later)
    assert store.query("SELECT count(*) FROM snapshots")[0][0] >= 1
    # Take back everything back to seq 3: the snapshot at 4 no longer holds.
    store.append(match_id, [ActionsUndone(seqs=(6,), reason="a")], 7)
    store.append(match_id, [ActionsUndone(seqs=(5,), reason="b")], 8)
    store.append(match_id, [ActionsUndone(seqs=(4,), reason="c")], 9)
    records = store.read(match_id)
    assert state_at(store, match_id).state == fold(records)
    assert state_at(store, match_id).state == state_at(store, match_id, 3).state
    assert state_at(store, match_id, 6).state == before_undo


def started(players: int) -> MatchStarted:
    return MatchStarted(
        game="porrinha",
        options={"chopsticks": 3, "policy": "lenient"},
        seats=tuple(Seat(f"p{i}", "random") for i in range(players)),
    )


# -- undo ------------------------------------------------------------------------------------


def in_play(store: Store, match_id: UUID) -> UUID:
    """A fork of a Porrinha match cut right after a round's last two hands: answers that reveal
    nothing, which an undo may take back (the hands of a settled round, shown to everyone, stay)."""
    records = store.read(match_id)
    cut = max(
        r.seq
        for r in records[2:]
        if isinstance(r.event, HandChosen) and isinstance(records[r.seq - 1].event, HandChosen)
    )
    return fork(store, match_id, cut)


def test_undo_takes_back_the_latest_answer_and_what_followed(store: Store):
    from matchlog.events import IllegalAction

    ended, states = live_match(store, ["random", "random", "random"])
    length = len(store.read(ended))
    with pytest.raises(IllegalAction) as refused:  # its last guess showed every hand of the round
        undo(store, ended, reason="disputed")
    assert refused.value.code == "audit.undo_past_reveal" and len(store.read(ended)) == length
    match_id = in_play(store, ended)
    records = store.read(match_id)
    cut = len(records) - 1
    taken = undoable(records)
    assert taken == (cut,) and records[cut].actor is not None
    appended = undo(store, match_id, reason="disputed")
    assert state_at(store, match_id).state == states[cut - 1]
    # The log keeps everything; the undo is one more event.
    records = store.read(match_id)
    assert len(records) == cut + 2
    assert records[-1].event == ActionsUndone(seqs=taken, reason="disputed", by=None)
    assert appended.first_seq == cut + 1
    # A second undo takes back the answer before that.
    undo(store, match_id)
    assert state_at(store, match_id).state == states[cut - 2]
    assert store.verify() == []


def test_the_effective_history_skips_undone_events_and_undos():
    with Store() as store:
        match_id = in_play(store, live_match(store, ["random", "random"])[0])
        undo(store, match_id)
        records = store.read(match_id)
        kept = effective(records)
        assert not any(isinstance(r.event, ActionsUndone) for r in kept)
        assert {r.seq for r in kept} | set(records[-1].event.seqs) | {records[-1].seq} == {r.seq for r in records}


# -- fork ------------------------------------------------------------------------------------


def test_fork_copies_a_prefix_into_a_new_match_that_names_its_origin(store: Store):
    match_id, states = live_match(store, ["random", "reasoner", "random"])
    new_id = fork(store, match_id, 10)
    info = store.match(new_id)
    assert (info.origin_match, info.origin_seq, info.last_seq, info.status) == (match_id, 10, 10, "running")
    assert state_at(store, new_id).state == states[10]
    original, copy = store.read(match_id, stop=10), store.read(new_id)
    assert [r.event for r in copy[1:]] == [r.event for r in original[1:]]
    assert copy[0].event.origin.match_id == match_id
    assert {r.event_id for r in copy}.isdisjoint({r.event_id for r in original})
    assert store.verify() == []
    with pytest.raises(UsageError):
        fork(store, match_id, len(states) + 5)


# -- timelines and views ---------------------------------------------------------------------


def test_the_timeline_ends_in_the_fold_and_marks_what_was_taken_back(store: Store):
    match_id = in_play(store, live_match(store, ["random", "random", "reasoner"])[0])
    undo(store, match_id, reason="check")
    records = store.read(match_id)
    steps = list(timeline(records))
    assert len(steps) == len(records)
    assert steps[-1].after == fold(records)
    taken = set(records[-1].event.seqs)
    assert {s.record.seq for s in steps if s.undone_by is not None} == taken
    assert all(s.text for s in steps)


@given(seed=st.integers(0, 2**32), players=st.integers(2, 5), data=st.data())
def test_a_seats_timeline_never_shows_another_seats_hand_before_it_is_revealed(seed: int, players: int, data):
    with Store() as store:
        match_id, _ = live_match(store, ["random"] * players, seed=seed, policy="lenient")
        records = store.read(match_id)
        seat = data.draw(st.integers(0, players - 1), label="seat")
        for step in timeline(records, seat, as_seat=True):
            event = step.event
            if isinstance(event, HandChosen | HandReset) or (
                isinstance(event, AnswerRejected) and event.decision == "hand"
            ):
                assert event.seat == seat
            for state in (step.before, step.after):
                assert all(h in (None, CLOSED_HAND) for s, h in enumerate(state.hands) if s != seat)
            assert str(step.text).count("closes a hand on") <= (1 if step.record.actor == seat else 0)
        # Spectators see no current hand at all.
        for step in timeline(records, None, as_seat=True):
            assert all(h in (None, CLOSED_HAND) for h in step.after.hands)
            assert not isinstance(step.event, HandChosen)


def test_hands_become_visible_to_everyone_once_the_round_settles():
    with Store() as store:
        match_id, states = live_match(store, ["random", "random", "random"])
        records = store.read(match_id)
        settled = next(i for i, s in enumerate(states) if s.round == 2)
        view = ENGINE.view(states[settled], 1)
        assert view.last_hands == states[settled].last_hands
        hidden = [s.event for s in timeline(records[: settled + 1], 1, as_seat=True) if isinstance(s.event, HandHidden)]
        assert {e.seat for e in hidden} == {0, 2}


def test_series_matches_replay_one_by_one():
    with Store() as store:
        series = play(store, ["random", "reasoner"], games=3)
        for result in series.matches:
            assert ENGINE.outcome(state_at(store, result.match_id).state) == result.outcome


def test_fold_all_gives_every_match_the_state_fold_gives_it(store: Store):
    """The bulk path (columns, one decode per payload) agrees with `fold` match by match, undos
    included, for every game."""
    from matchlog.referee import play_series
    from matchlog.replay import fold_all
    from matchlog.replay.fold import by_match

    play(store, ["random", "reasoner", "random"], games=3)
    for game, specs in (("backgammon", ["random"] * 2), ("davinci", ["random"] * 3), ("fish", ["random"] * 2)):
        play_series(game, specs, games=2, seed=3, store=store)
    undone = in_play(store, store.matches(game="porrinha", limit=1)[0].match_id)
    undo(store, undone, reason="appeal")
    expected = {str(records[0].match_id): fold(records) for records in by_match(store.records())}
    assert dict(fold_all(store)) == expected and len(expected) == 10
    one = [m.match_id for m in store.matches(game="fish", limit=1)]
    assert dict(fold_all(store, one)) == {str(one[0]): expected[str(one[0])]}
