#!/usr/bin/env python3
"""trickster: spends deception tokens on purpose, a few at a time, to set traps.

Base play: a decayed first-order model of the opponent (what it shows after
each joint round), answered with a best reply, with 20% random moves so that
the base play itself is hard to read.

The con (Chaos League only; RoShamBo has no tokens): at moments spread over the
match it picks a bait move B and shows B for a few rounds whatever it really
plays: a fake visible streak. From the second round on, the opponent's move is
its answer to a shown B, and trickster plays the best reply to that answer
under whichever of two hypotheses has been right more often in earlier cons:
  * the opponent believes the streak and beats B. Two moves beat B in RPSLS
    (B+1 and B+2 on the circle rock, spock, paper, lizard, scissors) and
    exactly one move beats both: X = B+3 (in RPS, X = B+2);
  * the opponent reacts to the last move it was shown the way it reacts in
    honest rounds (trickster keeps a model of that from the rounds without a
    shadow), so the answer to B is predictable from that model.
The bait is the move whose answer is easiest to beat under the favoured
hypothesis. A con stops after two rounds without a visible win and after 8
tokens at most; a shadow never shows the move really played (that would hide
nothing). After two trial cons it only goes on if its tokens earn more than
they cost as the scoring model counts it: per token, how much more typical the
opponent's next move was of its answer to the bait than of its answer to the
move really played, times the result of our next move, must beat the 0.1 per
token that the score charges. Against an opponent whose reply does not depend
on what it was shown (a plain frequency counter, a random bot) that credit is
near zero however many points the con wins, so the tokens are kept.
"""

from __future__ import annotations

import chaosbot

DECAY = 0.95
EPSILON = 0.2  # share of random moves in the base play
CON_MAX = 8  # tokens at most per con
MIN_GAP = 40  # rounds between cons at least
TRIAL_CONS = 2  # cons tried before judging whether they pay
MIN_CREDIT = 0.15  # deception credit per token to go on: the 0.1 token cost plus a margin


class Trickster(chaosbot.Bot):
    name = "trickster"

    def __init__(self, hello):
        super().__init__(hello)
        self.cyc = chaosbot.cyclic_order(self.moves)
        self.index = {m: i for i, m in enumerate(self.cyc)}
        n = self.n = len(self.cyc)
        self.half = (n - 1) // 2
        self.model = {}  # (our last, their last) -> decayed counts of their next move
        self.prev_ctx = None
        self.recent: list[int] = []  # their last visible moves (circle indices)
        # Their reply to what we showed, from honest rounds: resp[x][y] counts
        # "we showed x, next round they showed y".
        self.resp = [[0] * n for _ in range(n)]
        self.resp_total = 0
        self.shadowed: dict[int, tuple[int, int]] = {}  # round -> (shown, real)
        self.credit = 0.0  # our estimate of the scoring model's deception credit
        self.judged = 0  # tokens whose effect has been judged
        cons = max(1, self.tokens // 6)
        # Spread the cons over the match; the first waits until there is a model.
        self.spacing = max(MIN_GAP, self.rounds // (cons + 1))
        self.next_con = min(self.spacing, max(150, self.rounds // 10))
        self.con_left = 0  # tokens the current con may still spend
        self.bait = 0
        self.misses = 0
        self.shown = 0  # rounds of the current con shown so far
        self.cons_done = 0
        self.hyp_streak = 0  # points each hypothesis' reply would have scored
        self.hyp_react = 0

    def _pay(self, a: int, b: int) -> int:
        d = (a - b) % self.n
        return 0 if d == 0 else (1 if d <= self.half else -1)

    # -- learning ------------------------------------------------------------

    def _learn(self, turn) -> None:
        seen = self.index.get(turn.opponent_last_visible)
        mine = self.index.get(turn.self_last_real)
        self._learn_replies(turn.round)
        if seen is None or mine is None:
            self.prev_ctx = None
            return
        if self.prev_ctx is not None:
            counts = self.model.setdefault(self.prev_ctx, [0.0] * self.n)
            for i in range(self.n):
                counts[i] *= DECAY
            counts[seen] += 1.0
        self.prev_ctx = (mine, seen)
        self.recent.append(seen)
        if len(self.recent) > 30:
            del self.recent[0]

    def _learn_replies(self, rnd: int) -> None:
        """Our shown move of round rnd-2 and their reply in round rnd-1 are known now."""
        if rnd < 3:
            return
        j = rnd - 2
        reply = self.index.get(self.their_moves[j])  # their visible move of round j + 1
        if j in self.shadowed:
            # Not an honest round. Judge the token as the scoring model does: was
            # their reply more typical of the bait than of our real move, and did
            # our next move beat it?
            shown, real = self.shadowed.pop(j)
            nxt = self.index.get(self.my_moves[j])
            if reply is not None and nxt is not None:
                misread = self._reply_model(shown)[reply] - self._reply_model(real)[reply]
                self.credit += max(0.0, misread) * self._pay(nxt, reply)
                self.judged += 1
            return
        ours = self.index.get(self.my_moves[j - 1])  # our real (= shown) move of round j
        if reply is not None and ours is not None:
            self.resp[ours][reply] += 1
            self.resp_total += 1

    def _reply_model(self, shown: int) -> list[float]:
        """How they answer being shown ``shown``, smoothed toward their overall mix."""
        n = self.n
        total = self.resp_total or 1
        row = self.resp[shown]
        row_total = sum(row) + 5.0
        return [
            (row[y] + 5.0 * sum(self.resp[x][y] for x in range(n)) / total) / row_total
            for y in range(n)
        ]

    def _best_reply(self, dist: list[float]) -> tuple[int, float]:
        """The move with the best expected points against dist, and those points."""
        best, best_ev = 0, -2.0
        for a in range(self.n):
            ev = sum(p * self._pay(a, y) for y, p in enumerate(dist))
            if ev > best_ev:
                best, best_ev = a, ev
        return best, best_ev

    # -- the con -------------------------------------------------------------

    def _trap(self) -> int:
        """The move beating both moves that beat the bait: what a believer loses to."""
        return (self.bait + self.half + 1) % self.n

    def _favour_react(self) -> bool:
        return self.hyp_react > self.hyp_streak

    def move(self, turn):
        self._learn(turn)
        if self.con_left > 0:
            if self.shown >= 2:  # from now on their move answered a shown bait
                self._judge(turn)
            if self.misses >= 2 or self.tokens == 0:
                self._end_con(turn.round)
            else:
                if self._favour_react():
                    sting = self._best_reply(self._reply_model(self.bait))[0]
                else:
                    sting = self._trap()
                return self._shadow(turn.round, sting if sting != self.bait else self._cover())
        elif self.tokens > 0 and turn.round >= self.next_con and self._worth_it():
            self._start_con()
            return self._shadow(turn.round, self._cover())
        return self.cyc[self._base()]

    def _judge(self, turn) -> None:
        mine = self.index.get(turn.self_last_real)
        seen = self.index.get(turn.opponent_last_visible)
        if mine is None or seen is None:
            self.misses += 1
            return
        won = self._pay(mine, seen) > 0
        self.misses = 0 if won else self.misses + 1
        self.hyp_streak += self._pay(self._trap(), seen)
        self.hyp_react += self._pay(self._best_reply(self._reply_model(self.bait))[0], seen)

    def _shadow(self, rnd: int, real: int) -> chaosbot.Shadow:
        self.con_left -= 1
        self.shown += 1
        self.shadowed[rnd] = (self.bait, real)
        if self.con_left == 0:
            self._end_con(rnd)
        return chaosbot.Shadow(self.cyc[real], self.cyc[self.bait])

    def _cover(self) -> int:
        """The base move, but never the bait itself: a shadow equal to the real
        move would hide nothing and waste the token."""
        real = self._base()
        if real == self.bait:
            real = (self.bait + self.rng.randrange(1, self.n)) % self.n
        return real

    def _worth_it(self) -> bool:
        if self.cons_done < TRIAL_CONS or self.judged == 0:
            return True
        return self.credit / self.judged > MIN_CREDIT

    def _start_con(self) -> None:
        n = self.n
        if self._favour_react():
            # The bait whose usual answer we can beat best.
            options = [
                (self._best_reply(self._reply_model(v))[1], self.rng.random(), v) for v in range(n)
            ]
            self.bait = max(options)[2]
        else:
            # The bait whose beaters they have played least lately, so that a
            # believer's answer stands out from its usual play.
            options = []
            for b in range(n):
                c = sum(1 for s in self.recent if 1 <= (s - b) % n <= self.half)
                options.append((-c, self.rng.random(), b))
            self.bait = max(options)[2]
        self.con_left = min(CON_MAX, self.tokens)
        self.misses = 0
        self.shown = 0

    def _end_con(self, rnd: int) -> None:
        self.con_left = 0
        self.cons_done += 1
        jitter = self.rng.randint(-self.spacing // 5, self.spacing // 5)
        self.next_con = rnd + max(MIN_GAP, self.spacing + jitter)

    # -- base play -----------------------------------------------------------

    def _base(self) -> int:
        n = self.n
        counts = self.model.get(self.prev_ctx)
        if counts is None or self.rng.random() < EPSILON:
            return self.rng.randrange(n)
        best, best_ev = [], None
        for a in range(n):
            # a beats a-1 .. a-half on the circle and loses to a+1 .. a+half.
            ev = sum(counts[(a - d) % n] - counts[(a + d) % n] for d in range(1, self.half + 1))
            if best_ev is None or ev > best_ev + 1e-9:
                best, best_ev = [a], ev
            elif abs(ev - best_ev) <= 1e-9:
                best.append(a)
        return self.rng.choice(best)


if __name__ == "__main__":
    chaosbot.run(Trickster)
