#!/usr/bin/env python3
"""sceptic: models the opponent from what it shows, but does not believe all of it.

Models (sliding windows of 120 rounds): the frequency of the opponent's visible
moves, its successor after each of its moves, and its reply to each of our
moves. The model whose best replies would have scored best lately is used.

Scepticism, in three parts:
  * A bucket drop between two turns proves that the round in between was a
    shadow: that visible move is not learned at all, and the few rounds before
    it (shadows come in bursts) are retroactively learned at half weight.
  * phi, the chance that the opponent is shadowing right now: 0 once its bucket
    is EMPTY (no tokens, nothing to fake), high just after a drop, raised when
    the visible moves turn into a streak the model did not expect, small
    otherwise. Each visible move is learned with weight 1 - phi.
  * The trap: a fake streak of B is meant to make us answer B, so that the
    opponent can beat our answer. With probability phi the opponent's real move
    is assumed to be one that beats our naive answer; sceptic plays the best
    reply to that mixture, which against a long enough fake streak means
    playing B itself (it draws a real B and beats the move that traps B's
    answers), and against an honest opponent changes nothing.
If every model is losing, it plays at random.
"""

from __future__ import annotations

import chaosbot

WINDOW = 120
RETRO = 6  # rounds before a proven shadow learned at half weight
AFTER_DROP = 10  # rounds after a drop during which shadowing is likely
PHI_BASE = 0.02
PHI_DROP = 0.6
PHI_STREAK = 0.45
SCORE_DECAY = 0.97


class Sceptic(chaosbot.Bot):
    name = "sceptic"

    def __init__(self, hello):
        super().__init__(hello)
        self.cyc = chaosbot.cyclic_order(self.moves)
        self.index = {m: i for i, m in enumerate(self.cyc)}
        n = self.n = len(self.cyc)
        half = (n - 1) // 2
        # pay[a][b]: points for a against b on the circle.
        self.pay = [
            [0 if a == b else (1 if 1 <= (a - b) % n <= half else -1) for b in range(n)]
            for a in range(n)
        ]
        self.freq = [0.0] * n
        self.succ = [[0.0] * n for _ in range(n)]  # their last -> their next
        self.reply = [[0.0] * n for _ in range(n)]  # our last -> their next
        self.events: list[tuple[int, int, int, float]] = []  # (their prev, our prev, seen, w)
        self.scores = [0.0, 0.0, 0.0]
        self.last_preds: list[list[float]] | None = None
        self.prev_seen: int | None = None
        self.prev_mine: int | None = None
        self.last_bucket: str | None = None
        self.last_drop = -(10**9)
        self.phi = 0.0
        self.streak = 0

    # -- learning ------------------------------------------------------------

    def _add(self, ev: tuple[int, int, int, float], sign: float) -> None:
        their_prev, our_prev, seen, w = ev
        w *= sign
        self.freq[seen] += w
        if their_prev >= 0:
            self.succ[their_prev][seen] += w
        if our_prev >= 0:
            self.reply[our_prev][seen] += w

    def _learn(self, turn) -> None:
        seen = self.index.get(turn.opponent_last_visible)
        mine = self.index.get(turn.self_last_real)
        bucket = turn.opponent_deception_bucket
        proven = chaosbot.bucket_dropped(self.last_bucket, bucket)
        if proven:
            self.last_drop = turn.round - 1
            # Shadows come in bursts: the rounds just before this one are suspect too.
            for i in range(max(0, len(self.events) - RETRO), len(self.events)):
                ev = self.events[i]
                self._add(ev, -0.5)
                self.events[i] = (ev[0], ev[1], ev[2], ev[3] * 0.5)
        if seen is not None and not proven:
            w = 1.0 - self.phi
            # Score the models by how their best replies would have done against it.
            if self.last_preds is not None:
                for k, dist in enumerate(self.last_preds):
                    a = self._best_reply(dist)
                    self.scores[k] = SCORE_DECAY * self.scores[k] + w * self.pay[a][seen]
            their_prev = self.prev_seen if self.prev_seen is not None else -1
            our_prev = self.prev_mine if self.prev_mine is not None else -1
            ev = (their_prev, our_prev, seen, w)
            self.events.append(ev)
            self._add(ev, 1.0)
            if len(self.events) > WINDOW:
                self._add(self.events.pop(0), -1.0)
        self.streak = self.streak + 1 if seen is not None and seen == self.prev_seen else 0
        self.prev_seen = None if proven else seen
        self.prev_mine = mine
        self.last_bucket = bucket
        self.phi = self._shadow_chance(turn.round, bucket, seen)

    def _shadow_chance(self, rnd: int, bucket: str, seen: int | None) -> float:
        """How likely the opponent's next visible move is a shadow."""
        if bucket == "EMPTY":
            return 0.0
        if rnd - self.last_drop <= AFTER_DROP:
            return PHI_DROP
        if seen is not None and self.streak >= 2:
            total = sum(self.freq) or 1.0
            share = self.freq[seen] / total
            # A streak of a move it rarely plays looks like a fake pattern being built.
            if share < 0.45:
                return PHI_STREAK
        return PHI_BASE

    # -- deciding ------------------------------------------------------------

    def _dist(self, counts: list[float]) -> list[float]:
        total = sum(counts) + 0.5 * self.n
        return [(c + 0.5) / total for c in counts]

    def _best_reply(self, dist: list[float]) -> int:
        best, best_ev = 0, None
        for a in range(self.n):
            ev = sum(p * q for p, q in zip(self.pay[a], dist, strict=True))
            if best_ev is None or ev > best_ev + 1e-12:
                best, best_ev = a, ev
        return best

    def move(self, turn):
        self._learn(turn)
        n = self.n
        if self.prev_seen is None and not self.events:
            self.last_preds = None
            return self.rng.choice(self.moves)
        preds = [self._dist(self.freq)]
        preds.append(
            self._dist(self.succ[self.prev_seen]) if self.prev_seen is not None else preds[0]
        )
        preds.append(
            self._dist(self.reply[self.prev_mine]) if self.prev_mine is not None else preds[0]
        )
        self.last_preds = preds
        k = max(range(3), key=self.scores.__getitem__)
        if self.scores[k] < -2.0:
            return self.rng.choice(self.moves)
        dist = preds[k]
        phi = self.phi
        if phi > 0:
            # With probability phi the visible pattern is bait: the real move beats
            # the answer we would naively give to it.
            naive = self._best_reply(dist)
            half = (n - 1) // 2
            trap = [0.0] * n
            for d in range(1, half + 1):
                trap[(naive + d) % n] += 1.0 / half
            dist = [(1 - phi) * p + phi * q for p, q in zip(dist, trap, strict=True)]
        return self.cyc[self._best_reply(dist)]


if __name__ == "__main__":
    chaosbot.run(Sceptic)
