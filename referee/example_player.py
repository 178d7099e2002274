"""An example of a user's Porrinha player, loaded by path like any user's file:

    matchlog play porrinha -p random -p cautious=path/to/example_player.py:CautiousPlayer

It imports nothing from matchlog: the referee passes it a table with the seed's queries.
"""

import random


class CautiousPlayer:
    """Holds a random hand; guesses its own hand plus half of everyone else's chopsticks."""

    def __init__(self, seed=None):
        self.rng = random.Random(seed)
        self.rounds = 0

    def begin_game(self, table):
        self.rounds = 0

    def hand(self, table):
        return self.rng.randint(0, table.chopsticks(table.index))

    def guess(self, table):
        others = table.chopstick_count - table.chopsticks(table.index)
        target = table.my_hand + others // 2
        # The nearest guess nobody has said yet.
        for distance in range(table.chopstick_count + 1):
            for guess in (target - distance, target + distance):
                if table.valid_guess(guess):
                    return guess
        raise RuntimeError("no valid guess left")  # cannot happen: there are more totals than players

    def end_round(self, table):
        self.rounds += 1

    def end_game(self, table):
        pass
