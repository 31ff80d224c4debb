"""A tiny helper for writing Chaos League (and classic RoShamBo) bots in Python.

Copy this one file next to your bot; it needs only the standard library.

    import chaosbot

    class Bot(chaosbot.Bot):
        def move(self, turn):
            return self.rng.choice(self.moves)   # or chaosbot.Shadow("rock", shown="paper")

    chaosbot.run(Bot)

What a bot gets:
  self.seat, self.seed, self.params (rounds, tokens, moves), self.moves, self.rounds
  self.rng          random.Random seeded from the referee's per-bot seed
  self.my_moves     my real moves so far (None where I faulted)
  self.their_moves  what the opponent showed me so far (None where it faulted);
                    their_moves[i] belongs to round i + 1, like my_moves[i]
  self.tokens       my deception tokens left
  self.beats(a)     the moves that beat a;  self.beaten_by(a) the moves a beats

``move`` receives the turn as a ``Turn`` (round, opponent_last_visible,
self_last_real, opponent_deception_bucket) and returns a move name, or a
``Shadow(real, shown)`` to show the opponent ``shown`` instead (costs a token).
See protocol/README.md for the wire format this module speaks.
"""

from __future__ import annotations

import json
import random
import sys
from typing import NamedTuple

MOVES5 = ("rock", "paper", "scissors", "lizard", "spock")
DEFEATS = {
    "rock": ("scissors", "lizard"),
    "paper": ("rock", "spock"),
    "scissors": ("paper", "lizard"),
    "lizard": ("paper", "spock"),
    "spock": ("scissors", "rock"),
}


class Turn(NamedTuple):
    round: int
    opponent_last_visible: str | None
    self_last_real: str | None
    opponent_deception_bucket: str


class Shadow(NamedTuple):
    """Play ``real``; show the opponent ``shown`` (spends one token if any are left)."""

    real: str
    shown: str


class Bot:
    name = None  # defaults to the class name

    def __init__(self, hello: dict) -> None:
        self.seat = hello["seat"]
        self.seed = hello["seed"]
        self.params = hello["params"]
        self.moves = tuple(self.params["moves"])
        self.rounds = self.params["rounds"]
        self.tokens = self.params.get("tokens", 0)
        self.rng = random.Random(self.seed)
        self.my_moves: list[str | None] = []
        self.their_moves: list[str | None] = []

    def beats(self, move: str) -> list[str]:
        """Moves of this game that defeat ``move``."""
        return [m for m in self.moves if move in DEFEATS[m]]

    def beaten_by(self, move: str) -> list[str]:
        """Moves of this game that ``move`` defeats."""
        return [m for m in DEFEATS[move] if m in self.moves]

    def move(self, turn: Turn) -> str | Shadow:
        raise NotImplementedError

    def end(self, message: dict) -> None:
        """Called with the referee's end message before the bot exits."""


def run(bot_class: type[Bot]) -> None:
    """Speak the protocol on stdin/stdout until the referee says end."""
    stdin = sys.stdin
    out = sys.stdout
    hello = json.loads(stdin.readline())
    bot = bot_class(hello)
    out.write(json.dumps({"name": bot.name or bot_class.__name__}) + "\n")
    out.flush()
    for line in stdin:
        msg = json.loads(line)
        if msg.get("type") != "turn":
            bot.end(msg)
            return
        turn = Turn(
            msg["round"],
            msg["opponent_last_visible"],
            msg["self_last_real"],
            msg["opponent_deception_bucket"],
        )
        if turn.round > 1:
            bot.my_moves.append(turn.self_last_real)
            bot.their_moves.append(turn.opponent_last_visible)
        choice = bot.move(turn)
        if isinstance(choice, Shadow):
            reply = {
                "round": turn.round,
                "real_move": choice.real,
                "shadow_request": True,
                "shadow_move": choice.shown,
            }
            if bot.tokens > 0:
                bot.tokens -= 1
        else:
            reply = {"round": turn.round, "real_move": choice}
        out.write(json.dumps(reply) + "\n")
        out.flush()
