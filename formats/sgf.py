"""SGF for backgammon (GM[6]), as GNU Backgammon saves and loads it (`save match`, `load match`).

    (;FF[4]GM[6]CA[UTF-8]AP[matchlog]MI[length:1][game:0][ws:0][bs:0]PW[alice]PB[bob]
    DT[2026-11-23]RU[NoCube]RE[W+1]
    ;B[21lnab]
    ;W[52mrmh]
    ...)

A file is a collection of game trees, one a game (several: the games of a match, each imported as
a matchlog match of one series); only each tree's main line is read. The root holds the players
(PW is White, GNU Backgammon's player 0 and matchlog's seat 0; PB is Black, seat 1), the date, the
rules and the result (`RE[W+2]`: White wins 2 points; `R` appended: by resignation). Each node
after it is a turn: `W[52mrmh]` or `B[..]` is a roll of 5 and 2 and its steps as pairs of letters,
from and to, one die a step: `a`..`x` are the points 0..23 of matchlog's board (seat 0's 1-point
is `a`, seat 1's is `x`), `y` the bar, `z` off; `W[double]`, `W[take]`, `W[drop]` are cube
actions; `PL[W]DI[64]` is a roll with no play (a resignation followed). Analysis properties are
ignored; a position set up by hand (AB, AW, AE) is refused: matchlog imports games from the start.

matchlog adds private root properties that GNU Backgammon ignores and matchlog reads back: XW and
XB (each seat's player), XO (the opening roll that was not played, as `35`), XR (rules, when
pygammon), XC (the chance commitment, `ALGORITHM:HEX`) and XS (the revealed seed).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from matchlog.events import Record, Series, us_to_datetime

from .gnubg import BAR, IMPORTED, OFF, Cube, GameRecord, Roll, Step, Win, game_of, read_game
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
    root = (
        "(;FF[4]GM[6]CA[UTF-8]AP[matchlog]MI[length:1][game:0][ws:0][bs:0]"
        f"PW[{_escaped(game.names[0])}]PB[{_escaped(game.names[1])}]DT[{when:%Y-%m-%d}]RU[NoCube]"
    )
    win = next((action for action in game.actions if isinstance(action, Win)), None)
    if win is not None:
        root += f"RE[{'WB'[win.player]}+{win.points}{'R' if win.resigned else ''}]"
    root += f"XW[{_escaped(game.strategies[0])}]XB[{_escaped(game.strategies[1])}]"
    if game.opening is not None:
        root += f"XO[{game.opening[0]}{game.opening[1]}]"
    if game.rules != "standard":
        root += f"XR[{game.rules}]"
    if game.commitment is not None:
        root += f"XC[{_escaped(game.commitment[0])}:{game.commitment[1]}]"
    if game.seed is not None:
        root += f"XS[{game.seed}]"
    nodes = [root]
    for action in game.actions:
        if isinstance(action, Roll):
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
    """SGF's syntax: a collection of game trees of nodes of properties, each with values in brackets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def where(self) -> str:
        return f"line {self.text.count(chr(10), 0, self.at) + 1}"

    def fail(self, message: str) -> FormatError:
        return FormatError(FORMAT, f"{self.where()}: {message}")

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.at] if self.at < len(self.text) else ""

    def collection(self) -> list[list[tuple[str, Node]]]:
        """Each game tree's main line: (where, node) for every node."""
        trees = []
        while self.peek() == "(":
            trees.append(self.tree())
        if self.peek():
            raise self.fail(f"expected '(' to start a game tree, not {self.peek()!r}")
        if not trees:
            raise FormatError(FORMAT, "line 1: not an SGF file (no game tree)")
        return trees

    def tree(self) -> list[tuple[str, Node]]:
        self.at += 1  # "("
        nodes: list[tuple[str, Node]] = []
        while self.peek() == ";":
            where = self.where()
            self.at += 1
            nodes.append((where, self.node()))
        if not nodes:
            raise self.fail("a game tree starts with a node (';')")
        variations = []
        while self.peek() == "(":
            variations.append(self.tree())
        if self.peek() != ")":
            raise self.fail(f"expected ')' to close the game tree, not {self.peek()!r}")
        self.at += 1
        return nodes + (variations[0] if variations else [])  # the main line only

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
        opened = self.where()
        self.at += 1  # "["
        chars = []
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "\\" and self.at + 1 < len(self.text):
                following = self.text[self.at + 1]
                self.at += 2
                if following != "\n":  # an escaped line break is no character at all
                    chars.append(following)
                continue
            if char == "]":
                self.at += 1
                return "".join(chars)
            chars.append(char)
            self.at += 1
        raise FormatError(FORMAT, f"{opened}: a value is not closed (']')")


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
    text = _one(root, "DT") or ""
    try:
        when = datetime.strptime(text[:10], "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(when.timestamp()) * 1_000_000


def _game(nodes: list[tuple[str, Node]], number: int, series: Series | None, at_us: int | None) -> GameRecord:
    where, root = nodes[0]
    where = f"{where} (game {number})"
    if _one(root, "GM") != "6":
        raise FormatError(FORMAT, f"{where}: not a backgammon game (GM[6]), GM[{_one(root, 'GM')}]")
    rules_text = _one(root, "RU") or ""
    game = GameRecord(
        names=(_one(root, "PW") or "White", _one(root, "PB") or "Black"),
        strategies=(_one(root, "XW") or IMPORTED, _one(root, "XB") or IMPORTED),
        rules=_one(root, "XR") or "standard",
        at_us=at_us,
        series=series,
        jacoby="Jacoby" in rules_text.split(":"),
        where=where,
    )
    if game.rules not in ("standard", "pygammon"):
        raise FormatError(FORMAT, f"{where}: rules {game.rules!r} are not standard or pygammon")
    if (opening := _one(root, "XO")) is not None:
        if len(opening) != 2 or not all(c in "123456" for c in opening) or opening[0] == opening[1]:
            raise FormatError(FORMAT, f"{where}: XO[{opening}] is not an opening roll of two different dice")
        game.opening = (int(opening[0]), int(opening[1]))
    if (commitment := _one(root, "XC")) is not None:
        algorithm, _, digest = commitment.rpartition(":")
        game.commitment = (algorithm, digest)
    game.seed = _one(root, "XS")
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
        digits = "".join(c for c in result[2:] if c.isdigit())
        game.actions.append(
            Win(player="WB".index(result[0]), points=int(digits or 1), resigned=result.endswith("R"), where=where)
        )
    return game


def read_sgf(text: str) -> list[ImportedMatch]:
    """The matches of an SGF text, one a game tree, each judged by the engine (see `formats.gnubg`).

    Raises:
        FormatError: the text is not backgammon SGF, or a game breaks the rules; the message names the line.
    """
    try:
        trees = _Reader(text.lstrip("\ufeff")).collection()
    except RecursionError:
        raise FormatError(FORMAT, "the record: its variations nest too deeply to read") from None
    at_us = _date(trees[0][0][1])
    series_id = str(derived_id((at_us or 0) // 1000, match_key(FORMAT, text, -1))) if len(trees) > 1 else None
    matches = []
    for index, nodes in enumerate(trees):
        series = Series(series_id, index + 1, len(trees)) if series_id else None
        game = _game(nodes, index + 1, series, _date(nodes[0][1]) or at_us)
        matches.append(read_game(game, FORMAT, match_key(FORMAT, text, index)))
    return matches
