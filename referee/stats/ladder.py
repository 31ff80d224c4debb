"""How sure a ladder's ratings and ranks are: draws from a Bradley-Terry posterior.

A ladder (``referee serve``) plays matches between versions chosen one at a time
by its matchmaking: strong versions mostly meet strong ones, new versions play
more, many pairs never meet. A bot's mean score then says more about whom it met
than about how good it is, so the pair-means model of a league
(``stats/league.py``), whose strength is a mean over the opponents met, does not
fit. The ladder's ratings are a Bradley-Terry fit instead (each match one game of
score 1, 0.5 or 0, expected score ``1 / (1 + exp(theta_b - theta_a))``), which
accounts for whom each version played through the opponents' ratings.

Uncertainty, with the schedule held fixed: the posterior of the log-strengths is
approximated by a normal around the penalised maximum (the fit's own prior of
``prior`` drawn games per version against an anchor at 0), with the inverse of the
penalised log-likelihood's Hessian as its covariance (a Laplace approximation;
the matches' order and the matchmaking's choices do not enter the likelihood, so
an adaptive schedule needs no correction). Its draws, centred (ratings are
relative), give the rating intervals (``rating``).

Ranks and orders (``draws``) add a hierarchical step, as the league model does
(``league._shrink``): the strengths get a normal prior around their mean whose
spread is itself unknown, so a close field is not ranked with more confidence
than its noise allows. The spread is drawn from an approximate posterior built on
the ratings' total scatter, not on the league's grid over the whole likelihood:
``sum((theta - mean)^2) / chi2(m - 1)`` less the ratings' mean noise variance
(``SPREAD_GROUPS`` values per refresh, each for a share of the draws). The
league's way reads the scatter in the noise's eigenbasis, and a Bradley-Terry fit
of a field that beats each other in strict order has its largest noise exactly
along that order: it then took the spread for noise (a double round robin of
eight versions, each beating every one below it, got rank ranges of 1-8). Given a
spread, the draw is the normal posterior of the Laplace likelihood and the prior
(the prior's precision added to the Hessian). A version without games takes no
part (its strength is -inf in every draw). ``referee/server/calibration.py``
checks the intervals, rank ranges and order probabilities against simulated
ladders with the server's own matchmaking (docs/statistics.md).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .rating import CHI2_95

LADDER_DRAWS = 1000  # draws per refresh: a share is then good to about 0.015
RATING_PRIOR = 1.0  # drawn virtual games against a fixed opponent: keeps ratings finite
ELO = 400.0 / math.log(10.0)  # natural-log strength to the Elo scale
SPREAD_GROUPS = 20  # values of the field's spread drawn per refresh, each for a share of draws
MIN_SPREAD = 0.01  # natural-log units (under 2 Elo): the floor of the field's spread


def fit_bradley_terry(
    score: np.ndarray,
    games: np.ndarray,
    prior: float = RATING_PRIOR,
    iters: int = 100,
    tol: float = 1e-9,
) -> np.ndarray:
    """Bradley-Terry log-strengths by Newton's method on the log-likelihood, batched.

    score[..., i, j] is what i scored against j (1 a win, 0.5 a draw), games[..., i, j]
    the number of games. Every bot also has ``prior`` drawn games against a
    virtual opponent of strength 0, so a bot that won (or lost) everything still
    gets a finite rating and the Hessian is always invertible. Newton needs about
    ten steps where the classic MM iteration needs hundreds. Returns
    log-strengths, shape score.shape[:-1].
    """
    n = score.shape[-1]
    theta = np.zeros(score.shape[:-1])
    won = score.sum(axis=-1) + 0.5 * prior
    eye = np.eye(n, dtype=bool)
    for _ in range(iters):
        # P[..., i, j]: the chance that i beats j under the current strengths.
        prob = 1.0 / (1.0 + np.exp(theta[..., None, :] - theta[..., :, None]))
        virtual = 1.0 / (1.0 + np.exp(-theta))
        grad = won - (games * prob).sum(axis=-1) - prior * virtual
        w = games * prob * (1.0 - prob)
        hess = np.where(eye, 0.0, w)
        diag = -w.sum(axis=-1) - prior * virtual * (1.0 - virtual)
        hess = hess + diag[..., :, None] * eye
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        # Damped: a lopsided record can ask for a huge first step.
        step = np.clip(step, -2.0, 2.0)
        theta = theta - step
        if np.max(np.abs(step)) < tol:
            break
    return theta


class LadderPosterior(NamedTuple):
    point: np.ndarray  # (n,) the fit's log-strengths, centred on the played versions
    rating: np.ndarray  # (samples, n) draws of the fit's posterior, centred; -inf unplayed
    draws: np.ndarray  # (samples, n) the same draws shrunk (for ranks and orders), centred


def ladder_posterior(
    theta: np.ndarray,
    games: np.ndarray,
    prior: float,
    samples: int = LADDER_DRAWS,
    seed: int = 20260101,
) -> LadderPosterior:
    """Draws of the log-strengths around the penalised Bradley-Terry maximum
    ``theta`` (n,) of the games ``games[i, j]`` (a symmetric count matrix) with
    ``prior`` drawn virtual games per version against an anchor at 0."""
    n = len(theta)
    played = games.sum(axis=1) > 0
    live = np.flatnonzero(played)
    point = np.full(n, -np.inf)
    draws = np.full((max(samples, 0), n), -np.inf)
    if len(live) == 0:
        return LadderPosterior(point, draws, draws)
    t = theta[live]
    centre = float(t.mean())
    point[live] = t - centre
    g = games[np.ix_(live, live)]
    prob = 1.0 / (1.0 + np.exp(t[None, :] - t[:, None]))
    w = g * prob * (1.0 - prob)
    anchor = 1.0 / (1.0 + np.exp(-t))
    # Precision of the Laplace approximation: minus the Hessian of the penalised
    # log-likelihood (positive definite thanks to the anchor games).
    precision = -w + np.diag(w.sum(axis=1) + prior * anchor * (1.0 - anchor))
    rng = np.random.default_rng(seed)
    if samples <= 0:
        return LadderPosterior(point, draws, draws)
    z = rng.standard_normal((len(live), samples))
    rating = np.full_like(draws, -np.inf)
    rating[:, live] = _draw(precision, precision @ t, z)
    # The field's spread: what the fitted ratings vary by beyond their noise.
    m = len(live)
    if m >= 2:
        cov = np.linalg.inv(precision)
        noise = (np.trace(cov) - cov.sum() / m) / (m - 1)  # mean variance, centred
        total = float(np.sum((t - t.mean()) ** 2))
        centring = np.eye(m) - 1.0 / m
        groups = np.array_split(np.arange(samples), min(SPREAD_GROUPS, samples))
        for group, chi2 in zip(groups, rng.chisquare(m - 1, len(groups)), strict=True):
            spread = max(total / chi2 - noise, MIN_SPREAD**2)
            shrunk = precision + centring / spread
            draws[group[:, None], live[None, :]] = _draw(shrunk, precision @ t, z[:, group])
    else:
        draws[:, live] = rating[:, live]
    return LadderPosterior(point, rating, draws)


def _draw(precision: np.ndarray, information: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Draws (samples, m), centred, of a normal with this precision and mean
    ``precision^-1 @ information``, from standard normals ``z`` (m, samples)."""
    chol = np.linalg.cholesky(precision)
    mean = np.linalg.solve(precision, information)
    # x = L^-T z has covariance (L L^T)^-1, the inverse of the precision.
    x = (mean[:, None] + np.linalg.solve(chol.T, z)).T
    out: np.ndarray = x - x.mean(axis=1, keepdims=True)  # ratings are relative
    return out


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = -np.logaddexp(0.0, -x)
    return out


def own_likelihood_bounds(
    theta: np.ndarray, score: np.ndarray, games: np.ndarray, prior: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each version's 95% likelihood-ratio interval of its log-strength with the
    others held at ``theta`` (the penalised maximum, so each version's own maximum
    is its ``theta``): where its penalised log-likelihood has dropped by
    ``CHI2_95 / 2``, found by bisection for all versions at once (the log-likelihood
    is concave in its own strength, and the anchor makes it fall without bound on
    both sides, so both ends exist). ``stats/rating.py`` computes the same interval
    for one bot against a fixed pool. A version without games gets (-inf, inf)."""
    others = theta[None, :]

    def loglik(r: np.ndarray) -> np.ndarray:
        d = r[:, None] - others
        own = score * _log_sigmoid(d) + (games - score) * _log_sigmoid(-d)
        out: np.ndarray = own.sum(axis=1) + prior * 0.5 * (_log_sigmoid(r) + _log_sigmoid(-r))
        return out

    target = loglik(theta) - CHI2_95 / 2.0
    ends = []
    for sign in (-1.0, 1.0):
        inside = theta.copy()
        step = np.ones_like(theta)
        while True:  # widen until every end is bracketed
            outside = theta + sign * step
            short = loglik(outside) >= target
            if not short.any():
                break
            step = np.where(short, 2.0 * step, step)
        for _ in range(60):
            mid = 0.5 * (inside + outside)
            keep = loglik(mid) >= target
            inside = np.where(keep, mid, inside)
            outside = np.where(keep, outside, mid)
        ends.append(0.5 * (inside + outside))
    played = games.sum(axis=1) > 0
    return np.where(played, ends[0], -np.inf), np.where(played, ends[1], np.inf)


class BradleyTerryRatings(NamedTuple):
    posterior: LadderPosterior  # point: the fit, centred on the played; -inf unplayed
    low: np.ndarray  # (n,) 95% interval of each centred log-strength; -inf unplayed
    high: np.ndarray  # (n,) inf unplayed


def bradley_terry_ratings(
    score: np.ndarray,
    games: np.ndarray,
    samples: int = LADDER_DRAWS,
    seed: int = 20260101,
    prior: float = RATING_PRIOR,
) -> BradleyTerryRatings:
    """The Bradley-Terry fit of ``score`` and ``games`` (n, n) (``fit_bradley_terry``),
    its posterior draws (``ladder_posterior``) and each rating's 95% interval, with
    the schedule held fixed: the wider of the draws' 2.5-97.5% range and the
    version's own likelihood-ratio interval (``own_likelihood_bounds``), which
    follows the skew of a likelihood after few games or a clean sweep where the
    normal draws do not. With ``samples`` 0 (cheap, for live views) there are no
    intervals: (-inf, inf). Both the server's ladder and a tournament's pool use
    it; the intervals are checked against simulated ladders and round robins
    (``server/calibration.py``, docs/statistics.md)."""
    raw = fit_bradley_terry(score[None], games[None], prior)[0]
    post = ladder_posterior(raw, games, prior, samples, seed)
    played = np.isfinite(post.point)
    if samples <= 0 or not played.any():
        n = len(raw)
        return BradleyTerryRatings(post, np.full(n, -np.inf), np.full(n, np.inf))
    own_low, own_high = own_likelihood_bounds(raw, score, games, prior)
    centre = float(raw[played].mean())
    low, high = own_low - centre, own_high - centre
    low[played] = np.minimum(low[played], np.percentile(post.rating[:, played], 2.5, axis=0))
    high[played] = np.maximum(high[played], np.percentile(post.rating[:, played], 97.5, axis=0))
    return BradleyTerryRatings(post, low, high)
