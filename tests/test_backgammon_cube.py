"""Match play in backgammon: the doubling cube and resignations as events the engine judges, the
points they score, and records of them read and written as GNU Backgammon reads and writes them."""

from __future__ import annotations

import random
import re

import msgspec
import pytest

from matchlog.engines import CHANCE, Rule, Turn
from matchlog.engines.backgammon import ENGINE, FIRST, SECOND, BackgammonOptions, BackgammonRule, BackgammonState
from matchlog.engines.backgammon_notation import OFF, Step
from matchlog.events import (
    CheckerMoved,
    DiceRolled,
    DoubleDropped,
    DoubleOffered,
    DoubleTaken,
    Event,
    IllegalAction,
    MatchStarted,
    OpeningRolled,
    ResignationAccepted,
    ResignationDeclined,
    ResignationOffered,
    RollChosen,
    Seat,
    UsageError,
    draft,
    uuid7,
)
from matchlog.formats import ImportedMatch, export, read
from matchlog.formats.gnubg import Roll, game_of
from matchlog.formats.gnubg import _play as _written_play
from matchlog.referee.play import play_match
from matchlog.referee.players import make_player, seats_from_specs
from matchlog.replay import audit_records

from .gnubg_roundtrip import match_play, played, same_match


def _started(**options: object) -> MatchStarted:
    return MatchStarted(game="backgammon", options=options, seats=(Seat("ann", "r"), Seat("bob", "r")))


def _after(events: list[Event], **options: object) -> BackgammonState:
    state = ENGINE.start(_started(**options))
    for event in events:
        turn = ENGINE.to_act(state)
        if turn is not None and turn.seat != CHANCE:
            ENGINE.check(state, turn.seat, event)
        state = ENGINE.apply(state, event)
    return state


def _refused(state: BackgammonState, seat: int, event: Event) -> str:
    with pytest.raises(IllegalAction) as refused:
        ENGINE.check(state, seat, event)
    return refused.value.code


def _opened(**options: object) -> BackgammonState:
    """Ann's opening roll 5-3 played (13/8 13/10), bob to roll."""
    state = ENGINE.apply(ENGINE.start(_started(**options)), OpeningRolled(first=5, second=3))
    return _play(state, FIRST, (0, 12), (1, 12))


def _play(state: BackgammonState, seat: int, *moves: tuple[int, int | None]) -> BackgammonState:
    for index, source in moves:
        event = CheckerMoved(seat=seat, die_index=index, source=source)
        ENGINE.check(state, seat, event)
        state = ENGINE.apply(state, event)
    return state


def _turn(state: BackgammonState, seat: int) -> BackgammonState:
    """`seat` plays out its turn, the first legal move each time."""
    while state.side == seat and state.dice:
        state = ENGINE.apply(state, next(e for e in ENGINE.legal(state, seat) if isinstance(e, CheckerMoved)))
    return state


# -- without match play: nothing changes --------------------------------------------------------


def test_without_the_cube_the_dice_come_at_once_and_no_side_may_double_or_resign():
    state = _opened()
    assert ENGINE.to_act(state) == Turn(CHANCE, "roll")
    assert _refused(state, SECOND, DoubleOffered(seat=SECOND, cube=2)) == Rule.NOT_YOUR_TURN
    state = ENGINE.apply(state, DiceRolled(seat=SECOND, dice=(6, 1)))
    assert all(event.tag == "backgammon.checker_moved" for event in ENGINE.legal(state, SECOND))
    assert _refused(state, SECOND, ResignationOffered(seat=SECOND, value=1)) == BackgammonRule.CANNOT_RESIGN


# -- the cube ------------------------------------------------------------------------------------


def test_with_the_cube_the_roller_decides_first_and_a_taken_double_scales_the_game():
    state = _opened(cube=True)
    assert ENGINE.to_act(state) == Turn(SECOND, "roll")
    assert ENGINE.legal(state, SECOND) == (RollChosen(seat=SECOND), DoubleOffered(seat=SECOND, cube=2))
    assert _refused(state, SECOND, DoubleOffered(seat=SECOND, cube=4)) == BackgammonRule.CANNOT_DOUBLE
    assert _refused(state, SECOND, DiceRolled(seat=SECOND, dice=(6, 1))) == Rule.WRONG_DECISION
    state = ENGINE.apply(state, DoubleOffered(seat=SECOND, cube=2))
    assert ENGINE.to_act(state) == Turn(FIRST, "take")
    assert ENGINE.legal(state, FIRST) == (DoubleTaken(seat=FIRST), DoubleDropped(seat=FIRST))
    state = ENGINE.apply(state, DoubleTaken(seat=FIRST))
    assert (state.cube, state.owner, ENGINE.to_act(state)) == (2, FIRST, Turn(CHANCE, "roll"))  # bob rolls now
    # Bob's turn played, ann holds the cube: she may redouble to 4; bob, on his next turn, may not.
    state = _turn(ENGINE.apply(state, DiceRolled(seat=SECOND, dice=(6, 1))), SECOND)
    assert ENGINE.legal(state, FIRST) == (RollChosen(seat=FIRST), DoubleOffered(seat=FIRST, cube=4))
    state = ENGINE.apply(state, RollChosen(seat=FIRST))
    assert ENGINE.to_act(state) == Turn(CHANCE, "roll")
    state = _turn(ENGINE.apply(state, DiceRolled(seat=FIRST, dice=(2, 1))), FIRST)
    assert ENGINE.to_act(state) == Turn(CHANCE, "roll")  # the cube is ann's: bob has nothing to decide


def test_a_dropped_double_loses_the_game_at_the_cube_before_it():
    state = _opened(cube=True)
    state = ENGINE.apply(state, DoubleOffered(seat=SECOND, cube=2))
    state = ENGINE.apply(state, DoubleDropped(seat=FIRST))
    outcome = ENGINE.outcome(state)
    assert ENGINE.to_act(state) is None
    assert (outcome.result, outcome.winners, outcome.scores) == ("dropped", (SECOND,), (0.0, 1.0))


def test_gammons_count_once_the_cube_is_turned_under_the_jacoby_rule():
    state = BackgammonState(options=BackgammonOptions(cube=True, jacoby=True), names=("ann", "bob"))
    won = msgspec.structs.replace(state, points=(0,) * 23 + (-15,), off=(15, 0), side=FIRST, winner=FIRST)
    assert ENGINE.outcome(won).scores == (1.0, 0.0)  # type: ignore[union-attr] # a gammon, the cube unturned
    turned = msgspec.structs.replace(won, cube=2, owner=SECOND)
    assert (ENGINE.outcome(turned).result, ENGINE.outcome(turned).scores) == ("gammon", (4.0, 0.0))  # type: ignore[union-attr]


# -- resignations ----------------------------------------------------------------------------------


def test_a_resignation_is_worth_its_value_times_the_cube_and_a_declined_one_plays_on():
    state = _opened(cube=True, resignations=True)
    assert ResignationOffered(seat=SECOND, value=3) in ENGINE.legal(state, SECOND)
    assert _refused(state, SECOND, ResignationOffered(seat=SECOND, value=4)) == BackgammonRule.CANNOT_RESIGN
    offered = ENGINE.apply(state, ResignationOffered(seat=SECOND, value=2))
    assert ENGINE.to_act(offered) == Turn(FIRST, "resignation")
    declined = ENGINE.apply(offered, ResignationDeclined(seat=FIRST))
    assert ENGINE.to_act(declined) == Turn(SECOND, "roll")  # back where bob was
    doubled = ENGINE.apply(ENGINE.apply(state, DoubleOffered(seat=SECOND, cube=2)), DoubleTaken(seat=FIRST))
    doubled = ENGINE.apply(doubled, DiceRolled(seat=SECOND, dice=(6, 1)))
    resigned = ENGINE.apply(doubled, ResignationOffered(seat=SECOND, value=2))  # after rolling, before moving
    accepted = ENGINE.apply(resigned, ResignationAccepted(seat=FIRST))
    outcome = ENGINE.outcome(accepted)
    assert (outcome.result, outcome.winners, outcome.scores) == ("resigned", (FIRST,), (4.0, 0.0))
    assert (
        ENGINE.describe(doubled, ResignationOffered(seat=SECOND, value=2), resigned)
        == "bob offers to resign a gammon (4 points)"
    )


def test_a_match_of_doubles_and_resignations_audits_and_a_forged_answer_is_found():
    played = (match_play(seed) for seed in range(11, 60))
    records = next(r for r in played if any(isinstance(record.event, DoubleTaken) for record in r))
    assert audit_records(records).passed
    tags = {record.event.tag for record in records}
    assert {"backgammon.roll_chosen", "backgammon.double_offered"} <= tags
    # The side that holds the cube doubling again (or the wrong side taking) breaks the rules.
    events = [record.event for record in records]
    at = next(i for i, e in enumerate(events) if isinstance(e, DoubleTaken))
    forged = [*events[:at], DoubleTaken(seat=1 - events[at].seat), *events[at + 1 :]]  # type: ignore[attr-defined]
    report = audit_records(ImportedMatch(uuid7(), tuple(draft(e) for e in forged)).records())
    assert not report.passed
    assert report.findings[0].rule == Rule.NOT_YOUR_TURN and report.findings[0].seq == at


def test_our_referee_offers_no_cube_its_players_speak_pygammons_protocol():
    seats = seats_from_specs("backgammon", ["random", "random"])
    players = [make_player("backgammon", seat.player, random.Random(i)) for i, seat in enumerate(seats)]
    for options in ({"cube": True}, {"resignations": True}):
        with pytest.raises(UsageError, match="no cube and no resignation") as refused:
            play_match("backgammon", seats, players, options=options, seed=1)
        assert refused.value.code == "usage.options"


# -- records of match play ------------------------------------------------------------------------


_GAME = """ 0 point match

 Game 1
 ann : 0                        bob : 0
  1) 31: 8/5 6/5                 64: 24/18 13/9
  2)  Doubles => 2                Takes
  3) 62: 13/7* 13/11             41: bar/21 9/8
"""


@pytest.mark.parametrize(
    ("ending", "result", "points"),
    [
        ("                                  Wins 6 points\n", "resigned", (0.0, 6.0)),  # ann resigns a backgammon
        (
            "  4) 21: 11/9 6/5                 Doubles => 4\n  5)  Drops                      Wins 2 points\n",
            "dropped",
            (0.0, 2.0),
        ),
    ],
)
def test_a_mat_of_doubles_and_a_resignation_scores_as_it_says(ending: str, result: str, points: tuple[float, float]):
    [match] = read((_GAME + ending).encode(), "mat")
    outcome = match.events[-1].outcome  # type: ignore[attr-defined]
    assert (outcome.result, outcome.scores) == (result, points)
    assert audit_records(match.records()).passed
    # Written back, it reads again as the same match, as .mat and as SGF.
    for format in ("mat", "sgf"):
        [again] = read(export(match.records(), format).encode(), format)
        assert same_match(match.records(), again.records()) is None


def test_a_resignation_that_is_not_a_whole_value_of_the_cube_is_refused():
    with pytest.raises(Exception, match=r"resigns 3 points at cube 2: a resignation is 1, 2 or 3 times the cube"):
        read((_GAME + "                                  Wins 3 points\n").encode(), "mat")


def test_an_sgf_whose_tags_gnubg_kept_in_the_game_comment_reads_back_the_opening_roll():
    """gnubg drops properties it does not know (the XO we once wrote) and keeps the game comment."""
    sgf = (
        "(;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:1]PW[ann]PB[bob]DT[2026-01-02]"
        'GC[[Strategy 1 "heuristic"\\]\n[Opening roll "4 2"\\]\n]RU[Crawford]RE[W+1]\n;W[31hefe])'
    )
    [match] = read(sgf.encode(), "sgf")
    events = match.events
    assert events[1] == OpeningRolled(first=4, second=2) and events[2] == DiceRolled(seat=FIRST, dice=(3, 1))
    assert events[0].seats[0].player == "heuristic"  # type: ignore[attr-defined]


def test_a_route_the_rules_refuse_to_a_position_a_legal_play_reaches_is_that_play():
    """gnubg knows a play by the position it reaches, and may write `7/1 1/off` for 7/5 5/off."""
    # Ann: a checker on her 7-point and one on her 3-point (13 off); 6-2 to play. 7/1 then 1/off
    # with the 2 is illegal (her 3-point is farther back); 7/5 then 5/off with the 6 is legal.
    points = [0] * 24
    points[6], points[2], points[23] = 1, 1, -15
    state = BackgammonState(options=BackgammonOptions(), names=("ann", "bob"), points=tuple(points), off=(13, 0))
    state = ENGINE.apply(msgspec.structs.replace(state, side=FIRST), DiceRolled(seat=FIRST, dice=(6, 2)))
    moves = _written_play(state, Roll(player=FIRST, dice=(6, 2), steps=[Step(7, 1), Step(1, OFF)]))
    after = state
    for move in moves:
        ENGINE.check(after, FIRST, move)
        after = ENGINE.apply(after, move)
    assert after.points[2] == 1 and after.points[6] == 0 and after.off == (14, 0)
    with pytest.raises(IllegalAction):  # a position no legal play reaches is still refused
        _written_play(state, Roll(player=FIRST, dice=(6, 2), steps=[Step(3, 1), Step(1, OFF)]))


def test_an_sgf_matchlog_wrote_before_its_tags_went_into_the_game_comment_still_reads():
    """Files from before: matchlog's private root properties XW, XB, XO, XR, XC, XS."""
    records = played(4, {"move_by_turn_rolls": False})
    sgf = export(records, "sgf")
    game = game_of(records)
    assert game.opening is not None and game.commitment is not None and game.seed is not None
    old = (
        f"XW[{game.strategies[0]}]XB[{game.strategies[1]}]XO[{game.opening[0]}{game.opening[1]}]"
        f"XC[{game.commitment[0]}:{game.commitment[1]}]XS[{game.seed}]"
    )
    start = sgf.index("GC[")
    end = re.compile(r"(?<!\\)\]").search(sgf, start).end()  # the first "]" not escaped closes it
    before = sgf[:start] + old + sgf[end:]
    assert before.count("[Strategy") == 0
    assert "GC[" not in before and "XO[" in before
    [match] = read(before.encode(), "sgf")
    assert same_match(records, match.records()) is None
