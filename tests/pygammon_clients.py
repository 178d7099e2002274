"""Clients written against pygammon's protocol, used by the protocol and differential tests."""

from __future__ import annotations

import random


class RandomClient:
    """A pygammon client that tries random moves of its own checkers with unplayed dice, and now
    and then asks to undo. It learns the board only from the outputs, as any client must."""

    def __init__(self, seed: int, protocol, undo_rate: float = 0.05) -> None:
        self.rng = random.Random(seed)
        self.p = protocol  # the module: pygammon, or matchlog.referee.backgammon
        self.undo_rate = undo_rate
        self.board: list[tuple[int | None, int]] = []
        self.hit = [0, 0]
        self.dice: tuple[int, ...] = ()
        self.outputs: list[tuple] = []

    def send_output(self, output_type, data, side=None) -> None:
        p = self.p
        self.outputs.append(normalise(output_type, data, side))
        if output_type is p.OutputType.GAME_STATE:
            self.board = [(None if point.side is None else int(point.side), point.count) for point in data.board]
            self.hit = [data.first_hit, data.second_hit]
        elif output_type in (p.OutputType.MOVE_ROLLS, p.OutputType.TURN_ROLLS):
            a, b = data
            self.dice = (a, a, a, a) if a == b else (a, b)

    def receive_input(self, side):
        p = self.p
        if self.rng.random() < self.undo_rate:
            return p.InputType.UNDO, None
        index = self.rng.randrange(len(self.dice))
        if self.hit[int(side)]:
            return p.InputType.MOVE, (index, None)
        own = [point for point, (owner, _) in enumerate(self.board) if owner == int(side)]
        return p.InputType.MOVE, (index, self.rng.choice(own))


def normalise(output_type, data, side) -> tuple:
    """An output as plain values, comparable between pygammon and matchlog."""
    if hasattr(data, "board"):
        board = tuple((None if point.side is None else int(point.side), point.count) for point in data.board)
        data = (board, data.first_hit, data.first_borne, data.second_hit, data.second_borne)
    elif hasattr(data, "name"):  # an enum: InvalidMoveCode or Side
        data = (type(data).__name__, data.name)
    elif isinstance(data, tuple):
        data = tuple(data)
    return (output_type.name, data, None if side is None else int(side))
