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
spread tau is itself unknown, so a close field is not ranked with more
confidence than its noise allows. Tau's posterior is evaluated on a grid
(``spread_grid_posterior``) with the games' own likelihood: for each tau the
strengths' mode under that prior, and the Laplace approximation of the marginal
likelihood there. Each tau gets its own mode, so a field that beats each other
in strict order (whose likelihood keeps rising as the ratings move apart) is
read as widely spread. Two earlier ways read it from the one fit at the anchor:
the league's (the scatter in the noise's eigenbasis) took such a field's spread
for noise (eight versions, each beating every one below it, got rank ranges of
1-8), and the scatter less the mean noise (``total / chi2(m - 1) - noise``),
which could not widen the rating intervals of such a field. (Neither that one
nor the grid meets the 0.8 level of ``order_prob`` in one fixed very close
field: a ladder whose noise scatters the ratings more draws a wider spread
either way, and no prior on tau avoids that in the exact normal model
(``tools/spread_limits.py``); over a population of narrow fields every level is
met. docs/statistics.md has the numbers.) Given a
spread drawn from the grid (``SPREAD_GROUPS`` per refresh, each for a share of
the draws), the draw is the normal posterior of the anchor fit's Laplace
likelihood and the spread's prior (the prior's precision added to the
Hessian). The spread model's own draws (at each drawn tau, normal around its
mode with its Hessian: ``spread_draws``) widen the rating intervals outwards,
where the anchor games compress a field whose results are nearly all in order
(``bradley_terry_ratings``). A version without games takes no part (its strength
is -inf in every draw). ``referee/server/calibration.py`` checks the intervals,
rank ranges and order probabilities against simulated ladders with the
server's own matchmaking and against round robins (docs/statistics.md).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .rating import CHI2_95

LADDER_DRAWS = 1000  # draws per refresh: a share is then good to about 0.015
RATING_PRIOR = 1.0  # drawn virtual games against a fixed opponent: keeps ratings finite
ELO = 400.0 / math.log(10.0)  # natural-log strength to the Elo scale
MIN_SPREAD = 0.01  # natural-log units (under 2 Elo): the grid's smallest spread of the field
MAX_SPREAD = 15.0  # its largest (a standard deviation of 2,606 Elo among the versions)
SPREAD_GRID = np.geomspace(MIN_SPREAD, MAX_SPREAD, 64)  # spreads weighed per refresh
SPREAD_GROUPS = 20  # spreads drawn from that grid per refresh, each for a share of the draws


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
    # (samples, n) draws of the hierarchical model's ratings (each at its drawn spread,
    # around that spread's own fit), centred; -inf unplayed. They widen the intervals.
    spread_draws: np.ndarray


def spread_grid_posterior(
    score: np.ndarray, games: np.ndarray, taus: np.ndarray = SPREAD_GRID
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The posterior of the field's spread ``tau`` on the grid ``taus`` (natural-log
    units) in the hierarchical model: log-strengths normal around 0 with standard
    deviation tau, the games' Bradley-Terry likelihood as it is (no anchor games).

    For each tau the strengths' posterior mode is found (a ridge-penalised fit,
    Newton's method, batched over the grid) and the marginal likelihood of tau is
    its Laplace approximation there: log L(mode) - |mode|^2 / (2 tau^2) - m log tau
    - log det(Hessian) / 2. Each tau gets its own mode, so a field in strict order
    (whose likelihood keeps rising as the ratings move apart) is read as a wide
    spread, which a normal approximation at one fitted point reads as noise. The
    prior of tau is flat from ``MIN_SPREAD`` to ``MAX_SPREAD``; the upper end is
    what bounds the spread of a field in strict order, whose data give it none.
    Returns the weights (summing to 1), the modes (K, m) and the precisions
    (K, m, m) at them; m = score.shape[0]."""
    m = score.shape[0]
    k = len(taus)
    ridge = 1.0 / taus**2
    theta = np.zeros((k, m))
    won = score.sum(axis=1)
    eye = np.eye(m)
    for _ in range(200):
        prob = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
        grad = won - (games * prob).sum(axis=-1) - ridge[:, None] * theta
        w = games * prob * (1.0 - prob)
        precision = np.where(eye > 0, 0.0, -w) + (w.sum(axis=-1) + ridge[:, None])[:, :, None] * eye
        step = np.clip(np.linalg.solve(precision, grad[..., None])[..., 0], -2.0, 2.0)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-9:
            break
    prob = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
    w = games * prob * (1.0 - prob)
    precision = np.where(eye > 0, 0.0, -w) + (w.sum(axis=-1) + ridge[:, None])[:, :, None] * eye
    d = theta[:, :, None] - theta[:, None, :]
    loglik = (score * _log_sigmoid(d)).sum(axis=(1, 2))  # each game counted once per side
    logdet = np.linalg.slogdet(precision)[1]
    marginal = loglik - 0.5 * ridge * (theta**2).sum(axis=1) - m * np.log(taus) - 0.5 * logdet
    # A flat prior on tau (the league model's too): on the geometric grid each step's
    # weight is proportional to tau.
    weight = np.exp(marginal - marginal.max()) * taus
    return weight / weight.sum(), theta, precision


def ladder_posterior(
    theta: np.ndarray,
    score: np.ndarray,
    games: np.ndarray,
    prior: float,
    samples: int = LADDER_DRAWS,
    seed: int = 20260101,
) -> LadderPosterior:
    """Draws of the log-strengths around the penalised Bradley-Terry maximum
    ``theta`` (n,) of the scores ``score[i, j]`` in the games ``games[i, j]`` (a
    symmetric count matrix) with ``prior`` drawn virtual games per version against
    an anchor at 0."""
    n = len(theta)
    played = games.sum(axis=1) > 0
    live = np.flatnonzero(played)
    point = np.full(n, -np.inf)
    draws = np.full((max(samples, 0), n), -np.inf)
    if len(live) == 0:
        return LadderPosterior(point, draws, draws, draws)
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
        return LadderPosterior(point, draws, draws, draws)
    z = rng.standard_normal((len(live), samples))
    rating = np.full_like(draws, -np.inf)
    rating[:, live] = _draw(precision, precision @ t, z)
    spread_draws = rating.copy()
    m = len(live)
    if m >= 2:
        # The field's spread, drawn from its posterior on the grid; given a spread the
        # ranks' draw is the normal posterior of the fit's Laplace likelihood and
        # the spread's prior (its precision added to the fit's), and the ratings'
        # draw is the hierarchical model's own at that spread (around its mode).
        weight, modes, hier = spread_grid_posterior(score[np.ix_(live, live)], g)
        groups = np.array_split(np.arange(samples), min(SPREAD_GROUPS, samples))
        picks = rng.choice(len(weight), size=len(groups), p=weight)
        centring = np.eye(m) - 1.0 / m
        for group, k in zip(groups, picks, strict=True):
            tau2 = float(SPREAD_GRID[k]) ** 2
            shrunk = precision + centring / tau2
            draws[group[:, None], live[None, :]] = _draw(shrunk, precision @ t, z[:, group])
            spread_draws[group[:, None], live[None, :]] = _draw(
                hier[k], hier[k] @ modes[k], z[:, group]
            )
    else:
        draws[:, live] = rating[:, live]
    return LadderPosterior(point, rating, draws, spread_draws)


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
    normal draws do not; then widened away from the centre (down for a version at
    or below it, up for one above) to the 2.5-97.5% range of the spread model's
    draws (``LadderPosterior.spread_draws``), which the anchor games' pull on a
    field in near-strict order would otherwise leave too narrow. With ``samples`` 0 (cheap, for live views) there are no
    intervals: (-inf, inf). Both the server's ladder and a tournament's pool use
    it; the intervals are checked against simulated ladders and round robins
    (``server/calibration.py``, docs/statistics.md)."""
    raw = fit_bradley_terry(score[None], games[None], prior)[0]
    post = ladder_posterior(raw, score, games, prior, samples, seed)
    played = np.isfinite(post.point)
    if samples <= 0 or not played.any():
        n = len(raw)
        return BradleyTerryRatings(post, np.full(n, -np.inf), np.full(n, np.inf))
    own_low, own_high = own_likelihood_bounds(raw, score, games, prior)
    centre = float(raw[played].mean())
    low, high = own_low - centre, own_high - centre
    low[played] = np.minimum(low[played], np.percentile(post.rating[:, played], 2.5, axis=0))
    high[played] = np.maximum(high[played], np.percentile(post.rating[:, played], 97.5, axis=0))
    # The anchor games pull every rating towards the centre, and by most where the
    # results leave the field's spread open (a field in near-strict order): the
    # spread model's draws widen each interval away from the centre. Not towards
    # it: at a wide spread the model's normal draw around its mode ignores how
    # steeply a one-sided record's likelihood falls on the near side (a clean
    # sweep of 90 games would reach down to the field).
    outer_low = np.percentile(post.spread_draws[:, played], 2.5, axis=0)
    outer_high = np.percentile(post.spread_draws[:, played], 97.5, axis=0)
    below = post.point[played] <= 0
    low[played] = np.where(below, np.minimum(low[played], outer_low), low[played])
    high[played] = np.where(below, high[played], np.maximum(high[played], outer_high))
    return BradleyTerryRatings(post, low, high)
