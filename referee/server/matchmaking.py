"""Ratings and pairings of the ladder: plain synchronous code, no I/O.

Ratings are the Bradley-Terry fit that ``referee tournament`` uses
(``stats/ladder.py``), over the finished ladder matches between each bot's
current version; their intervals, rank ranges and order probabilities come from
draws of the fit's posterior (``stats/ladder.py``), checked for calibration against
simulated ladders that use this module's pairing (``server/calibration.py``).

Pairing: a game between a and b tells most about the ratings when both are
uncertain and the outcome is uncertain too, so each candidate pair is weighted
by (width_a + width_b) * p * (1 - p), p being a's chance to beat b under the
current fit; a version whose interval is still wider than ``settled_width`` has
its weight doubled (new versions play more often). A configurable share of the
pairings is drawn uniformly instead, which keeps every pair sampled and the
ladder from locking onto a few pairs; the pair played last is never chosen again
next (unless it is the only one).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import msgspec
import numpy as np

from ..stats.ladder import ELO, LADDER_DRAWS, bradley_terry_ratings
from ..stats.ranks import adjacent_order, rank_intervals


class Rated(msgspec.Struct):
    version: int
    rating: float = 0.0
    low: float = 0.0
    high: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    faults: int = 0
    # The 95% range of the version's rank among the versions that have played
    # (1 = best), from the same posterior draws as the rating interval.
    rank_low: int = 0
    rank_high: int = 0
    # The share of the same draws in which this version is above the next one in
    # leaderboard order (``leaderboard_order``); None for the last and the unplayed.
    order_prob: float | None = None

    @property
    def width(self) -> float:
        return self.high - self.low


# An unrated version's interval width: wide, so it is paired first.
UNRATED_WIDTH = 2000.0


def rate(
    versions: Sequence[int],
    results: Sequence[tuple[int, int, int | None, int, int]],
    samples: int = LADDER_DRAWS,
    seed: int = 20260101,
) -> list[Rated]:
    """Ratings of ``versions`` (in that order) from (version0, version1, winner seat,
    faults0, faults1) results. A version without games gets a wide interval.

    The rating is the Bradley-Terry fit that ``referee tournament`` uses
    (``stats/ladder.py``, ``bradley_terry_ratings``), centred on the versions that
    have played; its 95% interval, the rank range and ``order_prob`` come from
    ``samples`` draws of the fit's posterior with the schedule held fixed. The matches are first counted into
    score and game matrices, so the cost does not grow with their number."""
    index = {v: i for i, v in enumerate(versions)}
    n = len(versions)
    out = [Rated(version=v) for v in versions]
    score = np.zeros((n, n))
    games = np.zeros((n, n))
    for v0, v1, winner, f0, f1 in results:
        if v0 not in index or v1 not in index or v0 == v1:
            continue
        a, b = index[v0], index[v1]
        for me, won in ((a, winner == 0), (b, winner == 1)):
            r = out[me]
            r.games += 1
            if winner is None:
                r.draws += 1
            elif won:
                r.wins += 1
            else:
                r.losses += 1
        out[a].faults += f0
        out[b].faults += f1
        first = 0.5 if winner is None else 1.0 if winner == 0 else 0.0
        score[a, b] += first
        score[b, a] += 1.0 - first
        games[a, b] += 1.0
        games[b, a] += 1.0
    if n == 0:
        return out
    fit = bradley_terry_ratings(score, games, samples, seed)
    post = fit.posterior
    played = np.isfinite(post.point)
    for i in np.flatnonzero(played):
        out[i].rating = round(float(post.point[i] * ELO), 1)
    if samples > 0 and played.any():
        rank_low, rank_high = rank_intervals(post.draws)
        ranked = [i for i in leaderboard_order(out) if played[i]]
        for upper, prob in zip(ranked, adjacent_order(post.draws, ranked), strict=False):
            out[upper].order_prob = round(prob, 3)
    for i in np.flatnonzero(played):
        r = out[i]
        if samples > 0:
            # The wider of the posterior's interval and the version's own
            # likelihood-ratio one (``bradley_terry_ratings``).
            r.low = round(float(fit.low[i] * ELO), 1)
            r.high = round(float(fit.high[i] * ELO), 1)
            r.rank_low, r.rank_high = rank_low[i], rank_high[i]
        else:
            r.low, r.high = r.rating - UNRATED_WIDTH / 2, r.rating + UNRATED_WIDTH / 2
            r.rank_low, r.rank_high = 1, n
    for r in out:
        if r.games == 0:
            r.low, r.high = -UNRATED_WIDTH / 2, UNRATED_WIDTH / 2
            r.rank_low, r.rank_high = 1, n  # anywhere, as far as anyone knows
    return out


def leaderboard_order(rated: Sequence[Rated]) -> list[int]:
    """Indices of ``rated`` in leaderboard order: played versions by rating (ties
    in the given order), then those without games. ``order_prob`` refers to it."""
    return sorted(range(len(rated)), key=lambda i: (rated[i].games == 0, -rated[i].rating, i))


def win_chance(a: float, b: float) -> float:
    """a's chance to beat b from Elo-scale ratings."""
    return 1.0 / (1.0 + math.exp((b - a) / ELO))


def choose_pair(
    rated: Sequence[Rated],
    rng: random.Random,
    random_share: float = 0.1,
    settled_width: float = 200.0,
    last_pair: frozenset[int] | None = None,
    busy: frozenset[int] = frozenset(),
) -> tuple[int, int] | None:
    """Two versions to play next (seat order random), or None if fewer than two are
    free. ``busy``: versions in a match right now (each plays one match at a time)."""
    free = [r for r in rated if r.version not in busy]
    pairs = [(a, b) for i, a in enumerate(free) for b in free[i + 1 :]]
    if not pairs:
        return None
    fresh = [p for p in pairs if frozenset((p[0].version, p[1].version)) != last_pair]
    pairs = fresh or pairs
    if rng.random() < random_share:
        a, b = rng.choice(pairs)
    else:
        weights = []
        for a, b in pairs:
            p = win_chance(a.rating, b.rating)
            w = (a.width + b.width) * p * (1.0 - p)
            if a.width > settled_width or b.width > settled_width:
                w *= 2.0
            weights.append(max(w, 1e-9))
        a, b = rng.choices(pairs, weights=weights)[0]
    return (a.version, b.version) if rng.random() < 0.5 else (b.version, a.version)
