"""Golden playthroughs: seeded matches whose every event and final rendering are kept in
tests/fixtures/golden/. A change to the rules, the players or the encoding shows up as a diff.

To accept an intended change: MATCHLOG_REGENERATE_GOLDEN=1 pytest tests/test_golden.py, then read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from matchlog.engines import get as get_engine
from matchlog.events import encode
from matchlog.referee import MemoryRecorder, play_match, seats_from_specs
from matchlog.referee.players import make_player
from matchlog.replay import timeline

GOLDEN = Path(__file__).parent / "fixtures" / "golden"

CASES = {
    "porrinha-3-players": ("porrinha", ["random", "reasoner", "random"], {"chopsticks": 2}, 7),
    "porrinha-strict-5-players": (
        "porrinha",
        ["reasoner", "random", "reasoner", "random", "random"],
        {"policy": "strict"},
        11,
    ),
    # The starter rolls again, as every standard match did before it played the opening roll (the
    # events as matchlog recorded them then are tests/fixtures/recorded/backgammon-before-*).
    "backgammon-heuristic-random": ("backgammon", ["heuristic", "random"], {"move_by_turn_rolls": False}, 5),
    "backgammon-opening-played": ("backgammon", ["heuristic", "random"], {}, 5),
    "backgammon-pygammon-rules": (
        "backgammon",
        ["random", "heuristic"],
        {"rules": "pygammon", "move_by_turn_rolls": True},
        6,
    ),
    "davinci-3-players-jokers": ("davinci", ["seed-ai", "random", "seed-ai"], {"jokers": True}, 8),
    "fish-4-players-random-board": (
        "fish",
        ["maximin:2", "random", "maximin:1", "maximin"],
        {"rows": 5, "columns": 6, "random_board": True, "holes": 3, "one_fish": 2},
        9,
    ),
}


def playthrough(game: str, specs: list[str], options: dict, seed: int) -> str:
    import random

    rng = random.Random(seed)
    seats = seats_from_specs(game, specs)
    players = [make_player(game, s.player, random.Random(rng.randrange(2**63))) for s in seats]
    recorder = MemoryRecorder()
    play_match(game, seats, players, options=options, recorder=recorder, seed=rng.randrange(2**63))
    records = recorder.records(recorder.drafts[0].event_id, at_us=0)
    lines = [encode(d.event).decode() for d in recorder.drafts]
    steps = list(timeline(records))
    engine = get_engine(game)
    return "\n".join([*lines, "", *(s.text for s in steps), "", engine.render(steps[-1].after)]) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name: str):
    text = playthrough(*CASES[name])
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("MATCHLOG_REGENERATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}; run with MATCHLOG_REGENERATE_GOLDEN=1"
    assert text == path.read_text()
