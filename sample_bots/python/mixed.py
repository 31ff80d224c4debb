#!/usr/bin/env python3
"""mixed: a mixed strategy of three simple ones, drawn afresh every round.

40% beat the opponent's last visible move, 30% beat its most frequent visible
move, 30% uniform random. Each part alone is easy prey; mixed, every predictor
is right only part of the time, so a learner must weigh evidence rather than
trust the last match it found.
"""

import chaosbot


class Mixed(chaosbot.Bot):
    name = "mixed"

    def __init__(self, hello):
        super().__init__(hello)
        self.counts = dict.fromkeys(self.moves, 0)

    def move(self, turn):
        rng = self.rng
        seen = turn.opponent_last_visible
        if seen in self.counts:
            self.counts[seen] += 1
        roll = rng.random()
        if seen in self.counts and roll < 0.4:
            return self.answer(seen)
        if seen in self.counts and roll < 0.7:
            top = max(self.counts.values())
            favourite = rng.choice([m for m in self.moves if self.counts[m] == top])
            return self.answer(favourite, self.counts)
        return rng.choice(self.moves)


if __name__ == "__main__":
    chaosbot.run(Mixed)
