"""GNU Backgammon position IDs: the starting position, IDs gnubg printed, round trips, gnubg itself
on random positions (Debian's gnubg, in scripts/system-packages), and bad text refused clearly."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.engines.backgammon import START
from matchlog.engines.backgammon_id import CHECKERS, board_of, decode, encode, id_of, parse_position
from matchlog.events import UsageError

GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"


def own(**points: int) -> tuple[int, ...]:
    """One player's 25 places (points 1..24, then the bar) from keywords p6=5, bar=1."""
    places = [0] * 25
    for key, count in points.items():
        places[24 if key == "bar" else int(key[1:]) - 1] = count
    return tuple(places)


def test_the_starting_position_is_4HPwATDgc_ABMA_whoever_is_on_roll():
    assert id_of(START, (0, 0), 0) == id_of(START, (0, 0), 1) == "4HPwATDgc/ABMA"
    for side in (0, 1):
        assert board_of("4HPwATDgc/ABMA", side) == (START, (0, 0), (0, 0))


def test_ids_gnubg_printed_decode_to_the_boards_it_showed():
    # gnubg 1.07, after it opened with 24/23 13/9 as O: X (root) on roll, O's checkers moved.
    assert decode("4HPhASjgc/ABMA") == (own(p6=5, p8=3, p13=5, p24=2), own(p6=5, p8=3, p9=1, p13=4, p23=1, p24=1))
    # Set up with `set board simple 1 -2 0 0 0 0 5 0 3 0 0 0 -5 4 0 0 0 -3 0 -4 0 0 0 0 2 1`, X on roll.
    x, o = own(p6=5, p8=3, p13=4, p24=2, bar=1), own(p6=4, p8=3, p13=5, p24=2, bar=1)
    assert decode("4Dn4AFjgc/AAWA") == (x, o)
    assert encode(x, o) == "4Dn4AFjgc/AAWA" and encode(o, x) == "4HPwAFjgOfgAWA"  # gnubg, `set turn gnubg`


@st.composite
def positions(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, int], int]:
    """A board in matchlog's indexing (up to 15 checkers a side, some on the bar) and a side on roll."""
    points = [0] * 24
    bar = [0, 0]
    for side, sign in ((0, 1), (1, -1)):
        for _ in range(draw(st.integers(0, CHECKERS))):
            spot = draw(st.integers(0, 24))
            if spot == 24:
                bar[side] += 1
            elif points[spot] * sign >= 0:
                points[spot] += sign
    return tuple(points), (bar[0], bar[1]), draw(st.integers(0, 1))


@given(positions())
def test_a_board_survives_a_round_trip_through_its_id(position):
    points, bar, on_roll = position
    position_id = id_of(points, bar, on_roll)
    assert len(position_id) == 14
    found_points, found_bar, off = board_of(position_id, on_roll)
    assert (found_points, found_bar) == (points, bar)
    on_board = (sum(p for p in points if p > 0), sum(-p for p in points if p < 0))
    assert off == (CHECKERS - on_board[0] - bar[0], CHECKERS - on_board[1] - bar[1])


@given(st.text(max_size=40))
def test_any_text_is_a_position_or_a_clear_usage_error(text: str):
    refused: UsageError | None = None
    try:
        parsed = parse_position(text)
    except UsageError as error:
        refused = error
    if refused is not None:
        assert refused.code == "usage.position" and refused.message
    else:
        assert parsed.turn in (0, 1) and len(parsed.points) == 24


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "position ID"),
        ("4HPwATDgc/ABM", "14 characters"),
        ("4HPwATDgc/ABMB", "bits set after"),
        ("//////////////", "ends before"),
        ("AAAAAAAAAAAAAA", "borne off every checker"),
        ("4HPwATDgc/ABMA 70", "not the dice"),
        ("4HPwATDgc/ABMA turn=2", "side on roll"),
        ("4HPwATDgc/ABMA 52 52", "not the dice"),
        (encode(own(p6=16), own(p6=1)), "16 checkers"),
        (encode(own(p6=2), own(p19=1)), "both players' checkers on the roller's point 6"),
    ],
)
def test_a_bad_position_says_what_is_wrong(text: str, fragment: str):
    with pytest.raises(UsageError) as caught:
        parse_position(text)
    assert caught.value.code == "usage.position" and fragment in caught.value.message


def test_gnubg_itself_gives_the_ids_matchlog_computes():
    """Random boards set up in gnubg (`set board simple`, the player on roll's view): its Position ID
    is ours, so an ID copied from gnubg starts a match with the same player on roll."""
    rng = random.Random(12)
    boards = []
    for _ in range(30):
        points, bar = [0] * 24, [0, 0]
        for side, sign in ((0, 1), (1, -1)):
            for _ in range(rng.randint(1, CHECKERS)):
                spot = rng.randint(0, 24)
                if spot == 24:
                    bar[side] += 1
                elif points[spot] * sign >= 0:
                    points[spot] += sign
        boards.append((tuple(points), (bar[0], bar[1])))
    # The first side of matchlog's board is gnubg's X (root), on roll: its point n is index n - 1.
    script = ["set player 0 human", "set player 1 human", "new game", "set turn root"]
    script += [f"set board simple {bar[0]} {' '.join(map(str, points))} {bar[1]}" for points, bar in boards]
    shown = subprocess.run(
        [GNUBG, "-t", "-q"], input="\n".join(script) + "\n", capture_output=True, text=True, timeout=60, check=True
    ).stdout
    after_turn = shown[shown.index("is now on roll") :]
    ids = [line.split("Position ID:")[1].strip() for line in after_turn.splitlines() if "Position ID:" in line]
    assert ids == [id_of(points, bar, 0) for points, bar in boards]
    assert [board_of(position_id, 0)[:2] for position_id in ids] == boards
