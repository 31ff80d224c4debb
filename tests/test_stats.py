"""The pure statistics (referee/stats): LLR, Elo intervals, SPRT error rates,
pool ratings and rank intervals, against values computed independently."""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee.stats.elo import Penta, elo_estimate, elo_of_score, expected_score, pairing_ratio
from referee.stats.ranks import adjacent_order, rank_intervals
from referee.stats.rating import PRIOR_SHARE, Game, fit_pool, rate_against_pool
from referee.stats.sprt import REGULARISE, SprtParams, bounds, decision, llr, llr_many

A = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


def constrained_loglik_primal(counts: np.ndarray, s: float) -> float:
    """Reference: the maximum of sum n_k log p_k over distributions p with mean s,
    found in the primal by Newton's method on the 3-dimensional affine set
    {p: sum p = 1, sum p a = s} (a basis of its directions from an SVD). The
    module under test solves the dual (a Lagrange multiplier by bisection)."""
    n = counts.astype(float)
    # A feasible start: the uniform distribution tilted linearly to mean s.
    p = np.full(5, 0.2) + (s - 0.5) * (A - 0.5) / np.sum((A - 0.5) ** 2)
    assert np.all(p > 0)
    basis = np.linalg.svd(np.vstack([np.ones(5), A]))[2][2:].T  # (5, 3) null space
    for _ in range(200):
        g = basis.T @ (n / p)
        h = -basis.T @ np.diag(n / p**2) @ basis
        step = np.linalg.solve(h, g)
        t = 1.0
        while np.any(p - t * basis @ step <= 0):  # stay inside the simplex
            t /= 2
        p = p - t * basis @ step
        if np.max(np.abs(t * step)) < 1e-14:
            break
    assert abs(p.sum() - 1) < 1e-9 and abs(p @ A - s) < 1e-9
    return float(n @ np.log(p))


@pytest.mark.parametrize(
    "counts,elo0,elo1",
    [
        ([10, 60, 200, 80, 12], 0.0, 5.0),
        ([3, 40, 120, 55, 9], -3.0, 3.0),
        ([30, 10, 5, 12, 40], 0.0, 50.0),
        ([0, 7, 0, 9, 1], 0.0, 100.0),  # empty categories
    ],
)
def test_llr_matches_a_primal_maximisation(counts: list[int], elo0: float, elo1: float) -> None:
    c = np.array(counts, dtype=float)
    c[c == 0] = REGULARISE  # empty categories only, as fishtest does
    expected = constrained_loglik_primal(c, expected_score(elo1)) - constrained_loglik_primal(
        c, expected_score(elo0)
    )
    assert llr(counts, elo0, elo1) == pytest.approx(expected, rel=1e-7, abs=1e-9)


def test_llr_near_the_normal_approximation_for_close_hypotheses() -> None:
    # For elo1 - elo0 small against the spread, the GSPRT LLR is close to the
    # quadratic approximation n (s1 - s0) (2 mu - s0 - s1) / (2 var).
    counts = [40, 280, 1000, 360, 55]
    n = sum(counts)
    mu = sum(c * a for c, a in zip(counts, A, strict=True)) / n
    var = sum(c * a * a for c, a in zip(counts, A, strict=True)) / n - mu * mu
    s0, s1 = expected_score(0), expected_score(5)
    approx = n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)
    assert approx > 1.0  # not trivially near zero
    assert llr(counts, 0.0, 5.0) == pytest.approx(approx, rel=0.02)


def test_wald_bounds() -> None:
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944438979, abs=1e-9)  # log(0.05 / 0.95)
    assert upper == pytest.approx(2.944438979, abs=1e-9)


def test_elo_interval_worked_example() -> None:
    # With the prior (0.1 pair per category) the counts (5, 10, 20, 40, 25) become
    # (5.1, 10.1, 20.1, 40.1, 25.1), n' = 100.5, mean 67.75 / 100.5 = 0.674129.
    # For many pairs the likelihood-ratio interval is close to the normal one,
    # mean -/+ 1.96 sqrt(var / n'), var = 0.5304726 - 0.674129^2 = 0.0760287.
    est = elo_estimate([5, 10, 20, 40, 25])
    assert est.score == pytest.approx(67.75 / 100.5)
    assert est.elo == pytest.approx(elo_of_score(67.75 / 100.5))
    se = math.sqrt((53.3125 / 100.5 - (67.75 / 100.5) ** 2) / 100.5)
    assert est.low == pytest.approx(elo_of_score(67.75 / 100.5 - 1.959964 * se), abs=3.0)
    assert est.high == pytest.approx(elo_of_score(67.75 / 100.5 + 1.959964 * se), abs=3.0)
    assert not est.clipped


def test_elo_transform_round_trip() -> None:
    for d in (-300.0, -5.0, 0.0, 12.3, 400.0):
        assert elo_of_score(expected_score(d)) == pytest.approx(d)
    assert expected_score(400.0) == pytest.approx(10 / 11)


def test_pairing_ratio() -> None:
    p = Penta()
    # Pairs that always split 1-1 have no pair variance: pairing removed it all.
    for _ in range(10):
        p.add_pair(1.0, 0.0)
    assert p.counts == [0, 0, 10, 0, 0] and (p.wins, p.losses) == (10, 10)
    assert pairing_ratio(p) == 0.0
    # Pairs whose two matches always agree: twice the unpaired variance.
    q = Penta()
    for k in range(10):
        s = float(k % 2)
        q.add_pair(s, s)
    assert pairing_ratio(q) == pytest.approx(2.0)


def _tilted(base: np.ndarray, mean: float) -> np.ndarray:
    """base tilted exponentially (p_k ~ base_k e^(t a_k)) to the given mean."""
    lo, hi = -50.0, 50.0
    for _ in range(200):
        t = 0.5 * (lo + hi)
        p = base * np.exp(t * A)
        p /= p.sum()
        lo, hi = (t, hi) if p @ A < mean else (lo, t)
    return p


def simulate_sprts(
    probs: np.ndarray, params: SprtParams, runs: int, max_pairs: int, seed: int
) -> tuple[int, int, int]:
    """(H0 accepted, H1 accepted, undecided) over ``runs`` SPRTs whose pairs are
    drawn from the pentanomial distribution ``probs``; all runs advance together."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((runs, 5))
    verdict = np.zeros(runs, dtype=int)  # 0 running, -1 H0, 1 H1
    lower, upper = bounds(params.alpha, params.beta)
    for _ in range(max_pairs):
        live = verdict == 0
        if not live.any():
            break
        draws = rng.choice(5, size=int(live.sum()), p=probs)
        counts[np.flatnonzero(live), draws] += 1
        value = llr_many(counts[live], params.elo0, params.elo1)
        idx = np.flatnonzero(live)
        verdict[idx[value >= upper]] = 1
        verdict[idx[value <= lower]] = -1
    return int((verdict == -1).sum()), int((verdict == 1).sum()), int((verdict == 0).sum())


# A pentanomial distribution of two equal bots: symmetric, mean 1/2.
EQUAL = np.array([0.06, 0.22, 0.44, 0.22, 0.06])


def test_sprt_error_rates_by_simulation() -> None:
    """Identical bots (true Elo = elo0) must accept H1 at most about alpha of the
    time, and bots exactly elo1 apart accept H0 at most about beta of the time.
    Wald's bounds make the true rates a little lower than alpha and beta; the
    allowance is three binomial standard deviations."""
    params = SprtParams(elo0=0.0, elo1=40.0, alpha=0.05, beta=0.05)
    runs = 600
    slack = 3 * math.sqrt(0.05 * 0.95 / runs)
    h0, h1, open_ = simulate_sprts(EQUAL, params, runs, max_pairs=3000, seed=1)
    assert open_ == 0
    assert h1 / runs <= params.alpha + slack
    assert h0 / runs >= 1 - params.alpha - slack
    stronger = _tilted(EQUAL, expected_score(params.elo1))
    h0, h1, open_ = simulate_sprts(stronger, params, runs, max_pairs=3000, seed=2)
    assert open_ == 0
    assert h0 / runs <= params.beta + slack
    assert h1 / runs >= 1 - params.beta - slack


def test_sprt_decides_for_a_clearly_stronger_bot() -> None:
    logistic = SprtParams(elo1=5.0, elo_model="logistic")
    assert decision([0, 8, 40, 160, 120], logistic)[0] == "H1"
    assert decision([0, 0, 500, 0, 0], logistic)[0] == "H0"
    assert decision([0, 0, 1, 0, 0], logistic)[0] is None
    assert decision([0, 8, 40, 160, 120], SprtParams())[0] == "H1"
    assert decision([0, 0, 1, 0, 0], SprtParams())[0] is None


def test_pool_fit_two_bots_matches_the_closed_form() -> None:
    # a scores 3/4 against b over 400 games; each has 2% of its games as draws
    # against the anchor at 0. By symmetry the ratings are +d/2 and -d/2, and the
    # score equation of a is 400 (0.75 - L(d)) + 8 (0.5 - L(d/2)) = 0 (L the
    # logistic expected score); solved here by bisection, independently of Newton.
    games = [Game(0, 1, 1.0)] * 300 + [Game(0, 1, 0.0)] * 100
    r = fit_pool(2, games)
    assert r[0] == pytest.approx(-r[1], abs=1e-6)
    lo, hi = 0.0, 400.0
    for _ in range(100):
        d = (lo + hi) / 2
        g = 400 * (0.75 - expected_score(d)) + 400 * PRIOR_SHARE * (0.5 - expected_score(d / 2))
        lo, hi = (d, hi) if g > 0 else (lo, d)
    assert r[0] - r[1] == pytest.approx(lo, abs=1e-4)
    assert 180 < lo < 190.9  # a little shrunk from elo_of_score(0.75) = 190.85


def test_gauntlet_rating_agrees_with_the_pool_fit() -> None:
    """A pool member rated against the others (held fixed) from the same games gets
    its pool rating back: the gauntlet's scale is the pool's."""
    rng = np.random.default_rng(5)
    true = [0.0, 150.0, -200.0, 60.0]
    games = []
    for i in range(4):
        for j in range(i + 1, 4):
            for _ in range(60):
                s = float(rng.random() < expected_score(true[i] - true[j]))
                games.append(Game(i, j, s))
    pool = fit_pool(4, games)
    opp, sc = [], []
    for g in games:
        if g.a == 3:
            opp.append(pool[g.b])
            sc.append(g.score)
        elif g.b == 3:
            opp.append(pool[g.a])
            sc.append(1.0 - g.score)
    rated = rate_against_pool(opp, sc)
    assert rated.elo == pytest.approx(pool[3], abs=1e-3)
    assert rated.low < rated.elo < rated.high
    # 180 games: roughly +-2 * 400 / ln10 * sqrt(1 / (180 * 0.24)) = +-53 Elo.
    assert 35 < (rated.high - rated.low) / 2 < 75


def test_gauntlet_interval_stays_finite_for_a_clean_sweep() -> None:
    rated = rate_against_pool([0.0] * 40, [1.0] * 40)
    assert math.isfinite(rated.low) and math.isfinite(rated.high)
    assert 0 < rated.low < rated.elo < rated.high


def test_rank_intervals_and_adjacent_order() -> None:
    rng = np.random.default_rng(3)
    # Bot 0 far ahead; bots 1 and 2 level; bot 3 far behind.
    means = np.array([10.0, 5.0, 5.0, 0.0])
    samples = means + rng.normal(0, 1, size=(2000, 4))
    low, high = rank_intervals(samples)
    assert (low[0], high[0]) == (1, 1)
    assert (low[3], high[3]) == (4, 4)
    assert (low[1], high[1]) == (2, 3) and (low[2], high[2]) == (2, 3)
    probs = adjacent_order(samples, [0, 1, 2, 3])
    assert probs[0] > 0.999 and probs[2] > 0.999
    assert 0.4 < probs[1] < 0.6
