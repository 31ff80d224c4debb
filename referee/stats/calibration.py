"""Simulated leagues of bots with known strengths, to check that rank ranges,
``order_prob`` and ``--until-settled`` mean what they say (pure numpy, no
processes). Used by ``tests/test_rank_calibration.py`` and, at a larger size, by
``tools/calibration.py``, whose table is in docs/statistics.md.

A field is a matrix ``mu[i, j]``: bot i's true mean score per match against bot
j. A match between i and j draws both scores from a normal around (mu[i, j],
mu[j, i]) with per-pair spread ``sd[i, j]`` and correlation ``CORRELATION`` (a
game close to zero-sum, like Chaos League's Final). A bot's true strength is
its mean of mu over its opponents, and the true ranks follow from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .league import LeagueModel, fit_league, settle_pairs
from .ranks import adjacent_order, rank_intervals

CORRELATION = -0.8
LEVELS = (0.8, 0.9, 0.95, 0.99)


class Field(NamedTuple):
    mu: np.ndarray  # (n, n) true mean score of row against column (diagonal unused)
    sd: np.ndarray  # (n, n) symmetric per-match spread of a pair's scores
    copies: tuple[int, int] | None  # two identical bots, if any


def make_field(
    n: int,
    gap: float | tuple[float, ...],
    rng: np.random.Generator,
    cycle: float = 0.3,
    copies: bool = True,
    noisy: float = 3.0,
) -> Field:
    """Bots whose strengths are ``gap`` apart (a tuple: the gaps in turn, from the
    top, repeated), a non-transitive part of size
    ``cycle`` (rock-paper-scissors-like pair effects that average out per bot),
    unequal noise (one bot in three ``noisy`` times the variance of the others,
    a factor that multiplies: two noisy bots, ``noisy`` squared), and, with ``copies``,
    bot 1 a copy of bot 2 (same scores against everyone, level with each other)."""
    gaps = np.resize(np.asarray(gap, dtype=float), n - 1)
    strength = np.concatenate([[0.0], -np.cumsum(gaps)])
    pair = rng.normal(0.0, cycle, (n, n))
    pair = pair - pair.T  # what i gains over j, j loses
    pair -= pair.mean(axis=1, keepdims=True) - pair.mean()  # no bot's mean changes much
    np.fill_diagonal(pair, 0.0)
    mu = strength[:, None] - strength[None, :] + pair
    factor = np.where(np.arange(n) % 3 == 0, noisy, 1.0)
    sd = np.sqrt(factor[:, None] * factor[None, :])
    if copies and n >= 3:
        mu[1, :] = mu[2, :]
        mu[:, 1] = mu[:, 2]
        mu[1, 2] = mu[2, 1] = mu[1, 1] = 0.0
        sd[1, :], sd[:, 1] = sd[2, :], sd[:, 2]
    np.fill_diagonal(mu, 0.0)
    return Field(mu, sd, (1, 2) if copies and n >= 3 else None)


def true_strength(field: Field) -> np.ndarray:
    n = len(field.mu)
    out: np.ndarray = field.mu.sum(axis=1) / (n - 1)
    return out


def play(
    field: Field, pairs: list[tuple[int, int]], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One match per listed pair: (a, b, score_a, score_b)."""
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    sd = field.sd[a, b]
    z1 = rng.standard_normal(len(a))
    z2 = CORRELATION * z1 + np.sqrt(1.0 - CORRELATION**2) * rng.standard_normal(len(a))
    return a, b, field.mu[a, b] + sd * z1, field.mu[b, a] + sd * z2


def round_robin(n: int, legs: int) -> list[tuple[int, int]]:
    return [
        (i, j) if leg % 2 == 0 else (j, i)
        for leg in range(legs)
        for i in range(n)
        for j in range(i + 1, n)
    ]


class LeagueResult(NamedTuple):
    order: list[int]  # estimated order, best first
    rank_low: list[int]
    rank_high: list[int]
    order_prob: list[float]  # adjacent, len n - 1
    draws: np.ndarray  # (samples, n) the model's strengths

    def above(self, u: int, v: int) -> float:
        """Share of draws with bot u above bot v (level counts half)."""
        a, b = self.draws[:, u], self.draws[:, v]
        return float(np.mean(a > b) + 0.5 * np.mean(a == b))


def rank_league(
    n: int, a: np.ndarray, b: np.ndarray, sa: np.ndarray, sb: np.ndarray, samples: int, seed: int
) -> LeagueResult:
    return rank_model(n, fit_league(n, a, b, sa, sb, samples=samples, seed=seed), samples)


def rank_model(n: int, model: LeagueModel, samples: int) -> LeagueResult:
    order = [int(i) for i in np.argsort(-model.strength, kind="stable")]
    if samples <= 0:
        return LeagueResult(order, [1] * n, [n] * n, [0.5] * (n - 1), model.draws)
    low, high = rank_intervals(model.draws)
    return LeagueResult(order, low, high, adjacent_order(model.draws, order), model.draws)


class Calibration(NamedTuple):
    leagues: int
    coverage: float  # share of (league, bot) whose 95% rank range holds its true rank
    mean_width: float  # mean of rank_high - rank_low + 1
    right_at: dict[float, tuple[int, float]]  # p: (orders with order_prob >= p, share right)
    copies_mean: float  # mean share of draws with copy 1 above copy 2 (should be near 0.5)
    copies_sure: float  # share of leagues calling the copies' order with >= 0.95 either way
    all_right: float  # share of leagues whose whole order (copies aside) is right
    called_95: float  # share of adjacent orders (copies aside) given order_prob >= 0.95


# A simulated field's spread: none (equally spaced strengths), one standard deviation,
# or a pair (low, high) to draw each field's standard deviation from.
Spread = float | tuple[float, float] | None


def field_spread(spread: Spread, rng: np.random.Generator) -> float | None:
    """The standard deviation of one simulated field's strengths: ``spread`` itself,
    or for a pair ``(low, high)`` one drawn log-uniformly between the two (a
    population of fields, from nearly level to well spread); None stays None."""
    if isinstance(spread, tuple):
        low, high = spread
        return float(np.exp(rng.uniform(np.log(low), np.log(high))))
    return spread


def calibrate(
    n: int,
    gap: float | tuple[float, ...],
    legs: int,
    leagues: int,
    seed: int,
    samples: int = 1000,
    noisy: float = 3.0,
    spread: Spread = None,
) -> Calibration:
    """Play ``leagues`` simulated round robins of ``legs`` legs on fresh fields
    and check the ranges and order probabilities against the truth.

    With ``spread``, ``gap`` is ignored: each field's strengths are drawn afresh
    as ``n`` independent normals of that standard deviation (uneven gaps, as the
    model's exchangeable prior expects), instead of equally spaced. With a pair
    ``(low, high)``, each field's standard deviation is itself drawn first
    (``field_spread``)."""
    rng = np.random.default_rng(seed)
    covered = width = total = 0
    hits: dict[float, list[int]] = {p: [0, 0] for p in LEVELS}
    copies: list[float] = []
    sure = 0
    whole = 0
    orders = called = 0
    for t in range(leagues):
        sd = field_spread(spread, rng)
        if sd is not None:
            drawn = np.sort(rng.normal(0.0, sd, n))[::-1]
            gap = tuple(float(g) for g in -np.diff(drawn))
        field = make_field(n, gap, rng, noisy=noisy)
        truth = true_strength(field)
        res = rank_league(n, *play(field, round_robin(n, legs), rng), samples, seed + t)
        c = field.copies
        if c is not None:
            p12 = res.above(*c)
            copies.append(p12)
            sure += int(max(p12, 1.0 - p12) >= 0.95)
        for i in range(n):
            better = int(np.sum(truth > truth[i] + 1e-12))
            level = int(np.sum(np.abs(truth - truth[i]) <= 1e-12)) - 1
            ok = res.rank_low[i] <= better + 1 + level and res.rank_high[i] >= better + 1
            covered += int(ok)
            width += res.rank_high[i] - res.rank_low[i] + 1
            total += 1
        right_all = True
        for k, prob in enumerate(res.order_prob):
            u, v = res.order[k], res.order[k + 1]
            if c is not None and {u, v} == set(c):
                continue  # no right order
            right = bool(truth[u] > truth[v])
            right_all &= right
            orders += 1
            called += int(prob >= 0.95)
            for p in LEVELS:
                if prob >= p:
                    hits[p][0] += 1
                    hits[p][1] += int(right)
        whole += int(right_all)
    return Calibration(
        leagues,
        covered / total,
        width / total,
        {p: (h[0], h[1] / h[0] if h[0] else float("nan")) for p, h in hits.items()},
        float(np.mean(copies)) if copies else float("nan"),
        sure / len(copies) if copies else float("nan"),
        whole / leagues,
        called / orders if orders else float("nan"),
    )


def order_right(order: list[int], truth: np.ndarray) -> float:
    """Share of adjacent orders that agree with the true strengths."""
    pairs = list(zip(order, order[1:], strict=False))
    return float(np.mean([truth[u] > truth[v] for u, v in pairs]))


Ranker = Callable[[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray], list[int]]


def settle_versus_balanced(
    n: int,
    gap: float | tuple[float, ...],
    legs: int,
    budget: int,
    leagues: int,
    seed: int,
    confidence: float = 0.95,
    samples: int = 1000,
) -> tuple[float, float, float, float]:
    """(settled, balanced) share of adjacent orders right and share of leagues
    wholly right: a ``legs``-leg round robin plus up to ``budget`` extra matches
    from ``settle_pairs`` (both legs of each extra meeting), against a balanced
    league of the same number of matches (the extra matches spread over every pair
    in turn), both ranked by the model's strength. No copies: every order has a
    right answer."""
    rng = np.random.default_rng(seed)
    s_adj = b_adj = 0.0
    s_all = b_all = 0
    for t in range(leagues):
        field = make_field(n, gap, rng, copies=False)
        truth = true_strength(field)
        base = round_robin(n, legs)
        a, b, sa, sb = play(field, base, rng)
        left = budget
        while True:
            model = fit_league(n, a, b, sa, sb, samples=samples, seed=seed + t)
            res = rank_model(n, model, samples)
            pairs = settle_pairs(model, res.order, res.order_prob, confidence, left // 2)
            if not pairs:
                break
            extra = [(i, j) for i, j in pairs] + [(j, i) for i, j in pairs]
            left -= len(extra)
            a2, b2, sa2, sb2 = play(field, extra, rng)
            a, b = np.concatenate([a, a2]), np.concatenate([b, b2])
            sa, sb = np.concatenate([sa, sa2]), np.concatenate([sb, sb2])
        used = len(a)
        s_adj += order_right(res.order, truth)
        s_all += int(order_right(res.order, truth) == 1.0)
        # The balanced league: the same number of matches, every pair in turn.
        cycle = round_robin(n, 2 * (used // len(round_robin(n, 2)) + 1))[:used]
        bal = rank_league(n, *play(field, cycle, rng), 0, seed)
        s = order_right(bal.order, truth)
        b_adj += s
        b_all += int(s == 1.0)
    return s_adj / leagues, b_adj / leagues, s_all / leagues, b_all / leagues
