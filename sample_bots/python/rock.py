#!/usr/bin/env python3
"""rock: "Good Ole Rock", the same move every round.

The simplest exploitable opponent: any bot that learns anything should beat it
by nearly the whole match length.
"""

import chaosbot


class Rock(chaosbot.Bot):
    name = "rock"

    def move(self, turn):
        return "rock"


if __name__ == "__main__":
    chaosbot.run(Rock)
