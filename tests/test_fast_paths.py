"""The per-event Python taken out of bulk recording, folding and time travel (issue 25 item 4):
each faster path gives exactly what the path it replaces gives, and the time-travel cache is
bounded, right at every step after undos and growth, and holds no seat's view."""

from __future__ import annotations

import random
from uuid import UUID

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines import get as get_engine
from matchlog.engines.views import shown_state
from matchlog.events import (
    ActionsUndone,
    Event,
    MatchResumed,
    MatchStarted,
    Seat,
    encode,
    encode_texts,
    uuid7,
    uuid7_texts,
)
from matchlog.events.envelope import _text, _uuid7_ints
from matchlog.replay import fold, fold_all, state_at, timeline
from matchlog.replay.fold import _fold_events
from matchlog.replay.steps_cache import STEP_EVERY, StepCache, _Held, step_cache
from matchlog.replay.views import seat_state_at
from matchlog.store import Store
from matchlog.store.chain import chain_hash, chain_hashes

# -- ids and the chain --------------------------------------------------------------------------


@given(st.integers(1, 5_000))
def test_ids_written_as_text_are_version_7_in_order_and_canonical(count: int):
    before = [_text(v) for v in _uuid7_ints(3)]
    made = uuid7_texts(count)
    around = before + made + [_text(v) for v in _uuid7_ints(3)]
    assert around == sorted(around) and len(set(around)) == len(around)
    for text in made:
        parsed = UUID(text)
        assert str(parsed) == text and parsed.version == 7 and parsed.variant == "specified in RFC 4122"


def test_ids_past_a_millisecond_counter_take_the_next_millisecond():
    made = [UUID(t).int for t in uuid7_texts(3 * 0x1000)]  # more than one ms's counter can hold
    stamps = [(value >> 80, value >> 64 & 0xFFF) for value in made]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert len({ms for ms, _ in stamps}) >= 3


_opt_seat = st.none() | st.integers(0, 32_767)


@given(
    st.binary(min_size=32, max_size=32),
    st.integers(0, 10**6),
    st.lists(st.tuples(_opt_seat, _opt_seat, st.text(max_size=20), st.integers(-(2**60), 2**60)), max_size=20),
)
def test_chain_hashes_are_chain_hash_row_by_row(prev: bytes, first: int, rows: list):
    match_id = str(uuid7())
    ids = uuid7_texts(len(rows)) if rows else []
    actors, seats, payloads, at_us = ([r[i] for r in rows] for i in range(4))
    types = [f"t{i}" for i in range(len(rows))]
    versions = [1 + i % 3 for i in range(len(rows))]
    expected, head = [], prev
    for k in range(len(rows)):
        head = chain_hash(
            head, match_id, first + k, ids[k], at_us[k], actors[k], "g", types[k], versions[k], seats[k], payloads[k]
        )
        expected.append(head)
    got = chain_hashes(prev, match_id, first, ids, at_us, actors, "g", types, versions, seats, payloads)
    assert got == expected


@given(st.integers(0, 1_000), st.lists(st.text(), max_size=4))
def test_events_encoded_together_are_each_encoded_alone(seed: int, names: list[str]):
    odd = MatchStarted(  # any text (newlines, U+2028, NUL) in a payload's strings
        game="porrinha", options={name: name for name in names}, seats=tuple(Seat(name, "random") for name in names)
    )
    events = [*_porrinha(seed, 30), odd, *_porrinha(seed + 1, 5)]
    assert encode_texts(events) == [encode(event).decode() for event in events]
    assert encode_texts([]) == []


# -- bulk appends, a column at a time --------------------------------------------------------------


def _porrinha(seed: int, events: int, players: int = 3) -> list[Event]:
    """A Porrinha match of random legal answers, cut at `events` events (or its end)."""
    engine = get_engine("porrinha")
    rng = random.Random(seed)
    started = MatchStarted(
        game="porrinha", options={"chopsticks": 2}, seats=tuple(Seat(f"p{i}", "random") for i in range(players))
    )
    state, log = engine.start(started), [started]
    while len(log) < events:
        turn = engine.to_act(state)
        if turn is None:
            break
        action = rng.choice(engine.legal(state, turn.seat))
        state = engine.apply(state, action)
        log.append(action)
    return log


def test_a_bulk_append_stores_what_appends_one_at_a_time_store(tmp_path):
    matches = [_porrinha(seed, 40 + seed) for seed in range(6)]
    ids = [uuid7() for _ in matches]
    with Store(tmp_path / "bulk.duckdb") as bulk, Store(tmp_path / "one.duckdb") as one:
        bulk.append_bulk([(m, events, 0) for m, events in zip(ids, matches, strict=True)])
        for match_id, events in zip(ids, matches, strict=True):
            for seq, event in enumerate(events):
                one.append(match_id, [event], seq)
        for match_id in ids:
            a, b = bulk.read(match_id), one.read(match_id)
            assert [(r.seq, r.event, r.actor) for r in a] == [(r.seq, r.event, r.actor) for r in b]
            assert bulk.match(match_id).last_seq == one.match(match_id).last_seq
        assert bulk.verify() == [] and one.verify() == []


def test_a_bulk_append_refuses_the_first_bad_event_and_writes_nothing(store: Store):
    good = _porrinha(1, 20)
    bad = [*good[:5], good[0], *good[5:]]  # a second match.started at seq 5
    with pytest.raises(Exception, match="already started") as refused:
        store.append_bulk([(uuid7(), good, 0), (uuid7(), bad, 0)])
    assert getattr(refused.value, "code", None) == "store.bad_start"
    assert store.count() == 0


# -- folding every match ---------------------------------------------------------------------------


@given(st.integers(0, 10_000), st.integers(2, 5), st.integers(1, 400))
def test_porrinha_folds_a_run_as_it_applies_each_event(seed: int, players: int, events: int):
    engine = get_engine("porrinha")
    log = _porrinha(seed, events, players)
    one_by_one = engine.start(log[0])
    for event in log[1:]:
        one_by_one = engine.apply(one_by_one, event)
    for cut in {1, max(1, len(log) // 2), len(log)}:  # from the start, and from a state mid-round
        before = engine.start(log[0])
        for event in log[1:cut]:
            before = engine.apply(before, event)
        assert engine.apply_all(before, log[cut:]) == one_by_one


def test_fold_all_decodes_old_versions_and_folds_undos_as_fold_does(store: Store):
    plain = _porrinha(3, 60)
    undone = [*_porrinha(4, 30), ActionsUndone(seqs=(29, 28), reason="test")]
    ids = [uuid7(), uuid7()]
    store.append_bulk([(ids[0], plain, 0), (ids[1], undone, 0)])
    expected = {str(m): fold(store.read(m)) for m in ids}
    assert dict(fold_all(store)) == expected
    # A batch boundary inside a match, and an event stored at an older version (decoded one by one).
    assert dict(_fold_all_in_batches(store, 7)) == expected
    store.query("UPDATE events SET version = 1 WHERE type = 'match.started'")
    assert dict(fold_all(store)) == expected


def _fold_all_in_batches(store: Store, rows: int):
    lines = store.event_lines
    store.event_lines = lambda match_ids=None: lines(match_ids, batch_rows=rows)  # type: ignore[method-assign]
    try:
        yield from fold_all(store)
    finally:
        del store.event_lines


def test_fold_events_skips_nothing_when_told_there_are_no_undos():
    log = _porrinha(5, 50)
    assert _fold_events(log, undone=False) == _fold_events(log)


# -- the time-travel cache ---------------------------------------------------------------------------


def _with_undos(
    seed: int, events: int, undos: list[tuple[int, int]], resumed: frozenset[int] = frozenset()
) -> list[Event]:
    """A Porrinha match with undos: after each (at, count), the last `count` effective events are
    taken back (as the log would hold them; the store judges nothing); after each seq in `resumed`,
    a match.resumed (a segment event, which no undo takes back)."""
    log = _porrinha(seed, events)
    out: list[Event] = []
    effective: list[int] = []
    marks = dict(undos)
    for event in log:
        out.append(event)
        if not isinstance(event, MatchStarted):
            effective.append(len(out) - 1)
        if len(out) - 1 in resumed:
            out.append(MatchResumed(players=("random",) * 3))
        count = marks.get(len(out) - 1)
        if count and len(effective) > count:
            taken = tuple(effective[-count:])
            del effective[-count:]
            out.append(ActionsUndone(seqs=taken, reason="test"))
    return out


def _truth(store: Store, match_id: UUID) -> list:
    return [step.after for step in timeline(store.read(match_id))]


@given(
    st.integers(0, 1_000),
    st.integers(2, 4 * STEP_EVERY),
    st.lists(st.tuples(st.integers(1, 4 * STEP_EVERY), st.integers(1, STEP_EVERY + 3)), max_size=4),
    st.lists(st.integers(0, 10**6), min_size=1, max_size=30),
    st.integers(1, 3),
)
def test_every_step_from_memory_is_the_state_the_log_gives(seed, events, undos, asks, parts):
    log = _with_undos(seed, events, undos)
    cuts = sorted({len(log) * k // parts for k in range(1, parts + 1)} - {0})
    with Store(":memory:") as store:
        match_id = uuid7()
        stored = 0
        for cut in cuts:  # the match grows between the steps
            store.append(match_id, log[stored:cut], stored)
            stored = cut
            truth = _truth(store, match_id)
            for ask in [*asks, 0, cut - 1]:
                seq = ask % cut
                assert state_at(store, match_id, seq).state == truth[seq]
        assert match_id in step_cache(store).held()


@given(
    st.integers(0, 1_000),
    st.integers(2, 6 * STEP_EVERY),
    st.lists(st.tuples(st.integers(1, 6 * STEP_EVERY), st.integers(1, STEP_EVERY + 3)), max_size=4),
    st.frozensets(st.integers(0, 6 * STEP_EVERY), max_size=4),
)
def test_a_step_through_apply_all_is_the_fold_event_by_event(seed, events, undos, resumed):
    log = _with_undos(seed, events, undos, resumed)
    held = _Held(get_engine("porrinha"), [])
    held.extend(log[: len(log) // 2])
    held.extend(log[len(log) // 2 :])  # (held in two reads, as a match that grows)
    assert held.apply_all is not None
    for seq in range(len(log)):
        assert held.state(seq) == held.at(seq)[0]


def test_steps_after_an_undo_and_in_a_fork_come_from_memory_right(tmp_path):
    from matchlog.file import FileLog

    played = _porrinha(3, 60)
    with FileLog(tmp_path / "log.duckdb", mode="create") as log:
        match_id = uuid7()
        log.store.append(match_id, played, 0)
        store = log.store
        original = _truth(store, match_id)
        for seq in range(len(played)):  # the original, stepped from memory
            state_at(store, match_id, seq)
        fork = log.fork(match_id, at=2)  # (a hand chosen: the judge lets it be undone)
        for seq in range(3):
            assert state_at(store, fork, seq).state == original[seq]
        log.undo(fork)
        after = _truth(store, fork)
        assert after[:3] == original[:3]  # an undo changes no earlier state
        for seq in range(len(after)):
            assert state_at(store, fork, seq).state == after[seq]
        assert after[-1] == original[1]
        for seq in range(len(played)):
            assert state_at(store, match_id, seq).state == original[seq]
        assert {match_id, fork} <= set(step_cache(store).held())


def test_the_cache_holds_whole_states_and_each_seat_gets_its_own_view(store: Store):
    log = _porrinha(9, 120)
    match_id = uuid7()
    store.append(match_id, log, 0)
    engine = get_engine("porrinha")
    truth = _truth(store, match_id)
    for _ in range(2):  # the second pass is served from memory
        for seq in range(len(log)):
            for seat in (None, 0, 1, 2):
                shown = seat_state_at(store, match_id, seq, seat)
                assert shown.state == shown_state(engine, truth[seq], seat)
                assert shown.view_of == seat
    assert match_id in step_cache(store).held()
    assert state_at(store, match_id, 20).state == truth[20]  # a seat's view never became the state


@given(st.lists(st.integers(0, 5), min_size=1, max_size=30), st.integers(50, 400))
def test_the_cache_never_holds_more_events_than_its_bound(order, limit):
    matches = [_porrinha(seed, 30 + 25 * seed) for seed in range(6)]
    with Store(":memory:") as store:
        ids = [uuid7() for _ in matches]
        store.append_bulk([(m, events, 0) for m, events in zip(ids, matches, strict=True)])
        cache = StepCache(limit)
        engine = get_engine("porrinha")
        for pick in order:
            for _ in range(2):
                seq = len(matches[pick]) // 2
                got = cache.state(store, ids[pick], seq, engine)
                assert got is None or got == _truth(store, ids[pick])[seq]
            assert cache.events <= limit
            assert cache.events == sum(len(matches[ids.index(m)]) for m in cache.held())
            if len(matches[pick]) > limit:
                assert ids[pick] not in cache.held()


def test_a_seq_past_the_end_is_refused_as_before(store: Store):
    from matchlog.events import UsageError

    log = _porrinha(2, 30)
    match_id = uuid7()
    store.append(match_id, log, 0)
    for _ in range(3):
        state_at(store, match_id, 3)
    with pytest.raises(UsageError):
        state_at(store, match_id, len(log) + 5)


def _settle_as_written_before(state):
    """Porrinha's settlement as it was written before it made one table (the reference)."""
    from matchlog.engines.porrinha import NO_HAND, NOT_PLAYING, PENDING_GUESS, _put

    if PENDING_GUESS in state.guesses:
        return state
    active = state.active_seats
    if len(active) < 2 or any(state.hands[s] is None or state.guesses[s] == PENDING_GUESS for s in active):
        return state
    total = sum(state.hands[s] or 0 for s in active)
    winner = next((s for s in active if state.guesses[s] == total), -1)
    chopsticks, out = state.chopsticks, state.out
    if winner >= 0:
        chopsticks = _put(chopsticks, winner, chopsticks[winner] - 1)
        if chopsticks[winner] == 0:
            out = (*out, winner)
    settled = msgspec.structs.replace(state, chopsticks=chopsticks, out=out)
    if winner >= 0 and settled.active(winner):
        first = winner
    else:
        after = winner if winner >= 0 else state.first_guesser
        n = state.players
        first = next(((after + i) % n for i in range(1, n + 1) if settled.active((after + i) % n)), after)
    return msgspec.structs.replace(
        settled,
        round=state.round + 1,
        first_guesser=first,
        last_hands=tuple(NO_HAND if h is None else h for h in state.hands),
        last_guesses=state.guesses,
        last_total=total,
        last_winner=winner,
        hands=(None,) * state.players,
        guesses=tuple(PENDING_GUESS if settled.active(s) else NOT_PLAYING for s in range(state.players)),
    )


@given(st.integers(0, 10_000), st.integers(2, 5), st.lists(st.integers(0, 4), max_size=3))
def test_porrinha_settles_every_round_as_it_did(seed: int, players: int, removals: list[int]):
    from matchlog.engines import porrinha
    from matchlog.events import PlayerRemoved

    engine = get_engine("porrinha")
    rng = random.Random(seed)
    started = MatchStarted(
        game="porrinha", options={"chopsticks": 2}, seats=tuple(Seat(f"p{i}", "random") for i in range(players))
    )
    state, log = engine.start(started), [started]
    while engine.to_act(state) is not None and len(log) < 300:
        if removals and rng.random() < 0.05:
            event: Event = PlayerRemoved(seat=removals.pop() % players, code="test", reason="test")
        else:
            turn = engine.to_act(state)
            assert turn is not None
            event = rng.choice(engine.legal(state, turn.seat))
        state = engine.apply(state, event)
        log.append(event)
    now = engine.start(started)
    for event in log[1:]:
        now = engine.apply(now, event)
    original = porrinha._settle_if_complete
    porrinha._settle_if_complete = _settle_as_written_before
    try:
        then = engine.start(started)
        for event in log[1:]:
            then = engine.apply(then, event)
    finally:
        porrinha._settle_if_complete = original
    assert now == then == state
