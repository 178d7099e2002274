"""The marks an analysis gives a decision or a roll, and the figures a player's summary adds up.

Each game's analyser values a decision in its own unit, and marks its loss (the best choice's value
minus the value of the choice made) against that unit's thresholds:

    unit     value                                     marks at a loss of
    equity   GNU Backgammon's equity (backgammon)      0.04 doubtful, 0.08 bad, 0.16 very bad (gnubg's own)
    chance   the chance of being right (Porrinha,      0.1 inaccuracy, 0.2 mistake, 0.3 blunder (lichess's
             Da Vinci Code)                            drops in winning chances)
    fish     fish the seat makes sure of (Fish)        1 inaccuracy, 2 mistake, 3 blunder

and luck (backgammon only, the one game whose chance favours a seat as it falls) at +-0.3 lucky or
unlucky and +-0.6 very, gnubg's defaults. Backgammon's marks are the ones GNU Backgammon gives, read
back from it; the thresholds here say what they mean and mark the other games.

A player's accuracy, and the rest of a summary, are `matchlog.replay.annotations`'.
"""

from __future__ import annotations

__all__ = ["GLYPHS", "LUCK_MARKS", "MARKS", "luck_mark", "mark"]

#: The marks of each unit, worst first: (the least loss that earns it, its name).
MARKS: dict[str, tuple[tuple[float, str], ...]] = {
    "equity": ((0.16, "very bad"), (0.08, "bad"), (0.04, "doubtful")),
    "chance": ((0.3, "blunder"), (0.2, "mistake"), (0.1, "inaccuracy")),
    "fish": ((3.0, "blunder"), (2.0, "mistake"), (1.0, "inaccuracy")),
}
#: Luck's marks: (the least luck that earns it, its name), and the same below zero.
LUCK_MARKS = ((0.6, "very lucky"), (0.3, "lucky"))
#: The glyph each mark is shown with (the event list, SGF comments): chess's symbols.
GLYPHS = {
    "doubtful": "?!",
    "inaccuracy": "?!",
    "bad": "?",
    "mistake": "?",
    "very bad": "??",
    "blunder": "??",
}
#: How much worse a loss may be than a threshold and still miss it: values are rounded floats.
_EPSILON = 1e-9


def mark(loss: float, unit: str) -> str | None:
    """The mark of a decision that lost `loss` (in `unit`), or None for none."""
    for least, name in MARKS[unit]:
        if loss >= least - _EPSILON:
            return name
    return None


def luck_mark(luck: float) -> str | None:
    """The mark of a roll that gave `luck` (negative: took it)."""
    for least, name in LUCK_MARKS:
        if luck >= least - _EPSILON:
            return name
        if luck <= -least + _EPSILON:
            return name.replace("lucky", "unlucky")
    return None
