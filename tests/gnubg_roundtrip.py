"""Backgammon matches through GNU Backgammon and back, for tests/test_formats_gnubg.py and
scripts/gnubg_roundtrip.py.

`run_gnubg` drives the real gnubg once (`gnubg -t -q -r -p script.py`, its embedded Python): it
loads or imports each file, runs the commands given after it (`save match`, `export match mat`),
and reports every game it read as gnubg holds it (the result, and each turn's player, dice and
move in gnubg's own words). `round_trip` sends matches through it as .sgf and as .mat, reads back
what gnubg saved, and `same_match` says whether that is the match that went in.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from matchlog.engines import CHANCE
from matchlog.engines.backgammon import ENGINE
from matchlog.engines.chance import ALGORITHM, ChanceSource, commitment
from matchlog.events import (
    ChanceCommitted,
    ChanceRevealed,
    Event,
    MatchEnded,
    MatchStarted,
    Record,
    ResignationDeclined,
    ResignationOffered,
    Seat,
    draft,
    uuid7,
)
from matchlog.formats import ImportedMatch, export, read
from matchlog.referee.play import play_match
from matchlog.referee.players import make_player, seats_from_specs
from matchlog.replay import timeline

GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"

_SCRIPT = r"""
import json, os
import gnubg

job = json.load(open(os.environ["MATCHLOG_GNUBG_JOB"]))

def games():
    found = []
    for game in gnubg.match(analysis=0, boards=1, statistics=0, verbose=0)["games"]:
        turns = []
        for r in game["game"]:
            if r["action"] == "move":
                board = gnubg.positionfromid(r["board"])
                turns.append({"player": "XO".index(r["player"]), "action": "move", "dice": list(r["dice"]),
                              "board": [list(side) for side in board],
                              "text": gnubg.movetupletostring(r["move"], board)})
            elif r["action"] in ("double", "take", "drop"):
                turns.append({"player": "XO".index(r["player"]), "action": r["action"]})
        found.append({"info": game["info"], "turns": turns})
    return found

for command in job.get("setup", []):
    gnubg.command(command)
out = {}
for item in job["items"]:
    if item.get("load"):
        gnubg.command(item["load"])
    for command in item["then"]:
        gnubg.command(command)
    out[item["name"]] = games()
json.dump(out, open(job["out"], "w"))
"""


def run_gnubg(folder: Path, items: Sequence[dict[str, Any]], setup: Sequence[str] = ()) -> dict[str, Any]:
    """Run gnubg once over `items` ({"name", "load": a command or None, "then": [commands]}), after
    the `setup` commands; what it holds after each item, by name: per game its `info` (winner,
    points-won, resigned) and its turns (player and action; for a move, the dice, the position
    before it (`board`, gnubg's two arrays) and the move in gnubg's words)."""
    job = {"setup": list(setup), "items": list(items), "out": str(folder / "gnubg-out.json")}
    (folder / "gnubg-job.json").write_text(json.dumps(job))
    (folder / "gnubg-script.py").write_text(_SCRIPT)
    env = {**os.environ, "HOME": str(folder), "MATCHLOG_GNUBG_JOB": str(folder / "gnubg-job.json")}
    done = subprocess.run(
        [GNUBG, "-t", "-q", "-r", "-p", str(folder / "gnubg-script.py")],
        env=env,
        cwd=folder,
        capture_output=True,
        timeout=600,
        check=False,
    )
    out = folder / "gnubg-out.json"
    assert out.exists(), done.stdout.decode()[-2000:] + done.stderr.decode()[-2000:]
    return json.loads(out.read_text())


# -- matches to send -------------------------------------------------------------------------


def played(seed: int, options: dict[str, Any] | None = None) -> list[Record]:
    """A match of the heuristic player against the random one, refereed as `play` does."""
    seats = seats_from_specs("backgammon", ["heuristic", "random"])
    players = [make_player("backgammon", seat.player, random.Random(seed + i)) for i, seat in enumerate(seats)]
    result = play_match("backgammon", seats, players, options=options, seed=seed)
    return result.recorder.records(result.match_id)


def match_play(seed: int) -> list[Record]:
    """A match with the cube and resignations, its decisions drawn at random (our referee offers
    none: pygammon's protocol has no cube), its chance committed to and revealed."""
    rng = random.Random(seed)
    key = rng.randbytes(32)
    source = ChanceSource(key)
    options = {"cube": True, "resignations": True}
    started = MatchStarted(
        game="backgammon",
        options=msgspec.to_builtins(msgspec.convert(options, ENGINE.spec.options)),
        seats=(Seat("ann", "random"), Seat("bob", "random")),
    )
    events: list[Event] = [started, ChanceCommitted(algorithm=ALGORITHM, commitment=commitment(key))]
    state = ENGINE.start(started)
    while (turn := ENGINE.to_act(state)) is not None:
        if turn.seat == CHANCE:
            event = ENGINE.chance(state, source)
        else:
            # GNU Backgammon's records hold no declined resignation, and no resignation after some
            # checkers of a turn have moved: none is offered to be declined, or halfway through a
            # turn; nor right after the opening roll (gnubg's .mat export puts that roll in the
            # other column).
            late = state.played or (turn.decision == "move" and state.turns <= 1)
            legal = [
                e
                for e in ENGINE.legal(state, turn.seat)
                if not isinstance(e, ResignationDeclined) and not (isinstance(e, ResignationOffered) and late)
            ]
            weights = [0.02 if isinstance(e, ResignationOffered) else 1.0 for e in legal]
            if turn.decision == "roll":
                weights = [0.1 if e.tag != "backgammon.roll_chosen" else 1.0 for e in legal]
            event = rng.choices(legal, weights)[0]
        events.append(event)
        state = ENGINE.apply(state, event)
    events += [ChanceRevealed(seed=key.hex()), MatchEnded(outcome=ENGINE.outcome(state))]  # type: ignore[arg-type]
    return ImportedMatch(uuid7(), tuple(draft(event) for event in events)).records()


# -- there and back ----------------------------------------------------------------------------


def round_trip(matches: dict[str, list[Record]], folder: Path) -> dict[str, Any]:
    """Each match as .sgf and as .mat through gnubg, saved again as .sgf (and the .mat exported
    again as .mat): for every way (`name.sgf`, `name.mat`, `name.mat.mat`) the difference from the
    match that went in (None: the same match), or why it could not be read back; and what gnubg
    read of each file, by the name of the file sent."""
    items = []
    for name, records in matches.items():
        stem = folder / name
        stem.with_suffix(".sgf").write_text(export(records, "sgf"))
        stem.with_suffix(".mat").write_text(export(records, "mat"))
        items += [
            {"name": f"{name}.sgf", "load": f"load match {stem}.sgf", "then": [f"save match {stem}.sgf.gnubg.sgf"]},
            {
                "name": f"{name}.mat",
                "load": f"import mat {stem}.mat",
                "then": [f"save match {stem}.mat.gnubg.sgf", f"export match mat {stem}.mat.gnubg.mat"],
            },
        ]
    seen = run_gnubg(folder, items)
    differences: dict[str, str | None] = {}
    for name, records in matches.items():
        for way, path in (
            (f"{name}.sgf", f"{name}.sgf.gnubg.sgf"),
            (f"{name}.mat", f"{name}.mat.gnubg.sgf"),
            (f"{name}.mat.mat", f"{name}.mat.gnubg.mat"),
        ):
            try:
                [back] = read((folder / path).read_bytes(), path.rsplit(".", 1)[1])
            except Exception as error:  # a refusal is a difference too
                differences[way] = f"refused: {error}"
                continue
            differences[way] = same_match(records, back.records())
    return {"differences": differences, "seen": seen}


def same_match(ours: list[Record], back: list[Record]) -> str | None:
    """None when `back` is the match `ours` is: the same options, seats, chance (its commitment and
    seed included), decisions and result, and after each turn the same position (a turn's checkers
    may be written in another order); else the first difference."""
    a, b = _course(ours), _course(back)
    for index, (mine, theirs) in enumerate(zip(a, b, strict=False)):
        if mine != theirs:
            return f"at {index}: {mine!r} became {theirs!r}"
    if len(a) != len(b):
        return f"{len(a)} steps became {len(b)}"
    return None


def _course(records: list[Record]) -> list[Any]:
    steps = list(timeline(records))
    found: list[Any] = []
    for at, step in enumerate(steps):
        event = step.event
        if event.tag == "backgammon.checker_moved":
            if at + 1 == len(steps) or steps[at + 1].event.tag != "backgammon.checker_moved":
                found.append(("position", step.after.points, step.after.bar, step.after.off))
        elif isinstance(event, MatchStarted):
            found.append((event.game, event.options, event.seats))
        else:
            found.append(event)
    return found
