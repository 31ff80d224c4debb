"""Pool standings, the cross-table and Bradley-Terry ratings.

Ranking (docs/tournament.md): balanced mean Final (the mean over a bot's
opponents of its mean Final against each: in a round robin, its mean Final; with
extra matches for some pairs, the same quantity, so the extra matches reward no
one), then head-to-head among the bots still level (mean Final difference in
their matches against each other), then mean Standard score, then name. Scores
are compared rounded to 6 decimals (as the game reports them) so that float
noise in a mean never decides a place. Rank ranges and ``order_prob`` come from
the model of ``stats/league.py`` (docs/statistics.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np

from ..stats.ladder import ELO, LADDER_DRAWS, bradley_terry_ratings
from ..stats.league import RANK_DRAWS, LeagueModel, fit_league, settle_pairs
from ..stats.ranks import adjacent_order, rank_intervals
from .schedule import Played, TablePlayed

RATING_DRAWS = LADDER_DRAWS  # posterior draws for the rating intervals
# Where each figure of the standings comes from (results.json "figures", and the
# caption under the standings on screen).
FIGURES = {
    "rank": "balanced mean Final, then head to head, mean Standard, name (the rules' points)",
    "balanced_final": "mean over the bot's opponents of its mean Final against each",
    "mean_final": "mean Final over all the bot's pool and settle matches",
    "rank_low/rank_high": "95% range of the rank over draws of the pair-means model "
    "of the Final scores, schedule fixed",
    "order_prob": "share of the same draws with the bot above the next one",
    "rating": "Bradley-Terry on match wins, informative only (does not rank)",
    "rating_low/rating_high": "95% interval of the rating: draws of the Bradley-Terry "
    "fit's posterior, schedule fixed, or the bot's own likelihood-ratio interval "
    "where wider (the server ladder's)",
}


class Standing(msgspec.Struct):
    rank: int
    bot: int
    name: str
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    mean_final: float = 0.0
    # The ranking key: the mean over the bot's opponents of its mean Final against
    # each (equal to mean_final when every pair met equally often).
    balanced_final: float = 0.0
    mean_standard: float = 0.0
    head_to_head: float | None = None  # only set when it was needed to split a tie
    faults: int = 0  # fault records over all pool matches
    disqualified: int = 0  # pool matches in which the bot was disqualified
    rating: float = 0.0  # Bradley-Terry, Elo scale, mean 0
    # Its 95% interval (``ratings``); None while not computed (live standings).
    rating_low: float | None = None
    rating_high: float | None = None
    # 95% range of the bot's rank over draws from the pair-means model of the Final
    # scores (stats/league.py), and the share of draws in which it stays above the
    # bot ranked next (None for the last bot).
    rank_low: int = 0
    rank_high: int = 0
    order_prob: float | None = None


def _r6(x: float) -> float:
    return round(x, 6)


def rank_pool(
    names: Sequence[str], games: Sequence[Played], samples: int = RATING_DRAWS
) -> list[Standing]:
    """Standings from the pool matches played so far (complete or not). ``samples``
    posterior draws give the rating intervals (0: point ratings only and no rank
    ranges, for the live dashboard and the finals' seeding); rank ranges come from
    RANK_DRAWS draws of the league model."""
    n = len(names)
    rows = [Standing(rank=0, bot=i, name=names[i]) for i in range(n)]
    fsum = [0.0] * n
    ssum = [0.0] * n
    for g in games:
        for seat, bot in enumerate(g.seats):
            r = rows[bot]
            r.played += 1
            fsum[bot] += g.final[seat]
            ssum[bot] += g.standard[seat]
            r.faults += g.faults[seat]
            r.disqualified += int(g.disqualified[seat])
            if g.winner is None:
                r.draws += 1
            elif g.winner == bot:
                r.wins += 1
            else:
                r.losses += 1
    balanced = _league_model(n, games, 0).strength
    for r in rows:
        if r.played:
            r.mean_final = _r6(fsum[r.bot] / r.played)
            r.mean_standard = _r6(ssum[r.bot] / r.played)
            r.balanced_final = _r6(float(balanced[r.bot]))
    ordered: list[Standing] = []
    by_final = sorted(rows, key=lambda r: (r.played == 0, -r.balanced_final))
    k = 0
    while k < len(by_final):
        group = [
            r
            for r in by_final[k:]
            if r.balanced_final == by_final[k].balanced_final
            and (r.played == 0) == (by_final[k].played == 0)
        ]
        k += len(group)
        if len(group) > 1:
            members = {r.bot for r in group}
            h2h = _head_to_head(members, games)
            for r in group:
                r.head_to_head = h2h[r.bot]
            group.sort(key=lambda r: (-(r.head_to_head or 0.0), -r.mean_standard, r.name))
        ordered.extend(group)
    for rank, r in enumerate(ordered, start=1):
        r.rank = rank
        r.rank_low = r.rank_high = rank
    ratings(ordered, games, samples)
    if samples > 0 and games:
        rank_uncertainty(ordered, games)
    return ordered


def meeting_of(match_id: str) -> str:
    """The pair a match belongs to: its id without the leg (``pool-01-02-1`` and
    ``pool-01-02-2`` are one meeting, seats swapped)."""
    head, _, leg = match_id.rpartition("-")
    return head if head and leg.isalnum() and len(leg) <= 2 else match_id


def _league_model(n: int, games: Sequence[Played], samples: int) -> LeagueModel:
    return fit_league(
        n,
        [g.seats[0] for g in games],
        [g.seats[1] for g in games],
        [g.final[0] for g in games],
        [g.final[1] for g in games],
        samples=samples,
    )


def rank_uncertainty(
    ordered: Sequence[Standing],
    games: Sequence[Played],
    samples: int = RANK_DRAWS,
    model: LeagueModel | None = None,
) -> None:
    """Fill in rank_low, rank_high and order_prob from draws of the pair-means model
    of the Final scores (stats/league.py: the schedule is held fixed, each draw is
    ranked by balanced mean Final). With no way yet to tell noise from skill (no
    pair met twice and too few pairs for the additive fit) every rank is possible
    and every order a coin flip."""
    n = len(ordered)
    if model is None:
        model = _league_model(n, games, samples)
    order = [r.bot for r in ordered]
    if model.basis == "none":
        low, high, probs = [1] * n, [n] * n, [0.5] * (n - 1)
    else:
        low, high = rank_intervals(model.draws)
        probs = adjacent_order(model.draws, order)
    for k, r in enumerate(ordered):
        r.rank_low, r.rank_high = low[r.bot], high[r.bot]
        r.order_prob = round(probs[k], 3) if k < len(probs) else None


def settle_batch(
    names: Sequence[str], games: Sequence[Played], confidence: float, budget_pairs: int
) -> list[tuple[int, int]]:
    """The pairs (i < j) of the next batch of extra meetings for ``--until-settled``
    (``stats.league.settle_pairs``), from the standings of ``games``."""
    rows = rank_pool(names, games, samples=0)
    model = _league_model(len(names), games, RANK_DRAWS)
    rank_uncertainty(rows, games, model=model)
    return settle_pairs(
        model, [r.bot for r in rows], [r.order_prob for r in rows], confidence, budget_pairs
    )


def _head_to_head(members: set[int], games: Sequence[Played]) -> dict[int, float]:
    """Mean Final difference of each member in its matches against the others."""
    total = dict.fromkeys(members, 0.0)
    count = dict.fromkeys(members, 0)
    for g in games:
        a, b = g.seats
        if a in members and b in members:
            total[a] += g.final[0] - g.final[1]
            total[b] += g.final[1] - g.final[0]
            count[a] += 1
            count[b] += 1
    return {m: _r6(total[m] / count[m]) if count[m] else 0.0 for m in members}


class CrossCell(msgspec.Struct):
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    final_diff: float = 0.0  # mean (row's Final - column's Final)


def cross_table(n: int, games: Sequence[Played]) -> list[list[CrossCell]]:
    """cells[i][j]: bot i's record against bot j in the pool."""
    cells = [[CrossCell() for _ in range(n)] for _ in range(n)]
    sums = np.zeros((n, n))
    for g in games:
        a, b = g.seats
        for me, other, seat in ((a, b, 0), (b, a, 1)):
            c = cells[me][other]
            c.played += 1
            sums[me, other] += g.final[seat] - g.final[1 - seat]
            if g.winner is None:
                c.draws += 1
            elif g.winner == me:
                c.wins += 1
            else:
                c.losses += 1
    for i in range(n):
        for j in range(n):
            c = cells[i][j]
            if c.played:
                c.final_diff = _r6(float(sums[i, j]) / c.played)
    return cells


def ratings(
    rows: Sequence[Standing],
    games: Sequence[Played],
    samples: int = RATING_DRAWS,
    seed: int = 20260101,
) -> None:
    """Fill in Bradley-Terry ratings (Elo scale, centred on the bots that have
    played) and, with ``samples`` > 0, their 95% intervals: the server ladder's
    (``stats.ladder.bradley_terry_ratings``: draws of the fit's posterior with the
    schedule as played, widened to each bot's own likelihood-ratio interval where
    that is wider), with a fixed seed so output is reproducible. A bot that won
    (or lost) everything gets a finite, wide, one-sided interval. With ``samples``
    0, or for a bot without games, there is no interval (None)."""
    n = len(rows)
    if n == 0:
        return
    seats = np.array([g.seats for g in games], dtype=np.int64).reshape(-1, 2)
    first = np.array(
        [1.0 if g.winner == g.seats[0] else 0.5 if g.winner is None else 0.0 for g in games]
    )
    score = np.zeros((n, n))
    count = np.zeros((n, n))
    np.add.at(score, (seats[:, 0], seats[:, 1]), first)
    np.add.at(score, (seats[:, 1], seats[:, 0]), 1.0 - first)
    np.add.at(count, (seats[:, 0], seats[:, 1]), 1.0)
    np.add.at(count, (seats[:, 1], seats[:, 0]), 1.0)
    fit = bradley_terry_ratings(score, count, samples, seed)
    for r in rows:
        point = float(fit.posterior.point[r.bot])
        if not np.isfinite(point):  # no games yet: no rating
            r.rating, r.rating_low, r.rating_high = 0.0, None, None
            continue
        r.rating = round(float(point * ELO), 1)
        if samples > 0:
            r.rating_low = round(float(fit.low[r.bot] * ELO), 1)
            r.rating_high = round(float(fit.high[r.bot] * ELO), 1)
        else:
            r.rating_low = r.rating_high = None


# -- tables (games of more than two players) ----------------------------------


class TableStanding(msgspec.Struct):
    rank: int
    bot: int
    name: str
    played: int = 0
    wins: int = 0  # tables placed first (shared first places count)
    mean_placement: float = 0.0
    tiebreak: str = ""  # the score key of the tie-break
    mean_tiebreak: float = 0.0
    seat_counts: list[int] = msgspec.field(default_factory=list)  # tables per seat position
    faults: int = 0
    disqualified: int = 0


def rank_tables(
    names: Sequence[str],
    games: Sequence[TablePlayed],
    size: int,
    tiebreak: str = "",
    lower_is_better: bool = False,
) -> list[TableStanding]:
    """Standings of a table league: mean placement (lower is better), then the mean
    tie-break score (e.g. Rock Paper Stuff's deviance, lower better), then name.
    Means are compared rounded to 6 decimals."""
    n = len(names)
    rows = [
        TableStanding(rank=0, bot=i, name=names[i], tiebreak=tiebreak, seat_counts=[0] * size)
        for i in range(n)
    ]
    psum = [0] * n
    tsum = [0.0] * n
    for g in games:
        for seat, bot in enumerate(g.seats):
            r = rows[bot]
            r.played += 1
            if seat < size:
                r.seat_counts[seat] += 1
            psum[bot] += g.placement[seat]
            tsum[bot] += g.tiebreak[seat]
            r.wins += int(g.placement[seat] == 1)
            r.faults += g.faults[seat]
            r.disqualified += int(g.disqualified[seat])
    for r in rows:
        if r.played:
            r.mean_placement = _r6(psum[r.bot] / r.played)
            r.mean_tiebreak = _r6(tsum[r.bot] / r.played)
    sign = 1.0 if lower_is_better else -1.0
    ordered = sorted(
        rows,
        key=lambda r: (
            r.played == 0,
            r.mean_placement,
            sign * r.mean_tiebreak,
            r.name,
        ),
    )
    for rank, r in enumerate(ordered, start=1):
        r.rank = rank
    return ordered
