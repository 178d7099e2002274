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
0) and numbered lines of two columns, one turn each: the roll and its play in the mover's point
numbers (GNU Backgammon writes one die a step, `24/18 18/13`, and reads its own words for people
too, `24/13`, `bar/22`, `6/off`, `6/2(2)`, `*` a hit); an empty roll cannot move. "Doubles => N",
"Takes", "Drops" are cube actions; "Wins N points" in a column ends the game for that side (a
resignation where the rules have not ended it). A file of several games is a match: each game
imports as a matchlog match of one series.

matchlog exports one match as a 1-point match (a single game; with the cube in play, a money game:
"0 point match"), each turn in GNU Backgammon's words for people (`formats.gnubg`'s notation), and
adds header comments GNU Backgammon keeps as the match's comment (and writes back as the game
comment of its SGF, and in the header of its own `.mat`), which matchlog reads back:
`[Strategy 1 "heuristic"]` (each seat's player), `[Opening roll "3 5"]` (the opening dice of a match
whose starter rolled again), `[Rules "pygammon"]`, match play (`[Cube "on"]`, ...), and the chance
commitment and seed (`[Chance commitment "sha256-ctr/1 <hex>"]`, `[Chance seed "<hex>"]`), so a
match exported and imported again audits as the original did (`formats.gnubg` lists the tags).
Lines are read as GNU Backgammon reads them (`import.c`): two colons split the columns two
characters before the second; else a double space past column 15.
"""

from __future__ import annotations

import itertools
import re

from matchlog.engines.backgammon_notation import play_text
from matchlog.events import Record, Series, UsageError, us_to_datetime

from .bounds import MAX_GAMES, MAX_TURNS, at_most, lines_of
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

__all__ = ["FORMAT", "export_mat", "read_mat"]

FORMAT = "mat"
# Each pattern reads a line in time linear in its length (no two parts that can take the same
# characters, which is what made a tag or a score line of many spaces or colons quadratic or worse),
# and no number it gives to int() has more than 9 digits.
_COMMENT = re.compile(r"^\s*[;#]")
_LENGTH = re.compile(r"^\s*(\d+)\s+[Pp]oints?\s+[Mm]atch")
_GAME = re.compile(r"^\s*Game\s+(\d+)\s*$")
_LAST_SCORE = re.compile(r"\s*(-?\d{1,9})\s*")
_FIRST_SCORE = re.compile(r"\s*(-?\d{1,9})\s+")
_NUMBER = re.compile(r"^\s*(\d+)\)")
_ROLL = re.compile(r"^([1-6])([1-6]):\s*(.*)$")
_WINS = re.compile(r"^wins?\s+(\d{1,9})\s+points?\b", re.IGNORECASE)
_DOUBLE = re.compile(r"^(?:doubles?|beavers?|raccoons?)\b(?:\s*=>\s*(\d{1,9}))?", re.IGNORECASE)
_POINT_NAMES = {"bar": BAR, "b": BAR, "off": OFF, "o": OFF}


# -- writing ---------------------------------------------------------------------------------


def _steps(roll: Roll) -> str:
    """A roll's play as GNU Backgammon writes it for people (`24/18*/13 6/5`, `6/2(2)`, `bar/22`,
    `6/off`), which its `.mat` import reads as it reads its own one-die-a-step text."""
    return play_text(roll.steps)


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
    lines += [f"; {write_tag(name, value)}" for name, value in tags_of(game)]
    length = 0 if game.cube else 1  # with the cube in play, a money game: the cube is not dead
    lines += ["", f" {length} point match", "", " Game 1", f" {f'{game.names[0]} : 0':<31}{game.names[1]} : 0"]
    row = ""  # the line being written: a number and the left column, waiting for the right
    number = 0
    for action in game.actions:
        if isinstance(action, Win):
            text = f"Wins {action.points} point{'s' if action.points != 1 else ''}"
            if row and action.player == 1:  # beside the left column's last action, as gnubg writes it
                lines.append(row + text)
            else:
                if row:
                    lines.append(row.rstrip())
                lines.append(("      " if action.player == 0 else " " * 34) + text)
            row = ""
            continue
        if isinstance(action, Cube):
            text = {"double": f" Doubles => {action.value}", "take": " Takes", "drop": " Drops"}[action.action]
        else:
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


def _score(line: str) -> tuple[str, int, str, int] | None:
    """The names and scores of a score line, `NAME : SCORE   NAME : SCORE` (None: it is not one).
    The first name ends at the first colon a score and a space follow, the second at the last colon."""
    left, colon, last = line.rpartition(":")
    second = _LAST_SCORE.fullmatch(last)
    if not colon or second is None:
        return None
    at = left.find(":")
    while at >= 0:
        if (first := _FIRST_SCORE.match(left, at + 1)) is not None:
            return left[:at].strip(), int(first.group(1)), left[first.end() :].strip(), int(second.group(1))
        at = left.find(":", at + 1)
    return None


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
    if len(text) <= 2 and text.isascii() and text.isdigit() and 0 <= int(text) <= BAR:
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
    return recorded_at(tags.get("EventDate", ""), tags.get("EventTime", ""))


def read_mat(text: str) -> list[ImportedMatch]:
    """The matches of a .mat text, one a game, each judged by the engine (see `formats.gnubg`).

    Raises:
        FormatError: the text is not a .mat, or a game breaks the rules; the message names the line.
    """
    tags: dict[str, str] = {}
    games: list[tuple[int, list[tuple[int, str]]]] = []  # (line of "Game N", [(line number, line)])
    length_at = 0
    for number, line in lines_of(text, FORMAT):
        if games:
            if _GAME.match(line):
                at_most(len(games) + 1, MAX_GAMES, FORMAT, f"line {number}", "games")
                games.append((number, []))
            elif line.strip():
                at_most(len(games[-1][1]) + 1, MAX_TURNS, FORMAT, f"line {number}", "lines in one game")
                games[-1][1].append((number, line))
        elif _COMMENT.match(line):
            tags.update(read_tags(line))
        elif _LENGTH.match(line):
            length_at = number
        elif _GAME.match(line) and length_at:
            games.append((number, []))
    if not length_at:
        raise FormatError(FORMAT, "line 1: not a .mat file (no 'N point match' line)")
    if not games:
        raise FormatError(FORMAT, f"line {length_at}: the match has no games ('Game 1' lines)")
    at_us = _date(tags)
    series_id = str(derived_id((at_us or 0) // 1000, match_key(FORMAT, text, -1))) if len(games) > 1 else None
    matches = []
    for index, (start, body) in enumerate(games):
        if not body:
            raise FormatError(FORMAT, f"line {start}: the game has no score line")
        score_at, score_line = body[0]
        score = _score(score_line)
        if score is None:
            raise FormatError(FORMAT, f"line {score_at}: not a score line 'NAME : SCORE   NAME : SCORE'")
        game = GameRecord(
            names=(score[0], score[2]),
            at_us=at_us,
            series=Series(series_id, index + 1, len(games)) if series_id else None,
            where=f"line {start} (game {index + 1})",
        )
        apply_tags(game, tags, FORMAT, f"line {length_at}")
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
