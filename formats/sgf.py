"""SGF for backgammon (GM[6]), as GNU Backgammon saves and loads it (`save match`, `load match`).

    (;FF[4]GM[6]CA[UTF-8]AP[matchlog]MI[length:1][game:0][ws:0][bs:0]PW[alice]PB[bob]
    DT[2026-11-23]RU[NoCube]RE[W+1]
    ;B[21lnab]
    ;W[52mrmh]
    ...)

A file is a collection of game trees, one a game (several: the games of a match, each imported as
a matchlog match of one series); only each tree's main line is read. The root holds the players
(PW is White, GNU Backgammon's player 0 and matchlog's seat 0; PB is Black, seat 1), the date, the
rules (`RU[NoCube]`, `RU[Jacoby]`), the game comment (`GC`) and the result (`RE[W+2]`: White wins
2 points; `R` appended: by resignation). Each node after it is a turn: `W[52mrmh]` or `B[..]` is a
roll of 5 and 2 and its steps as pairs of letters, from and to, one die a step: `a`..`x` are the
points 0..23 of matchlog's board (seat 0's 1-point is `a`, seat 1's is `x`), `y` the bar, `z` off;
`W[double]`, `W[take]`, `W[drop]` are cube actions; `PL[W]DI[64]` is a roll with no play (a
resignation followed). Analysis properties are ignored; a position set up by hand (AB, AW, AE) is
refused: matchlog imports games from the start.

What matchlog adds (the time of day, `EventTime` as a `.mat` has it, since DT holds a date only;
each seat's player, an opening roll rolled again, the rules, match play, the chance commitment and
its seed) it writes as tags in the game comment, `GC[[Strategy 1
"heuristic"\\]...]`, the one place GNU Backgammon keeps when it loads a game and saves it again (it
drops properties it does not know; `formats.gnubg` lists the tags), and reads them back. Files
matchlog wrote before put them in private root properties (XW, XB, XO, XR, XC, XS), still read.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import Any

from matchlog.events import Record, Series, us_to_datetime

from .bounds import MAX_GAMES, MAX_TURNS, MAX_VARIATION_DEPTH, at_most
from .gnubg import (
    BAR,
    OFF,
    Cube,
    GameRecord,
    Roll,
    Step,
    Win,
    apply_tags,
    game_of,
    read_game,
    read_tags,
    recorded_at,
    tags_of,
    write_tag,
)
from .imported import FormatError, ImportedMatch, derived_id, match_key

__all__ = ["FORMAT", "export_sgf", "read_nodes", "read_sgf"]

FORMAT = "sgf"
Node = dict[str, list[str]]


# -- letters ---------------------------------------------------------------------------------


def _letter(seat: int, point: int) -> str:
    """The SGF letter of the mover's point number."""
    if point == BAR:
        return "y"
    if point == OFF:
        return "z"
    return chr(ord("a") + (point - 1 if seat == 0 else 24 - point))


def _point(seat: int, letter: str, where: str) -> int:
    """The mover's point number of an SGF letter."""
    if letter == "y":
        return BAR
    if letter == "z":
        return OFF
    if "a" <= letter <= "x":
        index = ord(letter) - ord("a")
        return index + 1 if seat == 0 else 24 - index
    raise FormatError(FORMAT, f"{where}: {letter!r} is not a point letter (a to x, y the bar, z off)")


# -- writing ---------------------------------------------------------------------------------


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")


def export_sgf(records: list[Record], extra: Callable[[Roll], str] | None = None) -> str:
    """A backgammon match as an SGF text (one game of a 1-point match); `extra(roll)` gives more
    properties for a roll's node (GNU Backgammon's analysis properties: `matchlog.analysis`).

    Raises:
        UsageError: the match is not backgammon.
    """
    game = game_of(records)
    when = us_to_datetime(game.at_us or 0)
    # With the cube in play, a money game (length 0): in a 1-point match the cube is dead.
    rules = "Jacoby" if game.jacoby else "" if game.cube else "NoCube"
    root = (
        f"(;FF[4]GM[6]CA[UTF-8]AP[matchlog]MI[length:{0 if game.cube else 1}][game:0][ws:0][bs:0]"
        f"PW[{_escaped(game.names[0])}]PB[{_escaped(game.names[1])}]DT[{when:%Y-%m-%d}]"
    )
    if rules:
        root += f"RU[{rules}]"
    win = next((action for action in game.actions if isinstance(action, Win)), None)
    if win is not None:
        root += f"RE[{'WB'[win.player]}+{win.points}{'R' if win.resigned else ''}]"
    tags = [("EventTime", f"{when:%H.%M}"), *tags_of(game)]  # DT holds no time of day
    root += "GC[" + _escaped("\n".join(write_tag(name, value) for name, value in tags)) + "]"
    nodes = [root]
    for action in game.actions:
        if isinstance(action, Cube):
            nodes.append(f";{'WB'[action.player]}[{action.action}]")
        elif isinstance(action, Roll):
            colour = "WB"[action.player]
            dice = f"{action.dice[0]}{action.dice[1]}"
            if not action.steps and win is not None and action is game.actions[-2]:
                nodes.append(f";PL[{colour}]DI[{dice}]")  # rolled, then resigned
                continue
            steps = "".join(_letter(action.player, s.start) + _letter(action.player, s.end) for s in action.steps)
            nodes.append(f";{colour}[{dice}{steps}]" + (extra(action) if extra is not None else ""))
    return "\n".join(nodes) + ")\n"


# -- reading ---------------------------------------------------------------------------------


class _Reader:
    """SGF's syntax: a collection of game trees of nodes of properties, each with values in brackets.

    One pass, left to right, with no recursion: a variation is a stack entry (at most
    MAX_VARIATION_DEPTH deep), a line number is found by bisecting the newlines' offsets (found once),
    and each tree's main line is kept as it is read (its first variation, and the first of that, ...).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.newlines = [found.start() for found in re.finditer("\n", text)]

    def where(self, at: int | None = None) -> str:
        return f"line {bisect.bisect_left(self.newlines, self.at if at is None else at) + 1}"

    def fail(self, message: str) -> FormatError:
        return FormatError(FORMAT, f"{self.where()}: {message}")

    def peek(self) -> str:
        found = _NOT_SPACE.search(self.text, self.at)
        self.at = found.start() if found else len(self.text)
        return self.text[self.at] if self.at < len(self.text) else ""

    def collection(self) -> list[list[tuple[str, Node]]]:
        """Each game tree's main line: (where, node) for every node.

        Raises:
            FormatError: not SGF, or past a bound (trees, nodes of one tree, variations nested).
        """
        trees = []
        while self.peek() == "(":
            at_most(len(trees) + 1, MAX_GAMES, FORMAT, self.where(), "game trees")
            trees.append(self.tree())
        if self.peek():
            raise self.fail(f"expected '(' to start a game tree, not {self.peek()!r}")
        if not trees:
            raise FormatError(FORMAT, "line 1: not an SGF file (no game tree)")
        return trees

    def tree(self) -> list[tuple[str, Node]]:
        main: list[tuple[str, Node]] = []
        # One frame per open game tree or variation: [on the main line, nodes read, variations read].
        # The main line goes on through the first variation of each tree on it.
        stack: list[list[Any]] = [[True, 0, 0]]
        nodes = 0
        self.at += 1  # "("
        while stack:
            frame = stack[-1]
            char = self.peek()
            if char == ";":
                if frame[2]:
                    raise self.fail("a node (';') after a variation: a game tree's nodes come first")
                nodes += 1
                at_most(nodes, MAX_TURNS, FORMAT, self.where(), "nodes in one game tree")
                where = self.where()
                self.at += 1
                node = self.node()
                frame[1] += 1
                if frame[0]:
                    main.append((where, node))
                continue
            if not frame[1]:
                raise self.fail("a game tree starts with a node (';')")
            if char == "(":
                at_most(len(stack) + 1, MAX_VARIATION_DEPTH, FORMAT, self.where(), "variations nested")
                frame[2] += 1
                self.at += 1
                stack.append([frame[0] and frame[2] == 1, 0, 0])
            elif char == ")":
                self.at += 1
                stack.pop()
            else:
                raise self.fail(f"expected ')' to close the game tree, not {char!r}")
        return main

    def node(self) -> Node:
        properties: Node = {}
        while self.peek().isalpha():
            start = self.at
            while self.at < len(self.text) and self.text[self.at].isalpha():
                self.at += 1
            # Old SGF allows lower-case letters in names (GNU Backgammon keeps the capitals).
            name = "".join(c for c in self.text[start : self.at] if c.isupper())
            values = []
            while self.peek() == "[":
                values.append(self.value())
            if not values:
                raise self.fail(f"property {name} has no value")
            properties.setdefault(name, []).extend(values)
        return properties

    def value(self) -> str:
        found = _VALUE.match(self.text, self.at)
        assert found is not None  # it starts with "[", which the pattern takes
        if found.group(2) is None:
            raise FormatError(FORMAT, f"{self.where()}: a value is not closed (']')")
        self.at = found.end()
        # An escaped line break is no character at all; any other escaped character is itself.
        return _ESCAPE.sub(lambda escaped: "" if escaped.group(1) == "\n" else escaped.group(1), found.group(1))


#: What `peek` skips to; a value in brackets, escapes included (linear: no nesting); an escape.
_NOT_SPACE = re.compile(r"\S")
_VALUE = re.compile(r"\[([^\]\\]*(?:\\.[^\]\\]*)*)(\])?", re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def read_nodes(text: str) -> list[list[Node]]:
    """Each game tree's main line of an SGF text, as its nodes' properties (name -> values).

    Raises:
        FormatError: the text is not SGF.
    """
    return [[node for _, node in tree] for tree in _Reader(text).collection()]


def _one(node: Node, name: str) -> str | None:
    values = node.get(name)
    return values[0] if values else None


def _date(root: Node) -> int | None:
    """The game's time (UTC microseconds): DT's first date, at the time of day of the game
    comment's EventTime tag (DT holds no time), if DT has a date."""
    return recorded_at((_one(root, "DT") or "").split(",")[0], read_tags(_one(root, "GC") or "").get("EventTime", ""))


def _old_tags(root: Node) -> dict[str, str]:
    """The tags of an SGF matchlog wrote before it used the game comment: private root properties."""
    tags = {}
    for name, tag in (("XW", "Strategy 1"), ("XB", "Strategy 2"), ("XR", "Rules"), ("XS", "Chance seed")):
        if (value := _one(root, name)) is not None:
            tags[tag] = value
    if (opening := _one(root, "XO")) is not None:
        tags["Opening roll"] = " ".join(opening)
    if (commitment := _one(root, "XC")) is not None:
        algorithm, _, digest = commitment.rpartition(":")
        tags["Chance commitment"] = f"{algorithm} {digest}"
    return tags


def _game(nodes: list[tuple[str, Node]], number: int, series: Series | None, at_us: int | None) -> GameRecord:
    where, root = nodes[0]
    where = f"{where} (game {number})"
    if _one(root, "GM") != "6":
        raise FormatError(FORMAT, f"{where}: not a backgammon game (GM[6]), GM[{_one(root, 'GM')}]")
    rules_text = _one(root, "RU") or ""
    game = GameRecord(
        names=(_one(root, "PW") or "White", _one(root, "PB") or "Black"),
        at_us=at_us,
        series=series,
        jacoby="Jacoby" in rules_text.split(":"),
        where=where,
    )
    apply_tags(game, _old_tags(root) | read_tags(_one(root, "GC") or ""), FORMAT, where)
    for count, (line, node) in enumerate(nodes):
        node_where = f"{line} (game {number}, node {count})" if count else where
        if any(name in node for name in ("AB", "AW", "AE")):
            raise FormatError(FORMAT, f"{node_where}: a position set up by hand (AB/AW/AE); only whole games import")
        for colour in ("W", "B"):
            value = _one(node, colour)
            if value is None:
                continue
            player = "WB".index(colour)
            if value in ("double", "take", "drop"):
                game.actions.append(Cube(player=player, action=value, where=node_where))  # type: ignore[arg-type]
                continue
            if len(value) < 2 or not all(c in "123456" for c in value[:2]) or len(value) % 2:
                raise FormatError(FORMAT, f"{node_where}: {colour}[{value}] is not a roll and its steps")
            letters = value[2:]
            steps = [
                Step(_point(player, letters[i], node_where), _point(player, letters[i + 1], node_where))
                for i in range(0, len(letters), 2)
            ]
            game.actions.append(Roll(player=player, dice=(int(value[0]), int(value[1])), steps=steps, where=node_where))
        if (dice := _one(node, "DI")) is not None and _one(node, "PL") in ("W", "B"):
            if len(dice) != 2 or not all(c in "123456" for c in dice):
                raise FormatError(FORMAT, f"{node_where}: DI[{dice}] is not two dice")
            player = "WB".index(_one(node, "PL"))  # type: ignore[arg-type]
            game.actions.append(Roll(player=player, dice=(int(dice[0]), int(dice[1])), where=node_where))
    result = _one(root, "RE")
    if result and result[0] in "WB" and result[1:2] == "+":
        digits = "".join(c for c in result[2:] if c in "0123456789")
        if len(digits) > 9:
            raise FormatError(FORMAT, f"{where}: RE[{result[:20]}...] gives more points than a game can")
        game.actions.append(
            Win(player="WB".index(result[0]), points=int(digits or 1), resigned=result.endswith("R"), where=where)
        )
    return game


def read_sgf(text: str) -> list[ImportedMatch]:
    """The matches of an SGF text, one a game tree, each judged by the engine (see `formats.gnubg`).

    Raises:
        FormatError: the text is not backgammon SGF, or a game breaks the rules; the message names the line.
    """
    trees = _Reader(text.lstrip("\ufeff")).collection()
    at_us = _date(trees[0][0][1])
    series_id = str(derived_id((at_us or 0) // 1000, match_key(FORMAT, text, -1))) if len(trees) > 1 else None
    matches = []
    for index, nodes in enumerate(trees):
        series = Series(series_id, index + 1, len(trees)) if series_id else None
        game = _game(nodes, index + 1, series, _date(nodes[0][1]) or at_us)
        matches.append(read_game(game, FORMAT, match_key(FORMAT, text, index)))
    return matches
