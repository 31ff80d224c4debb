"""Ratings on a fixed pool's scale (logistic Elo).

The pool's ratings are fitted once from a round robin of paired matches (a
Bradley-Terry model on the logistic Elo scale, ``fit_pool``) and stored; a new
bot is then rated against the fixed pool (``rate_against_pool``), so two
competitors' numbers are on the same scale.

Each match counts as one game with score s (1, 0.5, 0) and the log-likelihood
``s log p + (1 - s) log(1 - p)``, p the expected score. A bot that wins or loses
every game would have an infinite rating, so each bot also has ``PRIOR_SHARE``
times its number of games as drawn virtual games against an anchor of rating 0.
The share is proportional to the games, so a bot rated against the pool in a
short gauntlet gets the same estimate, on average, as in the pool's own fit.

The 95% interval of a gauntlet rating is the likelihood-ratio interval: the
ratings whose penalised log-likelihood is within 3.84 / 2 of the maximum. It
stays finite and honest for a bot that wins everything, and it is not clamped
at the pool's range: the search widens until the drop is reached.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np

PRIOR_SHARE = 0.02  # virtual drawn games against the anchor, per game played
CHI2_95 = 3.841458820694124  # 95% quantile of chi-square with one degree of freedom
_K = math.log(10.0) / 400.0  # Elo to natural-log strength


class Game(msgspec.Struct, frozen=True):
    """One match between bots a and b: a's score (1, 0.5, 0)."""

    a: int
    b: int
    score: float


def fit_pool(n: int, games: Sequence[Game], iters: int = 200) -> list[float]:
    """Bradley-Terry ratings (Elo) of n bots by Newton's method, with the prior
    described in the module docstring."""
    theta = np.zeros(n)
    played = np.zeros(n)
    for g in games:
        played[g.a] += 1
        played[g.b] += 1
    prior = PRIOR_SHARE * played
    for _ in range(iters):
        grad = np.zeros(n)
        hess = np.zeros((n, n))
        for g in games:
            p = 1.0 / (1.0 + math.exp(theta[g.b] - theta[g.a]))
            grad[g.a] += g.score - p
            grad[g.b] -= g.score - p
            w = p * (1.0 - p)
            hess[g.a, g.a] -= w
            hess[g.b, g.b] -= w
            hess[g.a, g.b] += w
            hess[g.b, g.a] += w
        v = 1.0 / (1.0 + np.exp(-theta))
        grad += prior * (0.5 - v)
        hess[np.diag_indices(n)] -= prior * v * (1.0 - v) + 1e-12
        step = np.clip(np.linalg.solve(hess, grad), -2.0, 2.0)
        theta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return [float(t / _K) for t in theta]


class PoolRating(msgspec.Struct, frozen=True):
    elo: float
    low: float  # 95% likelihood-ratio interval
    high: float
    games: int


def _loglik(
    r: float, opponents: np.ndarray, scores: np.ndarray, weights: np.ndarray, prior: float
) -> float:
    p = 1.0 / (1.0 + np.exp(-_K * (r - opponents)))
    p = np.clip(p, 1e-300, 1.0 - 1e-16)
    ll = float(np.sum(weights * (scores * np.log(p) + (1.0 - scores) * np.log1p(-p))))
    # log v and log(1 - v) of the anchor game, v = L(r), stable for any r.
    log_v = -float(np.logaddexp(0.0, -_K * r))
    log_not_v = -float(np.logaddexp(0.0, _K * r))
    return ll + prior * (0.5 * log_v + 0.5 * log_not_v)


def likelihood_interval(
    opponent_elos: Sequence[float],
    scores: Sequence[float],
    prior_games: float,
    weights: Sequence[float] | None = None,
) -> PoolRating:
    """The rating (Elo) that maximises the log-likelihood of the games against
    opponents of fixed ratings plus ``prior_games`` drawn virtual games against an
    anchor rated 0, and its 95% likelihood-ratio interval (where the penalised
    log-likelihood is within CHI2_95 / 2 of the maximum). Finite for any results,
    a clean sweep or a single game included."""
    opp = np.asarray(opponent_elos, dtype=float)
    sc = np.asarray(scores, dtype=float)
    w = np.ones_like(sc) if weights is None else np.asarray(weights, dtype=float)
    games = int(round(float(w.sum())))
    if len(sc) == 0:
        return PoolRating(elo=0.0, low=-math.inf, high=math.inf, games=0)

    def f(r: float) -> float:
        return _loglik(r, opp, sc, w, prior_games)

    # The penalised log-likelihood is concave in r: golden-section search for the
    # maximum, then bisection for where it has dropped by CHI2_95 / 2 on each side.
    lo, hi = float(opp.min()) - 4000.0, float(opp.max()) + 4000.0
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - phi * (b - a), a + phi * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(200):
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - phi * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + phi * (b - a)
            fd = f(d)
        if b - a < 1e-6:
            break
    best = 0.5 * (a + b)
    target = f(best) - CHI2_95 / 2.0

    def edge(inside: float, outside: float) -> float:
        # The prior makes f fall without bound on both sides, so the edge exists:
        # widen the search until it is bracketed (no clamp at the pool's range).
        while f(outside) >= target:
            outside = inside + 2.0 * (outside - inside)
        for _ in range(100):
            mid = 0.5 * (inside + outside)
            if f(mid) >= target:
                inside = mid
            else:
                outside = mid
        return 0.5 * (inside + outside)

    return PoolRating(elo=best, low=edge(best, lo), high=edge(best, hi), games=games)


def rate_against_pool(opponent_elos: Sequence[float], scores: Sequence[float]) -> PoolRating:
    """The rating of a bot from its games (``scores[i]`` against a bot rated
    ``opponent_elos[i]``), the pool's ratings held fixed."""
    return likelihood_interval(opponent_elos, scores, PRIOR_SHARE * len(scores))
