#!/usr/bin/env python3
"""drifter: a random distribution that drifts slowly.

Each move has a weight; every round every weight takes a small random step (a
random walk on the log scale, kept within a factor of 20 of each other), so
the favourite changes over a few hundred rounds. Long windows average the
drift away; only a learner that forgets at the right speed exploits it.
"""

import math

import chaosbot

STEP = 0.08  # standard deviation of a log-weight's step per round
SPREAD = math.log(20.0)  # largest gap between two log-weights


class Drifter(chaosbot.Bot):
    name = "drifter"

    def __init__(self, hello):
        super().__init__(hello)
        self.logw = [self.rng.uniform(-1.0, 1.0) for _ in self.moves]

    def move(self, turn):
        rng = self.rng
        low = max(self.logw) - SPREAD
        self.logw = [max(low, x + rng.gauss(0.0, STEP)) for x in self.logw]
        weights = [math.exp(x) for x in self.logw]
        return rng.choices(self.moves, weights)[0]


if __name__ == "__main__":
    chaosbot.run(Drifter)
