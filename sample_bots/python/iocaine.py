#!/usr/bin/env python3
"""iocaine: Iocaine Powder (Dan Egnor's RoShamBo winner) for five moves and for three.

Idea (see docs/bots.md for the long form): a few predictors, each turned into
every possible "rotation", each variant scored by how it would have done, the
best one played; the scoring itself runs over several horizons and a
meta-meta layer picks the horizon; a random fallback when it is being beaten.

Predictors (history sizes 1000, 100, 10, 5, 2, 1 each):
  * frequency analysis of the opponent's visible moves (window of H rounds),
  * history matching: the longest match of the recent joint history (our move,
    their visible move) whose continuation lies in the last H rounds; predict
    what the opponent did after it,
  * the mirrored versions P' of both (predict *our* next move, as the opponent
    would if it used P against us),
  * the random predictor (a fresh random move; the hedge).

Rotations with five moves. Put the moves on a circle where every move beats the
two before it: rock, spock, paper, lizard, scissors (chaosbot.cyclic_order).
Offsets are taken on that circle. For a predicted opponent move p:
  P.0 (naive)       play p+1 or p+2 (both beat p);
  P.1 (2nd-guess)   the opponent expects P.0; the one move beating both p+1
                    and p+2 is p+3, which p+4 and p both beat;
  P.2 (3rd-guess)   the opponent expects P.1; the one move beating p+4 and p
                    is p+1, which p+2 and p+3 beat.
So the second-guessing chain already covers every offset 0..4 (in RPS it
covers 1, 0, 2), and we score all five offsets of each prediction as separate
variants. "Which of the two winning answers" is settled by each offset's own
score, ties broken in the order naive, second-, third-guess: 1, 2, 4, 0, 3.
For P' (q = our predicted move) the opponent plays q+1 or q+2, the one move
beating both is q+3 (P'.0); rotating gives q+1 (P'.1) and q+4 (P'.2): order
3, 1, 4, 0, 2. In RPS the orders are 1, 0, 2 and 2, 1, 0, as in the original.

Meta layers: variant scores are kept over horizons 1000, 100, 10, 5, 2, 1; each
horizon's best variant is a "picker". Every picker (and its rotations) is
scored over the whole match and the best one is played. If our visible score
over the last 100 rounds falls below -12 we play at random until it recovers.

Shadows (Chaos League shows us only visible moves): a bucket drop between two
turns proves that the round in between was a shadow, so that round is masked
(no scoring, no counting, history matches do not cross it). Shadows come in
bursts, so the 8 rounds before a drop are retroactively halved in weight and
the 12 rounds after it count half too. Once the bucket is EMPTY every visible
move is real and counts fully.

Speed: everything is incremental. Window counts are updated by adding the new
round and removing the one that left the window; the longest match uses a
dictionary from (the last k joint moves, k <= 20) to the last round where they
ended, with entries older than 1000 rounds evicted; the 121 variant scores of
a horizon live in one Python integer with 16 bits a variant, so a round's
update is one addition and one subtraction per horizon and the argmax runs in
C (array.index(max(...))). Cost per move does not grow with the match length.

`python3 iocaine.py --selftest-timing 10000` plays a sparring partner in-process
and prints the per-move time (no pipes involved). `python3 iocaine.py --noise 0.1`
is a deliberately weakened copy: it plays a uniformly random move 10% of the time
(what `referee sprt` must tell apart from the real one).
"""

from __future__ import annotations

import random
import sys
import time
from array import array

import chaosbot

SIZES = (1000, 100, 10, 5, 2, 1)  # predictor history sizes and meta horizons
MAX_AGE = SIZES[0]
MAX_MATCH = 20  # longest joint-history match tracked; longer ones change nothing
FIELD = 16  # bits per variant in a packed horizon sum (max 2 * 2 * 1000 < 2**16)
META_FIELD = 32  # bits per picker rotation in the packed whole-match sum
FALLBACK_WINDOW = 100
FALLBACK_AT = -12  # about 1.4 sd below zero over 100 rounds of five-move play
RETRO = 8  # rounds before a bucket drop whose weight is halved
PRESSURE = 12  # rounds after a bucket drop that count half
FULL, HALF = 2, 1  # round weights; a masked round has weight 0

# Offset orders (on the circle) for a prediction of their move (P) and of ours (P').
P_OFFSETS = {3: (1, 0, 2), 5: (1, 2, 4, 0, 3)}
P_MIRROR_OFFSETS = {3: (2, 1, 0), 5: (3, 1, 4, 0, 2)}


def _typecode(size: int) -> str:
    for code in "HILQ":
        if array(code).itemsize == size:
            return code
    raise RuntimeError(f"no {size}-byte array type")


SHORT, LONG = _typecode(FIELD // 8), _typecode(META_FIELD // 8)
BIG_ENDIAN = sys.byteorder == "big"


def _argmax_field(packed: int, nbytes: int, code: str) -> int:
    """Index of the largest field of a packed little-endian integer (first on ties)."""
    arr = array(code, packed.to_bytes(nbytes, "little"))
    if BIG_ENDIAN:
        arr.byteswap()
    return arr.index(max(arr))


class Iocaine(chaosbot.Bot):
    name = "iocaine"
    noise = 0.0  # share of moves played uniformly at random instead (``--noise P``)
    bias = 0.0  # share of moves that are the first move instead (``--bias P``)

    def __init__(self, hello: dict) -> None:
        super().__init__(hello)
        self.cyc = chaosbot.cyclic_order(self.moves)
        self.index = {m: i for i, m in enumerate(self.cyc)}
        n = self.n = len(self.cyc)
        half = (n - 1) // 2
        # out[(a - b) % n]: points for playing a against b on the circle.
        self.out = out = [0] + [1] * half + [-1] * half
        p_offs = P_OFFSETS.get(n, tuple(range(1, n)) + (0,))
        m_offs = P_MIRROR_OFFSETS.get(n, p_offs)
        ns = len(SIZES)
        # Prediction slots: frequency P (ns), frequency P' (ns), match P, match P'.
        self.offsets = [p_offs] * ns + [m_offs] * ns + [p_offs] * ns + [m_offs] * ns
        self.npred = len(self.offsets)
        self.nvar = self.npred * n + 1  # the random predictor is the last variant
        # pack[j][d]: the packed per-round scores of slot j's n variants when the
        # opponent showed prediction + d. Field value is points + 1 (never negative).
        self.pack = [
            tuple(
                sum((out[(k - d) % n] + 1) << (FIELD * (j * n + i)) for i, k in enumerate(offs))
                for d in range(n)
            )
            for j, offs in enumerate(self.offsets)
        ]
        rand_shift = FIELD * self.npred * n
        self.pack_rand = tuple((out[x] + 1) << rand_shift for x in range(n))
        # meta_pack[h][d]: picker h's rotations r = 0..n-1 when they showed pick + d.
        self.meta_pack = [
            tuple(
                sum((out[(r - d) % n] + 1) << (META_FIELD * (h * n + r)) for r in range(n))
                for d in range(n)
            )
            for h in range(ns)
        ]
        self.nbytes = self.nvar * FIELD // 8
        self.meta_nbytes = ns * n * META_FIELD // 8

        self.t = 0  # rounds recorded
        self.opp: list[int] = []  # their visible moves on the circle; -1 unknown or masked
        self.me: list[int] = []  # our real moves; -1 unknown
        self.weight: list[int] = []  # trust in each round's visible move: 2, 1 or 0
        self.joint: list[int] = []  # me * n + opp, -1 where either is unknown
        self.last_o = -1
        self.last_m = -1
        self.opp_counts = [[0] * n for _ in SIZES]
        self.me_counts = [[0] * n for _ in SIZES]
        self.ends: dict[int, int] = {}  # joint-history k-gram code -> last round it ended
        self.keys_at: list[list[int]] = [[] for _ in range(MAX_AGE + 2)]
        self.found: list[int] = []  # found[k-1]: previous end of the current k-gram
        self.ring = [0] * (MAX_AGE + 1)  # per-round packed variant scores
        self.sums = [0] * ns  # packed variant scores per horizon
        self.meta = 0  # packed picker-rotation scores over the whole match
        self.fall_ring = [0] * FALLBACK_WINDOW
        self.fall_sum = 0
        self.pred: list[int] | None = None  # last round's predictions, to score them
        self.picks: list[int] = []
        self.rand = 0
        self.last_bucket: str | None = None
        self.pressure_until = -1
        # Its own stream, so that --noise 0 plays exactly as the plain bot does.
        self.noise_rng = random.Random(f"noise:{self.seed}")

    # -- the protocol side -------------------------------------------------

    def move(self, turn: chaosbot.Turn) -> str:
        if turn.round > 1:
            self.record(
                turn.opponent_last_visible, turn.self_last_real, turn.opponent_deception_bucket
            )
        self.last_bucket = turn.opponent_deception_bucket
        pick = self.cyc[self.choose()]
        if self.noise and self.noise_rng.random() < self.noise:
            # A deliberately weakened copy (``--noise P``): a uniformly random move.
            return self.noise_rng.choice(self.moves)
        if self.bias and self.noise_rng.random() < self.bias:
            # Weakened predictably (``--bias P``): the first move, a habit to exploit.
            return self.moves[0]
        return pick

    # -- learning ------------------------------------------------------------

    def record(self, seen: str | None, mine: str | None, bucket_now: str) -> None:
        """Take in the round just played: score every variant, update every model."""
        t, n = self.t, self.n
        o = self.index.get(seen, -1) if seen is not None else -1
        m = self.index.get(mine, -1) if mine is not None else -1
        prev_bucket = self.last_bucket
        if o < 0:
            w = 0
        elif chaosbot.bucket_dropped(prev_bucket, bucket_now):
            w = 0  # this visible move is a proven shadow
            self._discount_recent()
            self.pressure_until = t + PRESSURE
        elif prev_bucket == "EMPTY" or t > self.pressure_until:
            w = FULL
        else:
            w = HALF

        # Score last round's variants against what they showed.
        v = 0
        if w and self.pred is not None:
            v = self.pack_rand[(self.rand - o) % n]
            for row, p in zip(self.pack, self.pred, strict=True):
                v += row[(o - p) % n]
            mv = 0
            for row, a in zip(self.meta_pack, self.picks, strict=True):
                mv += row[(o - a) % n]
            if w == FULL:
                v <<= 1
                mv <<= 1
            self.meta += mv
        ring = self.ring
        size = len(ring)
        ring[t % size] = v
        sums = self.sums
        for i, h in enumerate(SIZES):
            if t >= h:
                sums[i] += v - ring[(t - h) % size]
            else:
                sums[i] += v
        # Our own visible result, for the random fallback.
        res = self.out[(m - o) % n] if (w and m >= 0) else 0
        slot = t % FALLBACK_WINDOW
        self.fall_sum += res - self.fall_ring[slot]
        self.fall_ring[slot] = res

        # Frequency windows: add this round, drop the one leaving each window.
        o_kept = o if w else -1
        self.opp.append(o_kept)
        self.me.append(m)
        self.weight.append(w)
        opp, me, weight = self.opp, self.me, self.weight
        for i, h in enumerate(SIZES):
            c = self.opp_counts[i]
            cm = self.me_counts[i]
            if w:
                c[o] += w
            if m >= 0:
                cm[m] += 1
            if t >= h:
                old = opp[t - h]
                if old >= 0:
                    c[old] -= weight[t - h]
                old = me[t - h]
                if old >= 0:
                    cm[old] -= 1
        if o_kept >= 0:
            self.last_o = o_kept
        if m >= 0:
            self.last_m = m

        # Longest match: look up, then store, every k-gram ending at this round.
        sym = m * n + o_kept if (m >= 0 and o_kept >= 0) else -1
        joint = self.joint
        joint.append(sym)
        found: list[int] = []
        keys: list[int] = []
        ends = self.ends
        if sym >= 0:
            base = n * n + 1  # digits are symbol + 1, so codes of different k differ
            code = 0
            for k in range(1, min(MAX_MATCH, t + 1) + 1):
                s = joint[t - k + 1]
                if s < 0:
                    break  # a match never runs through an unknown or masked round
                code = code * base + s + 1
                prev = ends.get(code)
                ends[code] = t
                keys.append(code)
                if prev is not None and len(found) == k - 1:
                    found.append(prev)
        self.found = found
        keys_at = self.keys_at
        old_t = t - MAX_AGE - 1  # an end this old predicts outside every window
        if old_t >= 0:
            for code in keys_at[old_t % len(keys_at)]:
                if ends.get(code) == old_t:
                    del ends[code]
        keys_at[t % len(keys_at)] = keys
        self.t = t + 1

    def _discount_recent(self) -> None:
        """A drop proved a shadow: the rounds just before it were likely shadows too."""
        t = self.t
        ring = self.ring
        size = len(ring)
        for pos in range(max(0, t - RETRO), t):
            if self.weight[pos] != FULL:
                continue
            self.weight[pos] = HALF
            v2 = ring[pos % size]
            v1 = v2 >> 1  # exact: a full-weight vector is a doubled one
            ring[pos % size] = v1
            o = self.opp[pos]
            for i, h in enumerate(SIZES):
                if pos >= t - h:
                    self.sums[i] -= v2 - v1
                    self.opp_counts[i][o] -= FULL - HALF

    # -- deciding ------------------------------------------------------------

    def choose(self) -> int:
        """Predict, let each horizon pick a variant, let the meta layer pick a horizon."""
        n, t = self.n, self.t
        rand = self.rand = self.rng.randrange(n)
        if t == 0:
            self.pred = [0] * self.npred
            self.picks = [rand] * len(SIZES)
            return rand
        last_o = self.last_o if self.last_o >= 0 else 0
        last_m = self.last_m if self.last_m >= 0 else 0
        pred: list[int] = []
        for counts, last in ((self.opp_counts, last_o), (self.me_counts, last_m)):
            for c in counts:
                top = max(c)
                # Ties go to the most recent move, then to circle order.
                pred.append(last if c[last] == top else c.index(top))
        found = self.found
        k = len(found)
        hist_o: list[int] = []
        hist_m: list[int] = []
        for h in SIZES:  # decreasing sizes: the usable match can only get shorter
            threshold = t - h - 1
            while k and found[k - 1] < threshold:
                k -= 1
            if k:
                nxt = found[k - 1] + 1
                po, pm = self.opp[nxt], self.me[nxt]
                hist_o.append(po if po >= 0 else last_o)
                hist_m.append(pm if pm >= 0 else last_m)
            else:
                hist_o.append(last_o)
                hist_m.append(last_m)
        pred += hist_o
        pred += hist_m

        picks: list[int] = []
        rand_var = self.nvar - 1
        offsets = self.offsets
        for s in self.sums:
            var = _argmax_field(s, self.nbytes, SHORT)
            if var == rand_var:
                picks.append(rand)
            else:
                j, i = divmod(var, n)
                picks.append((pred[j] + offsets[j][i]) % n)
        best = _argmax_field(self.meta, self.meta_nbytes, LONG)
        h, r = divmod(best, n)
        self.pred, self.picks = pred, picks
        if self.fall_sum < FALLBACK_AT:
            return rand
        return (picks[h] + r) % n


# -- timing self-test ----------------------------------------------------------


class _Sparring(chaosbot.Bot):
    """An opponent that changes style every 500 rounds and spends shadows in bursts,
    so that every code path of Iocaine runs while it is being timed."""

    name = "sparring"

    def move(self, turn: chaosbot.Turn) -> str | chaosbot.Shadow:
        moves = self.moves
        phase = (turn.round // 500) % 4
        if phase == 0:
            real = moves[0] if self.rng.random() < 0.4 else self.rng.choice(moves)
        elif phase == 1:
            real = moves[turn.round % len(moves)]
        elif phase == 2 and turn.self_last_real:
            real = self.answer(turn.opponent_last_visible or moves[0])
        else:
            real = self.rng.choice(moves)
        if turn.round % 700 < 5 and self.tokens > 0:
            return chaosbot.Shadow(real, moves[0])
        return real


_SAMPLES: list[int] = []  # wall time per move, ns
_CPU: list[int] = []  # CPU time of this thread per move, ns: steadier on a busy machine


_TURNS: list[dict] = []  # every turn message the timed bot got, in order
_SNAPSHOTS: dict[int, Iocaine] = {}  # copies of the timed bot just before turn i
_SNAPSHOT_AT: tuple[int, ...] = ()


class _TimedIocaine(Iocaine):
    def handle_turn(self, msg: dict, strict: bool = False) -> dict:
        if len(_TURNS) in _SNAPSHOT_AT:
            import copy

            _SNAPSHOTS[len(_TURNS)] = copy.deepcopy(self)
        _TURNS.append(msg)
        cpu = time.thread_time_ns()
        start = time.perf_counter_ns()
        reply = super().handle_turn(msg, strict)
        _SAMPLES.append(time.perf_counter_ns() - start)
        _CPU.append(time.thread_time_ns() - cpu)
        return reply


def _early_against_late(early: int, late: int, moves: int, reps: int) -> tuple[float, float]:
    """Median thread CPU time per move (us) of the bot as it was before turn ``early``
    and before turn ``late``, each playing its next ``moves`` turns again from a copy,
    the two taking turns ``reps`` times. The match's own timings drift with whatever
    else the machine does between its first and its last rounds; here both states
    are timed in the same moments."""
    import copy
    import statistics

    cpu: dict[int, list[int]] = {early: [], late: []}
    for rep in range(reps):
        # Each goes first in every other round, so that neither gains from its place.
        for at in (early, late) if rep % 2 == 0 else (late, early):
            bot = copy.deepcopy(_SNAPSHOTS[at])
            for msg in _TURNS[at : at + moves]:
                t = time.thread_time_ns()
                Iocaine.handle_turn(bot, msg, True)
                cpu[at].append(time.thread_time_ns() - t)
    return statistics.median(cpu[early]) / 1000, statistics.median(cpu[late]) / 1000


def selftest_timing(rounds: int) -> None:
    """Time whole turns (bookkeeping, learning, deciding) against a sparring partner."""
    global _SNAPSHOT_AT
    _SAMPLES.clear()
    _CPU.clear()
    _TURNS.clear()
    _SNAPSHOTS.clear()
    # Once every window is full (the longest is 1,000 rounds), and near the end.
    early, late = 1000, rounds - 1000
    _SNAPSHOT_AT = (early, late) if late > early else ()
    result = chaosbot.play(_TimedIocaine, _Sparring, "chaos", rounds, seeds=(11, 22))
    us = [x / 1000 for x in _SAMPLES]
    ordered = sorted(us)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    head, tail = us[:1000], us[-1000:]
    print(f"iocaine per-move time over {rounds} rounds (in-process, no I/O):")
    print(f"  mean {sum(us) / len(us):.1f} us   p99 {p99:.1f} us   max {ordered[-1]:.1f} us")
    print(
        f"  first-1000 mean {sum(head) / len(head):.1f} us   "
        f"last-1000 mean {sum(tail) / len(tail):.1f} us"
    )
    print(f"  cpu mean {sum(_CPU) / len(_CPU) / 1000:.1f} us (thread CPU time, ignores preemption)")
    # Medians of thread CPU time: steadier than wall-clock means on a busy machine.
    import statistics  # here: a playing bot does not need it at start-up

    cpu = [x / 1000 for x in _CPU]
    print(
        f"  first-1000 cpu median {statistics.median(cpu[:1000]):.1f} us   "
        f"last-1000 cpu median {statistics.median(cpu[-1000:]):.1f} us"
    )
    blocks = [statistics.median(cpu[i : i + 1000]) for i in range(0, len(cpu) - 999, 1000)]
    print("  cpu median per 1000 rounds: " + " ".join(f"{b:.1f}" for b in blocks))
    if _SNAPSHOT_AT:
        at_early, at_late = _early_against_late(early, late, moves=200, reps=16)
        print(
            f"  interleaved cpu median: rounds {early + 1}-{early + 200} {at_early:.1f} us   "
            f"rounds {late + 1}-{late + 200} {at_late:.1f} us"
        )
    print(f"  points vs sparring partner: {result['points'][0]:+d}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--selftest-timing":
        selftest_timing(int(sys.argv[2]) if len(sys.argv) > 2 else 10000)
    else:
        options = dict(zip(sys.argv[1::2], sys.argv[2::2], strict=False))
        Iocaine.noise = float(options.get("--noise", 0.0))
        Iocaine.bias = float(options.get("--bias", 0.0))
        chaosbot.run(Iocaine)
