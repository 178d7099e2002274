"""GNU Backgammon's position ID: a whole board in 14 characters, as gnubg prints and reads it, and
the `--position` text a backgammon match can start from (a position ID, and the dice if rolled).

The key is 80 bits: for each of the two players, each of its points from its ace point (1) to its
24 point and then its bar, as many 1s as it has checkers there followed by a 0; then 0s up to 80
bits. The bits fill 10 bytes from the least significant bit of the first byte up, and the ID is
those bytes in Base64 without its padding (the gnubg manual, "A technical description of the
Position ID"). The starting position is 4HPwATDgc/ABMA.

Which player comes first: the manual says the player on roll, but gnubg itself (1.07, the Debian
package, checked by tests/test_backgammon_id.py) writes and reads the opponent first and the
player on roll second: its board keeps the player on roll in `anBoard[1]`. matchlog follows gnubg,
so an ID copied from gnubg starts the match with the same player on roll.

On matchlog's board (pygammon's indexing) the first side's point n is index n - 1 and the second
side's point n is index 24 - n; `board_of` and `id_of` turn one into the other.
"""

from __future__ import annotations

import base64
import binascii
import re

import msgspec

from matchlog.events import UsageError

__all__ = ["CHECKERS", "BackgammonPosition", "board_of", "decode", "encode", "id_of", "parse_position"]

#: Checkers each player has.
CHECKERS = 15
#: Each player's checkers on its own points 1..24, then on its bar (25 counts).
Checkers = tuple[int, ...]

_KEY_BITS = 80
_ID = re.compile(r"[A-Za-z0-9+/]{14}")
_DICE = re.compile(r"([1-6])-?([1-6])")
_TURN = re.compile(r"turn=([01])")


def _refuse(message: str) -> UsageError:
    return UsageError(message, code="usage.position")


def decode(position_id: str) -> tuple[Checkers, Checkers]:
    """The checkers of the player on roll and of its opponent, each on its own points 1..24 and its bar.

    Raises:
        UsageError: (usage.position) not 14 characters of Base64, or not a position: a player with
            more than 15 checkers, a point held by both players, or bits left over.
    """
    if not _ID.fullmatch(position_id):
        raise _refuse(f"{position_id[:40]!r} is not a GNU Backgammon position ID (14 characters of Base64)")
    try:
        key = base64.b64decode(position_id + "==", validate=True)
    except (binascii.Error, ValueError):  # pragma: no cover - the pattern above admits only valid Base64
        raise _refuse(f"{position_id!r} is not Base64") from None
    bits = [(key[index // 8] >> (index % 8)) & 1 for index in range(_KEY_BITS)]
    players: list[list[int]] = [[], []]
    at = 0
    for player in players:
        while len(player) < 25:
            count = 0
            while at < _KEY_BITS and bits[at]:
                count += 1
                at += 1
            if at == _KEY_BITS:
                raise _refuse(f"{position_id} ends before both players' 25 places are described")
            at += 1  # the 0 that closes this place
            player.append(count)
    if any(bits[at:]) or base64.b64encode(key).decode()[:14] != position_id:
        raise _refuse(f"{position_id} has bits set after the position it describes")
    opponent, on_roll = (tuple(player) for player in players)  # gnubg's order: see the module docstring
    for who, checkers in (("the player on roll", on_roll), ("its opponent", opponent)):
        if sum(checkers) > CHECKERS:
            raise _refuse(f"{position_id} gives {who} {sum(checkers)} checkers; a player has {CHECKERS}")
    for point in range(1, 25):
        if on_roll[point - 1] and opponent[24 - point]:
            raise _refuse(f"{position_id} puts both players' checkers on the roller's point {point}")
    return on_roll, opponent


def encode(on_roll: Checkers, opponent: Checkers) -> str:
    """The position ID of the given checkers (each player's points 1..24, then its bar)."""
    bits: list[int] = []
    for checkers in (opponent, on_roll):  # gnubg's order: see the module docstring
        for count in checkers:
            bits.extend([1] * count + [0])
    if len(bits) > _KEY_BITS:
        raise ValueError("more checkers than a position ID can hold")
    bits.extend([0] * (_KEY_BITS - len(bits)))
    key = bytes(sum(bits[byte * 8 + bit] << bit for bit in range(8)) for byte in range(10))
    return base64.b64encode(key).decode()[:14]


def _own(points: tuple[int, ...], bar: tuple[int, int], side: int) -> Checkers:
    """`side`'s checkers on its own points 1..24 and its bar, from matchlog's board."""
    if side == 0:
        return (*(max(points[n - 1], 0) for n in range(1, 25)), bar[0])
    return (*(max(-points[24 - n], 0) for n in range(1, 25)), bar[1])


def id_of(points: tuple[int, ...], bar: tuple[int, int], on_roll: int) -> str:
    """The position ID of matchlog's board (+n the first side's checkers, -n the second's) with
    side `on_roll` (0 or 1) on roll."""
    return encode(_own(points, bar, on_roll), _own(points, bar, 1 - on_roll))


def board_of(position_id: str, on_roll: int) -> tuple[tuple[int, ...], tuple[int, int], tuple[int, int]]:
    """Matchlog's board (points, bar, borne off) for a position ID with side `on_roll` on roll.

    Raises:
        UsageError: (usage.position) not a position ID.
    """
    mine, theirs = decode(position_id)
    sides = (mine, theirs) if on_roll == 0 else (theirs, mine)
    points = [0] * 24
    for n in range(1, 25):
        points[n - 1] += sides[0][n - 1]
        points[24 - n] -= sides[1][n - 1]
    bar = (sides[0][24], sides[1][24])
    off = (CHECKERS - sum(sides[0]), CHECKERS - sum(sides[1]))
    return tuple(points), bar, off


class BackgammonPosition(msgspec.Struct, frozen=True):
    """A described position: the board, the side on roll, and its dice if they are rolled."""

    points: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]
    turn: int
    dice: tuple[int, int] | None


def parse_position(text: str) -> BackgammonPosition:
    """The position a `--position` text describes: a GNU Backgammon position ID, then optionally
    the dice already rolled (`52` or `5-2`) and the side on roll (`turn=1`; the first side, 0, by
    default), separated by spaces: `4HPwATDgc/ABMA 52 turn=1`.

    Raises:
        UsageError: (usage.position) a word that is none of these, or a position that is over.
    """
    words = text.split()
    if not words:
        raise _refuse("a backgammon position is a GNU Backgammon position ID, e.g. 4HPwATDgc/ABMA")
    position_id, rest = words[0], words[1:]
    dice: tuple[int, int] | None = None
    turn: int | None = None
    for word in rest:
        if (rolled := _DICE.fullmatch(word)) and dice is None:
            dice = (int(rolled[1]), int(rolled[2]))
        elif (side := _TURN.fullmatch(word)) and turn is None:
            turn = int(side[1])
        else:
            raise _refuse(
                f"{word[:40]!r} in the position is not the dice (two of 1-6, e.g. 52) or the side on roll (turn=0|1)"
            )
    turn = turn or 0
    points, bar, off = board_of(position_id, turn)
    for side in (0, 1):
        if off[side] == CHECKERS:
            raise _refuse(f"in {position_id} side {side} has borne off every checker: the game is over")
    return BackgammonPosition(points=points, bar=bar, off=off, turn=turn, dice=dice)
