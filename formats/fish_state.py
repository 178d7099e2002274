"""Fish as the course's State JSON (seed 003's `{"players": [...], "board": [[...]]}`).

A State lists the players still in, in turn order starting with the one to act, each with its
colour, score and penguins' places, and the board row by row (fish per tile, 0 a hole). matchlog
converts with the engine's own `state_to_json` / `state_from_json`.

Export: `export_fish_state(records, at=SEQ)` is the State at one seq; without `at` it is the whole
game as a JSON array of successive States, one a line: the board once the play order is known
(before the first penguin), then one after every placement, move and kick.

Import: `read_fish_state(text)` takes such an array and infers each action between consecutive
States, judged by the engine: a new penguin of the player to place is its placement; one penguin of
the player to move on another tile is its move; a colour no longer listed was kicked (recorded as
`player.kicked`). Anything else (two changes at once, the wrong player, an unreachable tile, fish
that do not add up) is refused, naming the State. The first State gives the board (a uniform board
of its fish, or a random board with its holes), the seats (colours: red is seat 0) and the play
order (its list order); penguins already on it are placed round-robin in that order. Ages are not
in the course's States: each seat is given its place in the play order as its age.
"""

from __future__ import annotations

import msgspec

from matchlog.engines.fish import COLORS, ENGINE, FishOptions, FishState, StateJSON, state_from_json, state_to_json
from matchlog.events import (
    AgeGiven,
    BoardGenerated,
    Event,
    IllegalAction,
    MatchStarted,
    PenguinMoved,
    PenguinPlaced,
    PlayerRemoved,
    Record,
    Seat,
    UsageError,
)
from matchlog.replay import effective, fold

from .bounds import MAX_TURNS, at_most
from .imported import FormatError, ImportedMatch, Recording, match_key

__all__ = ["FORMAT", "export_fish_state", "read_fish_state"]

FORMAT = "fish-state"
_encode = msgspec.json.Encoder().encode


def _json(state: FishState) -> bytes:
    """The course's State of `state`, its first player the one to act (or the first in order)."""
    turn = ENGINE.to_act(state)
    first = turn.seat if turn is not None and turn.seat >= 0 else (state.order[0] if state.order else -1)
    return _encode(state_to_json(state, first))


def export_fish_state(records: list[Record], at: int | None = None) -> str:
    """The course's State at seq `at`, or (without it) the array of the game's successive States.

    Raises:
        UsageError: the match is not Fish, `at` is not one of its seqs, or no State exists there yet.
    """
    started = records[0].event
    if not isinstance(started, MatchStarted) or started.game != "fish":
        game = started.game if isinstance(started, MatchStarted) else "?"
        raise UsageError(f"the course's State JSON holds Fish, not {game}", code="usage.export")
    if at is not None:
        if not 0 <= at < len(records):
            raise UsageError(f"seq {at} is not in the match (seqs 0 to {len(records) - 1})", code="usage.seq")
        state: FishState = fold(records[: at + 1], engine=ENGINE)
        if not state.order:
            raise UsageError(f"at seq {at} the play order is not known yet: no State exists", code="usage.seq")
        return _json(state).decode() + "\n"
    states: list[bytes] = []
    state = ENGINE.start(started)
    for record in effective(records)[1:]:
        state = ENGINE.apply(state, record.event)
        if state.order and (not states or _json(state) != states[-1]):
            states.append(_json(state))
    if not states:
        raise UsageError("the match never reached a play order: it has no State", code="usage.export")
    return "[\n" + ",\n".join(state.decode() for state in states) + "\n]\n"


# -- import ----------------------------------------------------------------------------------


def _parsed(item: StateJSON, where: str) -> tuple[FishState, list[int]]:
    """The state a State describes, and its seats in list order."""
    try:
        state = state_from_json(msgspec.to_builtins(item))
    except IllegalAction as error:
        raise FormatError(FORMAT, f"{where}: {error.message}") from None
    return state, [COLORS.index(player.color) for player in item.players]


def _penguins(state: FishState, seat: int) -> frozenset[tuple[int, int]]:
    return frozenset(state.penguins[seat]) if seat < len(state.penguins) else frozenset()


def _differences(state: FishState, given: FishState, listed: list[int]) -> list[str]:
    """How the engine's state differs from a given State (empty: they agree)."""
    found = []
    rows = len(state.board)
    board = [tuple(row) for row in given.board[:rows]]
    if tuple(board) != state.board or any(any(row) for row in given.board[rows:]):
        found.append("the board")
    playing = [seat for seat in range(state.players) if state.active(seat)]
    if sorted(listed) != playing:
        found.append("the players")
    for seat in playing:
        if seat in listed and _penguins(state, seat) != _penguins(given, seat):
            found.append(f"{COLORS[seat]}'s penguins")
        if seat in listed and state.scores[seat] != given.scores[seat]:
            found.append(f"{COLORS[seat]}'s score ({given.scores[seat]}, the rules give {state.scores[seat]})")
    return found


def _action(state: FishState, given: FishState, where: str) -> Event:
    """The one placement or move that leads from `state` to the State `given`.

    Raises:
        FormatError: no single action of the player to act explains the difference.
    """
    turn = ENGINE.to_act(state)
    if turn is None:
        raise FormatError(FORMAT, f"{where}: the game is already over, but the State changes")
    seat = turn.seat
    for other in range(state.players):
        if other != seat and state.active(other) and _penguins(state, other) != _penguins(given, other):
            raise FormatError(FORMAT, f"{where}: {COLORS[other]}'s penguins changed, but it is {COLORS[seat]}'s turn")
    added = sorted(_penguins(given, seat) - _penguins(state, seat))
    gone = sorted(_penguins(state, seat) - _penguins(given, seat))
    if turn.decision == "place" and len(added) == 1 and not gone:
        return PenguinPlaced(seat=seat, position=added[0])
    if turn.decision == "move" and len(added) == 1 and len(gone) == 1:
        return PenguinMoved(seat=seat, source=gone[0], target=added[0])
    change = f"{len(gone)} penguin(s) left and {len(added)} arrived"
    raise FormatError(FORMAT, f"{where}: {change}; that is not one {turn.decision} of {COLORS[seat]}, whose turn it is")


def read_fish_state(text: str) -> list[ImportedMatch]:
    """The Fish game a JSON array of successive States records, each action judged by the engine.

    Raises:
        FormatError: the text is not such an array, or no legal action explains a change (the
            message names the State, counted from 1).
    """
    # Decoded as the States it must be: msgspec refuses the first value of another shape where it
    # stands, so JSON nested deeper than a State is refused there, never read to its depth.
    try:
        items = msgspec.json.decode(text, type=list[StateJSON])
    except msgspec.ValidationError as error:
        raise FormatError(FORMAT, f"state file: a Fish game is a JSON array of successive States ({error})") from None
    except msgspec.DecodeError as error:
        raise FormatError(FORMAT, f"state file: not JSON ({error})") from None
    if not items:
        raise FormatError(FORMAT, "state file: a Fish game is a JSON array of successive States")
    at_most(len(items), MAX_TURNS, FORMAT, "state file", "States")
    first, order = _parsed(items[0], "state 1")
    if any(first.scores):
        raise FormatError(FORMAT, "state 1: fish are already scored; the first State must be from before any move")
    seats = len(first.penguins)
    board = first.board
    holes = sum(fish == 0 for row in board for fish in row)
    fish = {fish for row in board for fish in row}
    if holes == 0 and len(fish) == 1:
        options = FishOptions(rows=len(board), columns=len(board[0]), fish=fish.pop())
    else:
        options = FishOptions(rows=len(board), columns=len(board[0]) if board else 0, random_board=True, holes=holes)
    names = tuple(Seat(COLORS[seat], "imported") for seat in range(seats))
    started = MatchStarted(game="fish", options=msgspec.to_builtins(options), seats=names)
    recording = Recording(FORMAT, started, "state 1")
    recording.chance(BoardGenerated(tiles=board), "state 1")
    for seat in range(seats):
        if seat not in order:  # a colour missing below the highest one left before play
            recording.record(PlayerRemoved(seat=seat, code="player.kicked", reason="not in the first State"), "state 1")
    # The list starts with the player to place next: after k placements, the (k mod n)-th in order.
    placed = sum(len(first.penguins[seat]) for seat in order)
    shift = placed % len(order)
    order = order[len(order) - shift :] + order[: len(order) - shift]
    for seat in range(seats):
        if seat in order:
            recording.answer(AgeGiven(seat=seat, age=order.index(seat) + 1), "state 1")
    for index in range(placed):
        seat = order[index % len(order)]
        if index // len(order) >= len(first.penguins[seat]):
            raise FormatError(FORMAT, "state 1: its penguins are not whole rounds of placements in the list's order")
        recording.answer(PenguinPlaced(seat=seat, position=first.penguins[seat][index // len(order)]), "state 1")
    if found := _differences(recording.state, first, order):
        raise FormatError(FORMAT, f"state 1: {' and '.join(found)} differ from the board and penguins it starts with")
    for number, item in enumerate(items[1:], start=2):
        where = f"state {number}"
        given, listed = _parsed(item, where)
        state: FishState = recording.state
        for seat in range(seats):
            if state.active(seat) and seat not in listed and not recording.over:
                reason = f"{where} no longer lists {COLORS[seat]}"
                recording.record(PlayerRemoved(seat=seat, code="player.kicked", reason=reason), where)
        if not _differences(recording.state, given, listed):
            continue  # the same State again (a kick alone, or a repeated State)
        recording.answer(_action(recording.state, given, where), where)
        if found := _differences(recording.state, given, listed):
            raise FormatError(FORMAT, f"{where}: after that {' and '.join(found)} differ from what the rules give")
    recording.end(f"state {len(items)}")
    return [recording.finish(match_key(FORMAT, text))]
