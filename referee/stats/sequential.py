"""The Elo estimate and interval after an SPRT has stopped, corrected for the stop.

A test that stops when the LLR crosses a bound stops more often on a lucky run:
the plain estimate at the stop is biased towards the bound crossed, and its
interval covers less than it says. The correction is the one fishtest publishes
(M. Van den Bergh's notes on the sequential test): the LLR is approximated by a
Brownian motion with drift ``mu`` and variance ``sigma**2`` per pair, both
functions of the true score s,

    mu(s) = (s - (s0 + s1) / 2) (s1 - s0) / v(s),   sigma(s)**2 = (s1 - s0)**2 / v(s),
    v(s) = v + (s - m)**2      (m, v: the observed mean and variance of a pair's score)

and the possible outcomes of the test are ordered: a stop at the lower bound is
worse the earlier it comes, every stop at the lower bound is worse than every
stop at the upper one, and a stop at the upper bound is worse the later it comes.
For a true Elo e, P(e) is the probability of an outcome worse than the observed
one; it falls as e grows. The estimate is the e with P(e) = 1/2 (median
unbiased) and the 95% interval runs from P(e) = 0.975 to P(e) = 0.025.

Exit probabilities of the Brownian motion between two absorbing bounds come from
the method of images (a series over reflections, each term a first-passage
probability in closed form). Pure numpy; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np

from .elo import PAIR_SCORES, elo_estimate, elo_of_score, expected_score
from .sprt import SprtParams, bounds, hypothesis_scores, llr, regularised

_A = np.array(PAIR_SCORES)
_IMAGES = 20  # reflections on each side; terms fall like exp(-2 k^2 w^2 / (sigma^2 T))
ELO_RANGE = 1000.0  # the estimate is searched in [-ELO_RANGE, +ELO_RANGE] logistic Elo
_GRID_STEP = 10.0  # a coarse scan for the crossings, then a fine one (_FINE_STEPS)
_FINE_STEPS = 40


def log_norm_cdf(x: np.ndarray) -> np.ndarray:
    """log Phi(x), accurate in the far tails too. Phi(x) = erfc(-x / sqrt 2) / 2 with
    the Chebyshev-fitted erfc of Numerical Recipes (relative error below 1.2e-7),
    whose logarithm is available directly."""
    x = np.asarray(x, dtype=float)
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -1.26551223 + t * (
        1.00002368
        + t
        * (
            0.37409196
            + t
            * (
                0.09678418
                + t
                * (
                    -0.18628806
                    + t
                    * (
                        0.27886807
                        + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                    )
                )
            )
        )
    )
    log_erfc_z = np.log(t) - z * z + poly  # log erfc(|x| / sqrt 2)
    small = log_erfc_z - math.log(2.0)  # log Phi(-|x|)
    # Phi(|x|) = 1 - Phi(-|x|)
    big = np.log1p(-np.exp(np.minimum(small, 0.0)))
    out: np.ndarray = np.where(x < 0, small, big)
    return out


def upper_exit_by(
    t_end: float, mu: np.ndarray, sigma: np.ndarray, a: float, b: float
) -> np.ndarray:
    """P(a Brownian motion mu t + sigma W_t from 0 leaves (a, b) through b by t_end)."""
    mu = np.asarray(mu, dtype=float)[..., None]
    s2 = np.asarray(sigma, dtype=float)[..., None] ** 2
    sd = np.sqrt(s2 * t_end)
    w = b - a
    c = b + 2.0 * w * np.arange(-_IMAGES, _IMAGES + 1)  # the images of the bound b
    pos = c > 0
    # Each image c contributes exp(mu (b - c) / s2) times the signed probability
    # that a motion of drift mu reaches level c by t_end (closed form).
    x1 = np.where(pos, (mu * t_end - c) / sd, (c - mu * t_end) / sd)
    x2 = np.where(pos, (-mu * t_end - c) / sd, (mu * t_end + c) / sd)
    e1 = np.minimum(mu * (b - c) / s2 + log_norm_cdf(x1), 700.0)
    e2 = np.minimum(mu * (b + c) / s2 + log_norm_cdf(x2), 700.0)
    terms = np.where(pos, 1.0, -1.0) * (np.exp(e1) + np.exp(e2))
    out: np.ndarray = np.clip(terms.sum(axis=-1), 0.0, 1.0)
    return out


def upper_exit_ever(mu: float, sigma: float, a: float, b: float) -> float:
    """P(leaving (a, b) through b at all): the closed form, for checks."""
    if abs(mu) < 1e-12:
        return -a / (b - a)
    k = 2.0 * mu / sigma**2
    return (1.0 - math.exp(-k * a)) / (math.exp(-k * b) - math.exp(-k * a))


class StopEstimate(msgspec.Struct, frozen=True):
    elo: float  # logistic Elo, median unbiased
    low: float  # 95% interval
    high: float
    clipped: bool  # an end reached the search range (+-ELO_RANGE): a bound, not an estimate
    corrected: bool = True  # False: the plain estimate (far outside the bounds, see WINDOW)


# The Brownian approximation holds near the hypotheses only: simulated, the
# corrected estimate is too low by 15 Elo at a true Elo of elo1 + (elo1 - elo0)
# and useless at elo1 + 4 (elo1 - elo0), while there the stop barely biases the
# plain estimate. So the correction is applied while the plain mean score lies
# within WINDOW times (s1 - s0) of [s0, s1], and the plain estimate is given
# beyond (docs/statistics.md has the coverage of both).
WINDOW = 1.0


def _worse_than_observed(
    counts: Sequence[int], params: SprtParams, elos: np.ndarray
) -> np.ndarray | None:
    """P(e) of the module docstring for each logistic Elo in ``elos``; None if
    the counts do not end the test."""
    n = float(sum(counts))
    if n <= 0:
        return None
    c = regularised(np.asarray(counts, dtype=float))
    freq = c / c.sum()
    m = float(freq @ _A)
    v = float(freq @ (_A * _A)) - m * m
    s0a, s1a = hypothesis_scores(c[None, :], params.elo0, params.elo1, params.elo_model)
    s0, s1 = float(s0a[0]), float(s1a[0])
    lower, upper = bounds(params.alpha, params.beta)
    y = llr(counts, params.elo0, params.elo1, params.elo_model)
    if lower < y < upper or s1 <= s0:
        return None
    # The LLR overshoots the bound a little; the motion would have reached the
    # bound itself earlier, at the same mean slope.
    slope = y / n
    t_end = (upper if y >= upper else lower) / slope
    s = np.array([expected_score(float(e)) for e in elos])
    var = np.maximum(v + (s - m) ** 2, 1e-12)
    mu = (s - (s0 + s1) / 2.0) * (s1 - s0) / var
    sigma = (s1 - s0) / np.sqrt(var)
    if y >= upper:
        out: np.ndarray = 1.0 - upper_exit_by(t_end, mu, sigma, lower, upper)
    else:  # the lower exit of the motion is the upper exit of its mirror image
        out = upper_exit_by(t_end, -mu, sigma, -upper, -lower)
    return out


def estimate_after_stop(counts: Sequence[int], params: SprtParams) -> StopEstimate | None:
    """The median-unbiased Elo and its 95% interval after the test stopped at a
    bound with these counts (None if it did not)."""
    grid = np.arange(-ELO_RANGE, ELO_RANGE + _GRID_STEP / 2, _GRID_STEP)
    probs = _worse_than_observed(counts, params, grid)
    if probs is None:
        return None
    c = regularised(np.asarray(counts, dtype=float))
    m = float(c @ _A / c.sum())
    s0a, s1a = hypothesis_scores(c[None, :], params.elo0, params.elo1, params.elo_model)
    margin = WINDOW * float(s1a[0] - s0a[0])
    if not float(s0a[0]) - margin <= m <= float(s1a[0]) + margin:
        plain = elo_estimate(counts)
        return StopEstimate(
            elo=plain.elo, low=plain.low, high=plain.high, clipped=plain.clipped, corrected=False
        )
    found: list[float] = []
    clipped = False
    for level in (0.5, 0.975, 0.025):
        # The leftmost crossing from above (far from the bounds the approximation
        # can turn up again; that branch is not the estimate).
        above = probs >= level
        if not above[0]:
            found.append(-ELO_RANGE)
            clipped = True
            continue
        below = np.flatnonzero(~above)
        if len(below) == 0:
            found.append(ELO_RANGE)
            clipped = True
            continue
        hi_i = int(below[0])
        # Rescan the bracket finely, then linear between the fine points.
        fine = np.linspace(float(grid[hi_i - 1]), float(grid[hi_i]), _FINE_STEPS + 1)
        fp = _worse_than_observed(counts, params, fine)
        assert fp is not None
        j = max(1, int(np.argmax(fp < level)))
        p_lo, p_hi = float(fp[j - 1]), float(fp[j])
        frac = (p_lo - level) / (p_lo - p_hi) if p_lo > p_hi else 0.5
        found.append(float(fine[j - 1]) + frac * (fine[j] - fine[j - 1]))
    return StopEstimate(
        elo=float(found[0]), low=float(found[1]), high=float(found[2]), clipped=clipped
    )


def naive_estimate(counts: Sequence[int]) -> float:
    """Elo of the plain mean pair score (for comparison in the docs' simulation)."""
    c = np.asarray(counts, dtype=float)
    return elo_of_score(float(c @ _A / c.sum()))


class Plan(msgspec.Struct, frozen=True):
    """The expected length of the test (Wald's approximation, no overshoot)."""

    pairs_at_elo0: float
    pairs_at_elo1: float
    pairs_worst: float  # between the hypotheses, where the test is longest


def expected_pairs(counts: Sequence[int], params: SprtParams) -> Plan | None:
    """Expected pairs to a verdict if the truth is elo0, elo1 or halfway between,
    with the pair variance (and draw ratio) measured from ``counts``. None
    before the counts show any spread."""
    if sum(counts) < 2:
        return None
    c = regularised(np.asarray(counts, dtype=float))
    freq = c / c.sum()
    m = float(freq @ _A)
    v = float(freq @ (_A * _A)) - m * m
    s0a, s1a = hypothesis_scores(c[None, :], params.elo0, params.elo1, params.elo_model)
    s0, s1 = float(s0a[0]), float(s1a[0])
    if v <= 1e-9 or s1 - s0 <= 1e-12:
        return None
    lower, upper = bounds(params.alpha, params.beta)

    def at(s: float) -> float:
        # The pair variance as measured, assumed the same at either hypothesis.
        mu = (s - (s0 + s1) / 2.0) * (s1 - s0) / v
        sigma2 = (s1 - s0) ** 2 / v
        if abs(mu) * (upper - lower) / sigma2 < 1e-9:
            return -lower * upper / sigma2
        p_up = upper_exit_ever(mu, math.sqrt(sigma2), lower, upper)
        return (p_up * upper + (1.0 - p_up) * lower) / mu

    return Plan(pairs_at_elo0=at(s0), pairs_at_elo1=at(s1), pairs_worst=at((s0 + s1) / 2.0))
