"""The Jellyfish `.mat` match text, as GNU Backgammon writes and reads it (`export match mat`,
`import mat`).

    ; [EventDate "2026.11.23"]
    ; [EventTime "20.15"]

     1 point match

     Game 1
     alice : 0                      bob : 0
      1)                             21: 13/11 24/23
      2) 52: 13/8 24/22              63: 8/5 11/5
      ...
     30) 55: 2/0 1/0 1/0
          Wins 1 point

A game is a score line (the two names; the left one is GNU Backgammon's player 0, matchlog's seat
0) and numbered lines of two columns, one turn each: the roll and its steps, one die a step, from
the mover's point numbers (25 the bar, 0 off, `*` a hit); an empty roll cannot move. "Doubles =>
N", "Takes", "Drops" are cube actions; "Wins N points" in a column ends the game for that side.
A file of several games is a match: each game imports as a matchlog match of one series.

matchlog exports one match as a 1-point match (a single game: gammons count, the cube is idle),
and adds header comments GNU Backgammon keeps as the match's comment and matchlog reads back:
`[Strategy 1 "heuristic"]` (each seat's player), `[Opening roll "3 5"]` (the opening dice of a
match whose starter then rolled again, matchlog's default), `[Rules "pygammon"]`, and the chance
commitment and seed (`[Chance commitment "sha256-ctr/1 <hex>"]`, `[Chance seed "<hex>"]`), so a
match exported and imported again audits as the original did. Lines are read as GNU Backgammon
reads them (`import.c`): two colons split the columns two characters before the second; else a
double space past column 15.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

from matchlog.events import Record, Series, UsageError, us_to_datetime

from .gnubg import BAR, IMPORTED, OFF, Cube, GameRecord, Roll, Step, Win, game_of, read_game
from .imported import FormatError, ImportedMatch, derived_id, match_key

__all__ = ["FORMAT", "export_mat", "play_notation", "read_mat"]

FORMAT = "mat"
_TAG = re.compile(r'^\s*[;#]\s*\[([A-Za-z][A-Za-z0-9 ]*?)\s+"((?:[^"\\]|\\.)*)"\]\s*$')
_LENGTH = re.compile(r"^\s*(\d+)\s+[Pp]oints?\s+[Mm]atch")
_GAME = re.compile(r"^\s*Game\s+(\d+)\s*$")
_SCORE = re.compile(r"^\s*(.*?)\s*:\s*(-?\d+)\s+(.*?)\s*:\s*(-?\d+)\s*$")
_NUMBER = re.compile(r"^\s*(\d+)\)")
_ROLL = re.compile(r"^([1-6])([1-6]):\s*(.*)$")
_WINS = re.compile(r"^wins?\s+(\d+)\s+points?\b", re.IGNORECASE)
_DOUBLE = re.compile(r"^(?:doubles?|beavers?|raccoons?)\b(?:\s*=>\s*(\d+))?", re.IGNORECASE)
_POINT_NAMES = {"bar": BAR, "b": BAR, "off": OFF, "o": OFF}


# -- writing ---------------------------------------------------------------------------------


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _steps(roll: Roll) -> str:
    """GNU Backgammon's plain move text: each step `from/to`, `*` on a hit."""
    return " ".join(f"{step.start}/{step.end}{'*' if step.hit else ''}" for step in roll.steps)


def play_notation(roll: Roll) -> str:
    """A play in the notation people read (GNU Backgammon's: `13/8 6/1*`), where matchlog shows one."""
    return _steps(roll)


def _check_name(name: str) -> None:
    if not name or name != name.strip() or ":" in name or any(c in name for c in "\r\n"):
        raise UsageError(
            f"a .mat cannot hold the name {name!r} (a colon ends a name there, and names are trimmed)",
            code="usage.export",
        )


def export_mat(records: list[Record]) -> str:
    """A backgammon match as a .mat text (one game of a 1-point match).

    Raises:
        UsageError: the match is not backgammon, or a name a .mat cannot hold.
    """
    game = game_of(records)
    for name in game.names:
        _check_name(name)
    when = us_to_datetime(game.at_us or 0)
    lines = [f'; [EventDate "{when:%Y.%m.%d}"]', f'; [EventTime "{when:%H.%M}"]']
    for number, strategy in enumerate(game.strategies, start=1):
        lines.append(f'; [Strategy {number} "{_quoted(strategy)}"]')
    if game.rules != "standard":
        lines.append(f'; [Rules "{game.rules}"]')
    if game.opening is not None:
        lines.append(f'; [Opening roll "{game.opening[0]} {game.opening[1]}"]')
    if game.commitment is not None:
        lines.append(f'; [Chance commitment "{game.commitment[0]} {game.commitment[1]}"]')
    if game.seed is not None:
        lines.append(f'; [Chance seed "{game.seed}"]')
    lines += ["", " 1 point match", "", " Game 1", f" {f'{game.names[0]} : 0':<31}{game.names[1]} : 0"]
    row = ""  # the line being written: a number and the left column, waiting for the right
    number = 0
    for action in game.actions:
        if isinstance(action, Win):
            if row:
                lines.append(row.rstrip())
                row = ""
            text = f"Wins {action.points} point{'s' if action.points != 1 else ''}"
            lines.append(("      " if action.player == 0 else " " * 34) + text)
            continue
        assert isinstance(action, Roll)
        text = f"{action.dice[0]}{action.dice[1]}: {_steps(action)}"
        if action.player == 0:
            if row:
                lines.append(row.rstrip())
            number += 1
            row = f"{number:3d}) {text:<27} "
        else:
            if not row:
                number += 1
                row = f"{number:3d}) {'':<27} "
            lines.append((row + text).rstrip())
            row = ""
    if row:
        lines.append(row.rstrip())
    return "\n".join(lines) + "\n"


# -- reading ---------------------------------------------------------------------------------


def _unquoted(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _columns(line: str) -> tuple[str, str]:
    """The left and right halves of a move line, split as GNU Backgammon splits them."""
    first = line.find(":")
    second = line.find(":", first + 1) if first >= 0 else -1
    if second > 3:
        left, right = line[: second - 3], line[second - 2 :]
    elif len(line) > 15 and (gap := line.find("  ", 15)) >= 0:
        left, right = line[:gap], line[gap + 1 :]
    else:
        left, right = line, ""
    return _NUMBER.sub("", left, count=1).strip(), right.strip()


def _point(text: str, where: str) -> int:
    named = _POINT_NAMES.get(text.lower())
    if named is not None:
        return named
    if text.isdigit() and 0 <= int(text) <= BAR:
        return int(text)
    raise FormatError(FORMAT, f"{where}: {text!r} is not a point (1 to 24, bar or 25, off or 0)")


def _parse_steps(text: str, where: str) -> list[Step]:
    """Steps of a move text: `13/8`, `24/18*`, `bar/22`, `6/off`, chains `13/7*/5`, repeats `6/4(2)`."""
    steps: list[Step] = []
    if text.lower().startswith(("cannot move", "???")):
        return steps
    for token in text.split():
        move, repeat = token, 1
        if (found := re.fullmatch(r"(.*)\((\d)\)\*?", token)) is not None:
            move, repeat = found.group(1), int(found.group(2))
        points = [_point(part.rstrip("*"), where) for part in move.split("/")]
        if len(points) < 2:
            raise FormatError(FORMAT, f"{where}: {token!r} is not a move (from/to)")
        for _ in range(repeat):
            steps += [Step(start, end) for start, end in itertools.pairwise(points)]
    return steps


def _action(text: str, player: int, where: str) -> Roll | Cube | Win | None:
    """The action of one column's text (None: nothing to record)."""
    if not text or text.lower().startswith("resign"):
        return None
    if (found := _ROLL.match(text)) is not None:
        dice = (int(found.group(1)), int(found.group(2)))
        return Roll(player=player, dice=dice, steps=_parse_steps(found.group(3).strip(), where), where=where)
    if (found := _WINS.match(text)) is not None:
        return Win(player=player, points=int(found.group(1)), where=where)
    if (found := _DOUBLE.match(text)) is not None:
        return Cube(player=player, action="double", value=int(found.group(1)) if found.group(1) else None, where=where)
    lowered = text.lower()
    if lowered.startswith("take"):
        return Cube(player=player, action="take", where=where)
    if lowered.startswith("drop") or lowered.startswith("pass"):
        return Cube(player=player, action="drop", where=where)
    raise FormatError(FORMAT, f"{where}: cannot read {text!r} (a roll 'NN: moves', a cube action or 'Wins N points')")


def _date(tags: dict[str, str]) -> int | None:
    """The record's time (UTC microseconds) from EventDate and EventTime, if it has a date."""
    date = tags.get("EventDate", "")
    found = re.fullmatch(r"\s*(\d{4})\.(\d{1,2})\.(\d{1,2})\s*", date)
    if found is None:
        return None
    hour = minute = 0
    if (clock := re.fullmatch(r"\s*(\d{1,2})[.:](\d{2})\s*", tags.get("EventTime", ""))) is not None:
        hour, minute = int(clock.group(1)), int(clock.group(2))
    try:
        when = datetime(int(found.group(1)), int(found.group(2)), int(found.group(3)), hour, minute, tzinfo=UTC)
    except ValueError:
        return None
    return int(when.timestamp()) * 1_000_000


def _header(tags: dict[str, str], where: str) -> dict[str, object]:
    """What matchlog's own header comments add to every game of the file."""
    found: dict[str, object] = {}
    strategies = (tags.get("Strategy 1"), tags.get("Strategy 2"))
    if strategies != (None, None):
        found["strategies"] = (strategies[0] or IMPORTED, strategies[1] or IMPORTED)
    rules = tags.get("Rules", "standard")
    if rules not in ("standard", "pygammon"):
        raise FormatError(FORMAT, f"{where}: rules {rules!r} are not standard or pygammon")
    found["rules"] = rules
    if "Opening roll" in tags:
        dice = re.fullmatch(r"\s*([1-6])\s+([1-6])\s*", tags["Opening roll"])
        if dice is None or dice.group(1) == dice.group(2):
            raise FormatError(FORMAT, f"{where}: the opening roll {tags['Opening roll']!r} is not two different dice")
        found["opening"] = (int(dice.group(1)), int(dice.group(2)))
    if "Chance commitment" in tags:
        parts = tags["Chance commitment"].split()
        if len(parts) != 2:
            raise FormatError(FORMAT, f"{where}: a chance commitment is 'ALGORITHM HEX'")
        found["commitment"] = (parts[0], parts[1])
    if "Chance seed" in tags:
        found["seed"] = tags["Chance seed"].strip()
    return found


def read_mat(text: str) -> list[ImportedMatch]:
    """The matches of a .mat text, one a game, each judged by the engine (see `formats.gnubg`).

    Raises:
        FormatError: the text is not a .mat, or a game breaks the rules; the message names the line.
    """
    lines = text.lstrip("\ufeff").splitlines()
    tags: dict[str, str] = {}
    games: list[tuple[int, list[tuple[int, str]]]] = []  # (line of "Game N", [(line number, line)])
    length_at = 0
    for number, line in enumerate(lines, start=1):
        if games:
            if _GAME.match(line):
                games.append((number, []))
            elif line.strip():
                games[-1][1].append((number, line))
        elif (tag := _TAG.match(line)) is not None:
            tags[tag.group(1)] = _unquoted(tag.group(2))
        elif _LENGTH.match(line):
            length_at = number
        elif _GAME.match(line) and length_at:
            games.append((number, []))
    if not length_at:
        raise FormatError(FORMAT, "line 1: not a .mat file (no 'N point match' line)")
    if not games:
        raise FormatError(FORMAT, f"line {length_at}: the match has no games ('Game 1' lines)")
    header = _header(tags, f"line {length_at}")
    at_us = _date(tags)
    series_id = str(derived_id((at_us or 0) // 1000, match_key(FORMAT, text, -1))) if len(games) > 1 else None
    matches = []
    for index, (start, body) in enumerate(games):
        if not body:
            raise FormatError(FORMAT, f"line {start}: the game has no score line")
        score_at, score_line = body[0]
        score = _SCORE.match(score_line)
        if score is None:
            raise FormatError(FORMAT, f"line {score_at}: not a score line 'NAME : SCORE   NAME : SCORE'")
        game = GameRecord(
            names=(score.group(1), score.group(3)),
            at_us=at_us,
            series=Series(series_id, index + 1, len(games)) if series_id else None,
            where=f"line {start} (game {index + 1})",
            **header,  # type: ignore[arg-type]
        )
        move = ""
        for number, line in body[1:]:
            if (numbered := _NUMBER.match(line)) is not None:
                move = f", move {numbered.group(1)}"
            where = f"line {number} (game {index + 1}{move})"
            for player, half in enumerate(_columns(line)):
                action = _action(half, player, where)
                if action is not None:
                    game.actions.append(action)
        matches.append(read_game(game, FORMAT, match_key(FORMAT, text, index)))
    return matches
