#!/usr/bin/env python3
"""wsls: win-stay, lose-shift.

After a win it plays the same move again; after a draw or a loss it moves on to
the next move in the game's order. The result is judged against the opponent's
visible move (all it can see). Deterministic given the history, so a sequence
model that looks at both players' moves predicts it exactly.
"""

import chaosbot


class WinStayLoseShift(chaosbot.Bot):
    name = "wsls"

    def move(self, turn):
        mine, seen = turn.self_last_real, turn.opponent_last_visible
        if mine not in self.moves:
            return self.rng.choice(self.moves)
        if seen in self.moves and chaosbot.outcome(mine, seen) > 0:
            return mine
        return self.moves[(self.moves.index(mine) + 1) % len(self.moves)]


if __name__ == "__main__":
    chaosbot.run(WinStayLoseShift)
