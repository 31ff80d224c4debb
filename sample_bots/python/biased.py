#!/usr/bin/env python3
"""biased: a fixed, lopsided random distribution over the moves.

The seed picks a favourite (played half the time) and a second choice (a
quarter); the rest share what is left. No sequence to find, only a frequency
to exploit, and only in expectation.
"""

import chaosbot


class Biased(chaosbot.Bot):
    name = "biased"

    def __init__(self, hello):
        super().__init__(hello)
        order = list(self.moves)
        self.rng.shuffle(order)
        rest = 0.25 / (len(order) - 2)
        self.order = order
        self.weights = [0.5, 0.25] + [rest] * (len(order) - 2)

    def move(self, turn):
        return self.rng.choices(self.order, self.weights)[0]


if __name__ == "__main__":
    chaosbot.run(Biased)
