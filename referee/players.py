"""Players by name: the built-ins of each game (`registry`), user classes from a file or a module, programs.

A player spec is `random`, `reasoner`, ... (a built-in of the game), `path/to/file.py:Class`,
`package.module:Class`, or `cmd:PROGRAM ARGS...` (any executable speaking docs/protocol.md),
optionally prefixed with the seat's name: `alice=reasoner`. Built-ins play in this process; a user's
class plays in a child process of its own (`channel.ChildPlayer`) unless `in_process` is asked for
(trusted code, for speed); a program always does.
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from matchlog.events import Seat, UsageError

from .classes import class_location, load_class, load_player
from .registry import builtin_names, find_builtin, is_builtin, known_builtins

if TYPE_CHECKING:
    from .sandbox import Limits

__all__ = [
    "load_player",
    "make_player",
    "runs_unconfined",
    "seats_from_specs",
    "seats_taken_by",
    "user_players",
]

_NAME = re.compile(r"^(?P<name>[A-Za-z0-9_.#-]{1,40})=(?P<spec>.+)$")


def _named(given: str) -> tuple[str | None, str]:
    """A `-p` value's seat name (None when it gives none) and its player's spec."""
    text = given.strip()
    named = _NAME.match(text)
    return (named["name"], named["spec"].strip()) if named else (None, text)


def seats_from_specs(
    game: str, specs: Sequence[str], *, in_process: bool = False, limits: Limits | None = None
) -> list[Seat]:
    """The seats for the given specs: names are unique (a repeated one gets #2, #3, ...). A user's
    class is loaded to check it: in a child process (under `limits`) unless `in_process`. A seat of
    user code that runs unconfined (`in_process`, `limits.unconfined`) is marked so.

    Raises:
        UsageError: a spec names no built-in, no program that can run, or no class that loads.
    """
    seats: list[Seat] = []
    used: dict[str, int] = {}
    for given in specs:
        name, spec = _named(given)
        _check_spec(game, spec, in_process=in_process, limits=limits)
        base = name or (spec if is_builtin(game, spec) else _default_name(spec))
        used[base] = used.get(base, 0) + 1
        unconfined = runs_unconfined(game, spec, in_process=in_process, limits=limits)
        seats.append(Seat(name=base if used[base] == 1 else f"{base}#{used[base]}", player=spec, unconfined=unconfined))
    return seats


def user_players(game: str, specs: Sequence[str]) -> list[str]:
    """The specs among `specs` (each perhaps `NAME=SPEC`) that are user code, not built-in players."""
    found = []
    for given in specs:
        _, spec = _named(given)
        if not is_builtin(game, spec):
            found.append(spec)
    return found


def runs_unconfined(game: str, spec: str, *, in_process: bool = False, limits: Limits | None = None) -> bool:
    """Whether `spec` is user code that the operating system will not confine: a class `in_process`,
    or any child under `limits.unconfined` (what its seat records, so no result reads as confined)."""
    if is_builtin(game, spec):
        return False
    return (in_process and not spec.startswith("cmd:")) or (limits is not None and limits.unconfined)


def seats_taken_by(game: str, seats: Sequence[Seat], specs: Sequence[str]) -> list[Seat]:
    """A match's `seats`, each taken by the player of the spec at its place: the seats keep their
    names (a `NAME=` prefix, if given, must be that seat's name).

    Raises:
        UsageError: (usage.players) not one spec per seat, or a name that is not its seat's;
            (usage.player) a spec that names no player.
    """
    names = ", ".join(f"{index} {seat.name}" for index, seat in enumerate(seats))
    if len(specs) != len(seats):
        raise UsageError(
            f"the match has {len(seats)} seats ({names}): give one player (-p) per seat, in seat order, "
            f"not {len(specs)}",
            code="usage.players",
        )
    taken: list[Seat] = []
    for index, (seat, given) in enumerate(zip(seats, specs, strict=True)):
        name, spec = _named(given)
        if name is not None and name != seat.name:
            raise UsageError(
                f"seat {index} is {seat.name}, not {name}: players take the match's seats and keep their names "
                f"({names})",
                code="usage.players",
            )
        _check_spec(game, spec)
        taken.append(Seat(name=seat.name, player=spec))
    return taken


def make_player(
    game: str, spec: str, rng: random.Random, *, in_process: bool = False, limits: Limits | None = None
) -> object:
    """A new player for `spec`: built-ins get `rng`; a user's class gets `seed=` if it takes one and
    runs in a child process (started now, under `limits`) unless `in_process`; a program always
    runs in one. Close a child's player (`ChildPlayer.close`) when done with it.

    Raises:
        UsageError: the spec cannot be loaded, the class cannot be built, or its process cannot start.
    """
    builtin = find_builtin(game, spec)
    if builtin is not None:
        factory, value = builtin
        try:
            return factory(rng) if value is None else factory(rng, value)
        except (TypeError, ValueError) as error:
            raise UsageError(f"player {spec}: {error}", code="usage.player") from None
    seed = rng.randrange(2**63)
    if in_process and not spec.startswith("cmd:"):
        return load_player(spec, seed)
    from .channel import ChildPlayer

    return ChildPlayer(game, spec, seed=seed, limits=limits).start()


def _check_spec(game: str, spec: str, *, in_process: bool = False, limits: Limits | None = None) -> None:
    builtin = find_builtin(game, spec)
    if builtin is not None:
        if builtin[1] is not None:
            make_player(game, spec, random.Random(0))  # an argument it cannot take is said now
        return
    if spec in known_builtins(game):
        _, _, argument = known_builtins(game)[spec]
        raise UsageError(f"player {spec} needs its {argument}: {spec}:{(argument or '').upper()}", code="usage.player")
    if spec.startswith("cmd:"):
        from .channel import program_argv

        program = program_argv(spec)[0]
        if shutil.which(program) is None:
            raise UsageError(f"player {spec}: {program} is not a program this user can run", code="usage.player")
        return
    if ":" not in spec:
        known = ", ".join(builtin_names(game)) or "none"
        raise UsageError(
            f"unknown player {spec!r}: give a built-in ({known}), path/to/file.py:Class, package.module:Class "
            "or cmd:PROGRAM",
            code="usage.player",
        )
    if in_process:
        load_class(spec)
        return
    class_location(spec)  # what can be said without running the player's code
    from .channel import ChildPlayer

    with ChildPlayer(game, spec, seed=0, limits=limits) as player:
        player.start()


def _default_name(spec: str) -> str:
    if spec.startswith("cmd:"):
        from .channel import program_argv

        return re.sub(r"[^A-Za-z0-9_.#-]", "_", Path(program_argv(spec)[0]).name)[:40] or "program"
    return spec.rsplit(":", 1)[1] if ":" in spec else spec
