"""Logistic Elo and the pentanomial model of paired matches.

A *pair* is two matches between the same two bots with the seats swapped. Each
match scores 1 (win), 0.5 (draw) or 0 (loss) for the bot under test, so a pair
scores 0, 0.5, 1, 1.5 or 2: ``Penta.counts[k]`` counts the pairs that scored k/2.
The per-pair score used below is the pair's mean, ``k / 4`` in [0, 1].

Elo is the logistic scale throughout (the project's ratings use it too): an Elo
difference d means an expected score of ``1 / (1 + 10 ** (-d / 400))``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np

# The per-pair score of each pentanomial category: a pair's points / 2.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
# Two-sided 95% normal quantile.
Z95 = 1.959963984540054
# Scores this close to 0 or 1 are clipped before the Elo transform (else infinite).
SCORE_EPS = 1e-6


def expected_score(elo: float) -> float:
    """Expected score of a bot ``elo`` points stronger than its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (clipped to stay finite)."""
    s = min(max(score, SCORE_EPS), 1.0 - SCORE_EPS)
    return -400.0 * math.log10(1.0 / s - 1.0) + 0.0  # + 0.0: no -0.0


class Penta(msgspec.Struct):
    """Pentanomial counts of pairs, and the counts of single matches (W/D/L of the
    bot under test), which measure what pairing bought."""

    counts: list[int] = msgspec.field(default_factory=lambda: [0] * 5)
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add_pair(self, first: float, second: float) -> None:
        """Record a pair from the two matches' scores (each 1, 0.5 or 0)."""
        for s in (first, second):
            if s == 1.0:
                self.wins += 1
            elif s == 0.0:
                self.losses += 1
            else:
                self.draws += 1
        self.counts[round(2 * (first + second))] += 1


def mean_var(counts: Sequence[float]) -> tuple[float, float]:
    """Mean and variance of the per-pair score (the pair's mean, in [0, 1])."""
    n = float(sum(counts))
    if n <= 0:
        return 0.5, 0.0
    mean = sum(c * a for c, a in zip(counts, PAIR_SCORES, strict=True)) / n
    second = sum(c * a * a for c, a in zip(counts, PAIR_SCORES, strict=True)) / n
    return mean, max(second - mean * mean, 0.0)


# The interval's prior: PRIOR_PAIRS pseudo-pairs spread evenly over the five
# categories (0.1 pair each). It keeps every category possible, so a perfect or
# degenerate score (all pairs won, all drawn, one pair) still has a finite, wide
# interval, and it weighs half a pair: after a dozen pairs the data dominate.
PRIOR_PAIRS = 0.5
# 95% quantile of chi-square with one degree of freedom.
CHI2_95 = 3.841458820694124
# Interval ends are searched in scores [SEARCH_EPS, 1 - SEARCH_EPS]; an end found
# at that limit is a bound of the search, not of the data (``clipped``).
SEARCH_EPS = 1e-6
_A = np.array(PAIR_SCORES)
_LAMBDA_BISECTIONS = 60
_END_BISECTIONS = 50


def profile_loss(freq: np.ndarray, s: np.ndarray | float, bisections: int = 100) -> np.ndarray:
    """min over pentanomial distributions p with mean s of KL(freq || p): the mean
    log-likelihood per pair lost by forcing the mean score to s, per row of
    ``freq`` (shape (..., 5), rows summing to 1, every category positive). ``s``
    is a number or one per row.

    The constrained maximum is p_k = f_k / (1 + lam (a_k - s)), lam the root of
    sum f_k (a_k - s) / (1 + lam (a_k - s)) = 0, which decreases in lam: bisection."""
    s_arr = np.broadcast_to(np.asarray(s, dtype=float), freq.shape[:-1])
    d = _A - s_arr[..., None]  # (..., 5)
    # 1 + lam d > 0 for every category: lam in (-1 / max d, -1 / min d).
    lo = -1.0 / d.max(axis=-1)
    hi = -1.0 / d.min(axis=-1)
    weighted = freq * d  # the same in every step: made once
    for _ in range(bisections):
        mid = 0.5 * (lo + hi)
        g = (weighted / (1.0 + mid[..., None] * d)).sum(axis=-1)
        up = g > 0  # the root lies above mid
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    lam = 0.5 * (lo + hi)
    out: np.ndarray = (freq * np.log1p(lam[..., None] * d)).sum(axis=-1)
    return out


class ScoreIntervals(msgspec.Struct, frozen=True):
    """Vectorised intervals of the mean pair score (one per row of counts)."""

    score: np.ndarray
    low: np.ndarray
    high: np.ndarray


def score_intervals(counts: np.ndarray) -> ScoreIntervals:
    """The mean pair score with its 95% likelihood-ratio interval, per row of
    pentanomial ``counts`` (shape (R, 5)), after the prior of PRIOR_PAIRS
    pseudo-pairs: the scores s with 2 n' KL(f' || p_s) <= 3.84 (n', f' the
    counts and frequencies with the prior; p_s the nearest distribution of mean
    s). The statistic is convex in s, so each end is found by bisection between
    the estimate and the search limit."""
    c = np.asarray(counts, dtype=float) + PRIOR_PAIRS / 5.0
    n = c.sum(axis=-1)
    freq = c / n[:, None]
    mean = freq @ _A
    # Both ends in one search: every row twice, the first copy bisected towards the
    # lower limit, the second towards the upper (each row's arithmetic is its own,
    # so the ends are the same as two searches give, for half the calls).
    rows = len(mean)
    freq2 = np.concatenate([freq, freq])
    n2 = np.concatenate([n, n])
    inside = np.concatenate([mean, mean])
    outside = np.concatenate([np.full_like(mean, SEARCH_EPS), np.full_like(mean, 1.0 - SEARCH_EPS)])
    for _ in range(_END_BISECTIONS):
        mid = 0.5 * (inside + outside)
        stat = 2.0 * n2 * profile_loss(freq2, mid, _LAMBDA_BISECTIONS)
        ok = stat <= CHI2_95
        inside = np.where(ok, mid, inside)
        outside = np.where(ok, outside, mid)
    return ScoreIntervals(score=mean, low=inside[:rows], high=inside[rows:])


class EloEstimate(msgspec.Struct, frozen=True):
    elo: float
    low: float  # 95% interval
    high: float
    score: float  # mean per-pair score (with the prior)
    pairs: int
    clipped: bool = False  # an end is the search's limit, not the data's

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def elo_estimate(counts: Sequence[int]) -> EloEstimate:
    """Elo difference from pentanomial counts, with a 95% interval: the
    likelihood-ratio interval of the mean pair score under the pentanomial model
    with a prior of PRIOR_PAIRS pseudo-pairs (``score_intervals``), mapped through
    the logistic Elo transform. Asymmetric in general: print it as [low, high]."""
    iv = score_intervals(np.asarray(counts, dtype=float)[None, :])
    low, high = float(iv.low[0]), float(iv.high[0])
    edge = 2.0 * SEARCH_EPS
    return EloEstimate(
        elo=elo_of_score(float(iv.score[0])),
        low=elo_of_score(low),
        high=elo_of_score(high),
        score=float(iv.score[0]),
        pairs=int(sum(counts)),
        clipped=low <= edge or high >= 1.0 - edge,
    )


# Normalised Elo: nElo = (score - 1/2) / sigma * 800 / ln 10, sigma the standard
# deviation of one game's score estimated from pairs: sqrt(2) times that of the
# pair's mean score (fishtest's definition). Two versions 1 nElo apart need the
# same number of pairs to tell apart in any game, whatever its draw rate.
NELO_PER_T = 800.0 / math.log(10.0)


def pair_sigma(counts: Sequence[float]) -> float:
    """sqrt(2) times the standard deviation of the per-pair score, with the prior."""
    c = [x + PRIOR_PAIRS / 5.0 for x in counts]
    _, var = mean_var(c)
    return math.sqrt(2.0 * var)


def normalized_elo(score: float, sigma: float) -> float:
    return (score - 0.5) / sigma * NELO_PER_T if sigma > 0 else 0.0


def score_of_normalized(nelo: float, sigma: float) -> float:
    return 0.5 + nelo / NELO_PER_T * sigma


def los(counts: Sequence[int]) -> float:
    """Likelihood of superiority: the normal probability that the true mean pair
    score is above 1/2, from the counts with the prior."""
    c = [x + PRIOR_PAIRS / 5.0 for x in counts]
    mean, var = mean_var(c)
    se = math.sqrt(var / sum(c))
    return 0.5 * math.erfc(-(mean - 0.5) / (se * math.sqrt(2.0)))


def pairing_ratio(p: Penta) -> float | None:
    """Variance of a pair's mean score over what it would be if its two matches
    were independent (the single-match variance / 2). Below 1, pairing cancelled
    luck; None until both variances are measurable."""
    games = p.wins + p.draws + p.losses
    if p.pairs < 2 or games < 2:
        return None
    g_mean = (p.wins + 0.5 * p.draws) / games
    g_var = (p.wins + 0.25 * p.draws) / games - g_mean * g_mean
    _, pair_var = mean_var(p.counts)
    if g_var <= 0:
        return None
    return pair_var / (g_var / 2.0)
