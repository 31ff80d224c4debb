#!/usr/bin/env python3
"""random_bot: a uniformly random move every round, seeded from the hello seed.

Nothing can beat it in expectation and it can beat nothing: the yardstick every
other bot is measured against. The seed makes a re-run of a match identical.
"""

import chaosbot


class RandomBot(chaosbot.Bot):
    name = "random"

    def move(self, turn):
        return self.rng.choice(self.moves)


if __name__ == "__main__":
    chaosbot.run(RandomBot)
