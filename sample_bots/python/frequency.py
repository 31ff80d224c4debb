#!/usr/bin/env python3
"""frequency: counters the opponent's most frequent visible move.

It counts what the opponent has shown so far and plays a move that beats the
most common one. In RPSLS two moves beat it; it takes the one that also does
better against the rest of the counted distribution. Easy prey for shadows:
it believes everything it sees.
"""

import chaosbot


class Frequency(chaosbot.Bot):
    name = "frequency"

    def __init__(self, hello):
        super().__init__(hello)
        self.counts = dict.fromkeys(self.moves, 0)

    def move(self, turn):
        seen = turn.opponent_last_visible
        if seen in self.counts:
            self.counts[seen] += 1
        top = max(self.counts.values())
        if top == 0:
            return self.rng.choice(self.moves)
        favourites = [m for m in self.moves if self.counts[m] == top]
        return self.answer(self.rng.choice(favourites), self.counts)


if __name__ == "__main__":
    chaosbot.run(Frequency)
