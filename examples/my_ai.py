"""A Porrinha player of your own, as the README plays it:

    matchlog play porrinha -p random -p reasoner -p alice=examples/my_ai.py:Player --games 20 --seed 1

It imports nothing from matchlog: each call gets `table`, the seed's `core/util.h` queries over what
this seat may see (docs/guides/players.md lists them). This one learns how much each opponent holds
out, and guesses its own hand plus what the others are likely to show.
"""

import random


class Player:
    """Shows a random hand; guesses its own hand plus each opponent's usual share of its chopsticks."""

    def __init__(self, seed=None):
        self.rng = random.Random(seed)
        self.shown = {}  # seat -> (chopsticks shown, chopsticks held) over the rounds seen

    def hand(self, table):
        return self.rng.randint(0, table.chopsticks(table.index))

    def guess(self, table):
        expected = table.my_hand
        for seat in range(table.player_count):
            if seat != table.index:
                shown, held = self.shown.get(seat, (1, 2))  # before any round: half of what it holds
                expected += table.chopsticks(seat) * shown / held
        # The nearest guess nobody has said yet.
        for distance in range(table.chopstick_count + 1):
            for guess in (round(expected) - distance, round(expected) + distance):
                if table.valid_guess(guess):
                    return guess
        return 0

    def end_round(self, table):
        for seat, hand in enumerate(table.hand()):
            if seat != table.index and hand >= 0 and table.chopsticks(seat) > 0:
                shown, held = self.shown.get(seat, (0, 0))
                self.shown[seat] = (shown + hand, held + table.chopsticks(seat))
