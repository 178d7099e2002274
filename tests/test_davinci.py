"""Da Vinci Code: the reducer, hidden information in views, replays and exports, the seed's AI over
thousands of games, and a human session driven through the terminal player's input."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from matchlog.engines import CHANCE, Rule, Turn
from matchlog.engines.davinci import ENGINE, HIDDEN, JOKERS, DavinciRule, DavinciState, colour, number
from matchlog.engines.views import shown_event, shown_state, shown_turn
from matchlog.events import (
    GuessStopped,
    IllegalAction,
    JokerPlaced,
    MatchStarted,
    PlayerRemoved,
    Seat,
    TileDrawn,
    TileDrawnHidden,
    TileGuessed,
    TilePlacedHidden,
    TileRevealed,
    TileSorted,
    TilesShuffled,
    TilesShuffledHidden,
    decode,
    draft,
    uuid7,
)
from matchlog.referee import MemoryRecorder, play_match, play_series
from matchlog.referee.davinci import HumanPlayer, SeedAIPlayer, candidates
from matchlog.replay import audit_records, export_seat_jsonl, timeline
from matchlog.store import Store


def started(players: int = 2, jokers: bool = False, **options: object) -> DavinciState:
    """A table as a match recorded before `hidden_jokers` starts (unless it is given)."""
    seats = tuple(Seat(f"p{i}", "x") for i in range(players))
    return ENGINE.start(MatchStarted(game="davinci", options={"jokers": jokers, **options}, seats=seats))


def dealt(order: list[int], players: int = 2, jokers: bool = False, **options: object) -> DavinciState:
    """A table after shuffling `order` (the pile, top first) and dealing."""
    state = ENGINE.apply(started(players, jokers, **options), TilesShuffled(order=tuple(order)))
    while (turn := ENGINE.to_act(state)) is not None and turn.seat == CHANCE and turn.decision != "draw":
        state = ENGINE.apply(state, ENGINE.chance_outcomes(state)[0])
    return state


def draw(state: DavinciState) -> DavinciState:
    assert ENGINE.to_act(state) == Turn(CHANCE, "draw")
    return ENGINE.apply(state, ENGINE.chance_outcomes(state)[0])


def act(state: DavinciState, event) -> DavinciState:
    ENGINE.check(state, event.actor, event)
    return ENGINE.apply(state, event)


def refuses(state: DavinciState, event, code: str) -> None:
    with pytest.raises(IllegalAction) as caught:
        ENGINE.check(state, event.actor, event)
    assert caught.value.code == code


# Seat 0 gets 0, 2, 4, 6 (black 0-3); seat 1 gets 1, 3, 5, 7 (white 0-3); the pile goes on from 8.
ORDER = [0, 1, 2, 3, 4, 5, 6, 7, *range(8, 24)]


# -- setting up ------------------------------------------------------------------------------


def test_tiles_sort_black_before_white_at_equal_numbers():
    assert [number(t) for t in (0, 1, 22, 23)] == [0, 0, 11, 11]
    assert [colour(t) for t in (0, 1, 24, 25)] == [0, 1, 0, 1]
    assert number(JOKERS[0]) is None


def test_the_deal_gives_four_tiles_each_three_with_four_players():
    state = dealt(ORDER)
    assert state.rows == ((0, 2, 4, 6), (1, 3, 5, 7))
    assert len(state.pile) == 16 and state.turn == 0 and ENGINE.to_act(state) == Turn(CHANCE, "draw")
    four = dealt(list(range(24)), players=4)
    assert [len(row) for row in four.rows] == [3, 3, 3, 3]
    with pytest.raises(Exception, match="2 to 4 players"):
        started(5)


def test_a_drawn_tile_takes_its_place_in_the_row():
    state = draw(
        dealt([0, 8, 4, 12, 10, 14, 18, 16, 5, *range(1, 4), *range(6, 8), 9, 11, 13, 15, *range(17, 24, 2), 20, 22])
    )
    # Seat 0 held 0, 4, 10, 18 and drew 5 (white 2), which goes after black 2.
    assert state.rows[0] == (0, 4, 5, 10, 18) and state.drawn == 2
    assert ENGINE.to_act(state) == Turn(0, "guess")


def test_a_joker_waits_for_its_owner_to_place_it():
    order = [0, 1, 2, 3, 4, 5, 6, 7, 24, *range(8, 24), 25]
    state = draw(dealt(order, jokers=True))
    assert state.pending == ((0, 24),) and ENGINE.to_act(state) == Turn(0, "place_joker")
    refuses(state, JokerPlaced(seat=0, position=9), DavinciRule.NO_SUCH_PLACE)
    state = act(state, JokerPlaced(seat=0, position=1))
    assert state.rows[0] == (0, 24, 2, 4, 6) and state.drawn == 1
    assert ENGINE.to_act(state) == Turn(0, "guess")


def test_with_hidden_jokers_every_drawn_tile_waits_and_the_others_cannot_tell_a_joker():
    order = [0, 1, 2, 3, 4, 5, 6, 7, 24, 8, *range(9, 24), 25]
    state = dealt(order, jokers=True, hidden_jokers=True)
    assert state.rows[0] == (0, 2, 4, 6) and state.pending == ()
    joker = draw(state)  # seat 0 draws the black joker
    assert ENGINE.to_act(joker) == Turn(0, "place_joker")
    placed = act(joker, JokerPlaced(seat=0, position=0))
    # The other world: seat 0 draws black 4 (tile 8) instead, which the referee sorts into place.
    other = draw(dealt([0, 1, 2, 3, 4, 5, 6, 7, 8, 24, *range(9, 24), 25], jokers=True, hidden_jokers=True))
    assert ENGINE.to_act(other) == Turn(CHANCE, "place_tile")
    assert ENGINE.chance_outcomes(other) == (TileSorted(seat=0, position=4),)
    sorted_ = ENGINE.apply(other, TileSorted(seat=0, position=4))
    assert sorted_.rows[0] == (0, 2, 4, 6, 8) and sorted_.drawn == 4
    # Seat 1 sees the same steps in both worlds: a black tile drawn, a tile put in place by seat 0.
    for before, event in ((joker, JokerPlaced(seat=0, position=0)), (other, TileSorted(seat=0, position=4))):
        shown = shown_event(ENGINE, before, event, 1)
        assert isinstance(shown, TilePlacedHidden) and shown.actor == 0
        assert shown_turn(ENGINE, before, 1) == Turn(0, "place_tile")
        assert shown_state(ENGINE, before, 1).pending == ((0, HIDDEN[0]),)
    assert shown_turn(ENGINE, joker, 0) == Turn(0, "place_joker")
    assert ENGINE.to_act(placed) == ENGINE.to_act(sorted_) == Turn(0, "guess")


def test_a_match_recorded_before_hidden_jokers_replays_as_it_was_played():
    """The golden playthrough of a jokers match as matchlog recorded it before `hidden_jokers`:
    its events, read back by today's engine, give the same lines and the same final table."""
    recorded = (Path(__file__).parent / "fixtures" / "recorded" / "davinci-jokers-before-hidden-jokers.txt").read_text()
    lines, texts, rendered = recorded.split("\n\n", 2)
    recorder = MemoryRecorder()
    recorder.drafts = [draft(decode(line), at_us=0) for line in lines.splitlines()]
    records = recorder.records(uuid7(), at_us=0)
    assert "hidden_jokers" not in records[0].event.options
    steps = list(timeline(records))
    assert [step.text for step in steps] == texts.splitlines()
    assert ENGINE.render(steps[-1].after) + "\n" == rendered
    assert audit_records(records).findings == []


# -- guessing --------------------------------------------------------------------------------


def test_a_right_guess_turns_the_tile_up_and_the_guesser_may_go_on():
    state = draw(dealt(ORDER))
    state = act(state, TileGuessed(seat=0, target=1, position=2, number=2))  # seat 1's tile 2 is white 2
    assert state.revealed[1] == (False, False, True, False)
    assert ENGINE.to_act(state) == Turn(0, "guess_or_stop")
    state = act(state, GuessStopped(seat=0))
    assert state.turn == 1 and state.revealed[0] == (False,) * 5  # the drawn tile stays hidden


def test_a_wrong_guess_turns_up_the_guessers_drawn_tile():
    state = draw(dealt(ORDER))
    state = act(state, TileGuessed(seat=0, target=1, position=0, number=5))
    assert state.wrong[1][0] == (5,) and state.revealed[0][state.rows[0].index(8)] is True
    assert state.turn == 1 and ENGINE.to_act(state) == Turn(CHANCE, "draw")


def test_with_the_pile_empty_a_wrong_guess_turns_up_a_tile_of_the_guessers_choice():
    state = dealt(list(range(8)))  # nothing left to draw after the deal
    assert ENGINE.to_act(state) == Turn(0, "guess")
    state = act(state, TileGuessed(seat=0, target=1, position=0, number=9))
    assert ENGINE.to_act(state) == Turn(0, "reveal")
    refuses(state, TileRevealed(seat=0, position=7), DavinciRule.NOT_YOUR_HIDDEN_TILE)
    state = act(state, TileRevealed(seat=0, position=3))
    assert state.revealed[0][3] and state.turn == 1 and ENGINE.to_act(state) == Turn(1, "guess")


def test_turning_up_every_tile_puts_a_player_out_and_the_last_one_wins():
    state = dealt(list(range(8)))
    for position, tile in enumerate(state.rows[1]):
        state = act(state, TileGuessed(seat=0, target=1, position=position, number=number(tile)))
    assert state.out == (1,) and state.over and ENGINE.to_act(state) is None
    assert ENGINE.outcome(state).places == (1, 2) and ENGINE.outcome(state).winners == (0,)


@pytest.mark.parametrize(
    ("guess", "code"),
    [
        ((0, 0, 3), DavinciRule.NOT_AN_OPPONENT),
        ((5, 0, 3), DavinciRule.NOT_AN_OPPONENT),
        ((1, 9, 3), DavinciRule.NO_SUCH_TILE),
        ((1, 0, 12), DavinciRule.NOT_A_NUMBER),
        ((1, 0, None), DavinciRule.NOT_A_NUMBER),  # no jokers in this game
    ],
)
def test_bad_guesses_have_their_codes(guess, code):
    state = draw(dealt(ORDER))
    target, position, said = guess
    refuses(state, TileGuessed(seat=0, target=target, position=position, number=said), code)


@pytest.mark.parametrize("answer", [None, "3", (1, 2), (1, "a", 3), (1.0, 2, 3), [True, 0, 1]])
def test_malformed_answers_are_refused(answer):
    state = draw(dealt(ORDER))
    with pytest.raises(IllegalAction) as caught:
        ENGINE.parse(state, 0, answer)
    assert caught.value.code == DavinciRule.MALFORMED


def test_an_already_turned_up_tile_cannot_be_guessed():
    state = draw(dealt(ORDER))
    state = act(state, TileGuessed(seat=0, target=1, position=2, number=2))
    refuses(state, TileGuessed(seat=0, target=1, position=2, number=2), DavinciRule.ALREADY_REVEALED)


def test_a_player_who_leaves_is_out_and_ranks_last():
    state = draw(dealt(list(range(24)), players=3))
    state = ENGINE.apply(state, PlayerRemoved(seat=0, code="player.left", reason="quit"))
    assert state.turn == 1 and ENGINE.outcome(state) is None
    state = ENGINE.apply(state, PlayerRemoved(seat=2, code="player.left", reason="quit"))
    assert state.over and ENGINE.outcome(state).places == (3, 1, 2)


# -- what each seat may see ------------------------------------------------------------------


def test_views_hide_other_seats_numbers_but_not_colours_or_places():
    state = draw(dealt(ORDER))
    view = ENGINE.view(state, 1)
    assert view.rows[1] == state.rows[1]
    assert view.rows[0] == tuple(HIDDEN[colour(t)] for t in state.rows[0])
    assert set(view.pile) <= set(HIDDEN) and len(view.pile) == len(state.pile)
    assert shown_event(ENGINE, state, TileDrawn(seat=0, tile=8), 1) == TileDrawnHidden(seat=0, colour=0)
    assert shown_event(ENGINE, state, TileDrawn(seat=0, tile=8), 0) == TileDrawn(seat=0, tile=8)
    assert shown_event(ENGINE, state, TilesShuffled(order=(1, 2)), 0) == TilesShuffledHidden(count=2)
    state = act(state, TileGuessed(seat=0, target=1, position=2, number=2))
    assert ENGINE.view(state, 0).rows[1][2] == 5  # turned up: everyone sees it


def secrets(state: DavinciState, seat: int) -> set[int]:
    """The tiles `seat` may not know: others' hidden tiles, and the pile."""
    hidden = {
        t
        for owner, row in enumerate(state.rows)
        if owner != seat
        for i, t in enumerate(row)
        if not state.revealed[owner][i]
    }
    return hidden | set(state.pile) | {tile for owner, tile in state.pending if owner != seat}


def leaks(event: object, forbidden: set[int]) -> bool:
    """Whether an event a seat sees names any tile it may not know."""
    fields = msgspec.to_builtins(event)
    named = {fields.get("tile"), *fields.get("order", ())}
    return bool(named & forbidden)


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), jokers=st.booleans(), data=st.data())
def test_no_seats_view_replay_or_export_holds_another_seats_hidden_number(seed, players, jokers, data):
    rng = random.Random(seed)
    with Store() as store:
        seats = tuple(Seat(f"s{i}", "seed-ai") for i in range(players))
        result = play_match(
            "davinci",
            seats,
            [SeedAIPlayer(random.Random(rng.random())) for _ in seats],
            options={"jokers": jokers},
            store=store,
            seed=seed,
        )
        records = store.read(result.match_id)
        seat = data.draw(st.integers(0, players - 1), label="seat")
        live = None
        for step, record in zip(timeline(records, seat, as_seat=True), records, strict=True):
            truth = ENGINE.apply(live, record.event) if live is not None and record.seq else None
            live = truth if truth is not None else ENGINE.start(records[0].event)
            forbidden = secrets(live, seat) | (secrets(step.before, seat) if record.seq else set())
            # The state a seat sees contains only its own and turned-up numbers...
            for owner, row in enumerate(step.after.rows):
                for i, tile in enumerate(row):
                    if owner != seat and not step.after.revealed[owner][i]:
                        assert tile in HIDDEN
            assert all(tile in HIDDEN for tile in step.after.pile)
            # ...and the event it sees names none of the tiles it may not know.
            assert not leaks(step.event, forbidden - _own(live, seat)), step.event
        out = io.BytesIO()
        export_seat_jsonl(store, out, [result.match_id], seat)
        for line in out.getvalue().splitlines():
            event = json.loads(line)["event"]
            if event["type"] in ("davinci.tiles_shuffled", "davinci.tile_drawn"):
                assert event["type"] != "davinci.tiles_shuffled"
                assert event["seat"] == seat


def _own(state: DavinciState, seat: int) -> set[int]:
    return set(state.rows[seat]) | {tile for owner, tile in state.pending if owner == seat}


# -- the seed's AI ---------------------------------------------------------------------------


def test_candidates_use_order_colour_and_wrong_guesses():
    state = draw(dealt(ORDER))
    # Seat 0 holds black 0-4 (it drew 8); seat 1 holds white 0-3. From seat 0's view:
    view = ENGINE.view(state, 0)
    options = candidates(view, 0)
    assert options[(1, 0)] == {1, 3, 5, 7, 9, 11, 13, 15, 17}  # white 0 .. white 8 (three whites follow)
    assert options[(1, 3)] == {7, 9, 11, 13, 15, 17, 19, 21, 23}
    state = act(state, TileGuessed(seat=0, target=1, position=0, number=4))  # wrong: not 4
    options = candidates(ENGINE.view(state, 0), 0)
    assert 9 not in options[(1, 0)]


def test_the_ai_never_fails_over_two_thousand_seeded_games():
    """Seeded AI-against-AI games with and without jokers, 2 to 4 players, to the end (empty piles too)."""
    empty_pile_endings = 0
    configurations = [(400, 2, False), (400, 2, True), (300, 3, False), (300, 3, True), (300, 4, False), (300, 4, True)]
    with Store() as store:
        for games, players, jokers in configurations:
            series = play_series(
                "davinci",
                ["seed-ai"] * players,
                games=games,
                seed=players * 7 + jokers,
                options={"jokers": jokers},
                store=store,
            )
            for result in series.matches:
                assert result.outcome.result == "normal" and len(result.outcome.winners) == 1
                assert result.outcome.removed == ()
        assert len(store.matches(status="finished", limit=None)) == 2000
        assert store.verify() == []
    # With random opponents games last until the pile is empty, and the AI must choose a tile to turn up.
    with Store() as store:
        series = play_series("davinci", ["seed-ai", "random", "random", "random"], games=200, seed=5, store=store)
        for result in series.matches:
            records = store.read(result.match_id)
            empty_pile_endings += any(isinstance(r.event, TileRevealed) and r.event.seat == 0 for r in records)
        assert store.verify() == []
    assert empty_pile_endings >= 10, empty_pile_endings


def test_the_ai_beats_random_play():
    first = play_series("davinci", ["seed-ai", "random"], games=100, seed=1)
    second = play_series("davinci", ["random", "seed-ai"], games=100, seed=2)
    wins = first.places["seed-ai"].get(1, 0) + second.places["seed-ai"].get(1, 0)
    assert wins >= 170, wins


# -- a human at the terminal -----------------------------------------------------------------


def scripted(lines: list[str]):
    feed = iter(lines)

    def ask(prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return ask


def test_a_scripted_human_session(tmp_path: Path):
    screen = io.StringIO()
    human = HumanPlayer(
        ask=scripted(["", "banana", "1 9 3", "0 12", "0 5", "quit"]),
        console=Console(file=screen, width=100, force_terminal=False),
    )
    with Store(tmp_path / "log.duckdb") as store:
        seats = (Seat("me", "human"), Seat("ai", "seed-ai"))
        result = play_match("davinci", seats, [human, SeedAIPlayer(random.Random(2))], store=store, seed=4)
        records = store.read(result.match_id)
        assert store.verify() == []
    shown = screen.getvalue()
    # "" and "banana" were asked again, the form said as it is typed against one opponent, with an example
    assert "Give position number, e.g. 0 7 for ai's tile 0." in shown
    assert "Position 9 is not a hidden tile" in shown
    assert "12 is not a number from 0 to 11" in shown
    guesses = [r.event for r in records if isinstance(r.event, TileGuessed) and r.event.seat == 0]
    assert guesses[0] == TileGuessed(seat=0, target=1, position=0, number=5)
    removal = next(r.event for r in records if isinstance(r.event, PlayerRemoved))
    assert (removal.seat, removal.code) == (0, "player.left")
    assert result.outcome.winners == (1,) and result.outcome.removed == (0,)
    # The human saw the AI's moves as it may see them: never the AI's hidden numbers.
    assert "ai draws a" in shown


def test_ctrl_c_at_the_prompt_leaves_the_match():
    def interrupted(prompt: str) -> str:
        raise KeyboardInterrupt

    human = HumanPlayer(ask=interrupted, console=Console(file=io.StringIO()))
    recorder = MemoryRecorder()
    result = play_match(
        "davinci", (Seat("me", "human"), Seat("ai", "seed-ai")), [human, SeedAIPlayer()], recorder=recorder, seed=1
    )
    removal = next(d.event for d in recorder.drafts if isinstance(d.event, PlayerRemoved))
    assert removal.code == "player.left" and result.outcome.winners == (1,)


def test_a_program_that_keeps_answering_badly_is_removed_on_the_third():
    class Confused:
        def guess(self, view):
            return (view.turn, 0, 0)  # itself: never an opponent

    recorder = MemoryRecorder()
    result = play_match(
        "davinci", (Seat("c", "x"), Seat("ai", "seed-ai")), [Confused(), SeedAIPlayer()], recorder=recorder, seed=1
    )
    codes = [d.event.code for d in recorder.drafts if hasattr(d.event, "code")]
    assert codes == [DavinciRule.NOT_AN_OPPONENT] * 3 + [Rule.REJECTION_LIMIT]  # three rejections, then the removal
    assert result.outcome.removed == (0,)
