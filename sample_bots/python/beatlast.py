#!/usr/bin/env python3
"""beatlast: plays a move that beats the opponent's last visible move.

The simplest reactive strategy of the classic competitions: it assumes the
opponent repeats itself. A bot that models its reply to what it was shown beats
it every round; a shadow steers it exactly.
"""

import chaosbot


class BeatLast(chaosbot.Bot):
    name = "beatlast"

    def move(self, turn):
        seen = turn.opponent_last_visible
        if seen not in self.moves:
            return self.rng.choice(self.moves)
        return self.answer(seen)


if __name__ == "__main__":
    chaosbot.run(BeatLast)
