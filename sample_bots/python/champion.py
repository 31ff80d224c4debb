#!/usr/bin/env python3
"""champion: Iocaine Powder's meta-strategy over many more predictors, shadow-aware,
and a deceiver that spends its tokens where a shown move steers the opponent's reply.

Idea (see docs/bots.md for the long form):

Predictors, each giving one move a round:
  * history matching on two histories (the joint one and the opponent's visible
    moves) at several lengths (the last occurrence of the last 1, 2 and 4
    rounds, and the longest match up to 10), predicting the opponent's next
    move and, on the joint history, ours too;
  * context models: decayed counts of the opponent's next move after each
    context (nothing, its last move, our last move, the last joint round, the
    last two joint rounds, its last two, our last two), at two or four decay
    rates. A context model names the reply with the best expected score
    against its counts, so it weighs evidence where a history match trusts one
    occurrence: noisy and mixed opponents are read much better;
  * mirrored context models (the same contexts predicting *our* next move, as an
    opponent with such a model would);
  * in classic RoShamBo, three plain predictors: their last move, our last move
    and their least played move (a switch-a-lot or flat player's next is read
    from these at once, where counts take hundreds of rounds to settle);
  * in classic RoShamBo, the self-model: simulated decayed ensembles of
    context predictors of OUR moves (the strongest historic readers), each
    predicting the move such an opponent would play against us;
  * a random move, the hedge.
Every prediction is played in every rotation (Iocaine's P.0, P.1, P.2 and the
mirrored P'.0..2; with five moves all five offsets), and every variant is scored
by how it would have done against the visible moves, at six decay rates. Each
rate's best variant is a picker; the pickers and their rotations are scored over
the match and the best is played; a random fallback when we are being beaten.
The meta layer's pick is played only once it has proven an edge (its points,
played or not, stand above chance over the match or lately); until then, and
against an opponent nothing predicts (random), the bot plays random moves. In
Chaos League this keeps a hindsight exploiter (the score's anti-exploitation
part) from reading it; in classic RoShamBo it keeps an equally strong predictor
from taking points off picks that have not earned their place.

Shadows: a bucket drop proves the round before it was a shadow; that visible
move is masked (not scored, not learned) and the 12 rounds after a drop count
half. The context models on the opponent also run on the raw visible history,
and the scoring decides which to believe.

Deception: from the rounds in which we showed our real move the bot learns the
opponent's reply to each move we show (the table the scoring's deception
efficiency uses). A token is spent where that table, and the opponent's recent
replies, say that showing some other move v makes their next move one that is
typical of v, untypical of our real move, and that we are nearly sure to beat:
next round we play that answer. A token must promise more credit than it costs
and than the efficiency already reached, plus a margin that shrinks over the
match (tokens are kept for its second half, when the table is close to the
final one) and a floor that keeps learning opponents we read well undisturbed
(a false move kicks them off the course they were on); the floor is lower while
we are losing. An opponent whose replies do not depend on what it sees (random,
rock) has rows of the table alike, so no shown move promises credit. Forecasts
are discounted by how well the earlier ones came true.

In the last tenth of the match, where a false move cannot cost many later
points, an endgame planner runs first: simulated learners of our shown moves
(Markov-like at two decays, a frequency learner) and their recent replies
forecast their reply to each move we could show; the best-scoring forecaster's
forecast, calibrated by its hit rate, gives each (shown move, next answer) its
expected credit as the scoring computes it, and a token goes to an offer that
raises the efficiency and is among the best of the recent offers. If a
forgetting forecaster reads them best (a learner that follows one false move)
only the last 20 rounds are open.

Randomness comes from the hello seed, so a match is reproducible.
"""

from __future__ import annotations

import sys
import time
from itertools import repeat
from operator import add, mul

import chaosbot
import numpy as np

# Offset orders on the circle for a prediction of their move (P) and of ours (P'):
# naive first, then the second- and third-guessing rotations (as in Iocaine).
P_OFFSETS = {3: (1, 0, 2), 5: (1, 2, 4, 0, 3)}
P_MIRROR_OFFSETS = {3: (2, 1, 0), 5: (3, 1, 4, 0, 2)}

MATCH_LENGTHS = (1, 2, 4)  # history-match context lengths (plus the longest)
MAX_MATCH = 10  # longest match tracked
MAX_AGE = 2000  # k-grams that ended longer ago are forgotten
NEVER = -(10**18)  # the end of a k-gram not seen yet: older than any
# Context tables: (family, kind, decay). Families: "opp" = the opponent's visible
# moves with proven shadows masked, "raw" = its visible moves as shown, "me" = our
# own moves (the mirror). Kinds: 0 none, 1 their last, 2 our last, 3 last joint
# round, 4 last two joint rounds, 5 their last two, 6 our last two.
TABLES = (
    [("opp", 0, d) for d in (0.7, 0.9, 0.99, 1.0)]
    + [("opp", k, d) for k in range(1, 7) for d in (0.9, 0.99)]
    + [("me", 0, d) for d in (0.9, 0.99)]
    + [("me", k, 0.95) for k in (1, 2, 3)]
)
RAW_TABLES = [("raw", k, 0.99) for k in (1, 3)]  # only where shadows exist
SCORE_DECAYS = (0.5, 0.8, 0.9, 0.97, 0.99, 0.999)  # the pickers' scoring horizons
META_DECAY = 0.999  # the meta layer's scoring of the pickers
RESCALE_AT = 1e150  # growing-increment decay: renormalise before floats overflow
FALLBACK_WINDOW = 100
FALLBACK_AT = -12  # visible score over the last 100 rounds that triggers random play
# Chaos League charges a bot whose moves a hindsight exploiter could read (the
# Exploitability half of anti-exploitation), so there the meta layer's pick is
# played only while it has proven an edge; otherwise a random move, which no
# context explains. Proven: its points over the match, or over a recent window,
# stand that many standard deviations above what chance gives.
PROOF_Z = 1.0  # over the whole match (finds small, lasting edges)
RECENT_Z = 2.5  # over the recent rounds (finds a large edge quickly)
# Classic RoShamBo is scored by points alone, but the same guard keeps a strong
# predicting opponent (one that reads the meta layer's pick as well as we read
# its moves) from taking points off an unproven pick; there a large recent edge
# is trusted sooner, since a classic match is ten times shorter.
CLASSIC_RECENT_Z = 1.5
RECENT_DECAY = 0.99
FLOOR = 0.4  # expected credit a token must promise in any case ...
LOSING_FLOOR = 0.25  # ... and while we are losing lately
PRESSURE = 12  # rounds after a bucket drop that count half
RESPONSE_PRIOR = 5.0  # smoothing of the reply table toward their overall mix
START_SHARE = 0.5  # no tokens before this share of the match (see _plan_shadow)
PACE_SLACK = 3  # tokens we may be ahead of an even pace
KAPPA = 0.1  # what a token costs in the deception efficiency's numerator
EARLY_MARGIN = 0.15  # extra credit asked of a token at the start, falling to 0 at the end
LOSING_MARGIN = 0.5  # share of that margin still asked while we are losing lately
REPLAN_EVERY = 8  # rounds between recomputations of the whole-match reply model
MIN_EVIDENCE = 40  # honest rounds a row of the reply table needs before it is trusted
SURE_WIN = 0.8  # forecast chance that our answer beats their reply to the fake
COOLDOWN = 10  # rounds after a token before the next (a misread fake is not repeated)
REPLY_DECAY = 0.9  # the context table whose rows forecast their reply to a shown move
AUDIT_AFTER = 4  # spends before the forecasts are discounted by what they realised
ENDGAME = 1000  # at most this many last rounds (a tenth of the match) see _plan_endgame ...
SHORT_MEMORY_ENDGAME = 20  # ... and only these when a forgetting forecaster reads them best
WATCH = 1000  # rounds before them in which the reply forecasters are scored
LEARNER_DECAYS = (0.98, 0.9)  # simulated first-order learners of our shown moves
REPLY_TABLE_DECAY = 0.95  # per showing of a move: their recent replies to it
FORECAST_DECAY = 0.98  # scoring of the reply forecasters
ENDGAME_MARGIN = 0.02  # expected credit asked beyond what raises the efficiency
OFFERS_KEPT = 200  # recent expected credits an offer is ranked among
# The self-model (classic RoShamBo only): simulated opponents of the strongest
# kind, decayed ensembles of last-occurrence predictors of OUR next move (on the
# joint history and on our own, at every context length here, each prediction
# in its three rotations, scored with one of these decays, the best played, none
# while no variant is ahead). What each would play is offered as a prediction of
# their move, so the meta layer can play the counter to their counter. The
# decays span fast to slow readers (chosen on the historic field's tuning set).
SELF_LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8)
SELF_DECAYS = (0.85, 0.9, 0.95, 0.98)


class History:
    """Longest-match bookkeeping for one symbol sequence: for each k up to
    MAX_MATCH, where the k symbols ending now last ended before.

    ``ends`` maps a k-gram's code to the last round it ended in, so a round costs
    at most MAX_MATCH dictionary look-ups whatever the length of the match. An
    end older than MAX_AGE counts as absent; such entries are purged in one sweep
    every MAX_AGE rounds, which keeps the dictionary bounded."""

    def __init__(self, base: int) -> None:
        self.base = base + 1  # digits are symbol + 1, so codes of different k differ
        self.seq: list[int] = []
        self.ends: dict[int, int] = {}
        self.found: list[int] = []  # found[k-1]: previous end of the current k-gram
        self.purge_at = 2 * MAX_AGE
        # codes[k-1]: the code of the k symbols ending now (newest digit first), as
        # long as none of them is unknown; the next round's follow from these.
        self.codes: list[int] = []
        powers = [self.base**k for k in range(1, MAX_MATCH)]
        # digit_powers[sym]: the codes' new digit at each length, sym + 1 times base^k.
        self.digit_powers = [[(sym + 1) * p for p in powers] for sym in range(base)]

    def add(self, sym: int) -> None:
        seq = self.seq
        t = len(seq)
        seq.append(sym)
        found: list[int] = []
        self.found = found
        if sym >= 0:
            ends = self.ends
            oldest = t - MAX_AGE
            # map stops at the shorter list: the k-grams that exist, up to MAX_MATCH.
            codes = [sym + 1, *map(add, self.digit_powers[sym], self.codes)]
            self.codes = codes
            for prev in map(ends.get, codes, repeat(NEVER)):
                if prev < oldest:
                    break
                found.append(prev)
            ends.update(dict.fromkeys(codes, t))
        else:
            self.codes = []  # a match never runs through an unknown or masked round
        if t >= self.purge_at:
            self.purge_at = t + MAX_AGE
            keep_from = t + 1 - MAX_AGE  # what the next round may still match
            self.ends = {c: e for c, e in self.ends.items() if e >= keep_from}


class Champion(chaosbot.Bot):
    name = "champion"

    def __init__(self, hello: dict) -> None:
        super().__init__(hello)
        self.cyc = chaosbot.cyclic_order(self.moves)
        self.index = {m: i for i, m in enumerate(self.cyc)}
        n = self.n = len(self.cyc)
        half = (n - 1) // 2
        self.out = out = [0] + [1] * half + [-1] * half  # out[(a - b) % n]
        self.payoff = np.array([[out[(a - b) % n] for b in range(n)] for a in range(n)], float)
        self.total_tokens = self.tokens
        self.shadows = self.tokens > 0
        p_offs = P_OFFSETS.get(n, tuple(range(1, n)) + (0,))
        m_offs = P_MIRROR_OFFSETS.get(n, p_offs)

        # History matching: joint, theirs.
        self.hist = [History(n * n), History(n)]
        # Slots: (history, length index, predicts ours?) for every length incl. longest.
        lengths = len(MATCH_LENGTHS) + 1
        self.match_slots = [(h, li, mine) for (h, mine) in HIST_SLOTS for li in range(lengths)]
        self.lengths = MATCH_LENGTHS + (MAX_MATCH,)
        # length_picks[k]: with a match of k rounds, found[] indices of each length's.
        self.length_picks = [[min(ln, k) - 1 for ln in self.lengths] for k in range(MAX_MATCH + 1)]
        offsets = [m_offs if mine else p_offs for (_, _, mine) in self.match_slots]
        # Plain predictors (see PLAIN_SLOTS): P offsets on their moves, P' on ours.
        self.classic = self.game != "chaos"
        self.plain = [k for k in PLAIN_SLOTS if k in PLAIN_PREDICTORS] if self.classic else []
        offsets += [m_offs if k == "ours" else p_offs for k in self.plain]
        # The self-model (see SELF_LENGTHS): our own history's matches, and each
        # simulated ensemble's scores [decay, predictor, rotation]; a predictor's
        # prediction n means none (it scores nothing, as a random one would on
        # average).
        self.self_decays = SELF_DECAYS if self.classic else ()
        self.own = History(n) if self.self_decays else None
        nsim = 2 * len(SELF_LENGTHS)
        self.sim_scores = np.zeros((len(self.self_decays), nsim, n))
        self.sim_decay = np.array(self.self_decays).reshape(-1, 1, 1)
        self.sim_pred = np.full(nsim, n)
        self.sim_pred_list = [n] * nsim
        # sim_pts[p, m]: what rotation r of a predictor that predicted p scores
        # against our move m (rotation r plays p + 1 + r, the ensemble's counter).
        self.sim_pts = np.array(
            [
                [[out[(p + 1 + r - m) % n] if p < n else 0 for r in range(n)] for m in range(n)]
                for p in range(n + 1)
            ],
            float,
        )
        self.sim_lengths = [k - 1 for k in SELF_LENGTHS]
        offsets += [p_offs] * len(self.self_decays)

        # Context tables.
        self.tables = TABLES + (RAW_TABLES if self.shadows else [])
        ntab = self.ntab = len(self.tables)
        self.counts = np.zeros((ntab, n**4, n))
        self.count_rows = self.counts.reshape(ntab * n**4, n)  # a view: one row per context
        self.decay_step = np.array([1.0 / d for (_, _, d) in self.tables])
        self.inc_max = 1.0  # the largest increment, kept as a float: cheaper than max()
        self.max_step = float(self.decay_step.max())
        self.is_mirror = np.array([f == "me" for (f, _, _) in self.tables])
        # A context model names our best reply a, i.e. it predicts their move a - 1:
        # its P offsets are shifted by one so that the reply itself is the prediction.
        shifted = tuple((x - 1) % n for x in p_offs)
        offsets += [m_offs if f == "me" else shifted for (f, _, _) in self.tables]
        self.ctx_prev: np.ndarray | None = None  # each table's row in count_rows
        self.ctx_ok = np.zeros(ntab)  # 1.0 where that context is known
        fam_idx = np.array([("opp", "raw", "me").index(f) for (f, _, _) in self.tables])
        # move_lut[o_kept + 1, o + 1, m + 1]: the move each table learns this round;
        # weight_lut[2 * w, o known, m known]: with what weight.
        self.move_lut = np.zeros((n + 1, n + 1, n + 1, ntab), dtype=np.int64)
        for a in range(-1, n):
            for b in range(-1, n):
                for c in range(-1, n):
                    self.move_lut[a + 1, b + 1, c + 1] = np.array((a, b, c))[fam_idx].clip(0)
        self.weight_lut = np.zeros((3, 2, 2, ntab))
        for w2 in range(3):
            for ok_o in (0, 1):
                for ok_m in (0, 1):
                    self.weight_lut[w2, ok_o, ok_m] = np.array((w2 / 2, ok_o, ok_m))[fam_idx]
        # Context index = coef @ (o1, o2, r1, r2, m1, m2); known if no needed value < 0.
        self.ctx_coef = np.zeros((ntab, 6), dtype=np.int64)
        self.ctx_need = np.zeros((ntab, 6), dtype=np.int64)
        for i, (fam, kind, _) in enumerate(self.tables):
            a1, a2, b1, b2 = {"opp": (0, 1, 4, 5), "raw": (2, 3, 4, 5), "me": (4, 5, 0, 1)}[fam]
            terms = {
                0: {},
                1: {a1: 1},
                2: {b1: 1},
                3: {b1: n, a1: 1},
                4: {b2: n**3, a2: n**2, b1: n, a1: 1},
                5: {a2: n, a1: 1},
                6: {b2: n, b1: 1},
            }[kind]
            for col, coef in terms.items():
                self.ctx_coef[i, col] = coef
                self.ctx_need[i, col] = 1
        self.row_base = np.arange(ntab) * n**4
        # The contexts of each combination of the six values met so far (a dict
        # look-up a round instead of a handful of numpy calls).
        self.ctx_cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.ctx_cells = np.zeros(ntab, dtype=np.int64)  # ctx_prev * n: the row's first cell
        self.ctx_code = 0  # the key of the current contexts in ctx_cache
        # (cells, weights) of a round's count update by context and moves (see record).
        self.update_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.count_cells = self.counts.reshape(-1)  # a view
        # One product scores every row against our replies (first n columns) and
        # keeps it as it is (last n): a mirrored table predicts our move, so it
        # takes the second half (its likeliest move), the others the first.
        self.reply_or_likely = np.hstack((self.payoff.T, np.eye(n)))
        self.half_pick = 2 * np.arange(ntab) + self.is_mirror

        # Variants: prediction j played with offset offsets[j][i]; the last is random.
        self.npred = len(offsets)
        # pay_lut[j, p, i, y]: points of slot j's variant i, if it predicted p, against y.
        self.pay_lut = np.array(
            [[[self.payoff[(p + o) % n] for o in offs] for p in range(n)] for offs in offsets]
        )
        # Row slot_base[j] + p of pay_by_their[y] (below) is slot j predicting p.
        self.slot_base = np.arange(self.npred) * n
        self.var_slot = [v // n for v in range(self.npred * n)]
        self.var_offset = [offsets[v // n][v % n] for v in range(self.npred * n)]
        self.pred_idx = np.zeros(self.npred, dtype=np.int64)
        # Round one: every prediction "0" (a context slot's reply 1 is its prediction 0).
        self.pred0 = np.array([1 if o is shifted else 0 for o in offsets])
        self.rot_pay = np.array([[self.payoff[(p + r) % n] for r in range(n)] for p in range(n)])
        self.nvar = self.npred * n + 1
        self.scores = np.zeros((len(SCORE_DECAYS), self.nvar))
        self.score_growth = 1.0 / np.array(SCORE_DECAYS)  # the fastest decay comes first
        self.score_growth = self.score_growth[:, None]
        # The scores' increments and the context tables' (self.inc) are views of
        # one buffer, so that one multiplication a round grows both.
        nsd = len(SCORE_DECAYS)
        self.incs = np.ones(nsd + ntab)
        self.growths = np.concatenate((self.score_growth.ravel(), self.decay_step))
        self.score_inc = self.incs[:nsd].reshape(nsd, 1)
        self.inc = self.incs[nsd:]
        self.meta = np.zeros((len(SCORE_DECAYS), n))  # [picker, rotation]
        self.meta_inc = 1.0
        self.pick_pay: np.ndarray | None = None  # [picker, rotation, their move]: points
        self.score_inc_max = 1.0
        self.score_growth_max = float(self.score_growth.max())
        # pay_by_their[y, slot_base[j] + p, i]: pay_lut[j, p, i, y], so that the
        # points of every variant against their visible move are one take.
        self.pay_by_their = np.ascontiguousarray(self.pay_lut.transpose(3, 0, 1, 2)).reshape(
            n, self.npred * n, n
        )
        self.var_pay = np.zeros(self.nvar)  # each variant's points against their last move
        self.var_pay_grid = self.var_pay[:-1].reshape(self.npred, n)  # a view
        self.rand = 0  # the random variant's move this round
        self.var_scored = np.zeros((len(SCORE_DECAYS), self.nvar))  # scratch

        self.opp: list[int] = []  # their visible moves, -1 where unknown or masked
        self.raw: list[int] = []  # their visible moves as shown
        self.me: list[int] = []  # our real moves
        self.last_bucket: str | None = None
        self.pressure_until = -1
        self.fall_ring = [0] * FALLBACK_WINDOW
        self.fall_sum = 0
        self.pick_played = False  # see choose
        # The meta layer's own pick, played or not, and what it would have scored
        # (see PROOF_Z): whole match and decayed, and the matching variances.
        self.guarded = True
        self.recent_z = RECENT_Z if self.game == "chaos" else CLASSIC_RECENT_Z
        self.meta_pick = 0
        self.proof_sum = 0.0
        self.proof_var = 0.0
        self.recent_sum = 0.0
        self.recent_var = 0.0
        self.draw_free = 2 * half / n  # chance of a decided round between random moves

        # Deception: reply[x][y] counts "we showed x honestly, next they showed y".
        self.reply = np.zeros((n, n))
        self.honest_shown: list[int] = []  # per round: our move if we showed it, else -1
        self.spend_log: dict[int, tuple[int, int, float]] = {}  # round index: shown, real, credit
        self.sting = -1  # the move to play this round after a shadow
        self.forecast_sum = 0.0
        self.realised_sum = 0.0
        self.spends = 0
        self.next_spend = 0  # no token before this round
        self.shadow_from = max(2, int(START_SHARE * self.rounds))  # see _plan_shadow
        self.whole: np.ndarray | None = None  # the whole-match reply model, cached
        self.whole_until = 0
        self.ceiling = np.zeros(n)
        self.ceiling_list = [0.0] * n
        self.reply_tab = self.tables.index(("opp", 2, REPLY_DECAY))
        self.least_tab = self.tables.index(("opp", 0, 1.0))
        # Endgame deception: forecasters of their reply to each move we could show.
        self.endgame_from = max(2, self.rounds - min(ENDGAME, self.rounds // 10))
        self.watch_from = max(2, self.endgame_from - WATCH)
        self.shown: list[int] = []  # our shown moves
        self.learners = [[[0.0] * n for _ in range(n)] for _ in LEARNER_DECAYS]
        self.shown_counts = [0.0] * n
        self.reply_recent = [[0.0] * n for _ in range(n)]
        self.nfore = len(LEARNER_DECAYS) + 2  # see _forecast_by for the order
        self.answers = [[(z + k) % n for k in range(1, half + 1)] for z in range(n)]
        self.pay_lists = [[out[(a - b) % n] for b in range(n)] for a in range(n)]
        self.fore_hit = [0.0] * self.nfore  # decayed mean chance given to their reply
        self.fore_sharp = [0.0] * self.nfore  # decayed mean chance given to its own forecast
        self.fore_weight = 0.0
        self.offers: list[float] = []  # the expected credit of the best fake, by round
        self.pending: dict[int, list[list[float]]] = {}  # round index: forecasts made then

    # -- learning ------------------------------------------------------------

    def record(self, seen: str | None, mine: str | None, bucket_now: str) -> None:
        """Take in the round just played: score every variant, update every model."""
        n = self.n
        t = len(self.me)
        o = self.index.get(seen, -1) if seen is not None else -1
        m = self.index.get(mine, -1) if mine is not None else -1
        prev_bucket = self.last_bucket
        if o < 0:
            w = 0.0
        elif bucket_now != prev_bucket and chaosbot.bucket_dropped(prev_bucket, bucket_now):
            w = 0.0  # a proven shadow
            self.pressure_until = t + PRESSURE
        elif prev_bucket == "EMPTY" or t > self.pressure_until:
            w = 1.0
        else:
            w = 0.5
        o_kept = o if w > 0 else -1
        self.opp.append(o_kept)
        self.raw.append(o)
        self.me.append(m)

        # Decay by growing the increments instead of shrinking every score and
        # count (score_inc and inc at once).
        self.incs *= self.growths
        # Score last round's variants and pickers against what they showed.
        if self.pick_pay is not None:
            self.score_inc_max *= self.score_growth_max
            self.meta_inc /= META_DECAY
            if self.score_inc_max > RESCALE_AT:
                self.scores /= self.score_inc
                self.meta /= self.meta_inc
                self.score_inc[:] = 1.0
                self.score_inc_max = 1.0
                self.meta_inc = 1.0
            if w > 0:
                scored = self.var_scored
                self.pay_by_their[o].take(self.pred_idx, axis=0, out=self.var_pay_grid)
                self.var_pay[-1] = self.pay_lists[self.rand][o]
                np.multiply(self.score_inc, self.var_pay, out=scored)
                if w != 1.0:
                    scored *= w
                self.scores += scored
                self.meta += (w * self.meta_inc) * self.pick_pay[:, :, o]
                if self.guarded:
                    h, r = divmod(self.meta_pick, n)
                    pts = w * self.pick_pay[h, r, o]
                    var = w * w * self.draw_free
                    self.proof_sum += pts
                    self.proof_var += var
                    self.recent_sum = RECENT_DECAY * self.recent_sum + pts
                    self.recent_var = RECENT_DECAY * RECENT_DECAY * self.recent_var + var
        res = self.out[(m - o) % n] if (w > 0 and m >= 0) else 0
        slot = t % FALLBACK_WINDOW
        self.fall_sum += res - self.fall_ring[slot]
        self.fall_ring[slot] = res

        # History matching.
        joint, theirs = self.hist
        joint.add(m * n + o_kept if (m >= 0 and o_kept >= 0) else -1)
        theirs.add(o_kept)
        if self.own is not None:
            self._self_model(m)

        # Context tables: last round's context row of each learns this round's move.
        self.inc_max *= self.max_step
        if self.inc_max > RESCALE_AT:
            self.counts /= self.inc[:, None, None]
            self.inc[:] = 1.0
            self.inc_max = 1.0
        if self.ctx_prev is not None:
            # The cells and weights depend only on the context and this round's
            # moves: computed once per combination, like the contexts themselves.
            key = (((self.ctx_code * (n + 1) + o_kept + 1) * (n + 1) + o + 1) * (n + 1) + m + 1) * 3
            key += int(2 * w)
            update = self.update_cache.get(key)
            if update is None:
                moves = self.move_lut[o_kept + 1, o + 1, m + 1]
                weights = self.weight_lut[int(2 * w), int(o >= 0), int(m >= 0)] * self.ctx_ok
                # None: every weight is 1 (the usual case), no multiplication.
                update = self.update_cache[key] = (
                    self.ctx_cells + moves,
                    None if bool((weights == 1.0).all()) else weights,
                )
            cells, weights = update
            if weights is None:
                self.count_cells[cells] += self.inc
            else:
                self.count_cells[cells] += weights * self.inc
        self._contexts()
        self._learn_reply(o, m)
        if t > self.watch_from:
            self._score_forecasts(t, o)

    def _self_model(self, m: int) -> None:
        """Score the simulated ensembles' predictors on our move m, then let each
        predictor predict our next move (what followed the last occurrence)."""
        own = self.own
        assert own is not None
        if m >= 0:
            self.sim_scores *= self.sim_decay
            self.sim_scores += self.sim_pts[self.sim_pred, m]
        own.add(m)
        me, n = self.me, self.n
        pred = []
        for found in (self.hist[0].found, own.found):
            nf = len(found)
            pred += [me[found[k] + 1] if k < nf else n for k in self.sim_lengths]
        self.sim_pred = np.array(pred)
        self.sim_pred_list = pred  # the same, for cheap look-ups in _predictions

    def _contexts(self) -> None:
        """Each table's context for predicting the next round (ctx_prev, ctx_ok)."""
        b = self.n + 1
        opp, raw, me = self.opp, self.raw, self.me
        if len(me) >= 2:
            code = (opp[-1] + 1) * b + opp[-2] + 1
            code = ((code * b + raw[-1] + 1) * b + raw[-2] + 1) * b + me[-1] + 1
            code = code * b + me[-2] + 1
        else:
            code = (((((opp[-1] + 1) * b) * b + raw[-1] + 1) * b) * b + me[-1] + 1) * b
        known = self.ctx_cache.get(code)
        if known is None:
            vals = []
            rest = code
            for _ in range(6):
                rest, digit = divmod(rest, b)
                vals.append(digit - 1)
            vals.reverse()
            need = self.ctx_need @ (np.array(vals) < 0)
            ok = (need == 0).astype(float)
            rows = (self.ctx_coef @ np.array(vals).clip(0)) * (need == 0) + self.row_base
            known = self.ctx_cache[code] = (rows, rows * self.n, ok)
        self.ctx_prev, self.ctx_cells, self.ctx_ok = known
        self.ctx_code = code

    def _learn_reply(self, seen: int, mine: int) -> None:
        """Their reply (this round) to what we showed the round before, in honest
        rounds; and the audit of a shadow spent the round before."""
        before = len(self.me) - 2
        if before < 0 or seen < 0:
            return
        shown_then = self.honest_shown[before]
        if shown_then >= 0:
            self.reply[shown_then, seen] += 1.0
        spend = self.spend_log.pop(before, None)
        if spend is not None and mine >= 0:
            shown, real, forecast = spend
            f = self._reply_model()
            misread = max(0.0, f[shown, seen] - f[real, seen])
            self.realised_sum += misread * self.out[(mine - seen) % self.n]
            self.forecast_sum += forecast

    # -- forecasting their reply to a shown move (endgame) ---------------------

    def _learner_reply(self, counts: list[float]) -> list[float]:
        """What a learner that counts our moves plays: an answer to our likeliest
        move, the one of the answers that does best against the counts (ties
        shared), or a random move with nothing counted."""
        n = self.n
        top = max(counts)
        if top <= 0.0:
            return [1.0 / n] * n
        dist = [0.0] * n
        likely = [z for z in range(n) if counts[z] == top]
        answers, pay_rows = self.answers, self.pay_lists
        for z in likely:
            options = answers[z]
            score = [sum(map(mul, counts, pay_rows[a])) for a in options]
            best = max(score)
            picks = [a for a, sc in zip(options, score, strict=True) if sc == best]
            share = 1.0 / (len(likely) * len(picks))
            for a in picks:
                dist[a] += share
        return dist

    def _forecast_by(self, k: int, v: int, prev: int) -> list[float]:
        """Forecaster k's distribution of their next move if we show v now.

        0, 1: simulated first-order learners of our shown moves (as a Markov
        bot counts them, at two decays); FREQUENCY_FORECASTER: a frequency
        learner of our shown moves; the last: their recent replies to v."""
        nlearn = len(LEARNER_DECAYS)
        if k < nlearn:
            row = self.learners[k][v]
            if prev == v:
                d = LEARNER_DECAYS[k]
                row = [x * d for x in row]
                row[v] += 1.0
            return self._learner_reply(row)
        if k == nlearn:
            counts = list(self.shown_counts)
            counts[v] += 1.0
            return self._learner_reply(counts)
        recent = self.reply_recent[v]
        total = sum(recent)
        return [x / total for x in recent] if total > 0 else [1.0 / self.n] * self.n

    def _forecast(self, v: int, prev: int) -> list[list[float]]:
        """Every forecaster's distribution of their next move if we show v now."""
        return [self._forecast_by(k, v, prev) for k in range(self.nfore)]

    def _after_show(self, idx: int, v: int) -> None:
        """Commit the move we show in round idx to the simulated learners."""
        prev = self.shown[-1] if self.shown else -1
        if idx >= self.watch_from and self.tokens > 0:  # forecasts serve only the endgame
            self.pending[idx] = self._forecast(v, prev)
            if prev >= 0:
                for d, table in zip(LEARNER_DECAYS, self.learners, strict=True):
                    row = table[prev]
                    for k in range(self.n):
                        row[k] *= d
                    row[v] += 1.0
        self.shown_counts[v] += 1.0
        self.shown.append(v)

    def _score_forecasts(self, t: int, seen: int) -> None:
        """Score the forecasts of round t-1 against their move in round t."""
        fc = self.pending.pop(t - 1, None)
        if seen < 0 or fc is None:
            return
        shown = self.shown[t - 1]
        row = self.reply_recent[shown]
        for k in range(self.n):
            row[k] *= REPLY_TABLE_DECAY
        row[seen] += 1.0
        d = FORECAST_DECAY
        self.fore_weight = self.fore_weight * d + (1 - d)
        for k, dist in enumerate(fc):
            self.fore_hit[k] = self.fore_hit[k] * d + (1 - d) * dist[seen]
            self.fore_sharp[k] = self.fore_sharp[k] * d + (1 - d) * sum(p * p for p in dist)

    def _plan_endgame(self, rnd: int, real: int) -> tuple[int, int, float] | None:
        """(shown move, next round's answer, expected credit) in the last rounds.

        A false move kicks a learning opponent off its course, which costs points
        over the rest of the match: here there is little match left. Their reply
        to each move we could show is forecast by the forecaster that has been
        right most often lately, calibrated by how often it was right (mixed
        with a uniform guess); the shown move and the answer are those with the
        best expected credit as the scoring measures it (the whole-match reply
        table). An opponent that ignores what it sees gets the same forecast
        whatever we show, and rows of the table alike: no credit, no token."""
        if rnd >= self.rounds or self.fore_weight <= 0.0:
            return None
        n = self.n
        hits = [h / self.fore_weight for h in self.fore_hit]
        k = max(range(self.nfore), key=hits.__getitem__)
        sharp = self.fore_sharp[k] / self.fore_weight
        uniform = 1.0 / n
        if sharp <= uniform or hits[k] <= uniform:
            return None
        lam = min(1.0, (hits[k] - uniform) / (sharp - uniform))
        # An opponent read best by a forgetting model (a decayed learner, its
        # recent replies) weighs one false move heavily: it follows it for the
        # rounds after, off the course we read, which costs more points than the
        # credit, so only the last few rounds are open. One read best by
        # whole-match counts takes a false move as one count among thousands.
        if k != FREQUENCY_FORECASTER and self.rounds - rnd > SHORT_MEMORY_ENDGAME:
            return None
        prev = self.shown[-1] if self.shown else -1
        fc = np.array([self._forecast_by(k, v, prev) for v in range(n)])
        fc = lam * fc + (1.0 - lam) * uniform
        f = self._reply_model()
        misread = np.maximum(0.0, f - f[real])
        credit = (fc * misread).dot(self.payoff.T)  # [shown, answer]
        credit[real] = -1.0
        trust = 1.0
        if self.spends >= AUDIT_AFTER and self.forecast_sum > 0:
            trust = min(1.0, max(0.0, self.realised_sum / self.forecast_sum))
        best = int(credit.argmax())
        shown, answer = divmod(best, n)
        expected = float(credit[shown, answer]) * trust
        spent = self.spends
        rate = (self.realised_sum - KAPPA * spent) / (spent + 10)
        offers = self.offers
        offers.append(expected)
        if expected <= KAPPA + max(0.0, rate) + ENDGAME_MARGIN:
            return None
        # Keep the tokens for the best offers: with more rounds left than tokens,
        # only an offer among the best (tokens / rounds left) of the recent ones.
        left = self.rounds - rnd
        if self.tokens < left and len(offers) >= OFFERS_KEPT // 4:
            recent = sorted(offers[-OFFERS_KEPT:])
            if expected < recent[int((1.0 - self.tokens / left) * (len(recent) - 1))]:
                return None
        return shown, answer, expected

    # -- deciding ------------------------------------------------------------

    def _predictions(self) -> np.ndarray:
        """Every slot's prediction (after at least one round)."""
        opp, me = self.opp, self.me
        last_o = opp[-1] if opp[-1] >= 0 else 0
        last_m = me[-1] if me[-1] >= 0 else 0
        pred: list[int] = []
        picks = self.length_picks
        # Per history: the rounds after the earlier ends of its matches, by length.
        ends = [
            [found[i] + 1 for i in picks[len(found)]] if found else None
            for found in [h.found for h in self.hist]
        ]
        for h, mine in HIST_SLOTS:
            seq, last = (me, last_m) if mine else (opp, last_o)
            at = ends[h]
            if at is None:
                pred += [last] * len(picks[1])
            else:
                pred += [x if x >= 0 else last for x in map(seq.__getitem__, at)]
        for kind in self.plain:
            if kind == "theirs":
                pred.append(last_o)
            elif kind == "ours":
                pred.append(last_m)
            else:  # their least played move over the match (a flat player's next)
                pred.append(int(self.counts[self.least_tab, 0, : self.n].argmin()))
        if self.self_decays:
            # What each simulated ensemble plays: its best variant, if ahead.
            n = self.n
            flat = self.sim_scores.reshape(len(self.self_decays), -1)
            tops = flat.max(axis=1).tolist()
            for top, best in zip(tops, flat.argmax(axis=1).tolist(), strict=True):
                p, r = divmod(best, n)
                ours = self.sim_pred_list[p]
                if top > 0 and ours < n:
                    pred.append((ours + 1 + r) % n)
                else:
                    pred.append(last_o)
        rows = self.count_rows.take(self.ctx_prev, axis=0)
        both = rows.dot(self.reply_or_likely).reshape(2 * self.ntab, self.n)
        return np.concatenate((pred, both.take(self.half_pick, axis=0).argmax(axis=1)))

    def choose(self) -> int:
        """Predict, let each scoring rate pick a variant, let the meta layer pick."""
        n = self.n
        rand = self.rand = self.rng.randrange(n)
        pred = self._predictions() if self.me else self.pred0
        np.add(self.slot_base, pred, out=self.pred_idx)  # the variants' rows (see record)
        rand_var = self.nvar - 1
        var_slot, var_offset = self.var_slot, self.var_offset
        pred_list = pred.tolist()
        picks = []
        for var in self.scores.argmax(axis=1).tolist():
            if var == rand_var:
                picks.append(rand)
            else:
                picks.append((pred_list[var_slot[var]] + var_offset[var]) % n)
        self.pick_pay = self.rot_pay.take(picks, axis=0)
        best = self.meta_pick = int(self.meta.argmax())
        # Whether this move is the meta layer's pick; otherwise it is the random
        # move, whose expected points are 0 against any opponent (it depends on
        # nothing the opponent has seen). tools/strength.py --part noloss uses it.
        self.pick_played = False
        if self.fall_sum < FALLBACK_AT:
            return rand
        if self.guarded and not self._proven():
            return rand
        self.pick_played = True
        h, r = divmod(best, n)
        return (picks[h] + r) % n

    def _proven(self) -> bool:
        """Whether the meta layer's picks have beaten chance (see PROOF_Z)."""
        s, v = self.recent_sum, self.recent_var
        if s > 0 and s * s > self.recent_z * self.recent_z * v:
            return True
        s, v = self.proof_sum, self.proof_var
        return s > 0 and s * s > PROOF_Z * PROOF_Z * v

    def _reply_model(self) -> np.ndarray:
        """f[x][y]: their reply y after being shown x, smoothed toward their mix."""
        c = self.reply
        total = c.sum()
        mix = c.sum(axis=0) / total if total > 0 else np.full(self.n, 1.0 / self.n)
        return (c + RESPONSE_PRIOR * mix) / (c.sum(axis=1, keepdims=True) + RESPONSE_PRIOR)

    def _bar(self, rnd: int, losing: bool) -> float:
        """Expected credit a token must bring to raise the deception efficiency.

        With S the credit so far and m tokens spent, (S - KAPPA m) / (m + 10) rises
        with one more token of credit c exactly when c > KAPPA + that efficiency;
        a margin on top keeps tokens for later in the match, when the reply table
        is closer to the one the scoring will use, and shrinks while we lose."""
        spent = self.spends
        rate = (self.realised_sum - KAPPA * spent) / (spent + 10)
        margin = EARLY_MARGIN * (1.0 - rnd / self.rounds)
        if losing:
            margin *= LOSING_MARGIN
        return KAPPA + max(0.0, rate) + margin

    def _plan_shadow(self, rnd: int, real: int) -> tuple[int, int, float] | None:
        """(shown move, next round's answer, expected credit), or None to stay honest.

        The credit of a token is what the scoring pays: how much more typical their
        reply is of what they answer to the shown move than to the real one (the
        whole-match reply table f), times the points of our next move against it.
        Their reply to each shown move is forecast by its recent form (a fast-fading
        table of their move after each move of ours); our next move is the best
        answer to that forecast."""
        if rnd < self.shadow_from or rnd >= self.rounds:
            return None  # still learning, or the last round (nobody sees it)
        spent = self.total_tokens - self.tokens
        start = self.shadow_from
        pace = self.total_tokens * (rnd - start) / max(1, self.rounds - start)
        losing = self.fall_sum < 0
        if spent >= pace + PACE_SLACK * (2 if losing else 1):
            return None
        if rnd < self.next_spend:
            return None
        if self.whole is None or rnd >= self.whole_until:
            f = self.whole = self._reply_model()
            self.whole_until = rnd + REPLAN_EVERY
            # The most credit any shown move could earn with each real move, if the
            # reply were certain and beaten: when it is under the bar, skip the rest.
            # Against an opponent that ignores what it sees every row of f is alike.
            self.ceiling = np.maximum(0.0, f[:, None, :] - f[None, :, :]).max(axis=(0, 2))
            self.ceiling_list = self.ceiling.tolist()
        # The floor: a false move also kicks a learning opponent off the course
        # it was on. While we read it well that costs more points than a modest
        # credit is worth (and the whole-match table the scoring uses is flatter
        # than the one we see now); an opponent that merely reacts to the move it
        # sees (a sharp reply table, credits near 0.5) is not disturbed. While we
        # lose, the kick is welcome.
        floor = LOSING_FLOOR if losing else FLOOR
        ceiling = self.ceiling_list[real]
        if ceiling <= floor:
            return None  # the bar below is never under the floor: skip computing it
        bar = max(self._bar(rnd, losing), floor)
        if ceiling <= bar:
            return None
        f = self.whole
        now = self.counts[self.reply_tab, : self.n]
        now = (now + 1e-300) / (now.sum(axis=1, keepdims=True) + self.n * 1e-300)
        answers = now.dot(self.payoff.T).argmax(axis=1)  # our best answer to each row
        misread = np.maximum(0.0, f - f[real])  # as the scoring measures it
        credit = (now * misread * self.payoff[answers]).sum(axis=1)
        credit[real] = -1.0  # showing the real move hides nothing
        shown = int(credit.argmax())
        trust = 1.0
        if self.spends >= AUDIT_AFTER and self.forecast_sum > 0:
            # Forecasts discounted by how well the past ones came true.
            trust = min(1.0, max(0.0, self.realised_sum / self.forecast_sum))
        if credit[shown] * trust <= bar:
            return None
        # A gap between two rows of the whole-match table is only believed once
        # both rest on enough honest rounds.
        if min(self.reply[shown].sum(), self.reply[real].sum()) < MIN_EVIDENCE:
            return None
        # Only a reply we are nearly sure to beat: a misread that is merely likely
        # pays less than the token costs (and the match it perturbs).
        answer = int(answers[shown])
        if float(now[shown] @ (self.payoff[answer] > 0)) < SURE_WIN:
            return None
        self.next_spend = rnd + COOLDOWN
        return shown, answer, float(credit[shown])

    def move(self, turn: chaosbot.Turn) -> str | chaosbot.Shadow:
        if turn.round > 1:
            self.record(
                turn.opponent_last_visible, turn.self_last_real, turn.opponent_deception_bucket
            )
        self.last_bucket = turn.opponent_deception_bucket
        real = self.choose()
        if self.sting >= 0:
            real = self.sting
            self.sting = -1
        plan = None
        if self.tokens > 0:
            if turn.round > self.endgame_from:
                plan = self._plan_endgame(turn.round, real)
            if plan is None and turn.round >= max(self.shadow_from, self.next_spend):
                plan = self._plan_shadow(turn.round, real)
        if plan is None:
            self.honest_shown.append(real)
            self._after_show(turn.round - 1, real)
            return self.cyc[real]
        shown, self.sting, forecast = plan
        self.spend_log[turn.round - 1] = (shown, real, forecast)
        self.spends += 1
        self.honest_shown.append(-1)
        self._after_show(turn.round - 1, shown)
        return chaosbot.Shadow(self.cyc[real], self.cyc[shown])


FREQUENCY_FORECASTER = len(LEARNER_DECAYS)  # index of the whole-match learner in _forecast_by

# Plain predictors, one slot each after the history matches, classic RoShamBo only
# (tuned on the historic field's tuning set; Chaos League plays as before): their
# last visible move, our last move, their least played move over the match.
PLAIN_SLOTS = ("theirs", "ours", "least")
PLAIN_PREDICTORS = PLAIN_SLOTS  # the ones in use (a tuning knob)

# History-matching slots: (history, predicts our move?). Joint: both; theirs: their
# next (an opponent that plays a fixed sequence, whatever we do).
HIST_SLOTS = ((0, False), (0, True), (1, False))


# -- timing self-test ----------------------------------------------------------

_CPU: list[int] = []


class _Sparring(chaosbot.Bot):
    """Changes style every 500 rounds and spends shadows in bursts, so that every
    code path runs while the champion is timed."""

    name = "sparring"

    def move(self, turn: chaosbot.Turn) -> str | chaosbot.Shadow:
        moves = self.moves
        phase = (turn.round // 500) % 4
        if phase == 0:
            real = moves[0] if self.rng.random() < 0.4 else self.rng.choice(moves)
        elif phase == 1:
            real = moves[turn.round % len(moves)]
        elif phase == 2 and turn.opponent_last_visible:
            real = self.answer(turn.opponent_last_visible)
        else:
            real = self.rng.choice(moves)
        if turn.round % 700 < 5 and self.tokens > 0:
            return chaosbot.Shadow(real, moves[0])
        return real


class _TimedChampion(Champion):
    def handle_turn(self, msg: dict, strict: bool = False) -> dict:
        cpu = time.thread_time_ns()
        reply = super().handle_turn(msg, strict)
        _CPU.append(time.thread_time_ns() - cpu)
        return reply


def selftest_timing(rounds: int, game: str = "chaos") -> None:
    """Per-move CPU time of whole turns (bookkeeping, learning, deciding), in-process,
    in ``game`` ("chaos", or "classic": three moves, no tokens, the self-model on)."""
    import statistics

    _CPU.clear()
    result = chaosbot.play(_TimedChampion, _Sparring, game, rounds, seeds=(11, 22))
    us = sorted(x / 1000 for x in _CPU)
    p99 = us[min(len(us) - 1, int(0.99 * len(us)))]
    print(f"champion per-move cpu time over {rounds} rounds of {game} (in-process, no I/O):")
    print(f"  median {statistics.median(us):.1f} us   p99 {p99:.1f} us   max {us[-1]:.1f} us")
    print(f"  total {sum(us) / 1e6:.2f} s   points {result['points'][0]:+d}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--selftest-timing":
        selftest_timing(
            int(sys.argv[2]) if len(sys.argv) > 2 else 20000,
            sys.argv[3] if len(sys.argv) > 3 else "chaos",
        )
    else:
        chaosbot.run(Champion)
