"""The server leaderboard's rank ranges, ``order_prob`` and rating intervals,
checked against simulated ladders of versions with known ratings whose matches the
server's own matchmaking chooses (pure code, no processes; docs/statistics.md has
the larger run of tools/ladder_calibration.py)."""

from __future__ import annotations

import pytest

from referee.server.calibration import calibrate_ladder, calibrate_round_robin
from referee.server.matchmaking import leaderboard_order, rate
from referee.stats.calibration import LEVELS


@pytest.mark.parametrize(("gap", "seed", "levels"), [(100.0, 51, LEVELS), (30.0, 52, (0.8,))])
def test_leaderboard_figures_are_calibrated(
    gap: float, seed: int, levels: tuple[float, ...]
) -> None:
    """Eight versions (two of them identical), half arriving during the ladder,
    200 matches chosen by the matchmaking, ratings 100 Elo apart (clear) or 30
    (close): the 95% rank ranges hold the true rank at least 95% of the time and
    are not uselessly wide, orders given order_prob >= p are right at least a
    share p (at every level the field reaches often enough to check), the rating
    intervals hold the true centred ratings about 95% of the time, and the
    identical pair favours neither copy."""
    cal = calibrate_ladder(8, gap, 200, ladders=120, seed=seed, samples=500)
    assert cal.coverage >= 0.95
    assert cal.mean_width < (4.0 if gap >= 100 else 7.0)
    for p in levels:
        count, right = cal.right_at[p]
        assert count >= 20, (p, count)  # the level is reached, so the check means something
        assert right >= p, (p, count, right)
    assert cal.rating_coverage >= 0.93
    assert 0.35 <= cal.copies_mean <= 0.65


def test_a_clean_sweep_is_ranked_with_confidence() -> None:
    """A version that won all of its 30 matches against each of three others, who
    split theirs evenly, is surely first: range 1-1 and order_prob near 1 (the
    meetings bootstrap gave the tournament's 14-of-14 bot the range 1-4)."""
    results: list[tuple[int, int, int | None, int, int]] = []
    for other in (2, 3, 4):
        results += [(1, other, 0, 0, 0)] * 15 + [(other, 1, 1, 0, 0)] * 15
    for a, b in ((2, 3), (3, 4), (2, 4)):
        results += [(a, b, 0, 0, 0), (a, b, 1, 0, 0)] * 10
    rated = rate([1, 2, 3, 4], results)
    top = rated[leaderboard_order(rated)[0]]
    assert top.version == 1
    assert (top.rank_low, top.rank_high) == (1, 1)
    assert top.order_prob is not None and top.order_prob >= 0.99
    assert top.low > 300  # far above the field, and the interval says so
    # The three level versions: any of places 2-4, no order called with confidence.
    for r in rated[1:]:
        assert (r.rank_low, r.rank_high) == (2, 4), r
        assert r.order_prob is None or r.order_prob < 0.9, r


def test_a_field_in_strict_order_is_not_taken_for_noise() -> None:
    """Eight versions, each winning both its matches against every version below
    it: the top is nearly surely in the top half and the bottom in the bottom half
    (neighbours met only twice, so their own order is far from sure). Shrinking by a
    spread read in the noise's eigenbasis, as the league model does, took much of
    this field's spread for noise (ranges up to 1-8 for every version)."""
    results = [(a, b, 0, 0, 0) for a in range(8) for b in range(a + 1, 8)] * 2
    rated = rate(list(range(8)), results)
    assert [r.version for r in (rated[i] for i in leaderboard_order(rated))] == list(range(8))
    assert rated[0].rank_high <= 4 and rated[7].rank_low >= 5
    assert all(r.rank_high - r.rank_low + 1 <= 5 for r in rated)
    assert all(r.order_prob is None or r.order_prob >= 0.7 for r in rated)


@pytest.mark.parametrize(
    ("gap", "draws", "seed", "widest"),
    [
        (0.0, 0.0, 61, 450.0),
        (100.0, 0.0, 62, 600.0),
        (200.0, 0.3, 63, 950.0),
        (400.0, 0.0, 64, 1800.0),
        (600.0, 0.0, 65, 2100.0),
    ],
)
def test_tournament_rating_intervals_are_calibrated(
    gap: float, draws: float, seed: int, widest: float
) -> None:
    """The rating intervals ``referee tournament`` shows (the ladder's posterior with
    the round robin as the fixed schedule), over double round robins of eight bots
    with true ratings ``gap`` apart (two identical): they hold the true centred
    rating at least 95% of the time, and every bot that won all its 14 matches
    gets an interval that holds it. The bootstrap over whole matches these
    replaced gave a clean sweep whatever its resamples of the sweep allowed. At
    400 and 600 Elo apart nearly every result is in order: the anchor games alone
    held 66% and 19% there (the field's spread was set by them), so the intervals
    are widened outwards by the spread model's draws; they stay well short of the
    field's true extent (2,800 and 4,200 Elo from first to last)."""
    cal = calibrate_round_robin(8, gap, 2, leagues=60, seed=seed, draws=draws)
    assert cal.rating_coverage >= 0.95, cal
    assert cal.rating_width < widest, cal  # not uselessly wide
    assert min(cal.by_rank) >= 0.85, cal  # no true place badly missed
    assert cal.sweep_coverage == 1.0 or cal.sweeps == 0, cal
    if gap >= 200:
        assert cal.sweeps >= 3, cal  # the clean sweeps were there to check
