"""The first thing that runs in a child player's process: `python -m matchlog.referee.host CONFIG`.

It confines the process (`sandbox.confine`) before anything of the player runs. Then, for a program
(`cmd:`), it becomes that program (exec); for a user's Python class (`module:Class`, `file.py:Class`)
it loads the class and serves the game's protocol (docs/protocol.md) on behalf of the object: each
message read from the referee is turned into the call the class was written for (a `Table`, a
`Board`, a view, a game tree: `messages`), and what the call returns, or raises, is the answer line.

Before the first message, a Python host says once whether the player loaded: `{"ready": true,
"methods": [...]}` (the methods the object has, so the referee never sends calls it lacks) or
`{"error": message, "code": "usage.player"}`. The player's own prints go to stderr, and its stdin
reads nothing, so nothing it does can garble the protocol.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .sandbox import confine

#: How much of an exception's text an error answer keeps.
_DETAIL_LIMIT = 300


def main(argv: list[str]) -> None:
    """Confine this process, then run what the referee asked for."""
    config = json.loads(argv[0])
    confine(config["jail"])
    run = config["run"]
    if "exec" in run:
        _become(run["exec"])
    else:
        _serve(run["python"])


def _become(argv: list[str]) -> None:
    """Replace this process with the player's program (its stdin and stdout are the protocol)."""
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        _write(1, {"error": f"cannot run {argv[0]}: {error.strerror}", "code": "player.start"})
        os._exit(127)


def _write(fd: int, message: Any) -> None:
    _send(fd, json.dumps(message, separators=(",", ":")).encode())


def _serve(python: dict[str, Any]) -> None:
    """Load the user's class and answer the referee's messages until it closes the pipe."""
    # The protocol keeps private copies of stdin and stdout; the player's prints go to stderr.
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    sys.path[:] = python["path"]
    import msgspec

    from .calls import PlayerFailed
    from .messages import messages_for
    from .players import load_player

    try:
        messages = messages_for(python["game"])
        player = load_player(python["spec"], python["seed"])
    except Exception as error:  # a UsageError, or the game's own modules failing (not the player's)
        _write(protocol_out, {"error": str(error), "code": getattr(error, "code", "usage.player")})
        return
    methods = sorted(name for name in dir(player) if not name.startswith("_") and callable(getattr(player, name, None)))
    _write(protocol_out, {"ready": True, "methods": methods})
    encode = msgspec.json.Encoder(enc_hook=repr).encode
    decode = msgspec.json.Decoder(dict[str, Any]).decode
    with os.fdopen(protocol_in, "rb") as reader:
        for line in reader:
            message = decode(line)
            method = message["call"]
            try:
                answer = messages.reply(method, getattr(player, method)(*messages.arguments(message)))
            except MemoryError:
                reply: Any = {"error": f"{method}() ran out of memory", "code": "player.memory"}
            except PlayerFailed as error:
                reply = {"error": f"{method}(): {error}", "code": error.code}
            except BaseException as error:  # a player's SystemExit is its failure, as in process
                text = f"{type(error).__name__}: {error}"
                if len(text) > _DETAIL_LIMIT:
                    text = text[: _DETAIL_LIMIT - 1] + "…"
                reply = {"error": f"{method}() raised {text}", "code": "player.exception"}
            else:
                try:
                    data = encode(answer)
                except (TypeError, ValueError, OverflowError):
                    data = encode(repr(answer))  # judged as the answer it is, like any malformed one
                _send(protocol_out, data)
                continue
            _send(protocol_out, encode(reply))


def _send(fd: int, data: bytes) -> None:
    data += b"\n"
    while data:
        data = data[os.write(fd, data) :]


if __name__ == "__main__":
    main(sys.argv[1:])
