"""Simulated ladders of versions with known strengths, to check that the
leaderboard's rating intervals, rank ranges and ``order_prob`` mean what they say
(pure code, no processes). Used by ``tests/test_ladder_calibration.py`` and, at a
larger size, by ``tools/ladder_calibration.py``, whose tables are in
docs/statistics.md.

A ladder here is the server's own loop without the matches: versions with true
Elo ratings ``gap`` apart (two of them identical copies), half of them present from
the start and the rest arriving one by one over the first half of the matches
(each new version starts unrated, as an upload does); every ``refresh`` matches
the ratings are recomputed with ``matchmaking.rate`` and the next pairs are
chosen with ``matchmaking.choose_pair`` (one match at a time, so the pair just
played is never next). Version a's expected score against b is the Bradley-Terry
``p = 1 / (1 + 10^((elo_b - elo_a) / 400))``; a match is drawn with probability
``4 * draws * p * (1 - p)`` (``draws`` between equals, fewer in lopsided pairs),
otherwise won, with the draws taken equally from both sides so the expected
score stays p; seats do not matter. At the end the leaderboard of every version that has played
is checked against the truth. With ``random_order`` every version is there from the
start and each match is between two versions drawn uniformly (the rating model
alone, without the matchmaking's choices).
"""

from __future__ import annotations

import random
from typing import NamedTuple

import numpy as np

from ..stats.calibration import LEVELS, Spread, field_spread
from ..tournament.schedule import Played
from ..tournament.standings import Standing, ratings
from .matchmaking import choose_pair, leaderboard_order, rate


class LadderCalibration(NamedTuple):
    ladders: int
    coverage: float  # share of (ladder, version) whose 95% rank range holds its true rank
    mean_width: float  # mean of rank_high - rank_low + 1
    right_at: dict[float, tuple[int, float]]  # p: (orders with order_prob >= p, share right)
    rating_coverage: float  # share of 95% rating intervals holding the true centred rating
    rating_width: float  # their mean width (Elo)
    # Over the ladders whose leaderboard has the two copies next to each other: the
    # mean share of draws with copy 0 above copy 1 (should be near 0.5), and the
    # share of those ladders calling their order with >= 0.95 either way.
    copies_mean: float
    copies_sure: float


def true_elos(n: int, gap: float, rng: np.random.Generator, spread: Spread = None) -> np.ndarray:
    """Ratings ``gap`` apart in a random order of the versions, versions 0 and 1
    identical copies (the same rating). With ``spread``, the n - 1 distinct ratings
    are drawn afresh as normals of that standard deviation instead (uneven gaps,
    as the model's exchangeable prior expects); with a pair ``(low, high)`` of
    spreads, the field's standard deviation is itself drawn first, log-uniformly
    between them (``field_spread``)."""
    sd = field_spread(spread, rng)
    if sd is not None:
        ladder = rng.normal(0.0, sd, n - 1)
    else:
        ladder = -gap * np.arange(n - 1, dtype=float)
        ladder = ladder[rng.permutation(n - 1)]
    return np.concatenate([[ladder[0]], ladder])


def simulate_ladder(
    elo: np.ndarray,
    matches: int,
    rng: np.random.Generator,
    draws: float = 0.0,
    refresh: int = 4,
    pairing_samples: int = 200,
) -> tuple[list[int], list[tuple[int, int, int | None, int, int]]]:
    """Play ``matches`` matches on a ladder of versions rated ``elo`` (index =
    version), chosen by the server's matchmaking; returns the versions present at
    the end and the results in ``rate``'s form."""
    n = len(elo)
    start = max(2, n // 2)
    joins = {int(m): start + k for k, m in enumerate(np.linspace(0, matches / 2, n - start))}
    present = list(range(start))
    results: list[tuple[int, int, int | None, int, int]] = []
    pick = random.Random(int(rng.integers(2**63)))
    last: frozenset[int] | None = None
    rated = rate(present, results, samples=pairing_samples)
    for m in range(matches):
        if m in joins:
            present.append(joins[m])
            rated = rate(present, results, samples=pairing_samples)
        elif m % refresh == 0:
            rated = rate(present, results, samples=pairing_samples)
        pair = choose_pair(rated, pick, last_pair=last)
        assert pair is not None  # at least two versions are present
        a, b = pair
        last = frozenset(pair)
        results.append((a, b, play_match(elo, a, b, draws, rng), 0, 0))
    return present, results


def random_pairs(
    elo: np.ndarray, matches: int, rng: np.random.Generator, draws: float = 0.0
) -> tuple[list[int], list[tuple[int, int, int | None, int, int]]]:
    """``matches`` matches between versions drawn uniformly, all present from the
    start; returned as ``simulate_ladder`` returns them."""
    n = len(elo)
    results: list[tuple[int, int, int | None, int, int]] = []
    for _ in range(matches):
        a, b = (int(v) for v in rng.choice(n, 2, replace=False))
        results.append((a, b, play_match(elo, a, b, draws, rng), 0, 0))
    return list(range(n)), results


def play_match(
    elo: np.ndarray, a: int, b: int, draws: float, rng: np.random.Generator
) -> int | None:
    """The winning seat (0: a, 1: b) or None for a draw of one match: a's expected
    score is the Bradley-Terry ``p``; a share ``4 * draws * p * (1 - p)`` is drawn,
    taken equally from both sides, so the expected score stays p."""
    p = 1.0 / (1.0 + 10.0 ** ((elo[b] - elo[a]) / 400.0))
    drawn = 4.0 * draws * p * (1.0 - p)
    u = rng.random()
    return None if u < drawn else 0 if u < drawn + p - drawn / 2 else 1


def calibrate_ladder(
    n: int,
    gap: float,
    matches: int,
    ladders: int,
    seed: int,
    draws: float = 0.0,
    refresh: int = 4,
    samples: int = 1000,
    spread: Spread = None,
    random_order: bool = False,
) -> LadderCalibration:
    """Simulate ``ladders`` ladders and check their final leaderboards (with
    ``spread``: ratings drawn as normals for each ladder, see ``true_elos``; with
    ``random_order``: pairs drawn uniformly instead of by the matchmaking, see
    ``random_pairs``)."""
    rng = np.random.default_rng(seed)
    covered = width = total = 0
    rating_cover = 0
    rating_width = 0.0
    hits: dict[float, list[int]] = {p: [0, 0] for p in LEVELS}
    copies: list[float] = []
    sure = 0
    for t in range(ladders):
        elo = true_elos(n, gap, rng, spread)
        if random_order:
            present, results = random_pairs(elo, matches, rng, draws)
        else:
            present, results = simulate_ladder(elo, matches, rng, draws, refresh)
        rated = rate(present, results, samples=samples, seed=seed + t)
        live = [k for k, r in enumerate(rated) if r.games]
        truth = elo[[present[k] for k in live]]
        centred = truth - truth.mean()
        for j, k in enumerate(live):
            r = rated[k]
            better = int(np.sum(truth > truth[j]))
            level = int(np.sum(truth == truth[j])) - 1
            covered += int(r.rank_low <= better + 1 + level and r.rank_high >= better + 1)
            width += r.rank_high - r.rank_low + 1
            rating_cover += int(r.low <= centred[j] <= r.high)
            rating_width += r.high - r.low
            total += 1
        order = [k for k in leaderboard_order(rated) if rated[k].games]
        true_of = {k: elo[present[k]] for k in live}
        for upper, lower in zip(order, order[1:], strict=False):
            prob = rated[upper].order_prob
            assert prob is not None
            if {present[upper], present[lower]} == {0, 1}:
                copies.append(prob if present[upper] == 0 else 1.0 - prob)
                sure += int(max(prob, 1.0 - prob) >= 0.95)
                continue  # no right order
            right = bool(true_of[upper] > true_of[lower])
            for p in LEVELS:
                if prob >= p:
                    hits[p][0] += 1
                    hits[p][1] += int(right)
    return LadderCalibration(
        ladders,
        covered / total,
        width / total,
        {p: (h[0], h[1] / h[0] if h[0] else float("nan")) for p, h in hits.items()},
        rating_cover / total,
        rating_width / total,
        float(np.mean(copies)) if copies else float("nan"),
        sure / len(copies) if copies else float("nan"),
    )


# -- a tournament's pool: the same ratings over a round robin ------------------


class RoundRobinCalibration(NamedTuple):
    leagues: int
    rating_coverage: float  # share of 95% rating intervals holding the true centred rating
    rating_width: float  # their mean width (Elo)
    # The same for the bots that won every match (an unbounded likelihood, held in
    # by the fit's prior only): how many there were, and the share covered.
    sweeps: int
    sweep_coverage: float
    by_rank: list[float]  # coverage per true rank (best first; the copies share one)


def calibrate_round_robin(
    n: int, gap: float, legs: int, leagues: int, seed: int, draws: float = 0.0
) -> RoundRobinCalibration:
    """Simulate ``leagues`` round robins of ``n`` bots (``legs`` meetings per pair,
    seats alternating) with true Elo ratings ``gap`` apart (``true_elos``: two
    identical copies) and check the 95% rating intervals that ``referee
    tournament`` shows (``standings.ratings``, the ladder's posterior with the
    round robin as the fixed schedule) against the true ratings, centred."""
    rng = np.random.default_rng(seed)
    covered = total = sweeps = sweep_covered = 0
    width = 0.0
    by_rank = np.zeros((n, 2))  # per true rank (best first): covered, total
    for t in range(leagues):
        elo = true_elos(n, gap, rng)
        games = []
        for leg in range(legs):
            for a in range(n):
                for b in range(a + 1, n):
                    x, y = (a, b) if leg % 2 == 0 else (b, a)
                    seat = play_match(elo, x, y, draws, rng)
                    winner = None if seat is None else (x, y)[seat]
                    mid = f"pool-{x:02d}-{y:02d}-{leg + 1}"
                    games.append(Played(mid, (x, y), (0.0, 0.0), (0.0, 0.0), winner))
        rows = [Standing(rank=0, bot=i, name=str(i)) for i in range(n)]
        ratings(rows, games, seed=seed + t)
        centred = elo - elo.mean()
        for r in rows:
            assert r.rating_low is not None and r.rating_high is not None
            holds = r.rating_low <= centred[r.bot] <= r.rating_high
            covered += int(holds)
            width += r.rating_high - r.rating_low
            total += 1
            rank = int(np.sum(elo > elo[r.bot]))
            by_rank[rank] += (int(holds), 1)
            if sum(g.winner == r.bot for g in games) == legs * (n - 1):
                sweeps += 1
                sweep_covered += int(holds)
    seen = by_rank[:, 1] > 0
    return RoundRobinCalibration(
        leagues,
        covered / total,
        width / total,
        sweeps,
        sweep_covered / sweeps if sweeps else float("nan"),
        [float(c / k) for c, k in by_rank[seen]],
    )
