#!/usr/bin/env python3
"""switcher: changes its whole strategy every 100 to 400 rounds.

The strategies are simple ones from the classic competitions: a favourite move
played 80% of the time, the moves in order forwards or backwards, beat the
opponent's last move, copy it, and uniform random. Which one and for how long
are drawn from the seed. A learner that never forgets is left behind at every
switch; one that only looks at the last few rounds cannot use the long spells.
"""

import chaosbot

STYLES = ("favourite", "forward", "backward", "beatlast", "copy", "random")


class Switcher(chaosbot.Bot):
    name = "switcher"

    def __init__(self, hello):
        super().__init__(hello)
        self.until = 0
        self.style = "random"
        self.favourite = self.moves[0]

    def move(self, turn):
        rng, moves = self.rng, self.moves
        if turn.round > self.until:
            self.until = turn.round + rng.randint(100, 400)
            self.style = rng.choice(STYLES)
            self.favourite = rng.choice(moves)
        seen, mine = turn.opponent_last_visible, turn.self_last_real
        style = self.style
        if style == "favourite":
            return self.favourite if rng.random() < 0.8 else rng.choice(moves)
        if style in ("forward", "backward") and mine in moves:
            step = 1 if style == "forward" else -1
            return moves[(moves.index(mine) + step) % len(moves)]
        if style == "beatlast" and seen in moves:
            return self.answer(seen)
        if style == "copy" and seen in moves:
            return seen
        return rng.choice(moves)


if __name__ == "__main__":
    chaosbot.run(Switcher)
