#!/usr/bin/env python3
"""copycat: plays the opponent's last visible move back at it.

A mirror: its moves are the opponent's moves one round late, so it loses to
anything that notices it is being copied and is otherwise as random as the
opponent.
"""

import chaosbot


class Copycat(chaosbot.Bot):
    name = "copycat"

    def move(self, turn):
        seen = turn.opponent_last_visible
        if seen not in self.moves:
            return self.rng.choice(self.moves)
        return seen


if __name__ == "__main__":
    chaosbot.run(Copycat)
