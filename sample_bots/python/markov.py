#!/usr/bin/env python3
"""markov: a first-order Markov model of the opponent's visible moves.

It counts which move the opponent showed after each move it showed, predicts
the most likely successor of the last visible move and plays a move that beats
it. Counts decay slowly so a change of strategy is noticed within a few dozen
rounds. With no data for the current state it plays at random.
"""

import chaosbot

DECAY = 0.98  # per observation of a state: old transitions fade, new ones count


class Markov(chaosbot.Bot):
    name = "markov"

    def __init__(self, hello):
        super().__init__(hello)
        self.table = {a: dict.fromkeys(self.moves, 0.0) for a in self.moves}
        self.prev = None  # the opponent's visible move before the last one

    def move(self, turn):
        seen = turn.opponent_last_visible
        if seen in self.table and self.prev in self.table:
            row = self.table[self.prev]
            for m in row:
                row[m] *= DECAY
            row[seen] += 1.0
        self.prev = seen
        row = self.table.get(seen)
        if not row or max(row.values()) == 0.0:
            return self.rng.choice(self.moves)
        top = max(row.values())
        likely = [m for m in self.moves if row[m] == top]
        return self.answer(self.rng.choice(likely), row)


if __name__ == "__main__":
    chaosbot.run(Markov)
