"""The generalised sequential probability ratio test on pentanomial counts.

H0: the Elo difference is ``elo0``; H1: it is ``elo1``. The bounds are logistic
Elo or normalised Elo (``elo_model``); either way they become expected per-pair
scores s0 and s1. The pair outcomes' true distribution is unknown, so each
hypothesis is represented by the distribution closest to the observed one that
has the hypothesis's mean: the maximum-likelihood pentanomial distribution under
the constraint ``sum p_k a_k = s`` (a_k the per-pair scores 0, 1/4, ..., 1). That
distribution is

    p_k = f_k / (1 + lam * (a_k - s))

with f_k the observed frequencies and lam the root of
``sum f_k (a_k - s) / (1 + lam (a_k - s)) = 0`` (a Lagrange multiplier; the
function is decreasing in lam, so bisection finds it). The log-likelihood ratio
of n pairs is then

    LLR = n * sum f_k * (log(1 + lam0 (a_k - s0)) - log(1 + lam1 (a_k - s1)))

Empty categories get a small count (``REGULARISE``; categories with pairs keep
their counts) so that every s in (0, 1) is reachable. The test stops when the
LLR leaves [log(beta / (1 - alpha)), log((1 - beta) / alpha)] (Wald's bounds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np

from .elo import NELO_PER_T, PAIR_SCORES, expected_score, profile_loss

REGULARISE = 1e-3  # the count given to an empty pentanomial category before the fit
_A = np.array(PAIR_SCORES)
ELO_MODELS = ("normalized", "logistic")


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper) LLR bounds: below lower accept H0, above upper accept H1."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def regularised(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    return np.where(c > 0, c, REGULARISE)


def hypothesis_scores(
    counts: np.ndarray, elo0: float, elo1: float, elo_model: str = "logistic"
) -> tuple[np.ndarray, np.ndarray]:
    """The expected per-pair scores (s0, s1) of the hypotheses, per row of counts.
    Normalised Elo: s = 1/2 + nElo / (800 / ln 10) * sigma, sigma the standard
    deviation of one game's score as measured from the pairs (sqrt(2) times the
    pair score's), so the bounds move with the measured spread."""
    c = regularised(counts)
    if elo_model == "logistic":
        shape = c.shape[:-1]
        return np.full(shape, expected_score(elo0)), np.full(shape, expected_score(elo1))
    freq = c / c.sum(axis=-1, keepdims=True)
    mean = freq @ _A
    sigma = np.sqrt(2.0 * np.maximum(freq @ (_A * _A) - mean * mean, 0.0))
    return 0.5 + elo0 / NELO_PER_T * sigma, 0.5 + elo1 / NELO_PER_T * sigma


def llr_many(
    counts: np.ndarray, elo0: float, elo1: float, elo_model: str = "logistic"
) -> np.ndarray:
    """The LLR of each row of pentanomial ``counts`` (shape (..., 5))."""
    c = regularised(counts)
    n = c.sum(axis=-1)
    freq = c / n[..., None]
    s0, s1 = hypothesis_scores(counts, elo0, elo1, elo_model)
    llr: np.ndarray = n * (profile_loss(freq, s0) - profile_loss(freq, s1))
    return llr


def llr(counts: Sequence[int], elo0: float, elo1: float, elo_model: str = "logistic") -> float:
    """The log-likelihood ratio of H1 (elo1) against H0 (elo0) for the counts."""
    if sum(counts) == 0:
        return 0.0
    return float(llr_many(np.asarray(counts, dtype=float)[None, :], elo0, elo1, elo_model)[0])


class SprtParams(msgspec.Struct, frozen=True):
    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    elo_model: str = "normalized"  # "normalized" (fishtest's nElo) or "logistic"


def decision(counts: Sequence[int], p: SprtParams) -> tuple[str | None, float]:
    """("H0" or "H1" once a bound is crossed, else None) and the LLR."""
    value = llr(counts, p.elo0, p.elo1, p.elo_model)
    lower, upper = bounds(p.alpha, p.beta)
    if value >= upper:
        return "H1", value
    if value <= lower:
        return "H0", value
    return None, value
