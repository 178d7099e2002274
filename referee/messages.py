"""Each game's player protocol as messages: one JSON object per call, one JSON value back.

The games' referees call their players with Python objects (a `Table`, a `Board`, a seat's view, a
game tree). For a player in a child process, a game's `Messages` (in the game's own module,
registered with `registry.register_messages`) turns each call into the message
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

from typing import Any

import msgspec

__all__ = ["GenericMessages", "Messages"]


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
