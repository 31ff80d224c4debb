"""How sure a two-player league's ranking is: a model of each meeting's scores.

A league ranks bots by points (their mean score per match), and a match's outcome
is two scores, not a win or a loss: the model is of the scores themselves. Each
unordered pair {a, b} has its own unknown mean score vector (a's score, b's score)
over matches between them (seats alternate, so a seat advantage is averaged in).
Nothing ties one pair's means to another's, so bots that beat each other in a
cycle are modelled as they are, with no transitivity assumed. A bot's *strength*
is the mean of its per-opponent means: its mean score in a league in which every
pair met equally often. In a balanced round robin that is exactly its mean score;
with extra matches for some pairs it is still the same quantity, measured more
precisely, so extra matches cannot reward the pairs that got them.

Uncertainty: the observed mean of pair p over n_p matches is normal around the
true mean with covariance sigma_p^2 R / n_p (the central limit theorem over a
match's rounds and over matches): R is the 2x2 shape of a match's two scores,
pooled over all pairs, and sigma_p^2 the pair's own noise level. Each pair has
met only a few times, so its level is estimated by partial pooling in a
hierarchical model (``_noise_draws``): every bot has a noise factor v_i and a
pair's level is v_lo * v_hi times a pair-specific inverse-gamma factor with nu
degrees of freedom (a random bot makes all its pairs noisy; two deterministic
bots repeat themselves), and the v's and nu are unknown too. A Gibbs sampler
draws all of them from their joint posterior, so each draw carries the
uncertainty of the bots' noise estimates (shared by all of a bot's pairs, which
a per-pair t factor does not capture) and of how well the per-bot pattern fits
(nu small: each pair leans on its own scatter). When no pair has met twice (one
leg, or early in the pool) the scatter comes from the residuals of an additive
fit (score = bot's own effect + opponent's effect), which also counts any
non-additive pair effect as noise: wider, never narrower.

Each draw is a full set of pair means from that posterior with the schedule held
fixed; the strengths are then shrunk towards their mean under a normal prior of
unknown spread (``_shrink``, a hierarchical step), and they rank the bots. A
bot's 95% rank range is the central 95% of its ranks over the draws, and
``order_prob`` of two bots the share of draws with them in order. ``tools/calibration.py`` and ``tests/test_rank_calibration.py``
check both against simulated leagues of known strengths (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

# The noise model's Gibbs sampler: chains run side by side, each kept for
# NOISE_KEEP sweeps after NOISE_BURN, so a fit of S draws runs S / NOISE_KEEP chains.
NOISE_BURN = 60
NOISE_KEEP = 20
# nu, the degrees of freedom of a pair's level around its bots' pattern: a grid,
# log-uniform prior (1: each pair on its own; 100: the pattern alone).
NU_GRID = np.geomspace(1.0, 100.0, 60)
_NU_LOG_NORM = np.array([h * math.log(h) - math.lgamma(h) for h in NU_GRID / 2.0])
TAU_GRID = 400  # points of the grid on which the prior spread's posterior is evaluated
RANK_DRAWS = 4000  # draws for the published ranges; a share is then good to about 0.005


class LeagueModel(NamedTuple):
    """The fitted pair-means model of a league's matches."""

    strength: np.ndarray  # (n,) balanced mean score; -inf for a bot without matches
    draws: np.ndarray  # (samples, n) strengths drawn from the posterior
    df: float  # degrees of freedom of the pooled scatter (0: nothing to estimate it from)
    basis: str  # "repeated meetings", "additive fit" or "none"
    pairs: np.ndarray  # (m, 2) the pairs that met, lower index first
    matches: np.ndarray  # (m,) matches per pair
    match_cov: np.ndarray  # (m, 2, 2) the model's covariance of one match's two scores


def _psd_sqrt(cov: np.ndarray) -> np.ndarray:
    """A square root L (L @ L.T == cov) of each 2x2 covariance, shape (..., 2, 2)."""
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0.0, None)
    out: np.ndarray = vecs * np.sqrt(vals)[..., None, :]
    return out


def _additive_scatter(
    n: int, lo: np.ndarray, hi: np.ndarray, mean: np.ndarray
) -> tuple[np.ndarray, float]:
    """Pooled 2x2 scatter of the pair means around an additive fit (own effect +
    opponent's effect + overall level), and its degrees of freedom per pair."""
    rows = 2 * len(lo)
    x = np.zeros((rows, 2 * n + 1))
    y = np.empty(rows)
    for k, (a, b) in enumerate(zip(lo, hi, strict=True)):
        for r, (me, other, value) in enumerate(((a, b, mean[k, 0]), (b, a, mean[k, 1]))):
            x[2 * k + r, 0] = 1.0
            x[2 * k + r, 1 + me] = 1.0
            x[2 * k + r, 1 + n + other] = 1.0
            y[2 * k + r] = value
    coef, _, rank, _ = np.linalg.lstsq(x, y, rcond=None)
    df_scalar = rows - int(rank)
    if df_scalar <= 0:
        return np.zeros((2, 2)), 0.0
    resid = (y - x @ coef).reshape(-1, 2)
    df = df_scalar / 2.0  # two scalar residuals per pair vector
    return resid.T @ resid / df, df


def fit_league(
    n: int,
    a: ArrayLike,
    b: ArrayLike,
    score_a: ArrayLike,
    score_b: ArrayLike,
    samples: int = RANK_DRAWS,
    seed: int = 20260102,
) -> LeagueModel:
    """The pair-means model of matches ``k`` between bots ``a[k]`` and ``b[k]``
    scoring ``score_a[k]`` and ``score_b[k]``, with ``samples`` posterior draws."""
    a_ = np.asarray(a, dtype=np.int64)
    b_ = np.asarray(b, dtype=np.int64)
    swap = a_ > b_
    lo = np.where(swap, b_, a_)
    hi = np.where(swap, a_, b_)
    xs = np.stack([np.asarray(score_a, float), np.asarray(score_b, float)], axis=1)
    xs = np.where(swap[:, None], xs[:, ::-1], xs) if len(xs) else xs.reshape(0, 2)
    keys, pair_of = np.unique(lo * n + hi, return_inverse=True)
    m = len(keys)
    p_lo, p_hi = keys // n, keys % n
    count = np.bincount(pair_of, minlength=m).astype(float)
    mean = np.zeros((m, 2))
    for c in range(2):
        mean[:, c] = np.bincount(pair_of, xs[:, c], minlength=m) / np.maximum(count, 1)
    dev = xs - mean[pair_of]
    scatter = np.zeros((m, 2, 2))
    np.add.at(scatter, pair_of, dev[:, :, None] * dev[:, None, :])
    df = float((count - 1).sum())
    basis = "repeated meetings"
    if df > 0:
        pooled = scatter.sum(axis=0) / df
    else:
        pooled, df = _additive_scatter(n, p_lo, p_hi, mean)
        basis = "additive fit" if df > 0 else "none"

    # Strength = mean over a bot's opponents of its per-pair mean score.
    opponents = np.bincount(p_lo, minlength=n) + np.bincount(p_hi, minlength=n)
    to_lo = np.zeros((m, n))
    to_hi = np.zeros((m, n))
    to_lo[np.arange(m), p_lo] = 1.0
    to_hi[np.arange(m), p_hi] = 1.0

    def strengths(means: np.ndarray) -> np.ndarray:
        total = means[..., 0] @ to_lo + means[..., 1] @ to_hi
        with np.errstate(invalid="ignore", divide="ignore"):
            out: np.ndarray = np.where(opponents > 0, total / np.maximum(opponents, 1), -np.inf)
        return out

    point = strengths(mean)
    pairs = np.stack([p_lo, p_hi], axis=1)
    level = float(np.trace(pooled)) / 2.0
    shape = pooled / level if level > 0 else np.eye(2)
    if basis == "none" or samples <= 0 or level <= 0:
        still = np.repeat(point[None, :], max(samples, 0), axis=0)
        match_cov = np.repeat(pooled[None], m, axis=0)
        return LeagueModel(point, still, 0.0, basis, pairs, count, match_cov)
    rng = np.random.default_rng(seed)
    if basis == "additive fit":
        # One pooled level known to df degrees of freedom: a scaled inverse
        # chi-square factor per draw gives the pair means their Student t tails.
        sigma2 = np.repeat(level * df / rng.chisquare(df, size=(samples, 1)), m, axis=1)
    else:
        # Each pair's scatter in units of the shape R: two independent scalars per
        # match, or one in a game whose two scores always sum to the same total.
        dims = int(np.sum(np.linalg.eigvalsh(shape) > 1e-9 * 2.0))
        spread = np.einsum("ij,pji->p", np.linalg.pinv(shape, rcond=1e-9), scatter)
        sigma2 = _noise_draws(n, p_lo, p_hi, dims * (count - 1), spread, level, samples, rng)
    match_cov = sigma2.mean(axis=0)[:, None, None] * shape
    z = rng.standard_normal((samples, m, 2)) @ _psd_sqrt(shape).T
    drawn = mean + np.sqrt(sigma2 / count)[:, :, None] * z
    draws = _shrink(point, strengths(drawn), rng)
    return LeagueModel(point, draws, df, basis, pairs, count, match_cov)


def _noise_draws(
    n: int,
    lo: np.ndarray,
    hi: np.ndarray,
    scalars: np.ndarray,
    spread: np.ndarray,
    level: float,
    samples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``samples`` draws of each pair's noise level sigma^2 (shape (samples, m))
    from the posterior of a hierarchical model, by Gibbs sampling.

    Pair p's scatter ``spread`` (in units of the pooled shape) is sigma_p^2 times a
    chi-square with ``scalars[p]`` degrees of freedom (its independent deviations);
    sigma_p^2 is inverse-gamma with shape nu / 2 and scale nu * v_lo * v_hi / 2 (its
    typical size the product of its bots' noise factors, nu how closely it keeps to
    that); the factors v have the scale-free prior 1 / v and nu the log-uniform
    prior on ``NU_GRID``. All three full conditionals are standard (inverse gamma,
    gamma, a grid), and a draw's sigma^2 carries the uncertainty of the v's and of
    nu with it."""
    m = len(lo)
    chains = max(1, -(-samples // NOISE_KEEP))
    v = np.full((chains, n), math.sqrt(level))
    nu = np.full((chains, 1), 6.0)
    degree = (np.bincount(lo, minlength=n) + np.bincount(hi, minlength=n)).astype(float)
    mine = [np.flatnonzero((lo == i) | (hi == i)) for i in range(n)]
    other = [np.where(lo[k] == i, hi[k], lo[k]) for i, k in enumerate(mine)]
    half_nu = nu / 2.0
    live = [i for i in range(n) if degree[i] > 0]  # a bot without pairs keeps its factor
    live_degree = degree[live][:, None]
    half_scalars = scalars / 2.0
    nu_norm = m * _NU_LOG_NORM[None, :]
    half_grid = NU_GRID[None, :] / 2.0
    # (take rather than v[:, index]: the same gather at a fraction of the cost on
    # arrays this small, where each call's overhead is the whole cost)
    kept: list[np.ndarray] = []
    for sweep in range(NOISE_BURN + NOISE_KEEP):
        pattern = v.take(lo, axis=1) * v.take(hi, axis=1)
        sigma2 = (
            (nu * pattern + spread)
            / 2.0
            / rng.standard_gamma(half_nu + half_scalars, size=pattern.shape)
        )
        # The factors' gamma variates do not depend on the other factors, only their
        # rates do: one call draws them all, row by row in the order the loop takes
        # them (the same stream as a call per factor, which cost most of a fit in
        # the generator's per-call checks).
        half = half_nu[:, 0]
        shapes = rng.standard_gamma(live_degree * half)
        for row, i in enumerate(live):  # each factor given the others (they share pairs)
            rate = half * (v.take(other[i], axis=1) / sigma2.take(mine[i], axis=1)).sum(axis=1)
            v[:, i] = shapes[row] / rate
        ratio = v.take(lo, axis=1) * v.take(hi, axis=1) / sigma2
        fit = (np.log(ratio) - ratio).sum(axis=1, keepdims=True)
        loglik = nu_norm + half_grid * fit
        weight = np.exp(loglik - loglik.max(axis=1, keepdims=True)).cumsum(axis=1)
        pick = (weight < rng.random((chains, 1)) * weight[:, -1:]).sum(axis=1)
        nu = NU_GRID[np.minimum(pick, len(NU_GRID) - 1)][:, None]
        half_nu = nu / 2.0
        if sweep >= NOISE_BURN:
            kept.append(sigma2)
    out: np.ndarray = np.concatenate(kept, axis=0)[:samples]
    return out


def _shrink(point: np.ndarray, draws: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draws from the posterior of the strengths under a normal prior around their
    mean whose spread tau is itself estimated from the league (a hierarchical model:
    tau has a flat prior, its posterior is evaluated on a grid and each draw takes
    its own tau). Strengths are pulled towards their mean by as much as the spread
    of the measured strengths could be noise. Without it, a flat prior treats every
    gap as equally likely and claims too much about a field of close bots."""
    live = np.isfinite(point)
    if live.sum() < 2:
        return draws
    theta = point[live]
    sub = draws[:, live]
    lam, q = np.linalg.eigh(np.cov(sub, rowvar=False))
    lam = np.clip(lam, 0.0, None)
    centre = float(theta.mean())
    shift = (theta - centre) @ q  # the estimate, in the noise's eigenbasis
    spread = (sub - theta) @ q
    # Marginal likelihood of tau: shift_i ~ N(0, tau^2 + lam_i) independently.
    top = 5.0 * float(np.sqrt(np.var(theta) + lam.max())) + 1e-300
    taus = np.linspace(0.0, top, TAU_GRID + 1)[1:]
    var = taus[:, None] ** 2 + lam[None, :]
    loglik = -0.5 * np.sum(np.log(var) + shift[None, :] ** 2 / var, axis=1)
    weight = np.exp(loglik - loglik.max())
    tau2 = taus[rng.choice(len(taus), size=len(sub), p=weight / weight.sum())] ** 2
    k = tau2[:, None] / (tau2[:, None] + lam[None, :])
    extra = np.sqrt(k * (1.0 - k) * lam) * rng.standard_normal(sub.shape)
    posterior = centre + (k * (shift + spread) + extra) @ q.T
    out = draws.copy()
    out[:, live] = posterior
    return out


def settle_pairs(
    model: LeagueModel,
    order: Sequence[int],
    order_prob: Sequence[float | None],
    confidence: float,
    budget_pairs: int,
) -> list[tuple[int, int]]:
    """The pairs (i < j) of the next batch of extra meetings (each two matches,
    seats swapped), at most one round's worth (n // 2) and ``budget_pairs``.

    Only the adjacent orders less sure than ``confidence`` matter. The difference
    of two strengths is a sum over pairs of the pairs' means, so the model says how
    much each pair's noise contributes to it (its covariance over its count); a
    pair is worth as much as two more matches would cut those contributions,
    summed over the unsure orders, each relative to that order's whole variance.
    The pairs worth most are played (the meeting of the two unsure bots itself
    usually first: both its scores enter the difference). The ranking weights every
    opponent equally however often they met, so targeting the matches changes how
    sharp the strengths are, never what they measure. Ties go to the lower index,
    so the batch is a pure function of the results. Empty when every adjacent order
    is settled (or the budget is spent)."""
    n = len(model.strength)
    unsure = [
        (order[k], order[k + 1])
        for k, p in enumerate(order_prob[: len(order) - 1])
        if p is not None and max(p, 1.0 - p) < confidence
    ]
    size = min(budget_pairs, n // 2)
    if not unsure or size <= 0:
        return []
    known = {(int(i), int(j)): k for k, (i, j) in enumerate(model.pairs)}
    worth: dict[tuple[int, int], float] = {}
    for u, v in unsure:
        parts: dict[tuple[int, int], tuple[float, float]] = {}
        for i in range(n):
            for j in range(i + 1, n):
                coef = np.array([(i == u) - (i == v), (j == u) - (j == v)], dtype=float) / max(
                    n - 1, 1
                )
                if not coef.any():
                    continue
                k = known.get((i, j))
                if k is None:  # never met: worth a whole match's noise
                    var = float(np.trace(model.match_cov.mean(axis=0))) if len(known) else 1.0
                    parts[(i, j)] = (var, 0.0)
                    continue
                per_match = float(coef @ model.match_cov[k] @ coef)
                c = float(model.matches[k])
                parts[(i, j)] = (per_match / c, per_match / (c + 2.0))
        total = sum(now for now, _ in parts.values())
        if total <= 0:
            continue
        for key, (now, after) in parts.items():
            worth[key] = worth.get(key, 0.0) + (now - after) / total
    ranked = sorted(worth, key=lambda p: (-worth[p], p))
    return sorted(ranked[:size])
