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
true mean with covariance C_p / n_p (the central limit theorem over a match's
rounds and over matches). C_p blends the pair's own 2x2 scatter (n_p - 1 degrees
of freedom) with a prior worth ``PRIOR_DF`` degrees of freedom: the scatter pooled
over all pairs, scaled by a fit in which each bot adds its own variance to its
matches (``_bot_noise``), so a pair met only twice borrows from the rest. Each
draw multiplies each pair's covariance by nu / chi2(nu), nu its degrees of
freedom, which gives the pair mean its Student t tails. When no pair has met
twice (one leg, or early in the pool) the scatter comes from the residuals of an
additive fit (score = bot's own effect + opponent's effect), which also counts any
non-additive pair effect as noise: wider, never narrower.

Each draw is a full set of pair means from that posterior with the schedule held
fixed; the strengths are then shrunk towards their mean under a normal prior of
unknown spread (``_shrink``, a hierarchical step), and they rank the bots. A
bot's 95% rank range is the central 95% of its ranks over the draws, and
``order_prob`` of two bots the share of draws with them in order. ``tools/calibration.py`` and ``tests/test_rank_calibration.py``
check both against simulated leagues of known strengths (docs/statistics.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

PRIOR_DF = 6.0  # pseudo degrees of freedom of the pooled scatter in each pair's covariance
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
    size = np.ones(m)  # each pair's share of the pooled scatter
    if df > 0:
        pooled = scatter.sum(axis=0) / df
        size = _bot_noise(n, p_lo, p_hi, scatter, count - 1)
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
    own_df = (count - 1)[:, None, None]
    prior = PRIOR_DF * pooled * size[:, None, None]
    match_cov = (prior + scatter) / (PRIOR_DF + own_df)
    pairs = np.stack([p_lo, p_hi], axis=1)
    if basis == "none" or samples <= 0:
        still = np.repeat(point[None, :], max(samples, 0), axis=0)
        return LeagueModel(point, still, 0.0, basis, pairs, count, match_cov)
    root = _psd_sqrt(match_cov / count[:, None, None])
    rng = np.random.default_rng(seed)
    # Each pair's covariance is known to PRIOR_DF + its own df (df for the additive
    # fit's pooled scatter): a scaled inverse chi-square factor per pair and draw
    # gives the pair mean its Student t tails.
    nu = np.full(m, df) if basis == "additive fit" else PRIOR_DF + count - 1
    scale = np.sqrt(nu / rng.chisquare(nu, size=(samples, m)))
    z = rng.standard_normal((samples, m, 2))
    drawn = mean + scale[:, :, None] * np.einsum("pij,bpj->bpi", root, z)
    draws = _shrink(point, strengths(drawn), rng)
    return LeagueModel(point, draws, df, basis, pairs, count, match_cov)


def _bot_noise(
    n: int, lo: np.ndarray, hi: np.ndarray, scatter: np.ndarray, df: np.ndarray
) -> np.ndarray:
    """How noisy each pair is likely to be relative to the pool, from a model in
    which every bot adds its own variance to its matches (a random bot makes all
    its pairs noisy; two deterministic bots repeat themselves): the per-pair
    variance is w_lo + w_hi, fitted by weighted least squares to the pairs' own
    scatter, w >= 0. Returns (w_lo + w_hi) over its df-weighted mean (1: average)."""
    used = df > 0
    per_df = (scatter[:, 0, 0] + scatter[:, 1, 1]) / 2.0 / np.maximum(df, 1)
    x = np.zeros((int(used.sum()), n))
    rows = np.arange(len(x))
    x[rows, lo[used]] += 1.0
    x[rows, hi[used]] += 1.0
    weight = np.sqrt(df[used])
    w, *_ = np.linalg.lstsq(x * weight[:, None], per_df[used] * weight, rcond=None)
    w = np.clip(w, 0.0, None)
    pair = w[lo] + w[hi]
    average = float(np.sum(df * pair) / np.sum(df))
    if average <= 0:
        return np.ones(len(lo))
    out: np.ndarray = pair / average
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
