"""Fish tournaments: the knockout's tables and rounds (as a reducer and played for real), and the
course's remote protocol over loopback, with clients that play well and clients that do not."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines.knockout import ENGINE as KNOCKOUT
from matchlog.engines.knockout import KnockoutState, tables
from matchlog.events import KnockoutGamePlayed, MatchEnded, MatchStarted, PlayerRemoved, RemoteError, Seat, UsageError
from matchlog.referee import run_knockout
from matchlog.referee.fish import HousePlayer, RandomPlayer
from matchlog.referee.fish_remote import Channel, RemoteClosed, RemoteGarbled, RemoteSlow, play_remote, serve
from matchlog.replay import fold
from matchlog.store import Store

from .conftest import LONG_PATIENCE, PATIENCE, wait_for

# -- tables and rounds -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "sizes"), [(2, [2]), (4, [4]), (5, [3, 2]), (6, [4, 2]), (7, [4, 3]), (8, [4, 4]), (9, [4, 3, 2])]
)
def test_tables_are_as_large_as_they_can_be_backtracking_as_the_course_does(players: int, sizes: list[int]):
    assert tables(players, 4, 2) == sizes


@given(st.integers(2, 300))
def test_every_field_of_two_or_more_is_seated_at_tables_of_two_to_four(players: int):
    sizes = tables(players, 4, 2)
    assert sizes is not None and sum(sizes) == players and all(2 <= s <= 4 for s in sizes)
    assert sizes == sorted(sizes, reverse=True) and sizes.count(4) >= (players - 5) // 4


def test_one_player_cannot_be_seated_and_one_size_cannot_seat_every_field():
    assert tables(1, 4, 2) is None and tables(3, 2, 2) is None


def knockout(players: int) -> KnockoutState:
    seats = tuple(Seat(f"p{i}", "x") for i in range(players))
    return KNOCKOUT.start(MatchStarted(game="knockout", options={"game": "fish"}, seats=seats))


def game(state: KnockoutState, *winners: int, removed: tuple[int, ...] = ()) -> KnockoutState:
    table = state.groups[state.played]
    event = KnockoutGamePlayed(match_id=f"m{len(state.games)}", seats=table, winners=winners, removed=removed)
    return KNOCKOUT.apply(state, event)


def test_winners_advance_until_a_final_table_decides_it():
    state = knockout(9)
    assert state.groups == ((0, 1, 2, 3), (4, 5, 6), (7, 8))
    state = game(game(game(state, 1), 4, 6), 8)
    assert state.round == 2 and state.groups == ((1, 4, 6, 8),), "four winners: one final table"
    state = game(state, 6)
    assert state.phase == "ending" and state.winners == (6,)
    outcome = KNOCKOUT.outcome(KNOCKOUT.apply(state, MatchEnded(outcome=KNOCKOUT.outcome(state))))  # type: ignore[arg-type]
    assert outcome is not None and outcome.winners == (6,)
    assert outcome.places == (5, 2, 5, 5, 2, 5, 1, 5, 2), "finalists share 2nd; first-round losers 5th"


def test_a_round_that_eliminates_nobody_ends_the_tournament():
    state = knockout(6)
    state = game(game(state, 0, 1, 2, 3), 4, 5)
    assert state.phase == "ending" and state.winners == (0, 1, 2, 3, 4, 5), "the same winners twice running"


def test_a_tournament_with_fewer_than_two_left_ends_and_a_lone_player_wins_by_default():
    assert knockout(1).phase == "ending" and knockout(1).winners == (0,)
    state = game(game(knockout(5), 2), removed=(3, 4))
    assert state.phase == "ending" and state.winners == (2,), "one winner is the champion"


def test_players_kicked_in_a_game_are_out_and_never_winners():
    state = game(game(knockout(6), 0, 1, removed=(1,)), 5, removed=(4,))
    assert state.round == 2 and state.groups == ((0, 5),) and state.removed == (1, 4)


def test_a_player_kicked_before_the_first_game_is_left_out_of_the_draw():
    state = KNOCKOUT.apply(knockout(5), PlayerRemoved(seat=2, code="player.exception", reason="start"))
    assert state.groups == ((0, 1, 3, 4),)


def test_a_game_that_is_not_the_next_table_is_refused():
    with pytest.raises(ValueError, match="not the next table"):
        KNOCKOUT.apply(knockout(5), KnockoutGamePlayed(match_id="m", seats=(3, 4), winners=(3,)))


def test_tables_of_one_size_are_refused():
    with pytest.raises(UsageError, match="two sizes"):
        run_knockout("backgammon", [Seat("a", "random"), Seat("b", "random")], [object(), object()])


# -- knockouts played ------------------------------------------------------------------------


class Grumpy(HousePlayer):
    def tournament_ended(self, won: bool) -> None:
        raise RuntimeError("I do not care")


class Shy(HousePlayer):
    def tournament_started(self, players: int) -> None:
        raise RuntimeError("not today")


def test_a_knockout_is_recorded_game_by_game_with_its_own_result(tmp_path: Path):
    names = ["ann", "bea", "cid", "dot", "eve", "fay", "gus", "hal", "ivy"]
    players: list[Any] = [HousePlayer(None, 1) if i % 2 else RandomPlayer(random.Random(i)) for i in range(9)]
    players[0] = Shy()
    seats = [
        Seat(n, "maximin" if isinstance(p, HousePlayer) else "random") for n, p in zip(names, players, strict=True)
    ]
    with Store(tmp_path / "ko.duckdb") as store:
        options = {"rows": 4, "columns": 4, "random_board": True, "holes": 2}
        result = run_knockout("fish", seats, players, store=store, seed=3, options=options)
        assert store.verify() == []
        records = list(store.records([result.tournament_id]))
        state = fold(records)
        assert state.over and state.winners == result.outcome.winners
        played = [r.event for r in records if isinstance(r.event, KnockoutGamePlayed)]
        assert [p.match_id for p in played] == [str(g.match_id) for g in result.games]
        kicked = [r.event for r in records if isinstance(r.event, PlayerRemoved)]
        assert [(k.seat, k.code) for k in kicked][:1] == [(0, "player.exception")] and "not today" in kicked[0].reason
        assert played[0].seats == (1, 2, 3, 4), "the shy player was left out of the draw"
        for event, game_result in zip(played, result.games, strict=True):
            info = store.match(game_result.match_id)
            assert info.game == "fish" and info.series_id == str(result.tournament_id)
            assert [seats[s].name for s in event.seats] == [s.name for s in game_result.seats]
        assert result.winners and len(played) >= 3, "eight left: two tables of four, then a final"
        for winner in result.outcome.winners:
            last = [p for p in played if winner in p.seats][-1]
            assert winner in last.winners, "every champion won the last game it played"
        assert len({p.winners for p in played}) > 1


def test_a_winner_that_fails_to_hear_it_won_becomes_a_loser():
    seats = [Seat("grumpy", "Grumpy"), Seat("calm", "maximin")]
    result = run_knockout("fish", seats, [Grumpy(), HousePlayer()], options={"rows": 3, "columns": 4}, seed=1)
    assert 0 not in result.outcome.winners and 0 in result.outcome.removed


# -- the remote protocol: framing ------------------------------------------------------------


@pytest.fixture
def pair() -> Iterator[tuple[Channel, socket.socket]]:
    ours, theirs = socket.socketpair()
    yield Channel(ours), theirs
    ours.close()
    theirs.close()


def test_values_may_come_split_packed_or_spaced(pair):
    channel, peer = pair
    peer.sendall(b'"vo')
    peer.sendall(b'id"[[0,1],[2, 3]]  \n tr')
    peer.sendall(b"ue")
    assert channel.receive(1) == "void"
    assert channel.receive(1) == [[0, 1], [2, 3]]
    peer.sendall(b" ")
    assert channel.receive(1) is True


@pytest.mark.parametrize(
    ("sent", "error"), [(b"hello", RemoteGarbled), (b"[1 2]", RemoteGarbled), (b"\xff\xfe", RemoteGarbled)]
)
def test_what_is_not_json_is_refused(pair, sent: bytes, error: type[Exception]):
    channel, peer = pair
    peer.sendall(sent)
    with pytest.raises(error):
        channel.receive(1)


def test_silence_times_out_and_a_closed_connection_is_said(pair):
    channel, peer = pair
    peer.sendall(b"[1, ")
    with pytest.raises(RemoteSlow):
        channel.receive(0.05)
    peer.close()
    with pytest.raises(RemoteClosed, match="mid-message"):
        channel.receive(1)


# -- the remote protocol: over loopback ------------------------------------------------------


class Server:
    """A server on a free loopback port, on a thread; `result` once it is done."""

    def __init__(self, store: Store, **settings: Any) -> None:
        self.port: int | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.sign_ups: list[Any] = []
        listening = threading.Event()

        def on_listening(host: str, port: int) -> None:
            self.port = port
            listening.set()

        def run() -> None:
            try:
                self.result = serve(store=store, on_listening=on_listening, on_signup=self.sign_ups.append, **settings)
            except BaseException as error:
                self.error = error
                listening.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert listening.wait(PATIENCE)

    def join(self) -> Any:
        self.thread.join(LONG_PATIENCE)
        assert not self.thread.is_alive(), "the server did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def in_background(function: Callable[[], Any]) -> Callable[[], Any]:
    """Run `function` on a thread now; the returned call waits for its result (or raises its error)."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(("ok", function()))
        except BaseException as error:
            box.append(("error", error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def wait() -> Any:
        thread.join(LONG_PATIENCE)
        assert box, "it did not finish"
        kind, value = box[0]
        if kind == "error":
            raise value
        return value

    return wait


def scripted(port: int, name: Any, answer: Callable[[str, list[Any]], bytes | None]) -> Callable[[], list[str]]:
    """A raw client: signs up with `name`, then sends `answer(message, arguments)` (None: hang up)."""

    def run() -> list[str]:
        heard = []
        with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as sock:
            sock.sendall(json.dumps(name).encode())
            try:
                for line in sock.makefile("rb"):
                    message, arguments = json.loads(line)
                    heard.append(message)
                    reply = answer(message, arguments)
                    if reply is None:
                        break
                    sock.sendall(reply)
            except OSError:  # the server hung up on a kicked client
                pass
        return heard

    return run


def void_then(on_turn: Callable[[str, list[Any]], bytes | None]) -> Callable[[str, list[Any]], bytes | None]:
    def answer(message: str, arguments: list[Any]) -> bytes | None:
        return b'"void"' if message not in ("setup", "take-turn") else on_turn(message, arguments)

    return answer


def first_free(arguments: list[Any]) -> bytes:
    """The zig-zag placement, computed from the State the server sent."""
    state = arguments[0]
    taken = {tuple(p) for player in state["players"] for p in player["places"]}
    for r, row in enumerate(state["board"]):
        for c, fish in enumerate(row):
            if fish and (r, c) not in taken:
                return json.dumps([r, c]).encode()
    raise AssertionError("no free tile")


def test_two_remote_clients_play_a_recorded_game_over_loopback(tmp_path: Path):
    with Store(tmp_path / "remote.duckdb") as store:
        server = Server(
            store, min_players=2, max_players=2, wait=PATIENCE, timeout=PATIENCE, options={"rows": 3, "columns": 4}
        )
        alice = in_background(lambda: play_remote(HousePlayer(), "alice", port=server.port, timeout=PATIENCE))
        wait_for(lambda: server.sign_ups, "alice's sign-up")  # alice signs up first, so she plays first
        bob = in_background(lambda: play_remote(HousePlayer(None, 1), "bob", port=server.port, timeout=PATIENCE))
        result = server.join()
        told = {alice().name: alice().won, bob().name: bob().won}
        assert told == {name: name in result.winners for name in ("alice", "bob")} and any(told.values())
        assert [s.name for s in result.seats] == ["alice", "bob"] and result.kicked == []
        assert store.verify() == [] and len(result.games) == 1
        match = list(store.records([result.games[0].match_id]))
        assert [r.event.age for r in match if r.event.tag == "fish.age_given"] == [0, 1], "age is sign-up order"
        assert store.match(result.tournament_id).game == "knockout"


def test_bad_names_are_turned_away_and_misbehaving_clients_are_kicked_with_their_reason(tmp_path: Path):
    with Store(tmp_path / "remote.duckdb") as store:
        # Each call may take 5 s: the house player's search takes milliseconds (300 times less on a
        # quiet machine), and the sleepy client sleeps until the server is done.
        server = Server(
            store, min_players=5, max_players=5, wait=PATIENCE, timeout=5, options={"rows": 4, "columns": 4}
        )
        awake = threading.Event()
        port = server.port
        assert port is not None
        refused = in_background(scripted(port, "R2-D2", void_then(first_free)))
        assert refused() == [], "the server hung up without a call"
        clients = {
            "garbage": scripted(port, "garbage", void_then(lambda m, a: b"where am I")),
            "quitter": scripted(port, "quitter", void_then(lambda m, a: None)),
            "sleepy": scripted(port, "sleepy", void_then(lambda m, a: first_free(a) if awake.wait() else None)),
            "rude": scripted(port, "rude", lambda m, a: b'"ok"'),
        }
        waits = {}
        for name, client in clients.items():
            waits[name] = in_background(client)
            time.sleep(0.05)
        good = in_background(lambda: play_remote(HousePlayer(), "good", port=port, timeout=PATIENCE))
        result = server.join()
        awake.set()
        assert any(s.refused and "R2-D2" in s.refused for s in server.sign_ups)
        kicks = {}
        for match in [result.tournament_id, *(g.match_id for g in result.games)]:
            for record in store.records([match]):
                if isinstance(record.event, PlayerRemoved):
                    names = store.match(match).players
                    kicks[names[record.event.seat]] = record.event.code
        assert kicks == {
            "garbage": "remote.malformed",
            "quitter": "remote.closed",
            "sleepy": "player.timeout",
            "rude": "remote.malformed",
        }
        assert result.winners == ["good"] and good().won is True
        assert store.verify() == []
        for wait in waits.values():
            wait()


def test_a_server_without_enough_sign_ups_says_so(tmp_path: Path):
    with Store(tmp_path / "remote.duckdb") as store:
        server = Server(store, min_players=2, wait=0.2, periods=2)
        with pytest.raises(RemoteError, match="only 0 client"):
            server.join()


def test_a_client_without_a_server_says_so():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    with pytest.raises(RemoteError, match="no Fish server"):
        play_remote(HousePlayer(), "alice", port=free, timeout=2)
    with pytest.raises(UsageError, match="1 to 12 ASCII letters"):
        play_remote(HousePlayer(), "al ice", port=free)
