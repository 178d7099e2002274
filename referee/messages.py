"""Each game's player protocol as messages: one JSON object per call, one JSON value back.

The games' referees call their players with Python objects (a `Table`, a `Board`, a seat's view, a
game tree). For a player in a child process, a game's `Messages` turns each call into the message
docs/protocol.md documents, carrying exactly what that call shows its seat and nothing more
(`request`), and the answer line back into the value the referee judges (`answer`). The host
(`host.py`) runs the other half for a user's Python class in a child: the message back into the
objects the class was written for (`arguments`), and what it returns into JSON (`reply`).

A message is `{"call": NAME, ...that call's arguments by name}`: Porrinha's `table` (the seed's
`core/util.h` queries as data); backgammon's `side`, `state` and `legal_moves`, and pygammon's
outputs for `observe`; Da Vinci Code's `seat` and `view` (hidden numbers are HIDDEN markers); Fish's
`board`, `players` and `color`, then the course's `state` (as its remote protocol sends it).
Every other game speaks the generic protocol (`generic.Decision`: `seat`, `decision`, `view`,
`legal`). Any other call (a knockout's `tournament_started(players)`, ...) carries its arguments as
`args`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import msgspec

__all__ = [
    "BackgammonMessages",
    "DavinciMessages",
    "FishMessages",
    "GenericMessages",
    "Messages",
    "PorrinhaMessages",
    "messages_for",
]


class Messages:
    """A call as `{"call": NAME, "args": [...]}` and its answer as it comes: the form of any call a
    game does not spell out."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        """The message for `method(*args)`, or None when this call has nothing to tell a child."""
        return {"call": method, "args": [msgspec.to_builtins(arg, enc_hook=repr) for arg in args]}

    def answer(self, method: str, value: Any) -> Any:
        """The answer (decoded JSON) as the game's referee expects it from `method`."""
        return value

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        """In the child: the arguments the player's method gets for `message`."""
        return tuple(message.get("args", ()))

    def reply(self, method: str, value: Any) -> Any:
        """In the child: what `method` returned, as the JSON to answer with."""
        return value


class PorrinhaMessages(Messages):
    """Every call carries the asking player's `table` (`porrinha.TableView`); hand and guess are
    answered with an integer, the rest with anything (null)."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        from .porrinha import Table

        if len(args) == 1 and isinstance(args[0], Table):
            return {"call": method, "table": msgspec.to_builtins(args[0].view)}
        return super().request(method, args)

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        from .porrinha import Table, TableView

        if "table" in message:
            return (Table(msgspec.convert(message["table"], TableView)),)
        return super().arguments(message)


class BackgammonMessages(Messages):
    """begin_game, move and end_game carry the `side` asked and the whole `state` (backgammon hides
    nothing); move adds its `legal_moves` and is answered `[die_index, source]`, "undo", or
    pygammon's input `["MOVE", [die_index, source]]` / `["UNDO", null]`. observe carries pygammon's
    `output` (its OutputType's name), `data` and `side`."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        from .backgammon import Board

        if method == "observe" and len(args) == 3:
            output, data, side = args
            return {
                "call": method,
                "output": output.name,
                "data": _pygammon_data(data),
                "side": None if side is None else int(side),
            }
        if len(args) == 1 and isinstance(args[0], Board):
            board = args[0]
            message = {"call": method, "side": int(board.side), "state": msgspec.to_builtins(board.state)}
            if method == "move":
                message["legal_moves"] = [list(move) for move in board.legal_moves()]
            return message
        return super().request(method, args)

    def answer(self, method: str, value: Any) -> Any:
        from .backgammon import InputType

        if method == "move" and isinstance(value, list) and len(value) == 2 and value[0] in ("MOVE", "UNDO"):
            return (InputType[value[0]], value[1])
        return value

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        from matchlog.engines.backgammon import BackgammonState

        from .backgammon import Board, DieRolls, GameState, InvalidMoveCode, OutputType, Point, Side

        if message["call"] == "observe":
            output, data, side = OutputType[message["output"]], message["data"], message["side"]
            if output is OutputType.GAME_STATE:
                board = [Point(None if p["side"] is None else Side(p["side"]), p["count"]) for p in data["board"]]
                data = GameState(
                    board, data["first_hit"], data["first_borne"], data["second_hit"], data["second_borne"]
                )
            elif output in (OutputType.TURN_ROLLS, OutputType.MOVE_ROLLS):
                data = DieRolls(*data)
            elif output is OutputType.INVALID_MOVE:
                data = InvalidMoveCode[data]
            else:
                data = Side(data)
            return (output, data, None if side is None else Side(side))
        if "state" in message:
            return (Board(msgspec.convert(message["state"], BackgammonState), message["side"]),)
        return super().arguments(message)

    def reply(self, method: str, value: Any) -> Any:
        if method != "move":
            return value
        if _is_input_type(value):
            return "undo" if value.name == "UNDO" else value.name
        if isinstance(value, tuple | list) and len(value) == 2 and _is_input_type(value[0]):
            return [value[0].name, value[1]]
        return value


def _is_input_type(value: object) -> bool:
    """Our InputType, or pygammon's own (a client written for pygammon)."""
    return isinstance(value, Enum) and type(value).__name__ == "InputType"


def _pygammon_data(data: Any) -> Any:
    """An output's data as JSON: GameState as an object, DieRolls as a pair, a code or side by name."""
    from .backgammon import DieRolls, GameState, Side

    if isinstance(data, GameState):
        return {
            "board": [{"side": None if p.side is None else int(p.side), "count": p.count} for p in data.board],
            "first_hit": data.first_hit,
            "first_borne": data.first_borne,
            "second_hit": data.second_hit,
            "second_borne": data.second_borne,
        }
    if isinstance(data, DieRolls):
        return [data.first, data.second]
    if isinstance(data, Side):
        return int(data)
    if isinstance(data, Enum):
        return data.name
    return msgspec.to_builtins(data, enc_hook=repr)


class DavinciMessages(Messages):
    """Every call carries the player's `seat` and its `view` (`DavinciState` as that seat sees it:
    other seats' hidden tiles and the pile are HIDDEN markers); observe adds the step's `text`."""

    def __init__(self, seat: int) -> None:
        self.seat = seat

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        from matchlog.engines.davinci import DavinciState

        if args and isinstance(args[0], DavinciState):
            message = {"call": method, "seat": self.seat, "view": msgspec.to_builtins(args[0])}
            if method == "observe" and len(args) == 2:
                message["text"] = args[1]
            return message
        return super().request(method, args)

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        from matchlog.engines.davinci import DavinciState

        if "view" in message:
            view = msgspec.convert(message["view"], DavinciState)
            return (view, message["text"]) if message["call"] == "observe" else (view,)
        return super().arguments(message)


class FishMessages(Messages):
    """initialize carries the `board`, the number of `players` and the player's `color`; the others
    the course's State (`engines.fish.state_to_json`, as the remote protocol sends it), listen and
    finalize with its `phase`; terminate its `reason`. Nothing is heard before the placements."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        from matchlog.engines import GameTree
        from matchlog.engines.fish import ENGINE, FishState, state_to_json

        match method, args:
            case "initialize", (board, players, color):
                return {"call": method, "board": [list(row) for row in board], "players": players, "color": color}
            case "terminate", (reason,):
                return {"call": method, "reason": reason}
            case _, ((FishState() | GameTree()) as given,):
                state: FishState = given if isinstance(given, FishState) else given.state
                if state.phase not in ("place", "move", "over") or not state.order:
                    return None  # ages are still being given: there is no State to send yet
                turn = ENGINE.to_act(state)
                first = turn.seat if turn is not None and turn.seat >= 0 else state.order[0]
                message = {"call": method, "state": state_to_json(state, first)}
                if method in ("listen", "finalize"):
                    message["phase"] = state.phase
                return message
        return super().request(method, args)

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        from matchlog.engines import GameTree
        from matchlog.engines.fish import ENGINE, state_from_json

        method = message["call"]
        if method == "initialize":
            return (tuple(tuple(row) for row in message["board"]), message["players"], message["color"])
        if method == "terminate":
            return (message["reason"],)
        if "state" in message:
            phase = "place" if method == "get_placement" or message.get("phase") == "place" else "move"
            state = state_from_json(message["state"], phase=phase)
            return (state,) if method == "get_placement" else (GameTree(ENGINE, state),)
        return super().arguments(message)


class GenericMessages(Messages):
    """The generic protocol's calls (`generic.Decision`): `act`, `begin_game` and `end_game` carry
    the decision's `seat`, `decision`, `view` and `legal`; `act` is answered with one answer."""

    def request(self, method: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        from .generic import Decision

        if len(args) == 1 and isinstance(args[0], Decision):
            return {"call": method, **msgspec.to_builtins(args[0])}
        return super().request(method, args)

    def arguments(self, message: dict[str, Any]) -> tuple[Any, ...]:
        from .generic import Decision

        if "view" in message and "legal" in message:
            fields = {name: message.get(name) for name in Decision.__struct_fields__}
            return (msgspec.convert(fields, Decision),)
        return super().arguments(message)


def messages_for(game: str, seat: int = 0) -> Messages:
    """The messages of `game`'s protocol for the player at `seat`."""
    match game:
        case "porrinha":
            return PorrinhaMessages()
        case "backgammon":
            return BackgammonMessages()
        case "davinci":
            return DavinciMessages(seat)
        case "fish":
            return FishMessages()
    return GenericMessages()
