"""A slow, obviously-correct backgammon move generator for checking the engine against.

It works in board coordinates (pygammon's indexing), tries every order of the dice and every
checker, and applies the rules as a player reads them, with no pruning and no caching.
"""

from __future__ import annotations

from itertools import permutations

Position = tuple[tuple[int, ...], tuple[int, int], tuple[int, int]]


def single_moves(position: Position, side: int, value: int, rules: str) -> list[tuple[int | None, Position]]:
    """Every (source, resulting position) of moving one checker `value` pips."""
    points, bar, off = position
    sign = 1 if side == 0 else -1
    step = -1 if side == 0 else 1

    def mine(p: int) -> int:
        return points[p] * sign

    def moved(source: int | None, dest: int | None) -> Position:
        new_points, new_bar, new_off = list(points), list(bar), list(off)
        if source is None:
            new_bar[side] -= 1
        else:
            new_points[source] -= sign
        if dest is None:
            new_off[side] += 1
        else:
            if new_points[dest] == -sign:  # hit a blot
                new_points[dest] = 0
                new_bar[1 - side] += 1
            new_points[dest] += sign
        return tuple(new_points), (new_bar[0], new_bar[1]), (new_off[0], new_off[1])

    if bar[side]:
        entry = 24 - value if side == 0 else value - 1
        return [(None, moved(None, entry))] if mine(entry) >= -1 else []
    home = set(range(0, 6)) if side == 0 else set(range(18, 24))
    all_home = all(mine(p) <= 0 for p in range(24) if p not in home)
    found = []
    for source in range(24):
        if mine(source) <= 0:
            continue
        dest = source + step * value
        if 0 <= dest < 24:
            if mine(dest) >= -1:
                found.append((source, moved(source, dest)))
            continue
        if not all_home:
            continue
        exact = dest == (-1 if side == 0 else 24)
        farther = range(source + 1, 6) if side == 0 else range(18, source)
        if rules == "pygammon" or exact or not any(mine(q) > 0 for q in farther):
            found.append((source, moved(source, None)))
    return found


def all_plays(position: Position, side: int, dice: tuple[int, ...], rules: str):
    """(max dice playable, {final positions}, {(value, source) first moves}) of a turn."""
    sequences: list[tuple[tuple[tuple[int, int | None], ...], Position]] = []

    def extend(current: Position, order: tuple[int, ...], done: tuple[tuple[int, int | None], ...]) -> None:
        sequences.append((done, current))
        if not order:
            return
        value = order[0]
        for source, after in single_moves(current, side, value, rules):
            extend(after, order[1:], (*done, (value, source)))

    for order in set(permutations(dice)):
        extend(position, order, ())
    best = max(len(done) for done, _ in sequences)
    chosen = [(done, final) for done, final in sequences if len(done) == best]
    if rules == "standard" and best == 1 and len(dice) == 2 and dice[0] != dice[1]:
        larger = max(dice)
        if any(done[0][0] == larger for done, _ in chosen):
            chosen = [(done, final) for done, final in chosen if done[0][0] == larger]
    if best == 0:
        return 0, set(), set()
    return best, {final for _, final in chosen}, {done[0] for done, _ in chosen}


def plays_of_length(position: Position, side: int, dice: tuple[int, ...], rules: str, length: int):
    """({final positions}, {(value, source) first moves}) of every way to play exactly `length` of
    `dice` (what a turn asks for when pygammon's count is short of the most that can be played)."""
    finals: set[Position] = set()
    firsts: set[tuple[int, int | None]] = set()

    def extend(current: Position, order: tuple[int, ...], done: tuple[tuple[int, int | None], ...]) -> None:
        if len(done) == length:
            finals.add(current)
            firsts.add(done[0])
            return
        if order:
            for source, after in single_moves(current, side, order[0], rules):
                extend(after, order[1:], (*done, (order[0], source)))

    for order in set(permutations(dice)):
        extend(position, order, ())
    return finals, firsts
