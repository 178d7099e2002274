"""One judge for every event of every origin (issue 22, items 1, 7, 8 and 12): our referee, a
referee elsewhere appending through the service, the service's own chance, an import of JSON Lines,
a batch of encoded events. Each case here was taken (or answered with nonsense) before the judge;
each is now refused before anything is written, with a stable code, and the audit, which is the
same judge run again over what was written, finds the same thing in a log that holds it anyway."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import msgspec
import pytest

from matchlog.engines import CHANCE
from matchlog.engines import get as get_engine
from matchlog.engines.chance import ALGORITHM
from matchlog.events import (
    ChanceCommitted,
    DiceRolled,
    Event,
    EventConflict,
    GuessMade,
    GuessVoided,
    HandChosen,
    IllegalAction,
    MatchEnded,
    MatchStarted,
    Outcome,
    Seat,
    StoreError,
    TilesShuffled,
    draft,
    encode,
    uuid7,
    uuid7_text,
)
from matchlog.referee import MemoryRecorder, Referee
from matchlog.replay import audit
from matchlog.store import Store

from .conftest import Served
from .test_attack import cli, forged, started

# -- helpers ------------------------------------------------------------------------------------


def _post(client: httpx.Client, path: str, body: object, token: str) -> httpx.Response:
    return client.post(path, content=msgspec.json.encode(body), headers={"Authorization": f"Bearer {token}"})


def _code(answer: httpx.Response) -> tuple[int, str]:
    return answer.status_code, answer.json().get("code", "") if answer.status_code >= 400 else ""


def _seats(n: int = 2) -> list[dict[str, str]]:
    return [{"name": f"s{i}", "player": "remote"} for i in range(n)]


class RemoteReferee:
    """A referee elsewhere, appending through the service and keeping the state itself."""

    def __init__(self, client: httpx.Client, served: Served, game: str, chance: str) -> None:
        self.client = client
        self.engine = get_engine(game)
        body = {"game": game, "seats": _seats(), "chance": chance}
        created = _post(client, "/api/matches", body, served.admin)
        assert created.status_code == 201, created.text
        self.match_id = created.json()["match_id"]
        self.token = created.json()["tokens"]["referee"]
        self.seq = created.json()["last_seq"] + 1
        self.rng = random.Random(7)

    def state(self) -> Any:
        answer = self.client.get(
            f"/api/matches/{self.match_id}/state", headers={"Authorization": f"Bearer {self.token}"}
        )
        return msgspec.convert(answer.json()["state"], self.engine.spec.state)

    def send(self, *events: Event) -> httpx.Response:
        body = {"expected_seq": self.seq, "events": [{"event": msgspec.to_builtins(e)} for e in events]}
        answer = _post(self.client, f"/api/matches/{self.match_id}/events", body, self.token)
        if answer.status_code == 200:
            self.seq = answer.json()["last_seq"] + 1
        return answer

    def draw(self) -> None:
        answer = _post(self.client, f"/api/matches/{self.match_id}/chance", {}, self.token)
        assert answer.status_code == 200, answer.text
        self.seq = answer.json()["last_seq"] + 1

    def until_a_seat_acts(self, own_chance: bool) -> Any:
        """Let chance act (the service's, or the referee's own) until a seat is to act."""
        while True:
            state = self.state()
            turn = self.engine.to_act(state)
            if turn is None or turn.seat != CHANCE:
                return state
            if own_chance:
                assert self.send(self.engine.chance(state, self.rng)).status_code == 200
            else:
                self.draw()

    def stored(self) -> int:
        return self.client.get(f"/api/matches/{self.match_id}").json()["last_seq"] + 1


# -- item 1: chance out of turn, from the referee of a service-chance match, mid-match commitments --


def test_the_service_refuses_any_chance_from_the_referee_of_a_match_whose_chance_it_draws(served: Served):
    with httpx.Client(base_url=served.url, timeout=60) as client:
        davinci = RemoteReferee(client, served, "davinci", "service")
        state = davinci.until_a_seat_acts(own_chance=False)
        assert davinci.engine.to_act(state).seat == 0
        before = davinci.stored()
        shuffled = davinci.send(TilesShuffled(order=tuple(range(24))))
        assert _code(shuffled) == (422, "chance.from_service"), shuffled.text
        assert davinci.stored() == before, "nothing was written"

        # The last move of a turn and the next turn's dice in one batch: the dice are still chance's.
        backgammon = RemoteReferee(client, served, "backgammon", "service")
        engine = backgammon.engine
        for _ in range(200):
            state = backgammon.until_a_seat_acts(own_chance=False)
            turn = engine.to_act(state)
            move = engine.legal(state, turn.seat)[0]
            after = engine.apply(state, move)
            if engine.to_act(after) is not None and engine.to_act(after).seat == CHANCE:
                before = backgammon.stored()
                answer = backgammon.send(move, DiceRolled(seat=1 - turn.seat, dice=(6, 6)))
                assert _code(answer) == (422, "chance.from_service"), answer.text
                assert backgammon.stored() == before
                assert backgammon.send(move).status_code == 200, "the move alone is taken"
                break
            assert backgammon.send(move).status_code == 200
        else:
            pytest.fail("no turn ended")


def test_the_service_refuses_chance_out_of_turn_and_a_late_commitment_from_a_referee_drawing_its_own(served: Served):
    with httpx.Client(base_url=served.url, timeout=60) as client:
        davinci = RemoteReferee(client, served, "davinci", "referee")
        state = davinci.until_a_seat_acts(own_chance=True)
        assert davinci.engine.to_act(state).seat == 0
        before = davinci.stored()
        shuffled = davinci.send(TilesShuffled(order=tuple(range(24))))
        assert _code(shuffled) == (422, "chance.out_of_turn"), shuffled.text
        late = davinci.send(ChanceCommitted(algorithm=ALGORITHM, commitment="ab" * 32))
        assert _code(late) == (422, "chance.late_commitment"), late.text
        assert davinci.stored() == before, "nothing was written"


def test_a_referee_drawing_its_own_chance_cannot_end_by_the_rules_on_dice_its_seed_did_not_draw(served: Served):
    """What the service could not know while the seed was secret it judges once it is revealed;
    and a match of committed chance does not end by the rules with its seed kept secret."""
    from matchlog.engines.chance import ChanceSource, commitment
    from matchlog.events import ChanceRevealed

    with httpx.Client(base_url=served.url, timeout=60) as client:
        for cheat in (True, False):
            game = RemoteReferee(client, served, "backgammon", "referee")
            engine, seed = game.engine, bytes(range(32))
            source = ChanceSource(seed)
            assert game.send(ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(seed))).status_code == 200
            state = game.state()
            rolled = 0
            while (turn := engine.to_act(state)) is not None:
                if turn.seat == CHANCE:
                    event = engine.chance(state, source)
                    rolled += 1
                    if cheat and rolled == 3:  # the third roll, chosen rather than drawn
                        event = next(e for e in engine.chance_outcomes(state) if e != event)
                else:
                    event = engine.legal(state, turn.seat)[0]
                assert game.send(event).status_code == 200
                state = engine.apply(state, event)
            ended = MatchEnded(outcome=engine.outcome(state))
            if cheat:
                answer = game.send(ChanceRevealed(seed=seed.hex()), ended)
                assert _code(answer) == (422, "chance.not_from_seed"), answer.text
            else:
                answer = game.send(ended)
                assert _code(answer) == (422, "chance.unrevealed"), answer.text
                assert game.send(ChanceRevealed(seed=seed.hex()), ended).status_code == 200


def _davinci_with_chance_out_of_turn(store: Store) -> tuple[UUID, int]:
    """A Da Vinci Code match (written around the judge, as an edit of the file would) with a second
    shuffle at seat 0's turn: 9 tiles held twice. Returns its id and the seq of the shuffle."""
    engine = get_engine("davinci")
    rng = random.Random(3)
    events: list[Event] = [MatchStarted(game="davinci", options={}, seats=(Seat("a", "r"), Seat("b", "r")))]
    state = engine.start(events[0])  # type: ignore[arg-type]
    while engine.to_act(state).seat == CHANCE:
        events.append(engine.chance(state, rng))
        state = engine.apply(state, events[-1])
    shuffle = len(events)
    events.append(TilesShuffled(order=tuple(range(24))))
    state = engine.apply(state, events[-1])
    events.append(engine.chance(state, rng))  # and the deal goes on
    match_id = uuid7()
    store.append(match_id, [draft(e) for e in events], 0)
    return match_id, shuffle


def test_the_audit_finds_chance_out_of_turn_and_import_refuses_it(tmp_path: Path):
    db = tmp_path / "log.duckdb"
    with Store(db) as store:
        match_id, seq = _davinci_with_chance_out_of_turn(store)
        report = next(audit(store, [match_id]))
        exported = tmp_path / "match.jsonl"
        with exported.open("wb") as out:
            store.export_jsonl(out, [match_id])
    assert (seq, "chance.out_of_turn") in [(f.seq, f.rule) for f in report.findings], report.findings
    _, err = cli("import", exported, "--db", tmp_path / "copy.duckdb", code=2)
    assert err.startswith(f"error[store.import_rejected]: line {seq + 1}: ") and "chance.out_of_turn" in err, err


def test_a_ruling_that_follows_no_rejection_is_found():
    """Porrinha's GuessVoided is the referee's ruling on a rejected guess, never a move of its own."""
    from matchlog.replay import audit_records

    recorder = MemoryRecorder()
    started_ = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "r"), Seat("b", "r")))
    referee = Referee(get_engine("porrinha"), started_, recorder)
    referee.record(HandChosen(seat=0, hand=1), HandChosen(seat=1, hand=1))
    events = [d.event for d in recorder.drafts] + [GuessVoided(seat=0)]
    recorder.drafts.append(draft(events[-1]))
    report = audit_records(recorder.records(referee.match_id))
    assert [(f.seq, f.rule) for f in report.findings] == [(3, "audit.unexplained_ruling")]


# -- our own referee: what it records goes through the same judge --------------------------------


def test_our_referee_cannot_record_what_the_judge_refuses():
    recorder = MemoryRecorder()
    started_ = MatchStarted(game="davinci", options={}, seats=(Seat("a", "r"), Seat("b", "r")))
    engine = get_engine("davinci")
    referee = Referee(engine, started_, recorder)
    rng = random.Random(1)
    while engine.to_act(referee.state).seat == CHANCE:
        referee.record(engine.chance(referee.state, rng))
    held = len(recorder.drafts)
    state = referee.state
    with pytest.raises(IllegalAction) as refused:
        referee.record(TilesShuffled(order=tuple(range(24))))
    assert refused.value.code == "chance.out_of_turn"
    with pytest.raises(IllegalAction) as refused:
        referee.record(MatchEnded(outcome=Outcome(places=(1, 2), winners=(0,))))
    assert refused.value.code == "audit.early_end"
    assert len(recorder.drafts) == held and referee.state == state, "nothing recorded, nothing applied"


def test_a_ctrl_c_as_a_match_ends_never_ends_it_twice():
    """A Ctrl-C that came after the end was recorded but before the referee knew its outcome had
    the match abandoned after its end (the audit's `audit.after_end`); the judge refuses that, and
    the referee no longer tries it."""

    class Interrupted(MemoryRecorder):
        def project(self, last_seq: int, figures: list[Any]) -> None:
            super().project(last_seq, figures)
            raise KeyboardInterrupt

    recorder = Interrupted()
    started_ = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "r"), Seat("b", "r")))
    referee = Referee(get_engine("porrinha"), started_, recorder)
    referee.record(HandChosen(seat=0, hand=1), HandChosen(seat=1, hand=1), GuessMade(seat=0, guess=2))
    while referee.judge.engine.to_act(referee.state) is not None:  # seat 1 plays on alone
        turn = referee.judge.engine.to_act(referee.state)
        referee.record(referee.judge.engine.legal(referee.state, turn.seat)[0])
    with pytest.raises(KeyboardInterrupt):
        referee.finish()
    held = len(recorder.drafts)
    assert referee.abandon("match interrupted") == referee.outcome and referee.outcome.result == "normal"
    assert len(recorder.drafts) == held and isinstance(recorder.drafts[-1].event, MatchEnded)


# -- item 7: a batch no referee could start ------------------------------------------------------


def test_a_batch_no_referee_could_start_is_refused_before_it_is_written(served: Served):
    match_id = str(uuid7())
    nobody = MatchStarted(game="porrinha", options={}, seats=())
    batch = [
        {
            "match_id": match_id,
            "expected_seq": 0,
            "events": [{"event_id": uuid7_text(), "at_us": 1, "payload": encode(nobody).decode()}],
        }
    ]
    with Store(":memory:") as store, pytest.raises(StoreError) as refused:  # beneath every judge, too
        store.append(uuid7(), [nobody], 0)
    assert refused.value.code == "store.bad_start"
    with httpx.Client(base_url=served.url, timeout=60) as client:
        answer = _post(client, "/api/batches", batch, served.admin)
        assert _code(answer) == (400, "usage.players"), answer.text
        assert client.get(f"/api/matches/{match_id}", headers=served.headers()).status_code == 404
        # What an encoded batch carries is judged as the events endpoint judges it.
        game = RemoteReferee(client, served, "porrinha", "service")
        hand = HandChosen(seat=1, hand=1)  # seat 0 is to choose its hand
        batch = [
            {
                "match_id": game.match_id,
                "expected_seq": game.seq,
                "events": [{"event_id": uuid7_text(), "at_us": 1, "payload": encode(hand).decode()}],
            }
        ]
        answer = _post(client, "/api/batches", batch, served.admin)
        assert _code(answer) == (422, "match.not_your_turn"), answer.text
        assert game.stored() == game.seq
        with client.stream("GET", "/api/export", params={"as_seat": -1}, headers=served.headers()) as export:
            assert export.status_code == 200
            lines = b"".join(export.iter_bytes()).splitlines()
        assert lines and all(json.loads(line)["match_id"] != match_id for line in lines)


# -- item 8: imports take only what a referee could have recorded ---------------------------------


def _porrinha(*moves: Event, end: Outcome | None = None) -> list[Event]:
    events: list[Event] = [started("porrinha", 2), *moves]
    if end is not None:
        events.append(MatchEnded(outcome=end))
    return events


_ROUND = (HandChosen(seat=0, hand=1), HandChosen(seat=1, hand=0))
IMPORTS = {
    "a hand of 4 with 3 chopsticks": (_porrinha(HandChosen(seat=0, hand=4)), 2, "porrinha.hand_out_of_range"),
    "a hand out of turn": (_porrinha(HandChosen(seat=1, hand=1)), 2, "match.not_your_turn"),
    "a guess of 99": (_porrinha(*_ROUND, GuessMade(seat=0, guess=99)), 4, "porrinha.guess_out_of_range"),
    "an end before the rules end it": (
        _porrinha(*_ROUND, end=Outcome(places=(1, 2), winners=(0,))),
        4,
        "audit.early_end",
    ),
    "a ruling on no rejection": (_porrinha(*_ROUND, GuessVoided(seat=0)), 4, "audit.unexplained_ruling"),
}


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_an_import_is_judged_as_the_referee_is_naming_the_line_and_the_rule(tmp_path: Path, name: str):
    events, line, rule = IMPORTS[name]
    path = tmp_path / "forged.jsonl"
    path.write_bytes(forged("porrinha", events))
    db = tmp_path / "log.duckdb"
    _, err = cli("import", path, "--db", db, code=2)
    assert err.startswith(f"error[store.import_rejected]: line {line}: ") and f"[{rule}]" in err, err
    with Store(db) as store:
        assert store.count() == 0


def test_an_import_with_a_winner_the_rules_do_not_give_is_refused(tmp_path: Path):
    from matchlog.referee import play_match
    from matchlog.referee.porrinha import RandomPlayer

    recorder = MemoryRecorder()
    seats = [Seat("a", "random"), Seat("b", "random")]
    play_match("porrinha", seats, [RandomPlayer(random.Random(i)) for i in range(2)], recorder=recorder, seed=1)
    events = [d.event for d in recorder.drafts]
    ended = events[-1]
    assert isinstance(ended, MatchEnded)
    loser = next(s for s in range(2) if s not in ended.outcome.winners)
    events[-1] = MatchEnded(outcome=msgspec.structs.replace(ended.outcome, winners=(loser,)))
    path = tmp_path / "forged.jsonl"
    path.write_bytes(forged("porrinha", events))
    _, err = cli("import", path, "--db", tmp_path / "log.duckdb", code=2)
    assert err.startswith(f"error[store.import_rejected]: line {len(events)}: ") and "[audit.wrong_outcome]" in err


def test_an_envelope_with_a_repeated_key_is_refused(tmp_path: Path):
    lines = forged("porrinha", _porrinha(*_ROUND)).decode().splitlines()
    lines[1] = lines[1].replace('"seq":1,', '"seq":7,"seq":1,')
    path = tmp_path / "forged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    _, err = cli("import", path, "--db", tmp_path / "log.duckdb", code=2)
    assert err.startswith("error[store.import_rejected]: line 2: ") and "envelope" in err, err


# -- item 12: an event id names one event ---------------------------------------------------------


def test_an_event_id_names_one_event_of_its_match(tmp_path: Path):
    with Store(tmp_path / "log.duckdb") as store:
        match_id = uuid7()
        first = draft(started("porrinha", 2))
        hand = draft(HandChosen(seat=0, hand=1))
        store.append(match_id, [first, hand], 0)
        assert store.append(match_id, [hand], 1).written == 0, "a re-send is a no-op"
        other = msgspec.structs.replace(hand, event=HandChosen(seat=0, hand=2))
        with pytest.raises(EventConflict) as conflict:
            store.append(match_id, [other], 1)
        assert conflict.value.code == "store.event_conflict" and "seq 1" in conflict.value.message
        assert "different" in conflict.value.message
        assert store.read(match_id)[1].event == HandChosen(seat=0, hand=1), "the stored event is kept"
        moved = msgspec.structs.replace(hand, event=HandChosen(seat=1, hand=0))
        with pytest.raises(EventConflict) as conflict:
            store.append(match_id, [moved], 2)
        assert "already stored at seq 1" in conflict.value.message, conflict.value.message
        assert store.read(match_id)[-1].seq == 1


def test_the_service_answers_an_event_id_used_again_with_a_conflict(served: Served):
    with httpx.Client(base_url=served.url, timeout=60) as client:
        game = RemoteReferee(client, served, "porrinha", "service")
        event_id = uuid7_text()
        body = {"expected_seq": game.seq, "events": [{"event": {"type": "porrinha.hand_chosen", "seat": 0, "hand": 1},
                                                      "event_id": event_id}]}  # fmt: skip
        assert _post(client, f"/api/matches/{game.match_id}/events", body, game.token).json()["written"] == 1
        body["events"][0]["event"]["hand"] = 2  # type: ignore[index]
        answer = _post(client, f"/api/matches/{game.match_id}/events", body, game.token)
        assert _code(answer) == (409, "store.event_conflict"), answer.text
        body = {"expected_seq": game.seq + 1, "events": [{"event": {"type": "porrinha.hand_chosen", "seat": 1,
                                                                    "hand": 0}, "event_id": event_id}]}  # fmt: skip
        answer = _post(client, f"/api/matches/{game.match_id}/events", body, game.token)
        assert _code(answer) == (409, "store.event_conflict"), answer.text
        assert "already stored at seq" in answer.json()["message"]
