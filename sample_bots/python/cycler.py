#!/usr/bin/env python3
"""cycler: plays the game's moves in order, round after round.

Every move is equally frequent, so frequency counting learns nothing from it,
while any sequence model (Markov, history matching) locks onto it quickly.
"""

import chaosbot


class Cycler(chaosbot.Bot):
    name = "cycler"

    def move(self, turn):
        return self.moves[(turn.round - 1) % len(self.moves)]


if __name__ == "__main__":
    chaosbot.run(Cycler)
