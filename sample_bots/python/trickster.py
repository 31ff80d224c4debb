#!/usr/bin/env python3
"""trickster: a plain learner that spends its deception tokens where they buy points.

Base play: a decayed first-order model of the opponent (what it shows after
each joint round), answered with a best reply, with 20% random moves. With no
tokens (RoShamBo, --tokens 0) this is all trickster does.

The books. The opponent only ever sees trickster's *shown* moves, and trickster
knows every one of them. So it keeps two books of its own shown moves: what a
frequency counter and a slowly fading first-order Markov model would have
learned about it. A book's forecast: the opponent expects our likeliest next
move p and plays one of the moves that beat p (two in RPSLS: p+1 and p+2 on
the circle rock, spock, paper, lizard, scissors; of the two, the one better
against the book's weights). One move beats both, X = p+3 (in RPS, X = p+2).
Each round every book is scored on whether the opponent's visible move did
beat its p. The books are tools for planning shadows only; the base play does
not consult them.

A token. A shadow decides what the opponent's predictor learns this round,
whatever trickster really plays. Trickster shows the move (never the real one)
that leaves the trusted book's next forecast p most clear-cut and plays X next
round (or, if the book names the exact reply, whichever beater of it leaves the
base play best placed): if the book is right, that round is a certain win.
A token is worth that win minus what the base play would have scored instead,
and that is known too: the base play's random choices are drawn per round from
the seed, so its next move can be simulated with the opponent's forecast move.
Tokens go first to rounds the base play is forecast to lose (about 2 points
each), then to draws. Nothing is spent unless a book has forecast the
opponent's visible moves at least 80% right lately, so a bot that does not
simply believe what it sees (sceptic, iocaine) gets at most the tokens left
over in the last rounds, and only if a book beats chance against it.

When: in the last 200 rounds, at the best moments there. A token buys about the
same early or late, but a late one cannot be learned from (a bucket drop tells a
wary opponent a shadow happened), the books are best tested by then, and with
per-round random choices a match stays identical to its tokens-off twin until
the first shadow, so the tokens' effect shows clearly in a few matches.
"""

from __future__ import annotations

import chaosbot

DECAY = 0.95  # base model: fading of a context's counts
EPSILON = 0.2  # share of random moves in the base play
BOOK_DECAY = 0.98  # Markov book: fading of a row each time it is used
HIT_DECAY = 0.97  # fading of each book's hit rate
TRUST = 0.8  # hit rate a book needs before trickster spends on it
WINDOW = 200  # the tokens are spent in the last WINDOW rounds


class Trickster(chaosbot.Bot):
    name = "trickster"

    def __init__(self, hello):
        super().__init__(hello)
        self.cyc = chaosbot.cyclic_order(self.moves)
        self.index = {m: i for i, m in enumerate(self.cyc)}
        n = self.n = len(self.cyc)
        self.half = (n - 1) // 2
        self.model = {}  # (our last real, their last visible) -> fading counts of their next
        self.prev_ctx = None
        # The books of our shown moves.
        self.counts = [0.0] * n
        self.table = [[0.0] * n for _ in range(n)]
        self.shown_last = None  # our shown move of the previous round
        self.shown_now = None  # our shown move of this round (known once we answer)
        self.hits = [0.5, 0.5]  # how often each book's forecast came true lately
        self.forecast = [None, None]  # each book's p for this round
        self.counter = None  # the move to play this round after a shadow
        self.recent = 0.0  # the base play's recent points per round
        self.book_used = 0  # the book the last shadow was planned with
        # Their reply to what we showed in honest rounds: seen[x][y] counts "we
        # showed x, next round they showed y" (the scoring model's misread table).
        self.seen = [[0] * n for _ in range(n)]
        self.honest_now = self.honest_last = False
        self.start = max(1, self.rounds - WINDOW)

    def _dice(self, rnd: int) -> None:
        """Random choices drawn per round: the same with or without tokens, and known
        in advance."""
        self.rng.seed(self.seed * 1_000_003 + rnd)

    def _pay(self, a: int, b: int) -> int:
        d = (a - b) % self.n
        return 0 if d == 0 else (1 if d <= self.half else -1)

    @staticmethod
    def _clear_top(w: list[float]) -> tuple[int | None, float]:
        """The unique largest entry of w and its lead over the second, or (None, 0)."""
        best = max(w)
        tops = [i for i, x in enumerate(w) if x == best]
        if best <= 0 or len(tops) > 1:
            return None, 0.0
        return tops[0], best - max(x for i, x in enumerate(w) if i != tops[0])

    def _book(self, k: int, shown: int | None = None) -> list[float] | None:
        """Book k's weights over our next shown move, after showing ``shown`` if given."""
        if k == 0:
            w = list(self.counts)
            if shown is not None:
                w[shown] += 1.0
            return w
        last = self.shown_last if shown is None else shown
        if last is None:
            return None
        w = self.table[last]
        if shown is not None and shown == self.shown_last:
            w = [x * BOOK_DECAY for x in w]  # the row we are about to update is the one used
            w[shown] += 1.0
        return w

    def _replies(self, w: list[float] | None) -> list[int]:
        """The opponent's likely moves if it beats our likeliest move under w: of the
        two beaters the one that does better against all of w, both on a tie; [] if
        our likeliest move is unclear."""
        if w is None:
            return []
        p, _ = self._clear_top(w)
        if p is None:
            return []
        options = [(p + d) % self.n for d in range(1, self.half + 1)]
        score = [sum(w[b] * self._pay(a, b) for b in range(self.n)) for a in options]
        return [a for a, sc in zip(options, score, strict=True) if sc == max(score)]

    # -- learning ------------------------------------------------------------

    def _learn(self, turn) -> None:
        n = self.n
        seen = self.index.get(turn.opponent_last_visible)
        mine = self.index.get(turn.self_last_real)
        if seen is not None:
            for k, p in enumerate(self.forecast):
                if p is not None:
                    hit = 1.0 if 1 <= (seen - p) % n <= self.half else 0.0
                    self.hits[k] = HIT_DECAY * self.hits[k] + (1 - HIT_DECAY) * hit
        if seen is not None and self.shown_last is not None and self.honest_last:
            self.seen[self.shown_last][seen] += 1
        if turn.round > 1:
            self.honest_last = self.honest_now
            shown = self.shown_now if mine is not None else None
            if shown is not None:
                self.counts[shown] += 1.0
                if self.shown_last is not None:
                    row = self.table[self.shown_last]
                    for i in range(n):
                        row[i] *= BOOK_DECAY
                    row[shown] += 1.0
            self.shown_last = shown
        self.forecast = [self._clear_top(w)[0] if w else None for w in map(self._book, (0, 1))]
        if seen is None or mine is None:
            self.prev_ctx = None
            return
        self.recent = 0.99 * self.recent + 0.01 * self._pay(mine, seen)
        if self.prev_ctx is not None:
            counts = self.model.setdefault(self.prev_ctx, [0.0] * n)
            for i in range(n):
                counts[i] *= DECAY
            counts[seen] += 1.0
        self.prev_ctx = (mine, seen)

    # -- deciding ------------------------------------------------------------

    def move(self, turn):
        self._dice(turn.round)
        self._learn(turn)
        if self.counter is not None:
            real = self._sting(turn.round)
        else:
            real = self._base(self.prev_ctx)
        self.counter = None
        shadow = self._shadow(turn.round, real) if self.tokens > 0 else None
        self.honest_now = shadow is None
        if shadow is None:
            self.shown_now = real
            return self.cyc[real]
        self.shown_now, self.counter = shadow
        return chaosbot.Shadow(self.cyc[real], self.cyc[self.shown_now])

    def _shadow(self, rnd: int, real: int) -> tuple[int, int] | None:
        """(the move to show, next round's counter), or None to show the real move."""
        if rnd < self.start:
            return None
        k = max((0, 1), key=self.hits.__getitem__)
        trust = self.hits[k]
        rounds_left = self.rounds - rnd
        # Tokens left at the end are worth nothing: in the last rounds a book that
        # beats chance (a random move beats p with chance half / n) is good enough.
        leftover = self.tokens >= rounds_left
        if trust < (self.half / self.n + 0.05 if leftover else TRUST):
            return None
        # The move to show: one leaving the book's forecast clear-cut; of those, the
        # one whose usual reply is most like the reply forecast (so the scoring
        # model sees the misread too), then the most clear-cut.
        best = None
        for s in range(self.n):
            w = self._book(k, s) if s != real else None
            p, lead = self._clear_top(w) if w else (None, 0.0)
            if p is None or lead < 0.5:
                continue
            key = (self._misread(s, real, self._replies(w)), lead, s, p)
            if best is None or key > best:
                best = key
        if best is None:
            return None
        # Next round X wins with chance trust (else, say, it loses), against what
        # the base play would score there.
        gain = trust - (1.0 - trust) - self._honest_forecast(k, real, rnd)
        # Demand more while tokens are plentiful for the rounds left: first only
        # rounds the base play is forecast to lose, then draws, then any gain.
        pressure = self.tokens / max(1, rounds_left)
        need = 1.5 if pressure < 0.2 else 0.8 if pressure < 0.5 else 0.2 if not leftover else 0.0
        if gain <= need:
            return None
        _, _, s, p = best
        self.book_used = k
        return s, (p + self.half + 1) % self.n

    def _misread(self, shown: int, real: int, replies: list[int]) -> float:
        """How much more typical ``replies`` are of their usual reply to ``shown`` than
        to ``real``, from honest rounds (smoothed toward their overall mix)."""
        if not replies:
            return 0.0
        n = self.n
        total = sum(map(sum, self.seen)) or 1
        mix = [sum(row[y] for row in self.seen) / total for y in range(n)]

        def usual(x: int, y: int) -> float:
            return (self.seen[x][y] + 5.0 * mix[y]) / (sum(self.seen[x]) + 5.0)

        return sum(max(0.0, usual(shown, y) - usual(real, y)) for y in replies) / len(replies)

    def _sting(self, rnd: int) -> int:
        """The move for the round after a shadow: one that beats every move the book
        says the opponent can play now, and of those the one after which the base
        play is forecast to do best."""
        k = self.book_used
        now = self._replies(self._book(k))
        options = [a for a in range(self.n) if now and all(self._pay(a, y) > 0 for y in now)]
        if len(options) <= 1:
            return options[0] if options else self.counter
        return max(options, key=lambda a: (self._honest_forecast(k, a, rnd), a == self.counter))

    def _honest_forecast(self, k: int, real: int, rnd: int) -> float:
        """Expected points of the base play next round if we show ``real`` honestly and
        book k is right about the opponent; the recent average if it cannot tell."""
        now = self._replies(self._book(k))  # their move this round
        nxt = self._replies(self._book(k, real))  # their move next round
        if not now or not nxt:
            return self.recent
        total = 0.0
        saved = self.rng.getstate()
        for y in now:
            # The base play's own dice for next round are known: they are drawn per round.
            self._dice(rnd + 1)
            a = self._base((real, y))
            total += sum(self._pay(a, z) for z in nxt) / len(nxt)
        self.rng.setstate(saved)
        return total / len(now)

    def _best(self, counts: list[float]) -> list[int]:
        n = self.n
        evs = [
            sum(counts[(a - d) % n] - counts[(a + d) % n] for d in range(1, self.half + 1))
            for a in range(n)
        ]
        top = max(evs)
        return [a for a in range(n) if evs[a] >= top - 1e-9]

    def _base(self, ctx) -> int:
        counts = self.model.get(ctx)
        if counts is None or self.rng.random() < EPSILON:
            return self.rng.randrange(self.n)
        return self.rng.choice(self._best(counts))


if __name__ == "__main__":
    chaosbot.run(Trickster)
