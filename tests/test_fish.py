"""Fish: the hex board, movement, scoring and skipping on hand-built boards; the course's State
JSON; the game tree; the house player's maximin against a brute-force oracle; kicks for every
reason; full recorded games that verify and replay."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchlog.engines import GameTree, Turn
from matchlog.engines.fish import (
    ENGINE,
    FishRule,
    FishState,
    moves,
    neighbour,
    reachable,
    state_from_json,
    state_to_json,
)
from matchlog.engines.porrinha import ENGINE as PORRINHA
from matchlog.events import (
    AgeGiven,
    AnswerRejected,
    BoardGenerated,
    IllegalAction,
    MatchStarted,
    PenguinMoved,
    PenguinPlaced,
    PlayerRemoved,
    Seat,
)
from matchlog.referee import play_match
from matchlog.referee.fish import HousePlayer, RandomPlayer, maximin, zigzag
from matchlog.replay import fold, state_at
from matchlog.store import Store

from .fish_oracle import oracle_move


def position(board: list[list[int]], *players: tuple[str, list[list[int]], int]) -> FishState:
    """A move-phase state from the course's JSON: players (color, places, score) in turn order."""
    data = {"players": [{"color": c, "places": p, "score": s} for c, p, s in players], "board": board}
    return state_from_json(data)


def move(state: FishState, source: tuple[int, int], target: tuple[int, int]) -> FishState:
    turn = ENGINE.to_act(state)
    assert turn is not None
    event = PenguinMoved(seat=turn.seat, source=source, target=target)
    ENGINE.check(state, turn.seat, event)
    return ENGINE.apply(state, event)


UNIFORM = [[1] * 3 for _ in range(5)]


# -- the board -------------------------------------------------------------------------------


def test_neighbours_follow_the_course_with_odd_rows_shifted_right():
    even = {d: neighbour((2, 1), d) for d in ("N", "NE", "SE", "S", "SW", "NW")}
    odd = {d: neighbour((3, 1), d) for d in ("N", "NE", "SE", "S", "SW", "NW")}
    assert even == {"N": (0, 1), "NE": (1, 1), "SE": (3, 1), "S": (4, 1), "SW": (3, 0), "NW": (1, 0)}
    assert odd == {"N": (1, 1), "NE": (2, 2), "SE": (4, 2), "S": (5, 1), "SW": (4, 1), "NW": (2, 1)}


def test_reachable_tiles_run_in_straight_lines_to_the_edge():
    state = position(UNIFORM, ("red", [[2, 1]], 0), ("white", [[0, 0]], 0))
    # N (0,1); NE (1,1) (0,2); SE (3,1) (4,2); S (4,1); SW (3,0) (4,0); NW (1,0) then (0,0) is a penguin.
    assert sorted(reachable(state, (2, 1))) == sorted(
        [(0, 1), (1, 1), (0, 2), (3, 1), (4, 2), (4, 1), (3, 0), (4, 0), (1, 0)]
    )


def test_holes_and_penguins_stop_a_line_and_are_never_jumped():
    board = [row[:] for row in UNIFORM]
    board[1][1] = 0  # NE of (2, 1) is a hole: (0, 2) behind it is out of reach
    state = position(board, ("red", [[2, 1]], 0), ("white", [[3, 1]], 0))  # SE is a penguin
    assert sorted(reachable(state, (2, 1))) == sorted([(0, 1), (4, 1), (3, 0), (4, 0), (1, 0), (0, 0)])


def test_short_rows_are_padded_with_holes():
    state = position([[1, 1], [1], [1, 1]], ("red", [[0, 0]], 0), ("white", [[2, 1]], 0))
    assert state.board == ((1, 1), (1, 0), (1, 1))
    assert (1, 1) not in reachable(state, (0, 0))


# -- moving, scoring, skipping, ending ---------------------------------------------------------


def test_leaving_a_tile_scores_its_fish_and_sinks_it():
    board = [[5, 1, 1], [1, 1, 1], [1, 1, 1]]
    state = position(board, ("red", [[0, 0]], 3), ("white", [[2, 2]], 0))
    after = move(state, (0, 0), (2, 0))
    assert after.scores == (8, 0) and after.board[0][0] == 0 and after.penguins[0] == ((2, 0),)
    assert ENGINE.to_act(after) == Turn(1, "move")


def test_a_player_with_no_move_is_skipped_and_the_game_ends_when_nobody_can_move():
    # White at (0, 0) is walled in by holes; red and brown can still move.
    board = [[1, 0, 1, 1], [0, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1]]
    state = position(board, ("red", [[3, 3]], 0), ("white", [[0, 0]], 0), ("brown", [[3, 0]], 0))
    assert moves(state, 1) == []
    state = move(state, (3, 3), (1, 3))
    assert ENGINE.to_act(state) == Turn(2, "move"), "white cannot move: brown's turn"
    # Play on until nobody can move: the game ends by itself.
    while (turn := ENGINE.to_act(state)) is not None:
        source, target = moves(state, turn.seat)[0]
        state = move(state, source, target)
    assert state.over and all(moves(state, seat) == [] for seat in range(3))


def test_a_game_can_be_over_right_after_placement():
    state = position([[1, 0, 1]], ("red", [[0, 0]], 0), ("white", [[0, 2]], 0))
    assert state.over and ENGINE.to_act(state) is None


def test_every_top_scorer_wins_fish_under_penguins_does_not_count_and_the_kicked_never_win():
    # Red and white are stuck on 5-fish tiles; only brown (top score) can still move, from (6, 0) to (4, 0).
    board = [[5, 0, 5], [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0]]
    state = position(board, ("red", [[0, 0]], 7), ("white", [[0, 2]], 7), ("brown", [[6, 0]], 9))
    assert ENGINE.to_act(state) == Turn(2, "move")
    over = ENGINE.apply(state, PlayerRemoved(seat=2, code="player.timeout", reason="slow"))
    assert over.over, "once brown is out, nobody can move"
    outcome = ENGINE.outcome(over)
    assert outcome is not None
    assert outcome.winners == (0, 1), "red and white tie on 7; brown has more but was kicked"
    assert outcome.scores == (7.0, 7.0, 9.0), "the 5-fish tiles under the penguins do not count"
    assert outcome.places == (1, 1, 3) and outcome.removed == (2,)


def test_a_kicked_players_penguins_leave_the_board_and_its_turns_are_skipped():
    state = position(UNIFORM, ("red", [[0, 0], [4, 2]], 0), ("white", [[2, 1]], 0), ("brown", [[4, 0]], 0))
    kicked = ENGINE.apply(state, PlayerRemoved(seat=1, code="fish.unreachable", reason="cheated"))
    assert kicked.penguins[1] == () and (2, 1) not in kicked.occupied()
    after = move(kicked, (0, 0), (2, 0))
    assert ENGINE.to_act(after) == Turn(2, "move"), "white's turn is skipped"


# -- rulings ---------------------------------------------------------------------------------


def started(players: int = 2, **options: object) -> FishState:
    seats = tuple(Seat(f"p{i}", "x") for i in range(players))
    return ENGINE.start(MatchStarted(game="fish", options=options, seats=seats))


def test_the_youngest_plays_first_and_equal_ages_keep_the_seat_order():
    state = ENGINE.apply(started(3), BoardGenerated(tiles=((1,) * 5,) * 5))
    for seat, age in ((0, 30), (1, 12), (2, 12)):
        state = ENGINE.apply(state, AgeGiven(seat=seat, age=age))
    assert state.order == (1, 2, 0) and ENGINE.to_act(state) == Turn(1, "place")


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ([9, 9], FishRule.OFF_THE_BOARD),
        ([1, 1], FishRule.HOLE),
        ([0, 0], FishRule.OCCUPIED),
        ("top left", FishRule.MALFORMED),
        ([0, True], FishRule.MALFORMED),
    ],
)
def test_placements_are_judged(answer: object, code: str):
    state = ENGINE.apply(started(2), BoardGenerated(tiles=((1, 1), (1, 0), (1, 1))))
    state = ENGINE.apply(ENGINE.apply(state, AgeGiven(seat=0, age=5)), AgeGiven(seat=1, age=9))
    state = ENGINE.apply(state, PenguinPlaced(seat=0, position=(0, 0)))
    with pytest.raises(IllegalAction) as caught:
        ENGINE.check(state, 1, ENGINE.parse(state, 1, answer))
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ([[2, 1], [0, 1]], FishRule.NOT_YOUR_PENGUIN),
        ([[0, 0], [2, 2]], FishRule.UNREACHABLE),
        ([[0, 0], [0, 0]], FishRule.UNREACHABLE),
        ([[0, 0]], FishRule.MALFORMED),
        (None, FishRule.MALFORMED),
    ],
)
def test_moves_are_judged(answer: object, code: str):
    state = position(UNIFORM, ("red", [[0, 0]], 0), ("white", [[2, 1]], 0))
    with pytest.raises(IllegalAction) as caught:
        ENGINE.check(state, 0, ENGINE.parse(state, 0, answer))
    assert caught.value.code == code


def test_bad_options_are_refused_with_the_reason():
    with pytest.raises(Exception, match="cannot take 8 penguins"):
        started(2, rows=2, columns=2)
    with pytest.raises(Exception, match="1 to 5 fish"):
        started(2, fish=7)


@given(st.integers(0, 2**32), st.integers(2, 4))
def test_generated_boards_have_the_holes_and_one_fish_tiles_asked_for(seed: int, players: int):
    state = started(players, rows=4, columns=5, random_board=True, holes=4, one_fish=3)
    board = ENGINE.chance(state, random.Random(seed)).tiles
    cells = [fish for row in board for fish in row]
    assert len(board) == 4 and all(len(row) == 5 for row in board)
    assert cells.count(0) == 4 and cells.count(1) >= 3 and all(0 <= f <= 5 for f in cells)


# -- the course's State JSON -----------------------------------------------------------------


def test_state_json_round_trips_with_the_player_to_act_first():
    state = position(UNIFORM, ("red", [[0, 0]], 2), ("white", [[2, 1]], 4), ("brown", [[4, 2]], 0))
    sent = state_to_json(state, first=1)
    assert [p["color"] for p in sent["players"]] == ["white", "brown", "red"]
    back = state_from_json(sent)
    assert back.board == state.board and back.penguins == state.penguins and back.scores == state.scores
    assert ENGINE.to_act(back) == Turn(1, "move")


@pytest.mark.parametrize(
    "data",
    [
        {"players": [], "board": [[1]]},
        {"players": [{"color": "green", "score": 0, "places": []}], "board": [[1]]},
        {"players": [{"color": "red", "score": 0, "places": [[0, 1]]}], "board": [[1, 0]]},
        {"players": [{"color": "red", "score": -1, "places": []}], "board": [[1]]},
        {"players": [{"color": "red", "score": 0, "places": []}], "board": [[9]]},
        {"board": [[1]]},
        "state",
    ],
)
def test_a_malformed_state_is_refused(data: object):
    with pytest.raises(IllegalAction) as caught:
        state_from_json(data)
    assert caught.value.code == FishRule.MALFORMED


# -- the game tree ---------------------------------------------------------------------------


def test_the_tree_lists_moves_builds_children_once_and_refuses_invalid_ones():
    state = position(UNIFORM, ("red", [[0, 0]], 0), ("white", [[2, 1]], 0))
    tree = GameTree(ENGINE, state)
    listed = tree.valid_moves()
    assert {(m.source, m.target) for m in listed} == set(moves(state, 0))
    child = tree.after(listed[0])
    assert child is not None and tree.after(listed[0]) is child, "children are memoised"
    assert child.state == ENGINE.apply(state, listed[0])
    assert tree.after(PenguinMoved(seat=0, source=(0, 0), target=(4, 2))) is None
    assert tree.after(PenguinMoved(seat=1, source=(2, 1), target=(0, 1))) is None, "not white's turn"
    assert tree.winners() == ()


def test_a_finished_game_has_no_moves_no_children_and_its_winners():
    over = position([[3, 0, 1]], ("red", [[0, 0]], 4), ("white", [[0, 2]], 1))
    tree = GameTree(ENGINE, over)
    assert tree.is_over() and tree.valid_moves() == () and tree.winners() == (0,)
    assert tree.after(PenguinMoved(seat=0, source=(0, 0), target=(0, 2))) is None


def test_the_tree_works_over_any_engine():
    seats = (Seat("a", "x"), Seat("b", "x"))
    tree = GameTree(PORRINHA, PORRINHA.start(MatchStarted(game="porrinha", options={}, seats=seats)))
    assert tree.valid_moves() and all(tree.after(m) is not None for m in tree.valid_moves())


# -- the house player ------------------------------------------------------------------------


def test_maximin_breaks_ties_by_from_row_from_column_to_row_to_column():
    # Every tile holds one fish: every move is worth the same, so the first in tie-break order wins.
    state = position(UNIFORM, ("red", [[2, 1], [4, 0]], 0), ("white", [[0, 2]], 0))
    assert maximin(GameTree(ENGINE, state), 1) == ((2, 1), (0, 0))  # (0, 0) is two tiles NW


def test_maximin_takes_the_fish_it_can_be_sure_of():
    # Red at (0, 0) on 1 fish, or at (4, 1) on 5: depth 1 leaves the 5 and takes it.
    board = [[1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 5, 1]]
    state = position(board, ("red", [[0, 0], [4, 1]], 0), ("white", [[0, 2]], 0))
    assert maximin(GameTree(ENGINE, state), 1)[0] == (4, 1)  # type: ignore[index]


@st.composite
def small_positions(draw: st.DrawFn) -> FishState:
    rows, columns = draw(st.integers(3, 5)), draw(st.integers(2, 4))
    board = [[draw(st.integers(0, 5)) for _ in range(columns)] for _ in range(rows)]
    tiles = [(r, c) for r in range(rows) for c in range(columns) if board[r][c]]
    players = draw(st.integers(2, 3))
    each = draw(st.integers(1, 2))
    places = (
        draw(st.lists(st.sampled_from(tiles), min_size=players * each, max_size=players * each, unique=True))
        if len(tiles) >= players * each
        else []
    )
    if not places:
        return position([[1, 1], [1, 1]], ("red", [[0, 0]], 0), ("white", [[1, 1]], 0))
    colors = ("red", "white", "brown")
    return position(
        board,
        *(
            (colors[p], [list(x) for x in places[p * each : (p + 1) * each]], draw(st.integers(0, 5)))
            for p in range(players)
        ),
    )


@settings(max_examples=100)
@given(small_positions(), st.integers(1, 3))
def test_maximin_agrees_with_the_brute_force_oracle(state: FishState, depth: int):
    tree = GameTree(ENGINE, state)
    if tree.is_over():
        assert maximin(tree, depth) is None
        return
    assert maximin(tree, depth) == oracle_move(GameTree(ENGINE, state), depth)


def test_zigzag_takes_the_first_free_tile_row_by_row():
    state = position([[0, 1, 1], [1, 1, 1]], ("red", [[0, 1]], 0), ("white", [], 0))
    assert zigzag(state) == (0, 2)


def test_house_player_depth_is_checked():
    with pytest.raises(ValueError, match="depth from 1 to 4"):
        HousePlayer(None, "9")


# -- refereed matches ------------------------------------------------------------------------


#: The specs of the game's own players: a seat so named is called inline, with no timeout.
BUILT_IN = {HousePlayer: "maximin", RandomPlayer: "random"}


def play(players: list[tuple[str, object]], store: Store | None = None, timeout: float = 5.0, **options: Any):
    """A match between player objects. A HousePlayer or RandomPlayer sits as the built-in it is, so a
    busy machine can never make its search overrun a timeout; any other seat's spec is its class
    name, so it runs under `timeout`."""
    seats = [Seat(name, BUILT_IN.get(type(player), type(player).__name__)) for name, player in players]
    return play_match("fish", seats, [p[1] for p in players], options=options, store=store, timeout=timeout, seed=7)


class Raises(HousePlayer):
    def get_move(self, game: GameTree) -> Any:
        raise RuntimeError("lost my penguins")


class Cheats(HousePlayer):
    def get_move(self, game: GameTree) -> Any:
        me = game.turn.seat  # type: ignore[union-attr]
        return [list(game.state.penguins[me][0]), [99, 99]]


class Babbles(HousePlayer):
    def get_placement(self, state: FishState) -> Any:
        return "somewhere nice"


class Sleeps(HousePlayer):
    """Blocks in get_move until the test lets it go."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release

    def get_move(self, game: GameTree) -> Any:
        self.release.wait()
        return None


class LiesAboutAge(HousePlayer):
    def initialize(self, board: Any, players: int, color: str) -> int:
        return -3


def kicked_reasons(store: Store, match_id: Any) -> dict[int, tuple[str, str]]:
    return {
        r.event.seat: (r.event.code, r.event.reason)
        for r in store.records([match_id])
        if isinstance(r.event, PlayerRemoved)
    }


@pytest.mark.parametrize(
    ("bad", "code", "says"),
    [
        (Raises(), "player.exception", "lost my penguins"),
        (Cheats(), FishRule.UNREACHABLE, "[99, 99]"),
        (Babbles(), FishRule.MALFORMED, "somewhere nice"),
        (LiesAboutAge(), FishRule.NOT_AN_AGE, "-3"),
    ],
)
def test_a_misbehaving_player_is_kicked_with_its_reason_and_the_others_finish(file_store: Store, bad, code, says):
    result = play(
        [("good", HousePlayer()), ("bad", bad), ("fine", HousePlayer(None, 1))], file_store, rows=4, columns=4
    )
    kicked = kicked_reasons(file_store, result.match_id)
    assert list(kicked) == [1] and kicked[1][0] == code and says in kicked[1][1]
    assert 1 not in result.outcome.winners and result.outcome.removed == (1,)
    final = state_at(file_store, result.match_id).state
    assert final.over and not final.penguins[1], "the kicked player's penguins left the board"
    assert sum(final.scores[s] for s in (0, 2)) > 0, "the others played on"
    if code.startswith("fish."):
        assert any(
            isinstance(r.event, AnswerRejected) and r.event.code == code for r in file_store.records([result.match_id])
        )
    assert file_store.verify() == []


def test_a_player_that_hangs_is_kicked_at_its_timeout_without_stalling_the_match(file_store: Store):
    release = threading.Event()
    try:
        sleeper = Sleeps(release)
        result = play([("a", HousePlayer()), ("sleepy", sleeper), ("b", RandomPlayer())], file_store, timeout=1.0)
        assert not release.is_set(), "the match ended while the player was still asleep"
        kicked = kicked_reasons(file_store, result.match_id)
        assert kicked[1][0] == "player.timeout" and "get_move" in kicked[1][1]
        assert result.outcome.removed == (1,) and state_at(file_store, result.match_id).state.over
    finally:
        release.set()


def test_four_house_players_finish_a_random_board_with_holes_and_the_log_replays(tmp_path: Path):
    with Store(tmp_path / "fish.duckdb") as store:
        seats = [Seat(f"m{i}", "maximin") for i in range(4)]
        players = [HousePlayer(None, 2) for _ in range(4)]
        options = {"rows": 6, "columns": 6, "random_board": True, "holes": 4, "one_fish": 3}
        live: list[Any] = []
        result = play_match(
            "fish", seats, players, options=options, store=store, seed=11, on_event=lambda e, s: live.append(s)
        )
        assert store.verify() == []
        records = list(store.records([result.match_id]))
        assert fold(records) == live[-1] and state_at(store, result.match_id).state == live[-1]
        board = next(r.event for r in records if isinstance(r.event, BoardGenerated))
        assert isinstance(board, BoardGenerated) and sum(f == 0 for row in board.tiles for f in row) == 4
        moved = [r.event for r in records if isinstance(r.event, PenguinMoved)]
        assert len(moved) > 8 and live[-1].over and result.outcome.winners
        assert ENGINE.render(live[-1]).count("\n") >= 6
