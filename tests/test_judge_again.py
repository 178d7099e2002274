"""The second attack on the one judge (issue 22, second round): chance that an undo re-rolled, a
revealed seed played on, events naming seats not at the table, a rejection under another rule, a
rejection limit read from the referee's own words, a resume that bricked a match, and writes that
went around the judge (`/undo`, `/abandon`, fork, the Python API's append). Each case was taken
(or answered with a 500) before; each is now judged where every write is judged, with a code."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchlog.engines import CHANCE
from matchlog.engines import get as get_engine
from matchlog.events import (
    ActionsUndone,
    AnswerRejected,
    Event,
    MatchEnded,
    MatchResumed,
    Outcome,
    PlayerRemoved,
    draft,
    uuid7,
)
from matchlog.replay import audit
from matchlog.replay.judge import Judge
from matchlog.store import Store

from .conftest import Served
from .test_attack import cli, forged, started
from .test_judge import RemoteReferee, _code

# -- item 4: a seat that is not at the table -----------------------------------------------------


@pytest.mark.parametrize(("game", "seat"), [("porrinha", 2), ("porrinha", -1), ("backgammon", -1), ("backgammon", 2)])
def test_an_event_naming_a_seat_not_at_the_table_is_refused_by_the_judge(served: Served, game: str, seat: int):
    removed = PlayerRemoved(seat=seat, code="player.timeout", reason="gone")
    judge = Judge(started(game, 2))
    assert [f.rule for f in judge.take_all([removed])] == ["match.no_such_seat"]
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match = RemoteReferee(client, served, game, "service")
        before = match.stored()
        answer = match.send(removed)
        assert _code(answer) == (422, "match.no_such_seat"), answer.text
        assert match.stored() == before
        state = client.get(f"/api/matches/{match.match_id}/state")
        assert state.status_code == 200, state.text


def test_an_outcome_that_does_not_place_the_table_is_refused_by_the_judge():
    judge = Judge(started("porrinha", 2))
    abandoned = MatchEnded(outcome=Outcome(places=(1, 1, 1), winners=(), result="abandoned", removed=(2,)))
    assert [f.rule for f in judge.take_all([abandoned])] == ["match.no_such_seat"]


# -- item 5: a rejection recorded under another rule ---------------------------------------------

WRONG_CODE = AnswerRejected(seat=0, decision="hand", answer="5", code="porrinha.not_an_integer", message="m")


def test_a_rejection_under_another_rule_is_refused_naming_the_rule(served: Served, tmp_path: Path):
    judge = Judge(started("porrinha", 2))
    found = judge.take_all([WRONG_CODE])
    assert [f.rule for f in found] == ["audit.wrong_code"]
    assert found[0].evidence["rule"] == "porrinha.hand_out_of_range", found[0].evidence
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match = RemoteReferee(client, served, "porrinha", "service")
        answer = match.send(WRONG_CODE)
        assert _code(answer) == (422, "audit.wrong_code"), answer.text
    path = tmp_path / "forged.jsonl"
    path.write_bytes(forged("porrinha", [started("porrinha", 2), WRONG_CODE]))
    _, err = cli("import", path, "--db", tmp_path / "log.duckdb", code=2)
    assert err.startswith("error[store.import_rejected]: line 2: ") and "[audit.wrong_code]" in err, err


def test_the_audit_of_a_log_holding_it_reports_it_and_every_other_match(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    cli("play", "porrinha", "-p", "random", "-p", "random", "--games", "2", "--seed", "1", "-q", "--db", db)
    with Store(db) as store:  # written around the judge, as an edit of the file would be
        bad = uuid7()
        store.append(bad, [draft(started("porrinha", 2)), draft(WRONG_CODE)], 0)
    out, _ = cli("audit", "--all", "--json", "--db", db, code=1)
    reports = msgspec.json.decode(out)["matches"]
    assert len(reports) == 3
    assert [f["rule"] for r in reports if r["match_id"] == str(bad) for f in r["findings"]] == ["audit.wrong_code"]
    assert all(not r["findings"] for r in reports if r["match_id"] != str(bad))


def test_an_unexpected_error_in_one_matchs_audit_is_a_finding_of_that_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import sys

    audit_module = sys.modules["matchlog.replay.audit"]
    db = tmp_path / "log.duckdb"
    cli("play", "porrinha", "-p", "random", "-p", "random", "--games", "3", "--seed", "1", "-q", "--db", db)
    with Store(db) as store:
        ids = sorted(row[0] for row in store.query("SELECT match_id FROM matches"))
        broken = ids[1]
        real = audit_module.check_pair

        def check_pair(store_: Any, records: Any, report: Any) -> None:
            if records[0].match_id == broken:
                raise ZeroDivisionError("a bug in one match's audit")
            real(store_, records, report)

        monkeypatch.setattr(audit_module, "check_pair", check_pair)
        reports = list(audit(store))
    assert [r.match_id for r in reports] == [str(m) for m in ids]
    by_id = {r.match_id: r for r in reports}
    assert [f.rule for f in by_id[str(broken)].findings] == ["audit.internal"]
    assert "ZeroDivisionError" in by_id[str(broken)].findings[0].message
    assert all(by_id[str(m)].passed for m in ids if m != broken)


# -- item 6: a resume in a match whose chance the service draws ----------------------------------


def test_a_referee_cannot_resume_a_match_whose_chance_the_service_draws(served: Served):
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match = RemoteReferee(client, served, "backgammon", "service")
        before = match.stored()
        answer = match.send(MatchResumed(players=("a", "b")))
        assert _code(answer) == (422, "chance.from_service"), answer.text
        assert match.stored() == before
        match.until_a_seat_acts(own_chance=False)  # the service still draws its chance
        report = client.get(f"/api/matches/{match.match_id}/audit", headers=served.headers()).json()
        assert report["findings"] == []


def test_a_judge_that_cannot_draw_says_so_with_a_code():
    from matchlog.events import IllegalAction

    judge = Judge(started("backgammon", 2))  # no seed known, and no random source given
    with pytest.raises(IllegalAction) as refused:
        judge.draw(None)
    assert refused.value.code == "chance.uncommitted"


# -- item 7: the rejection limit is the game's ----------------------------------------------------


def test_the_rejection_limit_is_the_games_never_the_referees_words(served: Served):
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match = RemoteReferee(client, served, "backgammon", "service")
        state = match.until_a_seat_acts(own_chance=False)
        seat = match.engine.to_act(state).seat
        invented = AnswerRejected(seat=seat, decision="anything", answer="'x'", code="x.y", message="-")
        removal = PlayerRemoved(seat=seat, code="match.rejection_limit", reason="1 rejected answers in a row")
        answer = match.send(invented, removal)
        assert _code(answer) == (422, "audit.unexplained_removal"), answer.text
    # Exactly the game's limit of the seat's own decision's rejections, in a row, removes it.
    engine = get_engine("davinci")
    judge = Judge(started("davinci", 2))
    rng = random.Random(2)
    while engine.to_act(judge.state).seat == CHANCE:
        judge.take(engine.chance(judge.state, rng))
    turn = engine.to_act(judge.state)
    wrongs = [_rejected(engine, judge.state, turn.seat, turn.decision)] * engine.spec.rejection_limit
    early = judge.take_all([*wrongs[:-1], removal_of(turn.seat)])
    assert [f.rule for f in early] == ["audit.unexplained_removal"]
    assert not judge.take_all([*wrongs, removal_of(turn.seat)])


def _rejected(engine: Any, state: Any, seat: int, decision: str) -> AnswerRejected:
    """A rejection of `seat`'s answer to `decision` that the rules really refuse, with their code."""
    from matchlog.events import IllegalAction

    answer = "not an answer"
    try:
        engine.check(state, seat, engine.parse(state, seat, answer))
    except IllegalAction as error:
        return AnswerRejected(seat=seat, decision=decision, answer=repr(answer), code=error.code, message="m")
    raise AssertionError("the rules took it")


def removal_of(seat: int) -> PlayerRemoved:
    return PlayerRemoved(seat=seat, code="match.rejection_limit", reason="too many rejected answers in a row")


# -- item 1: chance follows the effective history ------------------------------------------------

SEED = bytes(range(32))


def _committed(game: str, judge: Judge, seed: bytes = SEED) -> None:
    from matchlog.engines.chance import ALGORITHM, commitment
    from matchlog.events import ChanceCommitted

    judge.take(ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(seed)))


def _to_a_seat(judge: Judge, rng: random.Random | None = None) -> None:
    """Chance acts (the judge's seed, or `rng`) until a seat is to act."""
    engine = judge.engine
    while (turn := engine.to_act(judge.state)) is not None and turn.seat == CHANCE:
        judge.take(judge.draw(rng))


def test_an_undo_of_a_draw_rewinds_the_seeds_stream_so_drawing_again_draws_the_same():
    judge = Judge(started("backgammon", 2), seeds=[SEED])
    _committed("backgammon", judge)
    engine = judge.engine
    rng = random.Random(5)
    for _ in range(30):
        _to_a_seat(judge)
        turn = engine.to_act(judge.state)
        if turn is None:
            break
        judge.take(rng.choice(engine.legal(judge.state, turn.seat)))
        if engine.to_act(judge.state) is None or engine.to_act(judge.state).seat != CHANCE:
            continue
        drawn = judge.draw(None)
        judge.take(drawn)
        # The arbiter takes back the last answer and the draw after it; the same answer again, and
        # the same draw: an undo never re-rolls.
        judge.take(ActionsUndone(seqs=judge.undoable(), reason="appeal"))
        turn = engine.to_act(judge.state)
        judge.take(engine.legal(judge.state, turn.seat)[0])  # (the draw does not depend on the answer)
        assert judge.draw(None) == drawn
        # Anything else in its place is not the seed's.
        other = next(e for e in engine.chance_outcomes(judge.state) if e != drawn)
        assert [f.rule for f in judge.take_all([other])] == ["chance.not_from_seed"]
        judge.take(drawn)


def _rerolled_log(seed: bytes = SEED) -> list[Event]:
    """A backgammon match of committed chance whose referee, after an undo took back a roll, drew
    the stream's next roll rather than the same one again (what the service did before)."""
    from matchlog.engines.chance import ALGORITHM, ChanceSource, commitment
    from matchlog.events import ChanceCommitted

    engine = get_engine("backgammon")
    events: list[Event] = [started("backgammon", 2), ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(seed))]
    state = engine.start(events[0])  # type: ignore[arg-type]
    source = ChanceSource(seed)
    while True:
        turn = engine.to_act(state)
        if turn.seat == CHANCE:
            if len(events) > 4:
                break
            events.append(engine.chance(state, source))
        else:
            events.append(engine.legal(state, turn.seat)[0])
            before_move = state
        state = engine.apply(state, events[-1])
    events.append(engine.chance(state, source))  # the roll after the turn's last move
    rolled = len(events) - 1
    events.append(ActionsUndone(seqs=(rolled - 1, rolled), reason="appeal"))
    events.append(events[rolled - 1])  # the same move again
    events.append(engine.chance(engine.apply(before_move, events[-1]), source))  # the stream's next: a re-roll
    return events


def _reveal(seed: bytes) -> Any:
    from matchlog.events import ChanceRevealed

    return ChanceRevealed(seed=seed.hex())


def test_the_audit_finds_a_draw_after_an_undo_that_is_not_the_seeds_same_draw():
    from matchlog.replay import audit_records

    events = _rerolled_log()
    report = audit_records(_records([*events, _reveal(SEED)]))
    assert [(f.seq, f.rule) for f in report.findings] == [(len(events) - 1, "chance.not_from_seed")]
    # A judge that does not know the seed finds the same when it is revealed, at the draw's seq.
    judge = Judge(started("backgammon", 2))
    assert not judge.take_all(events[1:])
    found = judge.take_all([_reveal(SEED)])
    assert [(f.seq, f.rule) for f in found] == [(len(events) - 1, "chance.not_from_seed")]
    # The same roll again is the seed's, for both.
    honest = [*events[:-1], engine_roll(events)]
    assert audit_records(_records([*honest, _reveal(SEED)])).passed
    judge = Judge(started("backgammon", 2))
    assert not judge.take_all([*honest[1:], _reveal(SEED)])


def engine_roll(events: list[Event]) -> Event:
    """The roll the undo took back (the one the seed draws again there)."""
    undo = next(e for e in events if isinstance(e, ActionsUndone))
    return events[undo.seqs[-1]]


def _records(events: list[Event]) -> list[Any]:
    from matchlog.events import Record

    match_id = uuid7()
    return [
        Record(match_id=match_id, seq=n, event_id=uuid7(), at_us=0, actor=e.actor, version=e.version, event=e, hash=b"")
        for n, e in enumerate(events)
    ]


def _played(game: str, seed: bytes = SEED, moves: int = 1) -> Judge:
    """A judge of a match of `game` played to its end (chance from `seed`, answers random), its seed
    revealed and its end recorded as our referee records them."""
    judge = Judge(started(game, 2), seeds=[seed])
    _committed(game, judge, seed)
    engine, rng = judge.engine, random.Random(moves)
    while (turn := engine.to_act(judge.state)) is not None:
        judge.take(judge.draw(None) if turn.seat == CHANCE else rng.choice(engine.legal(judge.state, turn.seat)))
    assert not judge.take_all([_reveal(seed), MatchEnded(outcome=engine.outcome(judge.state))])
    return judge


def test_a_revealed_seed_is_never_taken_back_and_closes_its_segment_to_chance():
    from matchlog.engines.chance import ALGORITHM, commitment
    from matchlog.events import ChanceCommitted, IllegalAction

    # The end of a match reveals its seed: no undo takes back what came before it.
    judge = _played("backgammon")
    revealed = judge.next_seq - 2
    seqs = judge.undoable()
    assert revealed not in seqs and seqs[-1] == revealed + 1, "the end, not the reveal"
    found = judge.take_all([ActionsUndone(seqs=seqs, reason="appeal")])
    assert [f.rule for f in found] == ["audit.undo_past_reveal"]
    with_reveal = tuple(sorted({*seqs, revealed}))
    assert [f.rule for f in judge.take_all([ActionsUndone(seqs=with_reveal, reason="appeal")])] == ["audit.bad_undo"]
    # A referee that reveals its seed in play (a game with no hidden information) closes its
    # segment to chance, and nothing before the reveal can be taken back.
    judge = Judge(started("backgammon", 2), seeds=[SEED])
    _committed("backgammon", judge)
    engine, rng = judge.engine, random.Random(3)
    for _ in range(12):
        turn = engine.to_act(judge.state)
        judge.take(judge.draw(None) if turn.seat == CHANCE else rng.choice(engine.legal(judge.state, turn.seat)))
    judge.take(_reveal(SEED))
    assert [f.rule for f in judge.take_all([ActionsUndone(seqs=judge.undoable(), reason="x")])] == [
        "audit.undo_past_reveal"
    ]
    while (turn := engine.to_act(judge.state)).seat != CHANCE:
        judge.take(engine.legal(judge.state, turn.seat)[0])
    with pytest.raises(IllegalAction) as refused:
        judge.draw(None)
    assert refused.value.code == "chance.after_reveal"
    roll = engine.chance_outcomes(judge.state)[0]
    assert [f.rule for f in judge.take_all([roll])] == ["chance.after_reveal"]
    # A new segment, with a fresh commitment, draws again.
    fresh = bytes(32)
    judge.seeds[commitment(fresh)] = fresh
    resumed = [MatchResumed(players=("a", "b")), ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(fresh))]
    assert not judge.take_all(resumed)
    judge.take(judge.draw(None))


def _settled_round(judge: Judge) -> None:
    """Porrinha: hands and guesses until a round settles (its hands shown to everyone)."""
    engine, rng = judge.engine, random.Random(4)
    round_ = judge.state.round
    while judge.state.round == round_ and engine.to_act(judge.state) is not None:
        turn = engine.to_act(judge.state)
        judge.take(rng.choice(engine.legal(judge.state, turn.seat)))


def test_an_undo_past_what_showed_a_hidden_value_is_refused():
    from matchlog.engines.davinci import DavinciState

    # Porrinha: the hands of a settled round were shown to everyone.
    judge = Judge(started("porrinha", 2))
    _settled_round(judge)
    assert [f.rule for f in judge.take_all([ActionsUndone(seqs=judge.undoable(), reason="x")])] == [
        "audit.undo_past_reveal"
    ]
    # The next round's hand, shown to nobody yet, may be taken back.
    turn = judge.engine.to_act(judge.state)
    judge.take(judge.engine.legal(judge.state, turn.seat)[0])
    assert not judge.take_all([ActionsUndone(seqs=judge.undoable(), reason="x")])
    # Da Vinci Code: a tile drawn was shown to its drawer, a tile turned up to everyone.
    judge = Judge(started("davinci", 2), seeds=[SEED])
    _committed("davinci", judge)
    engine, rng = judge.engine, random.Random(5)
    while True:
        turn = engine.to_act(judge.state)
        before: DavinciState = judge.state
        judge.take(judge.draw(None) if turn.seat == CHANCE else rng.choice(engine.legal(judge.state, turn.seat)))
        if turn.seat != CHANCE and judge.state.revealed != before.revealed:
            break
    found = judge.take_all([ActionsUndone(seqs=judge.undoable(), reason="x")])
    assert [f.rule for f in found] == ["audit.undo_past_reveal"]


def test_the_service_refuses_to_undo_an_ended_match_whose_seed_it_revealed(served: Served):
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match = RemoteReferee(client, served, "backgammon", "service")
        while True:
            state = match.until_a_seat_acts(own_chance=False)
            turn = match.engine.to_act(state)
            if turn is None:
                break
            answer = match.send(match.rng.choice(match.engine.legal(state, turn.seat)))
            assert answer.status_code == 200, answer.text
            if answer.json()["ended"]:
                break
        before = match.stored()
        headers = {"Authorization": f"Bearer {match.token}"}
        undone = client.post(f"/api/matches/{match.match_id}/undo", json={"reason": "appeal"}, headers=headers)
        assert _code(undone) == (422, "audit.undo_past_reveal"), undone.text
        assert match.stored() == before
        report = client.get(f"/api/matches/{match.match_id}/audit", headers=served.headers()).json()
        assert report["findings"] == []


def test_the_command_line_refuses_to_undo_a_da_vinci_code_match_past_its_reveal(tmp_path: Path):
    db = tmp_path / "dv.duckdb"
    cli("play", "davinci", "-p", "random", "-p", "random", "--games", "1", "--seed", "9", "-q", "--db", db)
    (match,) = msgspec.json.decode(cli("list", "--json", "--db", db)[0])
    with Store(db) as store:
        before = len(store.read(match["match_id"]))
    _, err = cli("undo", match["match_id"], "--reason", "appeal", "--db", db, code=2)
    assert err.startswith(("error[chance.hidden_revealed]", "error[audit.undo_past_reveal]")), err
    with Store(db) as store:
        assert len(store.read(match["match_id"])) == before


def test_a_game_with_hidden_information_cannot_go_on_after_its_seed_is_revealed():
    judge = _played("davinci")
    found = judge.take_all([ActionsUndone(seqs=judge.undoable(), reason="appeal")])
    assert [f.rule for f in found] == ["chance.hidden_revealed"]
    # Nor can anything but the end follow a reveal (a referee that reveals in play).
    judge = Judge(started("davinci", 2), seeds=[SEED])
    _committed("davinci", judge)
    _to_a_seat(judge)
    turn = judge.engine.to_act(judge.state)
    answer = judge.engine.legal(judge.state, turn.seat)[0]
    assert [f.rule for f in judge.take_all([_reveal(SEED), answer])] == ["chance.hidden_revealed"]


@pytest.mark.parametrize("game", ["backgammon", "davinci", "fish"])
@given(data=st.data())
@settings(max_examples=15, deadline=None)
def test_whatever_the_undos_each_effective_draw_is_the_seeds_draw_at_its_place(game: str, data: st.DataObject):
    from matchlog.engines.chance import ChanceSource
    from matchlog.replay import audit_records
    from matchlog.replay.fold import effective

    judge = Judge(started(game, 2), seeds=[SEED])
    _committed(game, judge)
    engine = judge.engine
    events: list[Event] = [started(game, 2), judge.previous]
    for _ in range(data.draw(st.integers(10, 80), label="steps")):
        turn = engine.to_act(judge.state)
        if turn is None:
            break
        if data.draw(st.integers(0, 4), label="undo?") == 0:
            try:
                seqs = judge.undoable()
            except Exception:
                continue
            event: Event = ActionsUndone(seqs=seqs, reason="appeal")
            if judge.take_all([event]):  # (not past a reveal: see the test above)
                continue
            events.append(event)
            continue
        elif turn.seat == CHANCE:
            event = judge.draw(None)
        else:
            legal = engine.legal(judge.state, turn.seat)
            event = legal[data.draw(st.integers(0, len(legal) - 1), label="answer")]
        judge.take(event)
        events.append(event)
    ending = MatchEnded(outcome=engine.outcome(judge.state)) if engine.to_act(judge.state) is None else None
    if ending is None:
        ending = MatchEnded(outcome=Outcome(places=(1, 1), winners=(), result="abandoned"), reason="stopped")
    events += [_reveal(SEED), ending]
    records = _records(events)
    assert audit_records(records).passed
    assert not Judge(started(game, 2)).take_all(events[1:]), "judged at the reveal: the same"
    # Independently: the k-th draw of the effective history is the seed's k-th.
    source, state = ChanceSource(SEED), engine.start(events[0])  # type: ignore[arg-type]
    for record in effective(records)[1:]:
        turn = engine.to_act(state)
        if turn is not None and turn.seat == CHANCE and record.actor is None and not _lifecycle(record.event):
            assert engine.chance(state, source) == record.event
        state = engine.apply(state, record.event)


def _lifecycle(event: Event) -> bool:
    from matchlog.replay.judge import SEGMENT_EVENTS

    return isinstance(event, (*SEGMENT_EVENTS, MatchEnded))


# -- item 3: every write goes through the clerk ---------------------------------------------------


def test_the_python_apis_append_on_a_file_is_judged_as_every_write_is(tmp_path: Path):
    import matchlog
    from matchlog.events import IllegalAction

    with matchlog.open(tmp_path / "scratch.duckdb", mode="create") as log:
        match_id = uuid7()
        with pytest.raises(IllegalAction) as refused:  # the whole batch, with its start
            log.append(match_id, [started("porrinha", 2), WRONG_CODE], 0)
        assert refused.value.code == "audit.wrong_code"
        log.append(match_id, [started("porrinha", 2)], 0)
        removed = PlayerRemoved(seat=2, code="player.timeout", reason="gone")
        for batch in ([removed], [MatchEnded(outcome=Outcome(places=(1, 2), winners=(1,)))]):
            with pytest.raises(IllegalAction):  # a seat not at the table; an outcome the rules do not give
                log.append(match_id, batch, 1)
        assert len(log.read(match_id)) == 1, "nothing was written"
        log.append(match_id, [_hand(0, 1)], 1)
        (report,) = log.audit([match_id])
        assert report.passed, report.findings


def _hand(seat: int, hand: int) -> Event:
    from matchlog.events import HandChosen

    return HandChosen(seat=seat, hand=hand)


def test_the_arbiters_abandon_through_the_service_is_judged(served: Served):
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match = RemoteReferee(client, served, "backgammon", "service")
        state = match.until_a_seat_acts(own_chance=False)
        headers = {"Authorization": f"Bearer {match.token}"}
        ended = client.post(f"/api/matches/{match.match_id}/abandon", json={"reason": "stuck"}, headers=headers)
        assert ended.status_code == 200, ended.text
        match.seq = ended.json()["last_seq"] + 1
        # The judge that keeps the match knows it ended: nothing but an undo comes after.
        turn = match.engine.to_act(state)
        late = match.send(match.engine.legal(state, turn.seat)[0])
        assert _code(late) == (422, "audit.after_end"), late.text
        again = client.post(f"/api/matches/{match.match_id}/abandon", json={"reason": "again"}, headers=headers)
        assert _code(again) == (400, "usage.ended"), again.text
        report = client.get(f"/api/matches/{match.match_id}/audit", headers=served.headers()).json()
        assert report["findings"] == [], report


# -- item 8: an option that would make judging cost unbounded -------------------------------------


def test_porrinhas_chopsticks_are_bounded_wherever_a_match_starts(served: Served, tmp_path: Path):
    from matchlog.engines.porrinha import MAX_TABLE_CHOPSTICKS
    from matchlog.events import UsageError

    for chopsticks in (0, MAX_TABLE_CHOPSTICKS // 2 + 1, 10**15):
        with pytest.raises(UsageError) as refused:
            Judge(started("porrinha", 2, chopsticks=chopsticks))
        assert refused.value.code == "usage.options"
    body = {"game": "porrinha", "seats": [{"name": "a", "player": "x"}, {"name": "b", "player": "x"}]}
    with httpx.Client(base_url=served.url, timeout=60) as client:
        answer = client.post("/api/matches", json={**body, "options": {"chopsticks": 10**15}}, headers=served.headers())
        assert _code(answer) == (400, "usage.options"), answer.text
    path = tmp_path / "big.jsonl"
    path.write_bytes(forged("porrinha", [started("porrinha", 2, chopsticks=10**7)]))
    _, err = cli("import", path, "--db", tmp_path / "log.duckdb", code=2)
    assert err.startswith("error[store.import_rejected]: line 1: ") and "at most 100,000" in err, err
    most = MAX_TABLE_CHOPSTICKS // 2
    judge = Judge(started("porrinha", 2, chopsticks=most))
    assert judge.state.chopsticks == (most, most)
    # At the bound, a refusal and a dispute list the table's guesses in well under a second's work.
    judge.take_all([_hand(0, most), _hand(1, most)])
    assert len(judge.engine.legal(judge.state, judge.engine.to_act(judge.state).seat)) == 2 * most + 1


@pytest.mark.parametrize(
    ("name", "player", "said"),
    [
        ("", "random", "the name is empty"),
        ("x" * 101, "random", "the name has 101 characters, more than 100"),
        ("x", "y" * 1001, "the player has 1001 characters, more than 1000"),
        ("evil\u202egnp.exe", "random", "the name holds a control character (U+202E)"),
        ("ok", "random\x1b[2J", "the player holds a control character (U+001B)"),
    ],
)
def test_a_seat_no_table_takes_is_refused_wherever_a_match_starts(
    served: Served, tmp_path: Path, name: str, player: str, said: str
):
    """One rule, in the judge: the service once let a bidirectional override through (it looked for
    ASCII controls only), the Python API and the judge did not look at all, and no name was bounded."""
    import matchlog
    from matchlog.events import MatchStarted, Seat, UsageError

    bad = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "random"), Seat(name, player)))
    with pytest.raises(UsageError) as refused:
        Judge(bad)
    assert (refused.value.code, refused.value.message) == ("usage.seat_name", f"seat 1: {said}")
    body = {"game": "porrinha", "seats": [{"name": "a", "player": "x"}, {"name": name, "player": player}]}
    with httpx.Client(base_url=served.url, timeout=60) as client:
        answer = client.post("/api/matches", json=body, headers=served.headers())
        assert _code(answer) == (400, "usage.seat_name"), answer.text
    with matchlog.open(tmp_path / "scratch.duckdb", mode="create") as log:
        with pytest.raises(UsageError):
            log.append(uuid7(), [bad], 0)
        assert log.matches() == []
    path = tmp_path / "named.jsonl"
    path.write_bytes(forged("porrinha", [bad]))
    _, err = cli("import", path, "--db", tmp_path / "log.duckdb", code=2)
    assert err.strip() == f"error[store.import_rejected]: line 1: seat 1: {said}", err


# -- item 6: a match whose chance the service draws goes on after a restart -----------------------


def test_a_service_chance_match_goes_on_after_the_service_restarts(tmp_path: Path):
    from .conftest import start_server

    db = tmp_path / "restarted.duckdb"
    server = start_server(db)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            match = RemoteReferee(client, server, "backgammon", "service")
            for _ in range(6):
                state = match.until_a_seat_acts(own_chance=False)
                turn = match.engine.to_act(state)
                assert match.send(match.rng.choice(match.engine.legal(state, turn.seat))).status_code == 200
    finally:
        server.stop()
    server = start_server(db)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            match.client = client
            match.url = server.url
            ended = False
            while not ended:
                state = match.until_a_seat_acts(own_chance=False)
                turn = match.engine.to_act(state)
                if turn is None:
                    break
                answer = match.send(match.rng.choice(match.engine.legal(state, turn.seat)))
                assert answer.status_code == 200, answer.text
                ended = answer.json()["ended"]
            info = client.get(f"/api/matches/{match.match_id}", headers=server.headers()).json()
            assert info["status"] == "finished", info
            report = client.get(f"/api/matches/{match.match_id}/audit", headers=server.headers()).json()
            assert report["findings"] == [] and report["notes"] == [], report
            assert report["checked"]["chance_rederived"] == report["checked"]["chance"] > 6
    finally:
        server.stop()


# -- item 9: a bundle whose sealed tail was swapped ----------------------------------------------


def test_a_bundle_whose_sealed_entries_traded_places_is_refused(tmp_path: Path):
    import json
    import subprocess
    import sys

    from matchlog.proofs import verifier

    db = tmp_path / "l.duckdb"
    cli("play", "backgammon", "-p", "random", "-p", "random", "--games", "1", "--seed", "3", "-q", "--db", db)
    (match,) = msgspec.json.decode(cli("list", "--json", "--db", db)[0])
    cli("checkpoint", "--db", db)
    (tmp_path / "key.txt").write_text(cli("key", "--db", db)[0])
    cli("prove", match["match_id"], "-o", tmp_path / "whole.bundle", "--db", db)
    bundle = json.loads((tmp_path / "whole.bundle").read_text())
    # Sealed (allowed: withholding what an event says), the two last still check as they are ...
    for entry in bundle["entries"][-2:]:
        entry.pop("row")
    (tmp_path / "sealed.bundle").write_text(json.dumps(bundle))
    cli("check", tmp_path / "sealed.bundle", "--key", tmp_path / "key.txt")
    # ... but not once they trade their leaves, hashes and proofs.
    a, z = bundle["entries"][-2:]
    for name in ("leaf", "hash", "proof"):
        a[name], z[name] = z[name], a[name]
    swapped = tmp_path / "swapped.bundle"
    swapped.write_text(json.dumps(bundle))
    out, err = cli("check", swapped, "--key", tmp_path / "key.txt", code=None)
    assert "bundle.format" in out + err and f"entries[{len(bundle['entries']) - 1}].leaf" in out + err, out + err
    alone = subprocess.run(
        [sys.executable, verifier.__file__, str(swapped), "--key", str(tmp_path / "key.txt")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert alone.returncode != 0 and "bundle.format" in alone.stdout + alone.stderr, alone


def test_our_referee_writes_through_the_clerk_with_its_own_judge(tmp_path: Path):
    from matchlog.events import IllegalAction, StoreError
    from matchlog.referee.match import StoreRecorder

    with Store(tmp_path / "log.duckdb") as store:
        # Adopted: the referee's judge is the match's, and the clerk hands the store only what it took.
        match_id = uuid7()
        judge = Judge(started("porrinha", 2), match_id=match_id)
        recorder = StoreRecorder(store, match_id)
        recorder.adopt(judge)
        recorder.record([draft(started("porrinha", 2))])
        recorder.wait()
        recorder.record([draft(_hand(0, 1))])  # not taken by the judge
        with pytest.raises(StoreError) as unjudged:
            recorder.wait()
        assert unjudged.value.code == "store.unjudged"
        assert len(store.read(match_id)) == 1
        # Not adopted: the clerk judges the batch itself.
        other = uuid7()
        recorder = StoreRecorder(store, other)
        recorder.record([draft(started("porrinha", 2)), draft(WRONG_CODE)])
        with pytest.raises(IllegalAction) as refused:
            recorder.wait()
        assert refused.value.code == "audit.wrong_code"


def test_an_event_of_another_game_or_only_of_views_is_refused_with_a_code(served: Served):
    from matchlog.events import DiceRolled, HandHidden

    judge = Judge(started("porrinha", 2))
    for event in (DiceRolled(seat=0, dice=(1, 2)), HandHidden(seat=0)):
        assert [f.rule for f in judge.take_all([event])] == ["match.wrong_game"]
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match = RemoteReferee(client, served, "porrinha", "service")
        before = match.stored()
        answer = match.send(DiceRolled(seat=0, dice=(1, 2)))
        assert _code(answer) == (422, "match.wrong_game"), answer.text
        assert match.stored() == before
