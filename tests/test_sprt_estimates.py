"""Intervals that mean what they say (referee/stats): the Elo interval of perfect,
degenerate and small counts, its coverage by simulation, the estimate after an
SPRT stop, the expected length of a test, the gauntlet's and the server's
intervals. Pure: no processes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee.server.matchmaking import rate
from referee.stats.elo import elo_estimate, expected_score, score_intervals
from referee.stats.rating import rate_against_pool
from referee.stats.sequential import (
    estimate_after_stop,
    expected_pairs,
    upper_exit_by,
    upper_exit_ever,
)
from referee.stats.sprt import SprtParams, bounds, llr_many


@pytest.mark.parametrize(
    "counts", [[0, 0, 0, 0, 12], [0, 0, 12, 0, 0], [0, 0, 0, 0, 1], [12, 0, 0, 0, 0], [0] * 5]
)
def test_perfect_and_degenerate_counts_have_finite_wide_intervals(counts: list[int]) -> None:
    est = elo_estimate(counts)
    assert est.low < est.elo < est.high or (est.low < est.elo == 0.0 < est.high)
    assert est.high - est.low > 100.0  # never zero-width
    assert not est.clipped and -2400.0 < est.low and est.high < 2400.0


def test_all_pairs_won_is_at_least_a_few_hundred_elo() -> None:
    # 12 of 12 pairs won (no draws): a true Elo e gives that with probability
    # L(e)^24, below 2.5% for e < +312; the interval's low end is near it.
    est = elo_estimate([0, 0, 0, 0, 12])
    assert 200.0 < est.low < 350.0
    assert est.high > 1000.0


def _simulated_counts(elo: float, draw: float, pairs: int, runs: int, seed: int) -> np.ndarray:
    """Pentanomial counts of ``runs`` samples of ``pairs`` pairs, each game won,
    drawn or lost independently at the given Elo and draw ratio."""
    rng = np.random.default_rng(seed)
    s = expected_score(elo)
    d = min(draw, 2.0 * min(s, 1.0 - s) * 0.999)
    games = rng.choice(3, size=(runs, pairs, 2), p=[1.0 - s - d / 2, d, s - d / 2])
    points = games.sum(axis=-1)
    return np.stack([(points == k).sum(axis=-1) for k in range(5)], axis=-1)


def test_interval_coverage_by_simulation() -> None:
    """The 95% interval covers the true Elo about 95% of the time, from 3 pairs
    to 100, at true Elo 0 to +400, with and without draws (the docs' table is
    the same simulation with more runs)."""
    runs = 300
    covered = 0
    total = 0
    for elo in (0.0, 150.0, 400.0):
        for draw in (0.0, 0.4):
            for pairs in (3, 12, 100):
                counts = _simulated_counts(elo, draw, pairs, runs, seed=int(elo) + pairs)
                iv = score_intervals(counts)
                s = expected_score(elo)
                share = float(((iv.low <= s) & (s <= iv.high)).mean())
                assert share >= 0.88, (elo, draw, pairs, share)
                covered += int(share * runs)
                total += runs
    assert covered / total >= 0.94


def test_brownian_exit_probabilities() -> None:
    """The image series against the closed form of the eventual exit, and
    against simulated Gaussian random walks for an exit by a finite time."""
    a, b = bounds(0.05, 0.05)
    for mu, sigma in ((0.01, 0.1), (-0.02, 0.15), (0.0, 0.1), (0.05, 0.3)):
        assert float(upper_exit_by(1e5, np.array(mu), np.array(sigma), a, b)) == pytest.approx(
            upper_exit_ever(mu, sigma, a, b), abs=1e-6
        )
    rng = np.random.default_rng(9)
    mu, sigma, steps, dt = 0.02, 0.2, 2000, 0.25
    paths = np.cumsum(rng.normal(mu * dt, sigma * math.sqrt(dt), size=(4000, steps)), axis=1)
    out_up = paths >= b
    out_down = paths <= a
    first_up = np.where(out_up.any(axis=1), out_up.argmax(axis=1), steps)
    first_down = np.where(out_down.any(axis=1), out_down.argmax(axis=1), steps)
    horizon = 200.0  # time units: 800 steps
    hit = (first_up < first_down) & (first_up < horizon / dt)
    expected = float(upper_exit_by(horizon, np.array(mu), np.array(sigma), a, b))
    # The discrete walk crosses a little late; 4000 paths: sd about 0.008.
    assert float(hit.mean()) == pytest.approx(expected, abs=0.04)


def _stopped_runs(
    probs: np.ndarray, params: SprtParams, runs: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = np.zeros((runs, 5))
    verdict = np.zeros(runs, dtype=int)
    lower, upper = bounds(params.alpha, params.beta)
    for _ in range(5000):
        live = np.flatnonzero(verdict == 0)
        if not len(live):
            break
        counts[live, rng.choice(5, size=len(live), p=probs)] += 1
        value = llr_many(counts[live], params.elo0, params.elo1, params.elo_model)
        verdict[live[value >= upper]] = 1
        verdict[live[value <= lower]] = -1
    return counts.astype(int), verdict


def test_estimate_after_a_stop_is_less_biased_than_the_plain_one() -> None:
    """Identical bots, bounds 0 and 40 Elo: the plain estimate at the stop is
    biased (the test stops on lucky runs) and its interval covers less than 95%;
    the corrected estimate is closer to the truth on average and its interval
    covers at least as often (docs/statistics.md has the full table)."""
    params = SprtParams(elo0=0.0, elo1=40.0, elo_model="logistic")
    equal = np.array([0.06, 0.22, 0.44, 0.22, 0.06])
    counts, verdict = _stopped_runs(equal, params, runs=160, seed=11)
    assert (verdict != 0).all()
    plain, corrected, plain_cover, corrected_cover = [], [], 0, 0
    for row in counts:
        p = elo_estimate(row.tolist())
        c = estimate_after_stop(row.tolist(), params)
        assert c is not None
        plain.append(p.elo)
        corrected.append(c.elo)
        plain_cover += p.low <= 0.0 <= p.high
        corrected_cover += c.low <= 0.0 <= c.high
    assert abs(np.mean(corrected)) < abs(np.mean(plain)) - 2.0
    assert corrected_cover >= plain_cover
    assert corrected_cover / len(counts) >= 0.9
    # Not at a stop: no corrected estimate.
    assert estimate_after_stop([3, 10, 20, 10, 3], params) is None


def test_normalised_bounds_take_the_same_pairs_in_any_game() -> None:
    """Expected pairs to a verdict at nElo bounds [0, 20] are the same for a game
    without draws (Chaos League) and a drawish one; logistic bounds are not."""
    chaos = [25, 0, 50, 0, 25]
    drawish = [2, 16, 64, 16, 2]
    nelo = SprtParams()
    a, b = expected_pairs(chaos, nelo), expected_pairs(drawish, nelo)
    assert a is not None and b is not None
    assert a.pairs_at_elo1 == pytest.approx(b.pairs_at_elo1, rel=0.01)
    # Wald: E[N] at elo1 = ((1 - beta) log((1 - beta) / alpha) + beta log(beta / (1 -
    # alpha))) / drift, drift = (s1 - s0)^2 / (2 var) = (20 / (800 / ln 10))^2, as
    # s1 - s0 = 20 / (800 / ln 10) * sqrt(2 var).
    drift = (20.0 * math.log(10.0) / 800.0) ** 2
    assert a.pairs_at_elo1 == pytest.approx(0.9 * math.log(19.0) / drift, rel=0.01)
    assert a.pairs_worst > a.pairs_at_elo1
    logistic = SprtParams(elo1=20.0, elo_model="logistic")
    c, d = expected_pairs(chaos, logistic), expected_pairs(drawish, logistic)
    assert c is not None and d is not None
    assert d.pairs_at_elo1 < 0.5 * c.pairs_at_elo1


def test_gauntlet_interval_is_not_clamped_at_the_pool() -> None:
    # Four wins against a bot rated +3000: the upper end lies far beyond
    # +3000 + 4000, where the search used to stop.
    rated = rate_against_pool([3000.0] * 4, [1.0] * 4)
    assert rated.low < rated.elo < rated.high
    assert rated.high > 7500.0


def test_server_interval_after_one_game_is_not_zero_width() -> None:
    won, lost = rate([1, 2], [(1, 2, 0, 0, 0)])
    for r in (won, lost):
        assert r.low < r.rating < r.high
        assert r.high - r.low > 500.0


def test_server_interval_coverage_by_simulation() -> None:
    """Ladders of four versions with known ratings and 4 or 40 games: the 95%
    intervals cover the true (centred) ratings at least 95% of the time."""
    true = np.array([150.0, 0.0, -50.0, -100.0])
    true -= true.mean()
    rng = np.random.default_rng(4)
    cover = total = 0
    for games in (4, 40):
        for _ in range(40):
            results = []
            for _ in range(games):
                a, b = rng.choice(4, 2, replace=False)
                p = expected_score(float(true[a] - true[b]))
                results.append((int(a), int(b), 0 if rng.random() < p else 1, 0, 0))
            for i, r in enumerate(rate([0, 1, 2, 3], results, samples=60)):
                if r.games:
                    cover += r.low <= true[i] <= r.high
                    total += 1
    assert cover / total >= 0.95


def test_verdict_lines_and_live_panel() -> None:
    """Every line carries the bounds and the interval as [low, high]; the pair
    count appears once; the live panel renders every figure."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from referee.pairs import MatchRecord
    from referee.sprt import _panel, summarize

    def rec(pair: int, leg: str, score: float) -> MatchRecord:
        seat = 0 if leg == "a" else 1
        winner = None if score == 0.5 else seat if score == 1.0 else 1 - seat
        return MatchRecord(
            pair=pair, leg=leg, opponent=0, test_seat=seat, winner=winner,
            test_score=score, scores=[0.0, 0.0], faults=[[], []],
            disqualified=[False, False], replay=None, wall_s=1.0,
        )  # fmt: skip

    prefix = [(rec(k, "a", 1.0), rec(k, "b", float(k % 3 == 0))) for k in range(30)]
    s = summarize(prefix, SprtParams(), ("new", "old"), 6000)
    assert s.verdict is None
    assert s.line.startswith("no decision yet (")
    assert s.line.count("30") == 1 and "elo0 0, elo1 20 nElo" in s.line
    assert f"95% [{s.elo_low:+.1f}, {s.elo_high:+.1f}]" in s.line
    assert s.seats[0].wins == 30 and s.seats[1].wins == 10 and s.seats[1].losses == 20
    assert s.expected_pairs is not None and s.expected_pairs["elo1"] > 0
    out = io.StringIO()
    Console(file=out, width=100).print(_panel(s, SimpleNamespace(playing=set())))  # type: ignore[arg-type]
    text = out.getvalue()
    for word in ("LLR", "nElo", "LOS", "in seat 1", "draw ratio", "expected pairs"):
        assert word in text, word
