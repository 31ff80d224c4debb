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
    return -400.0 * math.log10(1.0 / s - 1.0)


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


class EloEstimate(msgspec.Struct, frozen=True):
    elo: float
    low: float  # 95% interval
    high: float
    score: float  # mean per-pair score
    pairs: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def elo_estimate(counts: Sequence[int]) -> EloEstimate:
    """Elo difference from pentanomial counts, with a 95% interval: the normal
    interval of the mean pair score (standard error sqrt(var / pairs)), mapped
    through the logistic Elo transform."""
    n = int(sum(counts))
    mean, var = mean_var(counts)
    se = math.sqrt(var / n) if n else 0.5
    return EloEstimate(
        elo=elo_of_score(mean),
        low=elo_of_score(mean - Z95 * se),
        high=elo_of_score(mean + Z95 * se),
        score=mean,
        pairs=n,
    )


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
