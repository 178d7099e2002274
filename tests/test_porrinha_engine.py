"""Porrinha's reducer on hand-built tables: each rule, with its error and its code."""

from __future__ import annotations

import msgspec
import pytest

from matchlog.engines import Rule, Turn
from matchlog.engines.porrinha import (
    CLOSED_HAND,
    ENGINE,
    INVALID_GUESS,
    NO_HAND,
    NOT_PLAYING,
    PENDING_GUESS,
    PorrinhaRule,
    PorrinhaState,
)
from matchlog.engines.views import shown_event, shown_turn
from matchlog.events import (
    AnswerRejected,
    Event,
    GuessMade,
    GuessVoided,
    HandChosen,
    HandHidden,
    HandReset,
    IllegalAction,
    MatchEnded,
    MatchStarted,
    Outcome,
    PlayerRemoved,
    Seat,
    UsageError,
)


def table(players: int = 3, **options: object) -> PorrinhaState:
    seats = tuple(Seat(f"p{i}", "random") for i in range(players))
    return ENGINE.start(MatchStarted(game="porrinha", options=dict(options), seats=seats))


def run(state: PorrinhaState, *events: Event) -> PorrinhaState:
    for event in events:
        ENGINE.check(state, event.actor, event) if event.actor is not None else None  # type: ignore[arg-type]
        state = ENGINE.apply(state, event)
    return state


def hands(*values: int, first: int = 0) -> list[Event]:
    n = len(values)
    return [HandChosen(seat=(first + i) % n, hand=values[(first + i) % n]) for i in range(n)]


def rejects(state: PorrinhaState, seat: int, event: Event, code: str) -> IllegalAction:
    with pytest.raises(IllegalAction) as caught:
        ENGINE.check(state, seat, event)
    assert caught.value.code == code
    return caught.value


# -- setting up ------------------------------------------------------------------------------


def test_a_new_table():
    state = table(3)
    assert state.chopsticks == (3, 3, 3)
    assert state.chopstick_count == 9
    assert state.guesses == (PENDING_GUESS,) * 3
    assert ENGINE.to_act(state) == Turn(0, "hand")
    assert table(2, chopsticks=5).chopstick_count == 10


@pytest.mark.parametrize(
    ("players", "options", "code"),
    [(1, {}, "usage.players"), (2, {"chopsticks": 0}, "usage.options"), (2, {"colour": "red"}, "usage.options")],
)
def test_tables_the_game_cannot_take(players: int, options: dict, code: str):
    with pytest.raises(UsageError) as caught:
        table(players, **options)
    assert caught.value.code == code


# -- hands -----------------------------------------------------------------------------------


def test_hands_are_asked_in_circle_from_the_first_guesser():
    state = msgspec.structs.replace(table(3), first_guesser=2)
    order = []
    while (turn := ENGINE.to_act(state)).decision == "hand":
        order.append(turn.seat)
        state = ENGINE.apply(state, HandChosen(seat=turn.seat, hand=0))
    assert order == [2, 0, 1]
    assert ENGINE.to_act(state) == Turn(2, "guess")


def test_a_hand_holds_none_to_all_of_your_own_chopsticks():
    state = table(2)
    ENGINE.check(state, 0, HandChosen(seat=0, hand=0))
    ENGINE.check(state, 0, HandChosen(seat=0, hand=3))
    rejects(state, 0, HandChosen(seat=0, hand=4), PorrinhaRule.HAND_OUT_OF_RANGE)
    rejects(state, 0, HandChosen(seat=0, hand=-1), PorrinhaRule.HAND_OUT_OF_RANGE)


@pytest.mark.parametrize("answer", [True, "2", 2.0, None, [1], object()])
def test_only_a_true_integer_is_a_number_of_chopsticks(answer: object):
    with pytest.raises(IllegalAction) as caught:
        ENGINE.parse(table(2), 0, answer)
    assert caught.value.code == PorrinhaRule.NOT_AN_INTEGER


def test_parse_proposes_the_event_of_the_awaited_decision():
    state = table(2)
    assert ENGINE.parse(state, 0, 2) == HandChosen(seat=0, hand=2)
    state = run(state, *hands(1, 1))
    assert ENGINE.parse(state, 0, 5) == GuessMade(seat=0, guess=5)


def test_answers_out_of_turn_or_of_the_wrong_kind_are_refused():
    state = table(3)
    rejects(state, 1, HandChosen(seat=1, hand=1), Rule.NOT_YOUR_TURN)
    rejects(state, 0, GuessMade(seat=0, guess=1), Rule.WRONG_DECISION)
    rejects(state, 0, HandChosen(seat=2, hand=1), Rule.WRONG_DECISION)
    with pytest.raises(IllegalAction) as caught:
        ENGINE.parse(state, 2, 1)
    assert caught.value.code == Rule.NOT_YOUR_TURN


def test_others_cannot_see_your_hand():
    state = run(table(3), HandChosen(seat=0, hand=2), HandChosen(seat=1, hand=1))
    # Who has closed a hand is public; on how many chopsticks is not.
    assert ENGINE.view(state, 0).hands == (2, CLOSED_HAND, None)
    assert ENGINE.view(state, 1).hands == (CLOSED_HAND, 1, None)
    assert ENGINE.view(state, None).hands == (CLOSED_HAND, CLOSED_HAND, None)
    assert shown_turn(ENGINE, state, 0) == ENGINE.to_act(state)
    # The shown event tells others only that a hand was closed.
    assert shown_event(ENGINE, state, HandChosen(seat=0, hand=2), 1) == HandHidden(seat=0)
    assert shown_event(ENGINE, state, HandChosen(seat=0, hand=2), 0) == HandChosen(seat=0, hand=2)
    assert shown_event(ENGINE, state, HandReset(seat=0), 2) == HandHidden(seat=0)
    rejected = AnswerRejected(seat=0, decision="hand", answer="7", code="x", message="y")
    assert shown_event(ENGINE, state, rejected, 1) == HandHidden(seat=0)
    assert shown_event(ENGINE, state, GuessMade(seat=0, guess=3), 1) == GuessMade(seat=0, guess=3)


# -- guesses ---------------------------------------------------------------------------------


def test_a_guess_lies_between_zero_and_the_chopsticks_on_the_table_inclusive():
    state = run(table(2), *hands(1, 1))
    ENGINE.check(state, 0, GuessMade(seat=0, guess=6))  # equal to the total is allowed
    ENGINE.check(state, 0, GuessMade(seat=0, guess=0))
    error = rejects(state, 0, GuessMade(seat=0, guess=7), PorrinhaRule.GUESS_OUT_OF_RANGE)
    assert "6 chopsticks on the table" in error.message
    rejects(state, 0, GuessMade(seat=0, guess=-1), PorrinhaRule.GUESS_OUT_OF_RANGE)


def test_nobody_may_repeat_a_guess():
    state = run(table(3), *hands(1, 1, 1), GuessMade(seat=0, guess=4))
    error = rejects(state, 1, GuessMade(seat=1, guess=4), PorrinhaRule.GUESS_TAKEN)
    assert "by seat 0" in error.message
    assert GuessMade(seat=1, guess=4) not in ENGINE.legal(state, 1)
    assert len(ENGINE.legal(state, 1)) == 9  # 0..9 but 4


def test_legal_lists_exactly_what_check_accepts():
    state = run(table(3), *hands(2, 0, 3), GuessMade(seat=0, guess=5))
    for guess in range(-2, 12):
        event = GuessMade(seat=1, guess=guess)
        try:
            ENGINE.check(state, 1, event)
        except IllegalAction:
            assert event not in ENGINE.legal(state, 1)
        else:
            assert event in ENGINE.legal(state, 1)
    assert ENGINE.legal(state, 2) == ()


# -- settling --------------------------------------------------------------------------------


def test_a_right_guess_costs_a_chopstick_and_makes_the_next_first_guesser():
    state = run(table(3), *hands(1, 2, 0), GuessMade(seat=0, guess=4), GuessMade(seat=1, guess=3))
    assert state.round == 1
    state = run(state, GuessMade(seat=2, guess=2))
    assert state.round == 2
    assert state.chopsticks == (3, 2, 3)
    assert state.last_winner == 1 and state.first_guesser == 1
    assert state.last_hands == (1, 2, 0) and state.last_total == 3
    assert state.last_guesses == (4, 3, 2)
    assert state.hands == (None, None, None) and state.guesses == (PENDING_GUESS,) * 3
    assert ENGINE.to_act(state) == Turn(1, "hand")


def test_when_nobody_is_right_the_next_player_guesses_first():
    state = run(table(3), *hands(1, 1, 1), GuessMade(seat=0, guess=0), GuessMade(seat=1, guess=1))
    state = run(state, GuessMade(seat=2, guess=2))
    assert state.last_winner == -1 and state.first_guesser == 1 and state.chopsticks == (3, 3, 3)


def test_emptying_your_hand_takes_you_out_and_the_last_left_loses():
    state = msgspec.structs.replace(table(3), chopsticks=(1, 1, 3))
    state = run(state, *hands(0, 0, 1), GuessMade(seat=0, guess=1))
    state = run(state, GuessMade(seat=1, guess=2), GuessMade(seat=2, guess=3))
    assert state.out == (0,) and state.guesses[0] == NOT_PLAYING
    # The winner left, so the next active player after it guesses first.
    assert state.first_guesser == 1
    assert state.chopstick_count == 4
    assert ENGINE.to_act(state) == Turn(1, "hand")
    state = run(state, HandChosen(seat=1, hand=1), HandChosen(seat=2, hand=0), GuessMade(seat=1, guess=1))
    state = run(state, GuessMade(seat=2, guess=0))
    assert state.out == (0, 1) and state.over
    assert ENGINE.to_act(state) is None
    assert ENGINE.outcome(state) == Outcome(places=(1, 2, 3), winners=(0,))
    with pytest.raises(IllegalAction) as caught:
        ENGINE.check(state, 2, HandChosen(seat=2, hand=0))
    assert caught.value.code == Rule.MATCH_OVER
    assert state.last_hands == (NO_HAND, 1, 0)


def test_an_invalid_guess_can_never_win():
    state = run(table(2), *hands(0, 0), GuessVoided(seat=0))
    assert state.guesses[0] == INVALID_GUESS
    state = run(state, GuessMade(seat=1, guess=5))
    assert state.last_winner == -1 and state.last_guesses == (INVALID_GUESS, 5)


def test_a_reset_hand_counts_as_zero():
    state = run(table(2), HandReset(seat=0), HandChosen(seat=1, hand=2), GuessMade(seat=0, guess=2))
    state = run(state, GuessMade(seat=1, guess=3))
    assert state.last_total == 2 and state.last_winner == 0


# -- removals --------------------------------------------------------------------------------


def test_a_removed_player_leaves_the_table_and_ranks_last():
    state = run(table(4), HandChosen(seat=0, hand=1), PlayerRemoved(seat=1, code="player.timeout", reason="slow"))
    assert state.chopstick_count == 9
    assert ENGINE.to_act(state) == Turn(2, "hand")
    state = run(state, PlayerRemoved(seat=3, code="player.exception", reason="boom"))
    assert not state.over and state.active_seats == (0, 2)
    state = run(state, PlayerRemoved(seat=2, code="porrinha.guess_taken", reason="strict"))
    assert state.over
    outcome = ENGINE.outcome(state)
    # The one left ranks first; the earliest removed ranks last.
    assert outcome.places == (1, 4, 2, 3)
    assert outcome.removed == (1, 3, 2)


def test_removing_the_last_pending_guesser_settles_the_round():
    state = run(table(3), *hands(1, 1, 1), GuessMade(seat=0, guess=2), GuessMade(seat=1, guess=3))
    state = ENGINE.apply(state, PlayerRemoved(seat=2, code="player.timeout", reason="slow"))
    assert state.round == 2 and state.last_total == 2 and state.last_winner == 0
    assert state.chopsticks == (2, 3, 3) and state.chopstick_count == 5


def test_removal_of_a_player_already_finished_changes_nothing():
    state = msgspec.structs.replace(table(3), out=(0,))
    assert ENGINE.apply(state, PlayerRemoved(seat=0, code="player.exception", reason="x")) == state
    ended = ENGINE.apply(table(2), MatchEnded(outcome=Outcome(places=(1, 1), winners=(), result="abandoned")))
    assert ENGINE.apply(ended, PlayerRemoved(seat=0, code="x", reason="y")) == ended


def test_a_match_ended_by_the_referee_is_over():
    state = ENGINE.apply(table(2), MatchEnded(outcome=Outcome(places=(1, 1), winners=(), result="abandoned")))
    assert ENGINE.to_act(state) is None and state.over


def test_apply_refuses_events_of_other_layers_and_games():
    with pytest.raises(ValueError, match="handled by replay"):
        ENGINE.apply(table(2), MatchStarted(game="porrinha", options={}, seats=()))


def test_a_rejected_hand_counts_as_0_under_the_lenient_policy_and_nothing_under_the_strict():
    rejected = AnswerRejected(seat=0, decision="hand", answer="'x'", code="porrinha.not_an_integer", message="m")
    # Lenient: the rejection is the ruling, one event as any hand (a reset of its own would show).
    assert ENGINE.apply(table(2), rejected).hands == (0, None)
    strict = table(2, policy="strict")
    assert ENGINE.apply(strict, rejected) == strict  # the removal that follows is what changes it
    guess = AnswerRejected(seat=0, decision="guess", answer="9", code="porrinha.guess_out_of_range", message="m")
    assert ENGINE.apply(table(2), guess) == table(2)  # GuessVoided follows


def test_apply_never_mutates_its_input():
    state = table(3)
    before = msgspec.msgpack.encode(state)
    after = ENGINE.apply(state, HandChosen(seat=0, hand=2))
    assert msgspec.msgpack.encode(state) == before
    assert after.hands[0] == 2 and state.hands[0] is None


def test_render_and_describe_say_what_happened():
    state = run(table(2), *hands(1, 2), GuessMade(seat=0, guess=3))
    text = ENGINE.render(state)
    assert "round 1" in text and "p0" in text and "waiting for p1 to choose a guess" in text
    after = ENGINE.apply(state, GuessMade(seat=1, guess=2))
    line = ENGINE.describe(state, GuessMade(seat=1, guess=2), after)
    assert line == "p1 guesses 2 | round 1: 1 + 2 = 3; p0 guessed right, 2 chopsticks left"
