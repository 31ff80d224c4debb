"""The generalised sequential probability ratio test on pentanomial counts.

H0: the Elo difference is ``elo0``; H1: it is ``elo1`` (logistic Elo, so the
hypotheses are expected per-pair scores s0 and s1). The pair outcomes' true
distribution is unknown, so each hypothesis is represented by the distribution
closest to the observed one that has the hypothesis's mean: the maximum-likelihood
pentanomial distribution under the constraint ``sum p_k a_k = s`` (a_k the
per-pair scores 0, 1/4, ..., 1). That distribution is

    p_k = f_k / (1 + lam * (a_k - s))

with f_k the observed frequencies and lam the root of
``sum f_k (a_k - s) / (1 + lam (a_k - s)) = 0`` (a Lagrange multiplier; the
function is decreasing in lam, so bisection finds it). The log-likelihood ratio
of n pairs is then

    LLR = n * sum f_k * (log(1 + lam0 (a_k - s0)) - log(1 + lam1 (a_k - s1)))

Empty categories get a small count (``REGULARISE``) so that every s in (0, 1) is
reachable. The test stops when the LLR leaves [log(beta / (1 - alpha)),
log((1 - beta) / alpha)] (Wald's bounds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np

from .elo import PAIR_SCORES, expected_score

REGULARISE = 1e-3  # added to every pentanomial count before the fit
_A = np.array(PAIR_SCORES)
_BISECTIONS = 100


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper) LLR bounds: below lower accept H0, above upper accept H1."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _profile(freq: np.ndarray, s: float) -> np.ndarray:
    """sum_k f_k log(1 + lam (a_k - s)) at the constrained optimum, per row of
    ``freq`` (shape (..., 5), rows summing to 1): the mean log-likelihood lost by
    forcing the mean to s."""
    d = _A - s  # (5,)
    # 1 + lam d > 0 for every category (all have mass): lam in (-1/max d, -1/min d).
    lo = np.full(freq.shape[:-1], -1.0 / d.max())
    hi = np.full(freq.shape[:-1], -1.0 / d.min())
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        g = (freq * d / (1.0 + mid[..., None] * d)).sum(axis=-1)
        # g decreases in lam: a positive g means the root lies above mid.
        up = g > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    lam = 0.5 * (lo + hi)
    out: np.ndarray = (freq * np.log1p(lam[..., None] * d)).sum(axis=-1)
    return out


def llr_many(counts: np.ndarray, elo0: float, elo1: float) -> np.ndarray:
    """The LLR of each row of pentanomial ``counts`` (shape (..., 5))."""
    c = np.asarray(counts, dtype=float) + REGULARISE
    n = c.sum(axis=-1)
    freq = c / n[..., None]
    s0, s1 = expected_score(elo0), expected_score(elo1)
    llr: np.ndarray = n * (_profile(freq, s0) - _profile(freq, s1))
    return llr


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of H1 (elo1) against H0 (elo0) for the counts."""
    if sum(counts) == 0:
        return 0.0
    return float(llr_many(np.asarray(counts, dtype=float)[None, :], elo0, elo1)[0])


class SprtParams(msgspec.Struct, frozen=True):
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05


def decision(counts: Sequence[int], p: SprtParams) -> tuple[str | None, float]:
    """("H0" or "H1" once a bound is crossed, else None) and the LLR."""
    value = llr(counts, p.elo0, p.elo1)
    lower, upper = bounds(p.alpha, p.beta)
    if value >= upper:
        return "H1", value
    if value <= lower:
        return "H0", value
    return None, value
