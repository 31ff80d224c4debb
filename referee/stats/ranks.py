"""Rank intervals and the probability that adjacent bots are in the right order,
from resampled statistics (e.g. a bootstrap over matches).

``samples[b, i]`` is bot i's ranking statistic (higher is better) in resample b.
A bot's rank in a resample is 1 + the number of bots strictly above it, plus half
of those level with it (rounded down), so ties do not favour either side.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def resample_ranks(samples: np.ndarray) -> np.ndarray:
    """Rank (1 = best) of every bot in every resample, shape (B, n)."""
    s = np.asarray(samples, dtype=float)
    above = (s[:, None, :] > s[:, :, None]).sum(axis=-1)
    level = (s[:, None, :] == s[:, :, None]).sum(axis=-1) - 1
    ranks: np.ndarray = 1 + above + level // 2
    return ranks


def rank_intervals(samples: np.ndarray, level: float = 0.95) -> tuple[list[int], list[int]]:
    """(rank_low, rank_high) per bot: the central ``level`` range of its resampled
    ranks (rank_low is the best rank, the smaller number)."""
    ranks = resample_ranks(samples)
    tail = 100.0 * (1.0 - level) / 2.0
    low = np.percentile(ranks, tail, axis=0, method="lower")
    high = np.percentile(ranks, 100.0 - tail, axis=0, method="higher")
    return [int(x) for x in low], [int(x) for x in high]


def adjacent_order(samples: np.ndarray, order: Sequence[int]) -> list[float]:
    """For each k, the share of resamples in which bot ``order[k]`` is above bot
    ``order[k + 1]`` (level counts half): the probability that their order is right."""
    s = np.asarray(samples, dtype=float)
    out = []
    for upper, lower in zip(order, order[1:], strict=False):
        a, b = s[:, upper], s[:, lower]
        out.append(float(np.mean(a > b) + 0.5 * np.mean(a == b)))
    return out


def group_bootstrap_weights(groups: Sequence[int], samples: int, seed: int) -> np.ndarray:
    """(samples, len(groups)) weights of a bootstrap that draws whole groups (e.g.
    the two seat-swapped legs of a pair) with replacement: each item's weight is
    how often its group was drawn."""
    ids = np.asarray(groups, dtype=np.int64)
    n_groups = int(ids.max()) + 1 if len(ids) else 0
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, max(n_groups, 1), size=(samples, n_groups))
    counts = np.zeros((samples, max(n_groups, 1)))
    np.add.at(counts, (np.arange(samples)[:, None], draws), 1.0)
    out: np.ndarray = counts[:, ids] if len(ids) else np.zeros((samples, 0))
    return out


def resampled_means(weights: np.ndarray, values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Each bot's weighted mean of ``values`` (items x bots, counted where
    ``present``) per resample; a bot absent from a resample ranks last there."""
    total = weights @ (values * present)
    count = weights @ present
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(count > 0, total / np.where(count > 0, count, 1.0), -np.inf)
    out: np.ndarray = means
    return out
