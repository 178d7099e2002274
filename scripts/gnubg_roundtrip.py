"""Send matches through GNU Backgammon and back, and count those that come back as the same match.

Each match (the heuristic player against the random one, refereed as `play` does, with the opening
roll played, rolled again, or under pygammon's rules; and matches with the cube and resignations)
is exported as .sgf and .mat; the real gnubg (`gnubg -t`, once for all of them) loads the .sgf and
saves it again, imports the .mat and saves it as .sgf and exports it as .mat; matchlog reads each
back and compares it with the match that went in (`tests/gnubg_roundtrip.py`: the options, seats,
chance with its commitment and seed, decisions, result, and the position after every turn).

    .venv/bin/python scripts/gnubg_roundtrip.py            # 50 matches
    .venv/bin/python scripts/gnubg_roundtrip.py --matches 200
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gnubg_roundtrip import match_play, played, round_trip  # noqa: E402 - the tests' helper, by path

#: The kinds of match sent, in turn.
KINDS = ("opening played", "opening rolled again", "pygammon rules", "cube and resignations")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    matches = {}
    for number in range(args.matches):
        seed = args.seed + number
        kind = KINDS[number % len(KINDS)]
        name = f"m{number:03d}"
        if kind == "opening played":
            matches[name] = played(seed)
        elif kind == "opening rolled again":
            matches[name] = played(seed, {"move_by_turn_rolls": False})
        elif kind == "pygammon rules":
            matches[name] = played(seed, {"rules": "pygammon"})
        else:
            matches[name] = match_play(seed)
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        differences = round_trip(matches, Path(folder))["differences"]
    took = time.monotonic() - began
    for way, label in (
        (".sgf", ".sgf -> gnubg -> .sgf"),
        (".mat", ".mat -> gnubg -> .sgf"),
        (".mat.mat", ".mat -> gnubg -> .mat"),
    ):
        same = [name for name in matches if differences[name + way] is None]
        print(f"{label}: {len(same)}/{len(matches)} come back as the same match")
        for name in matches:
            if differences[name + way] is not None:
                print(f"  {name} ({KINDS[int(name[1:]) % len(KINDS)]}): {differences[name + way]}")
    print(f"({len(matches)} matches through gnubg and back in {took:.1f} s)")
    if any(difference is not None for difference in differences.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
