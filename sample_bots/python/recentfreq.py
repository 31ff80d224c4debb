#!/usr/bin/env python3
"""recentfreq: beats the opponent's most frequent visible move of the last 20 rounds.

A short-memory frequency counter: it follows a change of favourite within a
few rounds, and is itself easy to predict from the opponent's recent moves.
Ties go to the most recent of the tied moves.
"""

import chaosbot

WINDOW = 20


class RecentFrequency(chaosbot.Bot):
    name = "recentfreq"

    def move(self, turn):
        recent = [m for m in self.their_moves[-WINDOW:] if m in self.moves]
        if not recent:
            return self.rng.choice(self.moves)
        counts = dict.fromkeys(self.moves, 0)
        for m in recent:
            counts[m] += 1
        top = max(counts.values())
        favourite = next(m for m in reversed(recent) if counts[m] == top)
        return self.answer(favourite, counts)


if __name__ == "__main__":
    chaosbot.run(RecentFrequency)
