#!/usr/bin/env python3
"""CTM bot "minimax": plays both decisions of CTM by their game-theoretic optimum.

Once both pairs of hands are known, keeping one hand is a 2x2 zero-sum game (a win
is 1, a loss 0; equal hands count as a win for player 1). The bot solves it and
samples its equilibrium mix. Choosing the pair is a 3x3 game whose payoffs are the
values of those 2x2 games; it is solved once by fictitious play.

Commitments are Keccak-256 (Ethereum padding, not NIST SHA3-256) over
``left, right, salt`` and ``index, salt``; a small Keccak is built in so the bot
needs only the standard library. Salts are 32 bytes from a generator seeded with
the referee's per-bot seed, fresh for every commitment, so a re-run of a match is
identical; nobody else knows the seed. Speaks protocol/games/ctm.md.
"""

import json
import random
import sys

# -- Keccak-256 (Keccak-f[1600], rate 136 bytes, padding 0x01 ... 0x80) ---------------

MASK = (1 << 64) - 1


def _round_constants():
    out = []
    r = 1  # the 8-bit LFSR x^8 + x^6 + x^5 + x^4 + 1
    bits = []
    for _ in range(255):
        bits.append(r & 1)
        r <<= 1
        if r & 0x100:
            r ^= 0x171
    for i in range(24):
        rc = 0
        for j in range(7):
            if bits[(7 * i + j) % 255]:
                rc |= 1 << ((1 << j) - 1)
        out.append(rc)
    return out


def _rotations():
    rot = [[0] * 5 for _ in range(5)]
    x, y = 1, 0
    for t in range(24):
        rot[x][y] = ((t + 1) * (t + 2) // 2) % 64
        x, y = y, (2 * x + 3 * y) % 5
    return rot


RC = _round_constants()
ROT = _rotations()


def _rol(v, n):
    return ((v << n) | (v >> (64 - n))) & MASK if n else v


def _permute(a):
    # a[x][y]: 25 lanes of 64 bits
    for rc in RC:
        c = [a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ _rol(c[(x + 1) % 5], 1) for x in range(5)]
        for x in range(5):
            for y in range(5):
                a[x][y] ^= d[x]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                b[y][(2 * x + 3 * y) % 5] = _rol(a[x][y], ROT[x][y])
        for x in range(5):
            for y in range(5):
                a[x][y] = b[x][y] ^ ((~b[(x + 1) % 5][y]) & b[(x + 2) % 5][y])
        a[0][0] ^= rc


def keccak256(data: bytes) -> bytes:
    rate = 136
    msg = bytearray(data)
    msg.append(0x01)
    while len(msg) % rate:
        msg.append(0)
    msg[-1] |= 0x80
    a = [[0] * 5 for _ in range(5)]
    for start in range(0, len(msg), rate):
        block = msg[start : start + rate]
        for i in range(rate // 8):
            a[i % 5][i // 5] ^= int.from_bytes(block[8 * i : 8 * i + 8], "little")
        _permute(a)
    out = b"".join(a[i % 5][i // 5].to_bytes(8, "little") for i in range(4))
    return out


# -- strategy -------------------------------------------------------------------------

PAIRS = [(0, 1), (0, 2), (1, 2)]


def wins(mine, theirs, player1):
    if mine == theirs:
        return player1
    return (mine - theirs) % 3 == 1


def solve_2x2(m):
    """Row player's equilibrium (probability of row 0, value) for payoffs m[i][j]."""
    # A pure saddle point first: a row whose worst case beats the other row's best mix.
    for i in (0, 1):
        for j in (0, 1):
            if m[i][j] == min(m[i]) and m[i][j] == max(m[0][j], m[1][j]):
                return (1.0 if i == 0 else 0.0), m[i][j]
    den = m[0][0] - m[0][1] - m[1][0] + m[1][1]
    p = (m[1][1] - m[1][0]) / den
    return p, p * m[0][0] + (1 - p) * m[1][0]


def keep_game(mine, theirs, player1):
    return [[1.0 if wins(a, b, player1) else 0.0 for b in theirs] for a in mine]


def pair_mix(player1, iterations=3000):
    """Fictitious play on the 3x3 game of choosing a pair."""
    value = [[solve_2x2(keep_game(a, b, player1))[1] for b in PAIRS] for a in PAIRS]
    mine_counts = [0] * 3
    theirs_counts = [0] * 3
    for _ in range(iterations):
        # Each side best-responds to the other's empirical mix.
        best_mine = max(
            range(3), key=lambda i: sum(value[i][j] * theirs_counts[j] for j in range(3))
        )
        best_theirs = min(
            range(3), key=lambda j: sum(value[i][j] * mine_counts[i] for i in range(3))
        )
        mine_counts[best_mine] += 1
        theirs_counts[best_theirs] += 1
    total = sum(mine_counts)
    return [c / total for c in mine_counts]


class Bot:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.mix = {True: pair_mix(True), False: pair_mix(False)}
        self.hands = None
        self.hands_salt = None
        self.choice = None
        self.choice_salt = None

    def salt(self):
        return self.rng.getrandbits(256).to_bytes(32, "big")

    def turn(self, msg):
        phase = msg["phase"]
        if phase == "commit_hands":
            pair = self.rng.choices(PAIRS, weights=self.mix[msg["player1"]])[0]
            if self.rng.random() < 0.5:
                pair = pair[::-1]
            self.hands, self.hands_salt = list(pair), self.salt()
            digest = keccak256(bytes(self.hands) + self.hands_salt)
            return {"commitment": digest.hex()}
        if phase == "reveal_hands":
            return {"hands": self.hands, "salt": self.hands_salt.hex()}
        if phase == "commit_choice":
            theirs = msg["opponent"]["hands"]
            p_left, _ = solve_2x2(keep_game(self.hands, theirs, msg["player1"]))
            self.choice = 0 if self.rng.random() < p_left else 1
            self.choice_salt = self.salt()  # fresh: the hands salt is public by now
            digest = keccak256(bytes((self.choice,)) + self.choice_salt)
            return {"commitment": digest.hex()}
        return {"choice": self.choice, "salt": self.choice_salt.hex()}


def main():
    bot = None
    for line in iter(sys.stdin.readline, ""):
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            bot = Bot(msg["seed"])
            reply = {"name": "minimax", "version": "1"}
        elif kind == "turn":
            reply = bot.turn(msg)
        elif kind == "end":
            break
        else:  # notices need no answer
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
