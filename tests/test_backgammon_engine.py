"""Backgammon's engine on hand-built positions, and its play generator against a slow oracle."""

from __future__ import annotations

import msgspec
import pygammon
import pygammon.core
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from matchlog.engines import CHANCE, Rule, Turn
from matchlog.engines.backgammon import (
    ENGINE,
    FIRST,
    SECOND,
    START,
    BackgammonOptions,
    BackgammonRule,
    BackgammonState,
    pips,
    plays,
)
from matchlog.events import (
    CheckerMoved,
    DiceRolled,
    IllegalAction,
    MatchStarted,
    OpeningRolled,
    PlayerRemoved,
    Seat,
)

from .backgammon_oracle import all_plays, plays_of_length


def board(first: dict[int, int] | None = None, second: dict[int, int] | None = None) -> tuple[int, ...]:
    """Points from {point: count} for each side (SECOND's counted negative)."""
    points = [0] * 24
    for point, count in (first or {}).items():
        points[point] = count
    for point, count in (second or {}).items():
        points[point] = -count
    return tuple(points)


def position(
    first: dict[int, int],
    second: dict[int, int],
    *,
    side: int,
    dice: tuple[int, int],
    bar: tuple[int, int] = (0, 0),
    rules: str = "standard",
) -> BackgammonState:
    """A state with `side` to move `dice`; borne-off counts make up 15 checkers each."""
    points = board(first, second)
    off = (
        15 - sum(first.values()) - bar[0],
        15 - sum(second.values()) - bar[1],
    )
    state = BackgammonState(
        options=BackgammonOptions(rules=rules), names=("x", "o"), points=points, bar=bar, off=off, side=side
    )
    return ENGINE.apply(state, DiceRolled(seat=side, dice=dice))


def moves(state: BackgammonState) -> set[tuple[int, int | None]]:
    """The legal moves as (die value, source)."""
    return {(state.dice[e.die_index], e.source) for e in ENGINE.legal(state, state.side)}  # type: ignore[attr-defined]


def rejects(state: BackgammonState, die_index: int, source: int | None, code: str) -> None:
    with pytest.raises(IllegalAction) as caught:
        ENGINE.check(state, state.side, CheckerMoved(seat=state.side, die_index=die_index, source=source))
    assert caught.value.code == code, caught.value.message


def play(state: BackgammonState, *steps: tuple[int, int | None]) -> BackgammonState:
    for index, source in steps:
        event = CheckerMoved(seat=state.side, die_index=index, source=source)
        ENGINE.check(state, state.side, event)
        state = ENGINE.apply(state, event)
    return state


# -- the start -------------------------------------------------------------------------------


def test_the_start_position_and_the_opening_roll():
    options = {"move_by_turn_rolls": False}  # the starter rolls again (pygammon's default)
    state = ENGINE.start(MatchStarted(game="backgammon", options=options, seats=(Seat("x", "r"), Seat("o", "r"))))
    assert state.points == START
    assert sum(v for v in START if v > 0) == 15 and -sum(v for v in START if v < 0) == 15
    assert pips(state, FIRST) == pips(state, SECOND) == 167
    assert ENGINE.to_act(state) == Turn(CHANCE, "opening")
    openings = ENGINE.chance_outcomes(state)
    assert len(openings) == 30 and all(e.first != e.second for e in openings)  # type: ignore[attr-defined]
    state = ENGINE.apply(state, OpeningRolled(first=2, second=5))
    assert state.side == SECOND and ENGINE.to_act(state) == Turn(CHANCE, "roll")
    assert len(ENGINE.chance_outcomes(state)) == 36


def test_the_opening_roll_is_played_when_asked():
    options = {"move_by_turn_rolls": True}
    state = ENGINE.start(MatchStarted(game="backgammon", options=options, seats=(Seat("x", "r"), Seat("o", "r"))))
    state = ENGINE.apply(state, OpeningRolled(first=6, second=1))
    assert (state.side, state.dice, state.max_moves) == (FIRST, (6, 1), 2)
    assert ENGINE.to_act(state) == Turn(FIRST, "move")


# -- entering from the bar -------------------------------------------------------------------


def test_a_checker_on_the_bar_enters_before_anything_else():
    # FIRST enters on 24 - die; SECOND holds 19 (a 5 cannot enter), so the 3 enters first.
    state = position({5: 5, 12: 9}, {19: 2, 0: 13}, side=FIRST, dice=(3, 5), bar=(1, 0))
    assert moves(state) == {(3, None)}
    rejects(state, 1, None, BackgammonRule.DESTINATION_OCCUPIED)
    rejects(state, 0, 12, BackgammonRule.SOURCE_INVALID)
    state = play(state, (0, None))
    assert state.points[21] == 1 and state.bar == (0, 0)
    # Then the 5 may be played by any checker that can move it.
    assert moves(state) == {(5, 21), (5, 12), (5, 5)} - {(5, 5)} | {(5, 12), (5, 21)}
    rejects(state, 1, None, BackgammonRule.SOURCE_INVALID)


def test_a_blocked_bar_ends_the_turn_at_once():
    second = {18: 2, 19: 2, 20: 2, 21: 2, 22: 2, 23: 2}  # FIRST's entry points 18..23 all held
    state = position({5: 14}, second, side=FIRST, dice=(3, 5), bar=(1, 0))
    assert state.side == SECOND and state.dice == ()  # no move: the turn passed
    assert ENGINE.to_act(state) == Turn(CHANCE, "roll")


def test_two_on_the_bar_with_one_entry_open():
    state = position({5: 13}, {21: 2, 0: 13}, side=FIRST, dice=(3, 4), bar=(2, 0))
    # 24 - 3 = 21 is held; only the 4 enters, and the other checker stays on the bar.
    assert state.max_moves == 1
    assert moves(state) == {(4, None)}
    state = play(state, (1, None))
    assert state.side == SECOND and state.bar == (1, 0)


# -- doubles, forced moves and the larger die ------------------------------------------------


def test_doubles_play_four_times():
    state = ENGINE.apply(
        ENGINE.apply(ENGINE.start(MatchStarted(game="backgammon", options={"move_by_turn_rolls": False},
                                               seats=(Seat("x", "r"), Seat("o", "r")))),
                     OpeningRolled(first=4, second=3)),
        DiceRolled(seat=FIRST, dice=(2, 2)),
    )  # fmt: skip
    assert state.dice == (2, 2, 2, 2) and state.max_moves == 4
    after = play(state, (0, 12), (1, 12), (2, 5), (3, 5))
    assert after.side == SECOND and after.points[10] == 2 and after.points[3] == 2


def test_a_partial_double_plays_as_many_as_it_can():
    # One FIRST checker on 12 with 6-6: 12 -> 6 -> 0, then 0 - 6 is off the board but not all home... it is:
    # the checkers are on 12 and 0 only; after two moves all are home, so the third 6 bears off.
    # Block 6 instead so only the first hop is possible for the checker on 18.
    state = position({18: 1, 0: 14}, {12: 2}, side=FIRST, dice=(6, 6))
    # 18 -> 12 is blocked; the checker on 18 is not home, so nothing can bear off: no move at all.
    assert state.side == SECOND
    state = position({18: 1, 5: 14}, {6: 2}, side=FIRST, dice=(6, 6))
    # 18 -> 12 is open, 12 -> 6 is blocked; then all are home... no: 12 is not home. One move only.
    assert state.max_moves == 1
    assert moves(state) == {(6, 18)}


def test_the_larger_die_must_be_played_when_only_one_can():
    # FIRST's one checker left is on 9 (the other fourteen are off). SECOND holds 1.
    # 6 then 2: 9 -> 3 -> 1 (held). 2 then 6: 9 -> 7 -> 1 (held). Either die alone is playable.
    state = position({9: 1}, {1: 2}, side=FIRST, dice=(6, 2))
    assert state.max_moves == 1
    assert moves(state) == {(6, 9)}
    rejects(state, 1, 9, BackgammonRule.LARGER_DIE_REQUIRED)
    # pygammon's rules let the smaller die through.
    loose = position({9: 1}, {1: 2}, side=FIRST, dice=(6, 2), rules="pygammon")
    ENGINE.check(loose, FIRST, CheckerMoved(seat=FIRST, die_index=1, source=9))


def test_a_move_that_leaves_a_die_unplayable_is_refused_when_another_plays_both():
    # FIRST: a checker on 13 and fourteen home on 5. Dice 6-5. SECOND holds 2.
    # 13 -> 7 (6) then 5 -> 0 (5) plays both, in either order. But 13 -> 8 (5) leaves the 6
    # unplayable (8 -> 2 is held, and 5 cannot bear off while 8 is out): refused.
    state = position({13: 1, 5: 14}, {2: 2}, side=FIRST, dice=(6, 5))
    assert state.max_moves == 2
    assert moves(state) == {(6, 13), (5, 5)}
    rejects(state, 1, 13, BackgammonRule.MUST_USE_MORE_DICE)
    # Checkers on 5 cannot move a 6 (5 - 6 is off the board, and 13 is not home yet).
    rejects(state, 0, 5, BackgammonRule.DESTINATION_OUT_OF_BOARD)


def test_must_use_more_dice():
    # FIRST: checkers on 7 (one) and 0 (fourteen). SECOND holds 3 and 4. Dice 3-1.
    # 7 -> 6 (1) then 6 -> 3 (3) is blocked... 7 -> 4 (3) blocked. 0 cannot move (not home: 7 is out).
    # The 1 first (7 -> 6) makes everything home: then the 3 bears off from 0? No: standard needs the
    # exact point or the highest; the highest is 6, so 0 -> off with 3 is refused, and 6 -> 3 is held.
    state = position({7: 1, 0: 14}, {3: 2, 4: 2}, side=FIRST, dice=(3, 1))
    assert state.max_moves == 1
    assert moves(state) == {(1, 7)}
    # A case where the first move matters: FIRST on 8 and 2, SECOND holds 4. Dice 4-2.
    state = position({8: 1, 2: 14}, {4: 2}, side=FIRST, dice=(4, 2))
    # 8 -> 4 is held; 8 -> 6 (2) then 6 -> 2 (4) plays both; 2 -> 0 (2) first leaves 8 -> 4 held.
    assert state.max_moves == 2
    assert moves(state) == {(2, 8)}
    rejects(state, 1, 2, BackgammonRule.MUST_USE_MORE_DICE)
    # pygammon's rules let a move through that leaves the turn unfinishable: 13 -> 8 with the 5,
    # after which the 6 cannot be played (8 -> 2 is held, and 8 is not home). Only undo helps.
    loose = position({13: 1, 5: 14}, {2: 2}, side=FIRST, dice=(6, 5), rules="pygammon")
    assert loose.max_moves == 2
    stuck = play(loose, (1, 13))
    assert ENGINE.legal(stuck, FIRST) == ()
    assert ENGINE.to_act(stuck) == Turn(FIRST, "move")


def test_pygammon_rules_ask_for_pygammons_own_count():
    # FIRST on 8 and 2, SECOND holds 4, dice 4-2: 8 -> 6 -> 2 plays both, but pygammon's greedy
    # search tries the 2 first from point 2 (2 -> 0), finds no 4 after it, and asks for one move.
    loose = position({8: 1, 2: 14}, {4: 2}, side=FIRST, dice=(4, 2), rules="pygammon")
    assert loose.max_moves == 1 == pygammon_game(loose, (4, 2)).get_max_move_count()
    assert moves(loose) == {(2, 8), (2, 2)}  # any move of the one asked for
    assert {play.moves for play in plays(loose)} == {((1, 8),), ((1, 2),)}
    after = play(loose, (1, 2))
    assert after.side == SECOND and after.dice == ()  # the turn ends after that one move
    # Standard rules count exactly, and only the move that lets both dice play is legal.
    assert position({8: 1, 2: 14}, {4: 2}, side=FIRST, dice=(4, 2)).max_moves == 2


# -- bearing off -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "dice", "allowed", "refused"),
    [
        ({2: 2, 0: 13}, (3, 1), {(3, 2), (1, 2), (1, 0)}, [(0, 0)]),  # exact 3 from 2; 3 from 0 is not the highest
        ({1: 1, 0: 14}, (5, 6), {(5, 1), (6, 1)}, [(0, 0), (1, 0)]),  # higher dice bear off the highest only
        ({4: 1, 1: 14}, (3, 2), {(3, 4), (2, 4), (2, 1)}, [(0, 1)]),  # a 3 from 1 with a checker on 4 behind
    ],
    ids=["exact", "higher-die-highest-point", "checker-farther-back"],
)
def test_bearing_off_under_standard_rules(first, dice, allowed, refused):
    state = position(first, {23: 2}, side=FIRST, dice=dice)
    assert moves(state) >= allowed
    for index, source in refused:
        rejects(state, index, source, BackgammonRule.DESTINATION_OUT_OF_BOARD)


def test_pygammon_bears_off_any_home_checker_with_a_higher_die():
    state = position({4: 1, 1: 14}, {23: 2}, side=FIRST, dice=(3, 2), rules="pygammon")
    ENGINE.check(state, FIRST, CheckerMoved(seat=FIRST, die_index=0, source=1))


def test_no_bearing_off_until_every_checker_is_home():
    state = position({6: 1, 0: 14}, {23: 2}, side=FIRST, dice=(1, 2))
    rejects(state, 0, 0, BackgammonRule.DESTINATION_OUT_OF_BOARD)
    for rules in ("standard", "pygammon"):
        loose = position({6: 1, 0: 14}, {23: 2}, side=FIRST, dice=(1, 2), rules=rules)
        rejects(loose, 1, 0, BackgammonRule.DESTINATION_OUT_OF_BOARD)


def test_bearing_off_for_the_second_side():
    state = position({0: 2}, {23: 1, 20: 14}, side=SECOND, dice=(1, 6))
    assert moves(state) == {(1, 23), (1, 20), (6, 20)}  # 6 from 20: no checker farther back (20 is highest)
    state = play(state, (0, 23), (1, 20))
    assert state.off == (13, 2)


# -- hits and the source checks --------------------------------------------------------------


def test_a_move_onto_a_blot_hits_it():
    state = position({12: 1, 5: 14}, {9: 1, 0: 14}, side=FIRST, dice=(3, 6))
    after = play(state, (0, 12))
    assert after.points[9] == 1 and after.bar == (0, 1)


@pytest.mark.parametrize(
    ("die_index", "source", "code"),
    [
        (-1, 12, BackgammonRule.DIE_INDEX_INVALID),  # pygammon read -1 as the last die
        (2, 12, BackgammonRule.DIE_INDEX_INVALID),
        (0, -1, BackgammonRule.SOURCE_INVALID),  # pygammon read -1 as point 23
        (0, 24, BackgammonRule.SOURCE_INVALID),
        (0, None, BackgammonRule.SOURCE_INVALID),
        (0, 0, BackgammonRule.SOURCE_NOT_OWNED_PIECE),
        (0, 3, BackgammonRule.SOURCE_NOT_OWNED_PIECE),
    ],
)
def test_bad_moves_get_pygammons_codes(die_index: int, source: int | None, code: str):
    state = position({12: 5, 5: 10}, {0: 15}, side=FIRST, dice=(3, 6))
    rejects(state, die_index, source, code)


def test_a_played_die_cannot_be_played_again():
    state = position({12: 5, 5: 10}, {0: 15}, side=FIRST, dice=(3, 6))
    state = play(state, (0, 12))
    rejects(state, 0, 12, BackgammonRule.DIE_INDEX_INVALID)


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (None, BackgammonRule.INVALID_MOVE_TYPE),
        ((1,), BackgammonRule.INVALID_MOVE_TYPE),
        ("ab", BackgammonRule.INVALID_MOVE_TYPE),
        ((0, 1, 2), BackgammonRule.INVALID_MOVE_TYPE),
        (("0", 12), BackgammonRule.DIE_INDEX_INVALID),
        ((True, 12), BackgammonRule.DIE_INDEX_INVALID),
        ((0.0, 12), BackgammonRule.DIE_INDEX_INVALID),
        ((0, "12"), BackgammonRule.SOURCE_INVALID),
        ((0, 12.0), BackgammonRule.SOURCE_INVALID),
    ],
)
def test_malformed_moves_are_refused_not_crashed_on(answer: object, code: str):
    state = position({12: 5, 5: 10}, {0: 15}, side=FIRST, dice=(3, 6))
    with pytest.raises(IllegalAction) as caught:
        ENGINE.parse(state, FIRST, answer)
    assert caught.value.code == code


def test_moves_out_of_turn_are_refused():
    state = position({12: 5, 5: 10}, {0: 15}, side=FIRST, dice=(3, 6))
    with pytest.raises(IllegalAction) as caught:
        ENGINE.check(state, SECOND, CheckerMoved(seat=SECOND, die_index=0, source=0))
    assert caught.value.code == Rule.NOT_YOUR_TURN


# -- the end ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("second", "second_bar", "result", "points"),
    [
        ({20: 1}, 0, "single", 1),  # SECOND bore off 14: a single game
        ({20: 15}, 0, "gammon", 2),  # SECOND bore off none
        ({3: 1, 20: 14}, 0, "backgammon", 3),  # ...and has a checker in FIRST's home board
        ({20: 14}, 1, "backgammon", 3),  # ...or on the bar
    ],
)
def test_the_result_counts_gammons_and_backgammons(second, second_bar, result, points):
    # The last checker can bear off with either die, but not both: the larger (2) must be played.
    state = position({0: 1}, second, side=FIRST, dice=(1, 2), bar=(0, second_bar))
    state = play(state, (1, 0))
    outcome = ENGINE.outcome(state)
    assert state.winner == FIRST and ENGINE.to_act(state) is None
    assert (outcome.result, outcome.scores, outcome.places) == (result, (float(points), 0.0), (1, 2))


def test_a_side_that_leaves_forfeits():
    state = position({12: 5, 5: 10}, {0: 15}, side=FIRST, dice=(3, 6))
    state = ENGINE.apply(state, PlayerRemoved(seat=FIRST, code="player.exception", reason="boom"))
    outcome = ENGINE.outcome(state)
    assert (outcome.winners, outcome.result, outcome.removed) == ((SECOND,), "forfeit", (FIRST,))


def test_render_shows_the_board_the_dice_and_who_moves():
    state = position({12: 5, 5: 10}, {0: 15}, side=FIRST, dice=(3, 6))
    text = ENGINE.render(state)
    assert "X5" in text and "O15" in text and "dice (3, 6)" in text and "x (X) to move" in text
    assert "pips: X" in text and "bar: X 0  O 0" in text


def test_describe_uses_the_movers_point_numbers():
    state = position({12: 1, 5: 14}, {9: 1, 0: 14}, side=FIRST, dice=(3, 6))
    after = ENGINE.apply(state, CheckerMoved(seat=FIRST, die_index=0, source=12))
    assert ENGINE.describe(state, CheckerMoved(seat=FIRST, die_index=0, source=12), after) == "x plays 13/10*"


# -- the generator against the oracle --------------------------------------------------------


@st.composite
def positions(draw: st.DrawFn) -> tuple[BackgammonState, tuple[int, ...]]:
    """Random legal positions: each side's 15 checkers spread over points, bar and off."""
    points = [0] * 24
    bar, off = [0, 0], [0, 0]
    homeward = draw(st.booleans())  # often all home, to exercise bearing off
    for side, sign in ((FIRST, 1), (SECOND, -1)):
        for _ in range(15):
            where = draw(st.integers(0, 25 if not homeward else 7))
            if homeward:
                where = where if side == FIRST else 23 - where
            if where == 24 or (homeward and where in (6, 17)):
                off[side] += 1
            elif where == 25 or (homeward and where in (7, 16)):
                bar[side] += 1
            elif points[where] * sign >= 0:
                points[where] += sign
            else:
                off[side] += 1  # the point is the opponent's: count it borne off
    side = draw(st.sampled_from([FIRST, SECOND]))
    rules = draw(st.sampled_from(["standard", "pygammon"]))
    a, b = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    state = BackgammonState(options=BackgammonOptions(rules=rules), names=("x", "o"), points=tuple(points),
                            bar=(bar[0], bar[1]), off=(off[0], off[1]), side=side)  # fmt: skip
    return state, (a, b)


@given(positions())
def test_the_play_generator_agrees_with_the_oracle(example):
    state, (a, b) = example
    dice = (a, a, a, a) if a == b else (a, b)
    best, finals, firsts = all_plays((state.points, state.bar, state.off), state.side, dice, state.options.rules)
    rolled = msgspec.structs.replace(state, dice=dice, max_moves=0)
    rolled = msgspec.structs.replace(rolled, max_moves=best)
    counted = ENGINE.apply(state, DiceRolled(seat=state.side, dice=(a, b))).max_moves
    if state.options.rules == "standard":
        assert best in (counted, 0)
    else:  # pygammon's own greedy count, which may fall short (test_pygammon_rules_count_as_pygammon_does)
        assert counted <= best
    generated = plays(rolled)
    assert {(p.points, p.bar, p.off) for p in generated} == finals
    assert len(generated) == len(finals)  # one play per distinct position
    assert all(len(p.moves) == best for p in generated)
    if best:
        assert moves(rolled) == firsts
        # Every generated play goes through check() move by move.
        for candidate in generated[:5]:
            current = rolled
            for index, source in candidate.moves:
                event = CheckerMoved(seat=current.side, die_index=index, source=source)
                ENGINE.check(current, current.side, event)
                current = ENGINE.apply(current, event)
            assert (current.points, current.bar, current.off) == (candidate.points, candidate.bar, candidate.off)


@given(positions(), st.randoms(use_true_random=False))
def test_the_play_generator_agrees_with_the_oracle_in_the_middle_of_a_turn(example, rng):
    state, (a, b) = example
    state = msgspec.structs.replace(state, options=BackgammonOptions(rules="standard"))
    rolled = ENGINE.apply(state, DiceRolled(seat=state.side, dice=(a, b)))
    assume(rolled.dice and rolled.side == state.side)
    middle = ENGINE.apply(rolled, rng.choice(ENGINE.legal(rolled, rolled.side)))
    assume(middle.dice and middle.side == state.side)  # the turn goes on
    best, finals, firsts = all_plays((middle.points, middle.bar, middle.off), middle.side, middle.remaining, "standard")
    assert middle.max_moves - len(middle.played) == best
    generated = plays(middle)
    assert {(p.points, p.bar, p.off) for p in generated} == finals and len(generated) == len(finals)
    assert moves(middle) == firsts


def pygammon_game(state: BackgammonState, dice: tuple[int, ...]) -> pygammon.core.Game:
    """pygammon's own Game at `state`'s position with `dice` to play."""
    side, point = pygammon.Side, pygammon.core.Point
    game = pygammon.core.Game(side(state.side))
    game.board = [point(side.FIRST, v) if v > 0 else point(side.SECOND, -v) if v < 0 else point() for v in state.points]
    for seat in (FIRST, SECOND):
        game.players[side(seat)].hit = state.bar[seat]
        game.players[side(seat)].borne = state.off[seat]
    game.dice = dice
    return game


@st.composite
def nearly_home(draw: st.DrawFn) -> tuple[BackgammonState, tuple[int, int]]:
    """The side to move bearing in (one or two checkers left outside, the rest home or off) past a
    few points the opponent holds: where pygammon's greedy count most often falls short (1 roll in 65)."""
    side = draw(st.sampled_from([FIRST, SECOND]))
    sign = 1 if side == FIRST else -1
    points = [0] * 24

    def put(distance: int) -> int:
        """One of the mover's checkers at `distance`, unless the opponent holds it; how many were put."""
        point = distance - 1 if side == FIRST else 24 - distance
        if points[point] * sign < 0:
            return 0
        points[point] += sign
        return 1

    held = draw(st.lists(st.integers(1, 18), min_size=1, max_size=4, unique=True))
    for distance in held:
        points[distance - 1 if side == FIRST else 24 - distance] = -2 * sign
    mine = sum(put(d) for d in draw(st.lists(st.integers(7, 13), min_size=1, max_size=2)))
    mine += sum(put(d) for d in draw(st.lists(st.integers(1, 6), min_size=1, max_size=13)))
    off = [0, 0]
    off[side], off[1 - side] = 15 - mine, 15 - 2 * len(held)
    state = BackgammonState(options=BackgammonOptions(rules="pygammon"), names=("x", "o"), points=tuple(points),
                            off=(off[0], off[1]), side=side)  # fmt: skip
    return state, (draw(st.integers(1, 6)), draw(st.integers(1, 6)))


@settings(max_examples=400)
@given(st.one_of(positions(), nearly_home()))
def test_pygammon_rules_count_as_pygammon_does(example):
    """Under rules="pygammon" a roll asks for pygammon 0.0.3's own count (get_max_move_count, its
    greedy search), which never exceeds the exhaustive count and sometimes falls short of it."""
    state, (a, b) = example
    state = msgspec.structs.replace(state, options=BackgammonOptions(rules="pygammon"))
    dice = (a, a, a, a) if a == b else (a, b)
    theirs = pygammon_game(state, dice).get_max_move_count()
    assert ENGINE.apply(state, DiceRolled(seat=state.side, dice=(a, b))).max_moves == theirs
    best, _, _ = all_plays((state.points, state.bar, state.off), state.side, dice, "pygammon")
    assert theirs <= best


@settings(max_examples=300)
@given(nearly_home())
def test_under_pygammons_count_a_turn_is_any_play_of_that_many_moves(example):
    """Where pygammon asks for fewer moves than the dice allow, every play of that many is legal:
    plays() and the legal moves are the oracle's, for exactly the count asked."""
    state, (a, b) = example
    rolled = ENGINE.apply(state, DiceRolled(seat=state.side, dice=(a, b)))
    assume(rolled.dice and rolled.side == state.side)
    position = (rolled.points, rolled.bar, rolled.off)
    finals, firsts = plays_of_length(position, rolled.side, rolled.dice, "pygammon", rolled.max_moves)
    generated = plays(rolled)
    assert {(p.points, p.bar, p.off) for p in generated} == finals and len(generated) == len(finals)
    assert all(len(p.moves) == rolled.max_moves for p in generated)
    assert moves(rolled) == firsts
