"""Ratings and pairings of the ladder: plain synchronous code, no I/O.

Ratings are the Bradley-Terry fit with bootstrap intervals that ``referee
tournament`` uses (``tournament/standings.py``), over the finished ladder matches
between each bot's current version.

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

from ..stats.ranks import rank_intervals
from ..stats.rating import likelihood_interval
from ..tournament.standings import ELO, RATING_PRIOR, _fit_bt


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
    # The 95% range of the version's rank among those rated together (1 = best),
    # from the same bootstrap as the rating interval.
    rank_low: int = 0
    rank_high: int = 0

    @property
    def width(self) -> float:
        return self.high - self.low


# An unrated version's interval width: wide, so it is paired first.
UNRATED_WIDTH = 2000.0


def rate(
    versions: Sequence[int],
    results: Sequence[tuple[int, int, int | None, int, int]],
    samples: int = 200,
    seed: int = 20260101,
) -> list[Rated]:
    """Ratings of ``versions`` (in that order) from (version0, version1, winner seat,
    faults0, faults1) results. A version without games gets a wide interval.

    The fit is ``referee tournament``'s Bradley-Terry (``_fit_bt``) with a bootstrap
    over the matches for the 95% interval. A ladder holds many matches between few
    bots, so the matches are first counted by kind (pair in seat order, and who
    won): drawing M matches with replacement is drawing those M from a multinomial
    over the kinds, which costs the same for 100 matches or 100,000."""
    index = {v: i for i, v in enumerate(versions)}
    n = len(versions)
    out = [Rated(version=v) for v in versions]
    kinds: dict[tuple[int, int, float], int] = {}
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
        kinds[(a, b, first)] = kinds.get((a, b, first), 0) + 1
    if n == 0:
        return out
    keys = list(kinds)
    counts = np.array([kinds[k] for k in keys], dtype=float)
    # Each kind adds to two cells of the flattened score and game-count matrices:
    # (a, b) and (b, a). Kept as cell indices and values, not as a dense
    # kinds x n^2 matrix: a ladder of 51 versions that had played 4,000 matches
    # has thousands of kinds, and the dense pair took over 100 MiB at every
    # refresh (bench/season.py saw the server's memory grow by 180 MiB).
    a_idx = np.array([a for a, _b, _f in keys], dtype=np.intp)
    b_idx = np.array([b for _a, b, _f in keys], dtype=np.intp)
    first_of = np.array([f for _a, _b, f in keys], dtype=float)
    cells = np.concatenate([a_idx * n + b_idx, b_idx * n + a_idx])
    score_share = np.concatenate([first_of, 1.0 - first_of])

    def totals(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Score and game-count matrices (samples x n x n) of weighted kinds."""
        both = np.concatenate([weights, weights], axis=1)  # samples x (2 kinds)
        score_t = np.zeros((n * n, len(weights)))
        games_t = np.zeros((n * n, len(weights)))
        np.add.at(score_t, cells, (both * score_share).T)
        np.add.at(games_t, cells, both.T)
        return score_t.T.reshape(-1, n, n), games_t.T.reshape(-1, n, n)

    def fit(weights: np.ndarray, tol: float) -> np.ndarray:
        theta = _fit_bt(*totals(weights), tol=tol)
        return np.asarray((theta - theta.mean(axis=1, keepdims=True)) * ELO)

    raw = _fit_bt(*totals(counts[None, :]), tol=1e-9)[0]
    point = (raw - raw.mean()) * ELO
    low = high = point
    rank_low, rank_high = [1] * n, [n] * n
    total = int(counts.sum())
    if total and samples > 0:
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(total, counts / total, size=samples).astype(float)
        boot = fit(draws, 1e-6)
        low = np.percentile(boot, 2.5, axis=0)
        high = np.percentile(boot, 97.5, axis=0)
        rank_low, rank_high = rank_intervals(boot)
    profile = _likelihood_bounds(n, keys, counts, raw)
    for i, r in enumerate(out):
        r.rating = round(float(point[i]), 1)
        # The wider of the bootstrap's interval and the likelihood-ratio one: a
        # bootstrap of a few games has (almost) no spread, e.g. none after one game.
        r.low = round(min(float(low[i]), profile[i][0]), 1)
        r.high = round(max(float(high[i]), profile[i][1]), 1)
        r.rank_low, r.rank_high = rank_low[i], rank_high[i]
        if r.games == 0:
            r.low, r.high = r.rating - UNRATED_WIDTH / 2, r.rating + UNRATED_WIDTH / 2
            r.rank_low, r.rank_high = 1, n  # anywhere, as far as anyone knows
    return out


def _likelihood_bounds(
    n: int, keys: Sequence[tuple[int, int, float]], counts: np.ndarray, raw: np.ndarray
) -> list[tuple[float, float]]:
    """Each version's 95% likelihood-ratio interval with the others held at their
    fitted ratings and the fit's prior (RATING_PRIOR drawn games against an anchor
    at 0), shifted to the centred scale of the ratings: finite and wide for a
    version with one game or a clean sweep (stats/rating.py)."""
    elo = raw * ELO
    shift = float(elo.mean())
    games: list[tuple[list[float], list[float], list[float]]] = [([], [], []) for _ in range(n)]
    for (a, b, first), count in zip(keys, counts, strict=True):
        for me, other, score in ((a, b, first), (b, a, 1.0 - first)):
            games[me][0].append(float(elo[other]))
            games[me][1].append(score)
            games[me][2].append(float(count))
    out = []
    for opp, scores, weights in games:
        if not opp:
            out.append((math.inf, -math.inf))  # no games: the bootstrap's width stands
            continue
        iv = likelihood_interval(opp, scores, RATING_PRIOR, weights)
        out.append((iv.low - shift, iv.high - shift))
    return out


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
