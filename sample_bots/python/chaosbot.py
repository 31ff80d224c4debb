"""A tiny helper for writing Chaos League (and classic RoShamBo) bots in Python.

Copy this one file next to your bot; it needs only the standard library.

    import chaosbot

    class Bot(chaosbot.Bot):
        def move(self, turn):
            return self.rng.choice(self.moves)   # or chaosbot.Shadow("rock", shown="paper")

    chaosbot.run(Bot)

What a bot gets:
  self.seat, self.seed, self.params (rounds, tokens, moves), self.moves, self.rounds
  self.game         "chaos" or "roshambo"
  self.rng          random.Random seeded from the referee's per-bot seed
  self.my_moves     my real moves so far (None where I faulted)
  self.their_moves  what the opponent showed me so far (None where it faulted);
                    their_moves[i] belongs to round i + 1, like my_moves[i]
  self.buckets      the opponent's deception bucket at the start of each round so far
                    (buckets[i] belongs to round i + 1; the last one is this round's)
  self.tokens       my deception tokens left
  self.beats(a)     the moves that beat a;  self.beaten_by(a) the moves a beats
  self.answer(a)    a move that beats a (of two in RPSLS, the better one against
                    optional move weights, else a seeded coin flip)

``move`` receives the turn as a ``Turn`` (round, opponent_last_visible,
self_last_real, opponent_deception_bucket) and returns a move name, or a
``Shadow(real, shown)`` to show the opponent ``shown`` instead (costs a token).
See protocol/README.md for the wire format this module speaks.

Extras for strategy code: ``cyclic_order(moves)`` arranges the moves on a circle
where every move beats the ones just before it (handy for "rotations"),
``outcome(a, b)`` scores a against b, ``bucket_dropped(before, after)`` says
whether the opponent's bucket fell, and ``play(BotA, BotB, ...)`` runs a whole
match in-process (no pipes) for tests and tuning.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from typing import NamedTuple

MOVES5 = ("rock", "paper", "scissors", "lizard", "spock")
DEFEATS = {
    "rock": ("scissors", "lizard"),
    "paper": ("rock", "spock"),
    "scissors": ("paper", "lizard"),
    "lizard": ("paper", "spock"),
    "spock": ("scissors", "rock"),
}
# The opponent's remaining tokens, coarsely; a higher level means more tokens.
BUCKET_LEVEL = {"EMPTY": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}


class Turn(NamedTuple):
    round: int
    opponent_last_visible: str | None
    self_last_real: str | None
    opponent_deception_bucket: str


class Shadow(NamedTuple):
    """Play ``real``; show the opponent ``shown`` (spends one token if any are left)."""

    real: str
    shown: str


def outcome(a: str, b: str) -> int:
    """+1 if move a beats move b, -1 if it loses, 0 for a draw."""
    if b in DEFEATS[a]:
        return 1
    if a in DEFEATS[b]:
        return -1
    return 0


def bucket_of(tokens: int) -> str:
    """The bucket an opponent with ``tokens`` tokens is shown as."""
    if tokens >= 40:
        return "HIGH"
    if tokens >= 20:
        return "MEDIUM"
    if tokens >= 1:
        return "LOW"
    return "EMPTY"


def bucket_dropped(before: str | None, after: str | None) -> bool:
    """True if the bucket fell between two turns: the round in between was a shadow."""
    if before is None or after is None:
        return False
    return BUCKET_LEVEL.get(after, 3) < BUCKET_LEVEL.get(before, 3)


def cyclic_order(moves: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Arrange the moves on a circle where move i beats moves i-1 .. i-(n-1)/2.

    Rock-paper-scissors is already such a circle; RPSLS becomes rock, spock,
    paper, lizard, scissors. In this order "the answer to x" is x+1 or x+2 and
    strategy rotations are just index offsets, which is what Iocaine relies on.
    """
    moves = list(moves)
    n = len(moves)
    order = [moves[0]]
    while len(order) < n:
        cur = order[-1]
        beaters = [m for m in moves if cur in DEFEATS[m] and m in moves]
        # The next move on the circle is the beater of ``cur`` that every other
        # beater of ``cur`` defeats (in RPSLS: spock, not paper, follows rock).
        nxt = [b for b in beaters if all(b in DEFEATS[o] for o in beaters if o != b)]
        if len(nxt) != 1 or nxt[0] in order:
            raise ValueError(f"moves {moves} do not form a balanced cycle")
        order.append(nxt[0])
    half = (n - 1) // 2
    for i, m in enumerate(order):
        for d in range(1, half + 1):
            if order[(i - d) % n] not in DEFEATS[m]:
                raise ValueError(f"moves {moves} do not form a balanced cycle")
    return tuple(order)


class Bot:
    name = None  # defaults to the class name

    def __init__(self, hello: dict) -> None:
        self.seat = hello["seat"]
        self.seed = hello["seed"]
        self.game = hello.get("game", "chaos")
        self.params = hello["params"]
        self.moves = tuple(self.params["moves"])
        self.rounds = self.params["rounds"]
        self.tokens = self.params.get("tokens", 0)
        self.rng = random.Random(self.seed)
        self.my_moves: list[str | None] = []
        self.their_moves: list[str | None] = []
        self.buckets: list[str] = []
        self._errors = 0

    def beats(self, move: str) -> list[str]:
        """Moves of this game that defeat ``move``."""
        return [m for m in self.moves if move in DEFEATS[m]]

    def beaten_by(self, move: str) -> list[str]:
        """Moves of this game that ``move`` defeats."""
        return [m for m in DEFEATS[move] if m in self.moves]

    def answer(self, predicted: str, weights: dict[str, float] | None = None) -> str:
        """A move that beats ``predicted``. In RPSLS two moves do; take the one
        that scores better against ``weights`` (move -> how likely), else at random."""
        options = self.beats(predicted)
        if len(options) > 1 and weights:
            score = {a: sum(w * outcome(a, b) for b, w in weights.items()) for a in options}
            top = max(score.values())
            options = [a for a in options if score[a] == top]
        return options[0] if len(options) == 1 else self.rng.choice(options)

    def move(self, turn: Turn) -> str | Shadow:
        raise NotImplementedError

    def end(self, message: dict) -> None:
        """Called with the referee's end message before the bot exits."""

    def handle_turn(self, msg: dict, strict: bool = False) -> dict:
        """Record a turn message, ask ``move`` and build the reply object.

        A bug in ``move`` must not cost the whole match (a crash disqualifies),
        so unless ``strict`` an exception or an invalid answer is logged to
        stderr and replaced by a random move.
        """
        turn = Turn(
            msg["round"],
            msg.get("opponent_last_visible"),
            msg.get("self_last_real"),
            msg.get("opponent_deception_bucket", "EMPTY"),
        )
        real, shown = self._play(turn, strict)
        reply: dict = {"round": turn.round, "real_move": real}
        if shown is not None:
            reply["shadow_request"] = True
            reply["shadow_move"] = shown
        return reply

    def _play(self, turn: Turn, strict: bool) -> tuple[str, str | None]:
        """``handle_turn`` without the message dicts: record ``turn``, ask ``move``
        and return the real move and the shown one (None: no shadow)."""
        if turn.round > 1:
            self.my_moves.append(turn.self_last_real)
            self.their_moves.append(turn.opponent_last_visible)
        self.buckets.append(turn.opponent_deception_bucket)
        try:
            choice = self.move(turn)
            if isinstance(choice, Shadow):
                real, shown = choice.real, choice.shown
            else:
                real, shown = choice, None
            if real not in self.moves or (shown is not None and shown not in self.moves):
                raise ValueError(f"move() returned {choice!r}, not a move of {self.moves}")
        except Exception:
            if strict:
                raise
            self._errors += 1
            if self._errors <= 5:
                import traceback  # only now: it is slow to import, and most bots never need it

                traceback.print_exc(file=sys.stderr)
            return self.rng.choice(self.moves), None
        if shown is not None and self.tokens > 0:
            self.tokens -= 1
        return real, shown


# How the referee writes every turn line (compact JSON, fields in this order);
# the round number follows. Lines of that shape are read without a JSON parser.
_TURN_HEAD = b'{"type":"turn","round":'
_new_tuple = tuple.__new__


def _turn_fields(msg: dict) -> tuple:
    """A turn message's fields after the round, as ``Turn`` holds them."""
    return (
        msg.get("opponent_last_visible"),
        msg.get("self_last_real"),
        msg.get("opponent_deception_bucket", "EMPTY"),
    )


def run(bot_class: type[Bot]) -> None:
    """Speak the protocol on stdin/stdout until the referee says end."""
    readline = sys.stdin.buffer.readline  # any line length; returns as soon as a line is in
    out = sys.stdout.buffer
    write, flush = out.write, out.flush
    line = readline()
    while line and not line.strip():
        line = readline()
    if not line:
        return
    hello = json.loads(line)
    bot = bot_class(hello)
    write(json.dumps({"name": bot.name or bot_class.__name__}).encode() + b"\n")
    flush()
    if type(bot).handle_turn is not Bot.handle_turn:
        # A bot that overrides handle_turn sees every turn as a message dict.
        _run_with_dicts(bot, readline, write, flush)
        return
    # A move costs what the bot's own thinking costs plus this loop. Parsing a
    # turn line with json and building a reply dict cost more than the pipes, so
    # both are cached: a turn line is its round number plus one of a few dozen
    # tails (the last moves and the bucket), each tail parsed once by json; a
    # reply is its round number plus one tail per (real, shown) pair.
    head_len = len(_TURN_HEAD)
    tails: dict[bytes, tuple] = {}
    replies: dict[tuple[str, str | None], bytes] = {}
    play = bot._play
    while True:
        line = readline()
        if not line:
            return
        if line.startswith(_TURN_HEAD):
            comma = line.find(b",", head_len)
            fields = tails.get(line[comma:])
            digits = line[head_len:comma]
            if fields is not None and digits.isdigit():
                rnd = int(digits)
                picked = play(_new_tuple(Turn, (rnd, *fields)), False)
                tail = replies.get(picked)
                if tail is None:
                    tail = replies[picked] = _reply_tail(*picked)
                write(b'{"round":%d%s' % (rnd, tail))
                flush()
                continue
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "turn":
            rnd = msg["round"]
            fields = _turn_fields(msg)
            tail = line[comma:] if line.startswith(_TURN_HEAD) else b""
            # A tail stands for these fields whatever the round number, unless it
            # repeats the round (JSON keeps the last of duplicate keys).
            # A newer referee's per-turn extra field would make every tail new: the
            # cache stops growing, and such lines are parsed by json.
            if (
                tail
                and digits.isdigit()
                and int(digits) == rnd
                and b'"round"' not in tail
                and len(tails) < 1024
            ):
                tails[tail] = fields
            picked = play(_new_tuple(Turn, (rnd, *fields)), False)
            write(b'{"round":%d%s' % (rnd, _reply_tail(*picked)))
            flush()
        elif kind == "end":
            bot.end(msg)
            return
        # Any other message type is from a newer referee; replying would be
        # unsolicited output, so it is ignored.


def _reply_tail(real: str, shown: str | None) -> bytes:
    """What a reply holds after its round number."""
    reply: dict = {"real_move": real}
    if shown is not None:
        reply["shadow_request"] = True
        reply["shadow_move"] = shown
    return b"," + json.dumps(reply, separators=(",", ":")).encode()[1:] + b"\n"


def _run_with_dicts(
    bot: Bot,
    readline: Callable[[], bytes],
    write: Callable[[bytes], object],
    flush: Callable[[], object],
) -> None:
    for line in iter(readline, b""):
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "turn":
            write(json.dumps(bot.handle_turn(msg)).encode() + b"\n")
            flush()
        elif kind == "end":
            bot.end(msg)
            return


def hello_message(
    game: str = "chaos", rounds: int = 1000, seat: int = 0, seed: int = 1, tokens: int | None = None
) -> dict:
    """A hello like the referee's, for in-process play and tests."""
    moves = list(MOVES5 if game == "chaos" else MOVES5[:3])
    if tokens is None:
        tokens = 50 if game == "chaos" else 0
    return {
        "type": "hello",
        "protocol": 1,
        "game": game,
        "params": {"rounds": rounds, "tokens": tokens, "moves": moves},
        "seat": seat,
        "seats": 2,
        "seed": seed,
        "time": {"handshake_ms": 10000, "move_ms": 1000, "bank_ms": 3000},
    }


def play(
    bot_a: type[Bot],
    bot_b: type[Bot],
    game: str = "chaos",
    rounds: int = 1000,
    seeds: tuple[int, int] = (1, 2),
    tokens: int | None = None,
) -> dict:
    """Play a whole match in-process with the Chaos League rules; no referee needed.

    Returns points, wins, losses, tokens spent and the per-round real and shown
    moves of both seats. Bot exceptions propagate (this is for testing).
    """
    hellos = [hello_message(game, rounds, s, seeds[s], tokens) for s in (0, 1)]
    bots = [bot_a(hellos[0]), bot_b(hellos[1])]
    tok = [hellos[0]["params"]["tokens"]] * 2
    last_real: list[str | None] = [None, None]
    last_shown: list[str | None] = [None, None]
    points, wins, losses, spent = [0, 0], [0, 0], [0, 0], [0, 0]
    real_hist: list[tuple[str, str]] = []
    shown_hist: list[tuple[str, str]] = []
    for rnd in range(1, rounds + 1):
        replies = []
        for s in (0, 1):
            msg = {
                "type": "turn",
                "round": rnd,
                "opponent_last_visible": last_shown[1 - s],
                "self_last_real": last_real[s],
                "opponent_deception_bucket": bucket_of(tok[1 - s]),
            }
            replies.append(bots[s].handle_turn(msg, strict=True))
        real = [r["real_move"] for r in replies]
        p = outcome(real[0], real[1])
        for s, ps in ((0, p), (1, -p)):
            points[s] += ps
            wins[s] += ps > 0
            losses[s] += ps < 0
            shown = real[s]
            if replies[s].get("shadow_request") and tok[s] > 0:
                tok[s] -= 1
                spent[s] += 1
                shown = replies[s]["shadow_move"]
            last_real[s], last_shown[s] = real[s], shown
        real_hist.append((real[0], real[1]))
        shown_hist.append((last_shown[0], last_shown[1]))  # type: ignore[arg-type]
    for b in bots:
        b.end({"type": "end", "reason": "complete", "rounds": rounds, "result": None})
    return {
        "points": points,
        "wins": wins,
        "losses": losses,
        "spent": spent,
        "real": real_hist,
        "shown": shown_hist,
    }
