#!/usr/bin/env python3
"""historic: opponents of the kinds that played the international RoShamBo
programming competitions (1999-2000), written anew for this project's strength
table. One file, many bots:

    python3 historic.py NAME        # speak the protocol as bot NAME
    python3 historic.py --list      # the names, one a line

Each bot reads its moves from ``hello`` and plays both games (its ideas are the
classic ones, stated for three moves; with five it works on the circle of
``chaosbot.cyclic_order``). docs/bots.md says what each is and where its idea
comes from.

The field comes in two sets with the same kinds of bot and different parameters
(windows, orders, periods, texts, rates): ``REPORT`` is what tools/strength.py
reports; ``TUNE`` is what the champion may be tuned on. Nothing in REPORT is
looked at while tuning, so the reported figures are not fitted to it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import chaosbot


def _arctan_inverse(x: int, scale: int) -> int:
    """arctan(1/x) times ``scale``, in integers (Gregory's series)."""
    total = term = scale // x
    x2, k, sign = x * x, 1, 1
    while term:
        term //= x2
        k += 2
        sign = -sign
        total += sign * (term // k)
    return total


def pi_digits(count: int) -> str:
    """The first ``count`` decimal digits of pi ("3141..."), by Machin's formula
    pi = 16 arctan(1/5) - 4 arctan(1/239) in integer arithmetic."""
    scale = 10 ** (count + 10)
    pi = 16 * _arctan_inverse(5, scale) - 4 * _arctan_inverse(239, scale)
    # In chunks: CPython refuses to print an int of more than 4300 digits at once.
    chunks, chunk = [], 10**4000
    while pi:
        pi, low = divmod(pi, chunk)
        chunks.append(str(low).zfill(4000))
    return "".join(reversed(chunks)).lstrip("0")[:count]


class Field(chaosbot.Bot):
    """A historic-field bot: moves are indices on the circle (i + 1 beats i)."""

    conf: dict[str, Any] = {}  # this variant's parameters (self.params is the game's)

    def __init__(self, hello: dict) -> None:
        super().__init__(hello)
        self.cyc = chaosbot.cyclic_order(self.moves)
        self.n = len(self.cyc)
        self.index = {m: i for i, m in enumerate(self.cyc)}
        self.mine: list[int] = []  # our real moves, as indices
        self.theirs: list[int] = []  # their visible moves (-1 unknown)
        self.setup()

    def setup(self) -> None:
        """Per-bot state (after the common fields are set)."""

    def pick(self) -> int:
        raise NotImplementedError

    def beat(self, i: int) -> int:
        """A move that beats index i (the nearest on the circle)."""
        return (i + 1) % self.n

    def rand(self) -> int:
        return self.rng.randrange(self.n)

    def move(self, turn: chaosbot.Turn) -> str:
        if turn.round > 1:
            self.mine.append(self.index.get(turn.self_last_real, -1))
            self.theirs.append(self.index.get(turn.opponent_last_visible, -1))
        return self.cyc[self.pick() % self.n]


# --- The "dummy" bots of the first competition: fixed or simply random schedules.


class Digits(Field):
    """A constant's digits as throws (the first competition's pi bot)."""

    def setup(self) -> None:
        source = self.conf["source"]
        offset = self.conf.get("offset", 0)
        text = pi_digits(offset + self.rounds + 200) if source == "pi" else source
        self.seq = [int(d) for d in text[offset:] if self.n != 3 or d != "9"]

    def pick(self) -> int:
        t = len(self.mine)
        return self.seq[t % len(self.seq)] % self.n


class Text(Field):
    """The letters of a text as throws (the first competition's text bot)."""

    def setup(self) -> None:
        self.seq = [ord(c) for c in self.conf["text"].lower() if c.isalpha()]

    def pick(self) -> int:
        return self.seq[len(self.mine) % len(self.seq)] % self.n


class PhaseShift(Field):
    """A rotation whose phase jumps by a random step at random times."""

    def setup(self) -> None:
        self.phase = 0
        self.step = self.conf.get("step", 1)

    def pick(self) -> int:
        if self.rng.random() < self.conf["shift_rate"]:
            self.phase = self.rand()
        return (len(self.mine) * self.step + self.phase) % self.n


class Foxtrot(Field):
    """Odd throws random, even throws the previous throw moved on by a step."""

    def pick(self) -> int:
        if len(self.mine) % 2 == 0 or not self.mine:
            return self.rand()
        return self.mine[-1] + self.conf["step"]


class SwitchALot(Field):
    """Changes its throw most of the time, to a random other one."""

    def pick(self) -> int:
        if self.mine and self.rng.random() >= self.conf["switch"]:
            return self.mine[-1]
        last = self.mine[-1] if self.mine else -1
        return self.rng.choice([m for m in range(self.n) if m != last])


class Flat(Field):
    """Keeps its own counts flat (plays its least-played throw most of the time), or
    with ``anti`` its most-played one: frequency-neutral, or a lopsided runaway."""

    def setup(self) -> None:
        self.counts = [0] * self.n

    def pick(self) -> int:
        if self.mine:
            self.counts[self.mine[-1]] += 1
        if self.rng.random() < self.conf["follow"]:
            target = max(self.counts) if self.conf.get("anti") else min(self.counts)
            return self.rng.choice([m for m in range(self.n) if self.counts[m] == target])
        return self.rand()


class Drift(Field):
    """(base + offset): base is their last throw (copy-drift) or the sum of both
    last throws (add-drift); the offset takes a random step now and then, or after
    losses (add-react)."""

    def setup(self) -> None:
        self.offset = self.rand()

    def pick(self) -> int:
        if not self.mine or self.theirs[-1] < 0:
            return self.rand()
        react = self.conf.get("react", 0)
        if react:
            recent = [
                chaosbot.outcome(self.cyc[a], self.cyc[b])
                for a, b in zip(self.mine[-react:], self.theirs[-react:], strict=True)
                if b >= 0
            ]
            if sum(recent) < 0 and self.rng.random() < 0.5:
                self.offset = (self.offset + self.rng.randrange(1, self.n)) % self.n
        elif self.rng.random() < self.conf["drift"]:
            self.offset = (self.offset + self.rng.choice((1, -1))) % self.n
        base = self.theirs[-1] + (self.mine[-1] if self.conf["add"] else 0)
        if self.rng.random() < self.conf.get("noise", 0.0):
            return self.rand()
        return base + self.offset


# --- Predictors: frequency, Markov, history matching and rotations of them.


def _joint(field: Field, t: int) -> int:
    return field.mine[t] * field.n + field.theirs[t]


class WindowFrequency(Field):
    """Beats their most frequent throw over the last ``window`` throws; with
    ``guess`` > 0, beats the answer to that (second- and third-guessing)."""

    def pick(self) -> int:
        seen = [m for m in self.theirs[-self.conf["window"] :] if m >= 0]
        if not seen:
            return self.rand()
        counts = [seen.count(m) for m in range(self.n)]
        top = max(counts)
        likely = self.rng.choice([m for m in range(self.n) if counts[m] == top])
        return self.beat(likely) + self.conf.get("guess", 0)


class MarkovK(Field):
    """An order-k Markov model: decayed counts of their next throw after the last k
    joint rounds (or their own last k throws); beats the likeliest."""

    def setup(self) -> None:
        self.table: dict[tuple[int, ...], list[float]] = {}

    def _context(self, end: int) -> tuple[int, ...] | None:
        k = self.conf["order"]
        if end < k:
            return None
        if self.conf.get("joint", True):
            ctx = tuple(_joint(self, t) for t in range(end - k, end))
        else:
            ctx = tuple(self.theirs[end - k : end])
        return None if any(c < 0 for c in ctx) else ctx

    def pick(self) -> int:
        t = len(self.theirs)
        decay = self.conf["decay"]
        if t >= 1 and self.theirs[-1] >= 0:
            ctx = self._context(t - 1)
            if ctx is not None:
                row = self.table.setdefault(ctx, [0.0] * self.n)
                for i in range(self.n):
                    row[i] *= decay
                row[self.theirs[-1]] += 1.0
        ctx = self._context(t)
        row = self.table.get(ctx) if ctx is not None else None
        if not row or max(row) <= 0.0:
            return self.rand()
        top = max(row)
        return self.beat(self.rng.choice([m for m in range(self.n) if row[m] == top]))


class HistoryMatch(Field):
    """The longest earlier match of the recent history (joint, theirs or ours, up
    to ``longest`` rounds); beats the throw of theirs that followed it (for ``ours``,
    beats the answer to our own predicted throw: what an opponent reading us plays)."""

    def pick(self) -> int:
        which = self.conf["history"]
        t = len(self.theirs)
        if which == "joint":
            seq = [_joint(self, i) if self.theirs[i] >= 0 else -1 for i in range(t)]
        else:
            seq = list(self.theirs if which == "theirs" else self.mine)
        best_end, best_len = -1, 0
        longest = self.conf["longest"]
        for end in range(t - 1, max(0, t - self.conf["window"]) - 1, -1):
            k = 0
            while k < longest and end - 1 - k >= 0 and seq[end - 1 - k] == seq[t - 1 - k]:
                if seq[t - 1 - k] < 0:
                    break
                k += 1
            if k > best_len:
                best_end, best_len = end, k
                if k == longest:
                    break
        if best_len == 0:
            return self.rand()
        if which == "ours":
            ours = self.mine[best_end]
            return self.beat(self.beat(ours))  # they would answer ours; beat that answer
        nxt = self.theirs[best_end]
        return self.rand() if nxt < 0 else self.beat(nxt)


class DecayedEnsemble(Field):
    """Many context predictors at once (the strong entries' idea): for each context
    length on the joint history and on theirs, the throw that followed the last
    occurrence; each predictor in every rotation is scored with exponential decay,
    the best scoring one is played, and random when none is ahead."""

    def setup(self) -> None:
        self.lengths = self.conf["lengths"]
        self.decay = self.conf["decay"]
        npred = 2 * len(self.lengths) + 1
        self.scores = [[0.0] * self.n for _ in range(npred)]
        self.last: dict[tuple[int, int, tuple[int, ...]], int] = {}
        self.preds: list[int] = []

    def pick(self) -> int:
        t = len(self.theirs)
        n = self.n
        if t and self.preds and self.theirs[-1] >= 0:
            them = self.theirs[-1]
            for p, pred in enumerate(self.preds):
                row = self.scores[p]
                for r in range(n):
                    mine = (pred + 1 + r) % n
                    row[r] = row[r] * self.decay + chaosbot.outcome(self.cyc[mine], self.cyc[them])
        # Record the contexts that ended at t - 1 with what followed (their throw at t - 1).
        if t >= 2:
            for h in (0, 1):
                for k in self.lengths:
                    ctx = self._ctx(h, t - 1, k)
                    if ctx is not None:
                        self.last[(h, k, ctx)] = self.theirs[t - 1]
        preds: list[int] = []
        for h in (0, 1):
            for k in self.lengths:
                ctx = self._ctx(h, t, k)
                nxt = self.last.get((h, k, ctx)) if ctx is not None else None
                preds.append(nxt if nxt is not None and nxt >= 0 else self.rand())
        preds.append(self.rand())  # the random predictor: the hedge
        self.preds = preds
        best, best_p, best_r = 0.0, -1, 0
        for p, row in enumerate(self.scores):
            for r in range(n):
                if row[r] > best:
                    best, best_p, best_r = row[r], p, r
        if best_p < 0:
            return self.rand()
        return preds[best_p] + 1 + best_r

    def _ctx(self, h: int, end: int, k: int) -> tuple[int, ...] | None:
        if end < k:
            return None
        if h == 0:
            ctx = tuple(_joint(self, i) if self.theirs[i] >= 0 else -1 for i in range(end - k, end))
        else:
            ctx = tuple(self.theirs[end - k : end])
        return None if any(c < 0 for c in ctx) else ctx


class Blended(Field):
    """Context models of every order up to ``order`` on the joint history, blended
    PPM-style (the idea of the strongest pattern recogniser of the first contest):
    each order's counts of their next throw weigh in by how much evidence that
    context has, longer contexts first; the reply with the best expected score
    against the blend is played."""

    def setup(self) -> None:
        self.counts: dict[tuple[int, ...], list[float]] = {}

    def _ctx(self, end: int, k: int) -> tuple[int, ...] | None:
        if end < k:
            return None
        ctx = tuple(_joint(self, i) if self.theirs[i] >= 0 else -1 for i in range(end - k, end))
        return None if any(c < 0 for c in ctx) else ctx

    def pick(self) -> int:
        t = len(self.theirs)
        top = self.conf["order"]
        decay = self.conf["decay"]
        if t and self.theirs[-1] >= 0:
            for k in range(top + 1):
                ctx = self._ctx(t - 1, k)
                if ctx is None:
                    continue
                row = self.counts.setdefault(ctx, [0.0] * self.n)
                for i in range(self.n):
                    row[i] *= decay
                row[self.theirs[-1]] += 1.0
        blend = [0.0] * self.n
        left = 1.0  # the share not yet given to a longer context (PPM's escape)
        for k in range(top, -1, -1):
            ctx = self._ctx(t, k)
            row = self.counts.get(ctx) if ctx is not None else None
            total = sum(row) if row else 0.0
            if not row or total <= 0.0:
                continue
            share = left * total / (total + 1.0)
            for i in range(self.n):
                blend[i] += share * row[i] / total
            left -= share
        if max(blend) <= 0.0:
            return self.rand()
        value = [
            sum(blend[b] * chaosbot.outcome(self.cyc[a], self.cyc[b]) for b in range(self.n))
            for a in range(self.n)
        ]
        best = max(value)
        return self.rng.choice([a for a in range(self.n) if value[a] == best])


class BeatSelf(Field):
    """Assumes the opponent beats our most frequent recent throw, and beats that."""

    def pick(self) -> int:
        recent = self.mine[-self.conf["window"] :]
        if not recent:
            return self.rand()
        counts = [recent.count(m) for m in range(self.n)]
        top = max(counts)
        ours = self.rng.choice([m for m in range(self.n) if counts[m] == top])
        return self.beat(self.beat(ours))


def _kinds() -> dict[str, tuple[type[Field], dict[str, Any], dict[str, Any]]]:
    """name -> (class, reported parameters, tuning parameters)."""
    return {
        "pi": (Digits, {"source": "pi"}, {"source": "pi", "offset": 5000}),
        "text": (
            Text,
            {"text": "the quick brown fox jumps over the lazy dog and then runs far away"},
            {"text": "a stitch in time saves nine but only if the needle is already threaded"},
        ),
        "phaseshift": (PhaseShift, {"shift_rate": 0.02}, {"shift_rate": 0.05, "step": 2}),
        "foxtrot": (Foxtrot, {"step": 1}, {"step": 2}),
        "switchalot": (SwitchALot, {"switch": 0.88}, {"switch": 0.75}),
        "flat": (Flat, {"follow": 0.8}, {"follow": 0.6}),
        "antiflat": (Flat, {"follow": 0.8, "anti": True}, {"follow": 0.6, "anti": True}),
        "copydrift": (Drift, {"add": False, "drift": 0.02}, {"add": False, "drift": 0.05}),
        "adddrift": (Drift, {"add": True, "drift": 0.02}, {"add": True, "drift": 0.05}),
        "addreact": (Drift, {"add": True, "react": 5}, {"add": True, "react": 3}),
        "freq10": (WindowFrequency, {"window": 10}, {"window": 7}),
        "freq100": (WindowFrequency, {"window": 100}, {"window": 60}),
        "freqguess": (WindowFrequency, {"window": 30, "guess": 1}, {"window": 20, "guess": 2}),
        "markov1": (MarkovK, {"order": 1, "decay": 0.95}, {"order": 1, "decay": 0.9}),
        "markov2": (MarkovK, {"order": 2, "decay": 0.98}, {"order": 2, "decay": 0.95}),
        "markov3": (MarkovK, {"order": 3, "decay": 1.0}, {"order": 3, "decay": 0.99}),
        "markov2t": (
            MarkovK,
            {"order": 2, "decay": 0.97, "joint": False},
            {"order": 3, "decay": 0.97, "joint": False},
        ),
        "histjoint": (
            HistoryMatch,
            {"history": "joint", "longest": 8, "window": 1000},
            {"history": "joint", "longest": 5, "window": 300},
        ),
        "histtheirs": (
            HistoryMatch,
            {"history": "theirs", "longest": 10, "window": 1000},
            {"history": "theirs", "longest": 6, "window": 400},
        ),
        "histours": (
            HistoryMatch,
            {"history": "ours", "longest": 6, "window": 1000},
            {"history": "ours", "longest": 4, "window": 500},
        ),
        "blended": (Blended, {"order": 4, "decay": 0.98}, {"order": 3, "decay": 0.95}),
        "beatself": (BeatSelf, {"window": 20}, {"window": 50}),
        "ensemble": (
            DecayedEnsemble,
            {"lengths": (1, 2, 3, 4, 6, 8), "decay": 0.9},
            {"lengths": (1, 2, 3, 5, 7), "decay": 0.85},
        ),
        "ensemble-slow": (
            DecayedEnsemble,
            {"lengths": (1, 2, 3, 4, 5, 6, 8, 10), "decay": 0.98},
            {"lengths": (1, 2, 4, 6, 9), "decay": 0.97},
        ),
    }


def _make(name: str, cls: type[Field], params: dict[str, Any]) -> type[Field]:
    return type(cls.__name__, (cls,), {"name": name, "conf": params, "__module__": __name__})


REPORT: dict[str, type[Field]] = {
    f"h-{k}": _make(f"h-{k}", c, rep) for k, (c, rep, _) in _kinds().items()
}
TUNE: dict[str, type[Field]] = {
    f"t-{k}": _make(f"t-{k}", c, tune) for k, (c, _, tune) in _kinds().items()
}
BOTS: dict[str, type[Field]] = {**REPORT, **TUNE}


def main(argv: list[str], run: Callable[[type[chaosbot.Bot]], None] = chaosbot.run) -> int:
    if argv[1:] == ["--list"]:
        print("\n".join(BOTS))
        return 0
    if len(argv) != 2 or argv[1] not in BOTS:
        print(f"usage: {argv[0]} NAME (one of: {', '.join(BOTS)})", file=sys.stderr)
        return 2
    run(BOTS[argv[1]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
