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

from ..tournament.schedule import Played
from ..tournament.standings import ELO, Standing, ratings


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

    @property
    def width(self) -> float:
        return self.high - self.low


# An unrated version's interval width: wide, so it is paired first.
UNRATED_WIDTH = 2000.0


def rate(
    versions: Sequence[int],
    results: Sequence[tuple[int, int, int | None, int, int]],
    samples: int = 200,
) -> list[Rated]:
    """Ratings of ``versions`` (in that order) from (version0, version1, winner seat,
    faults0, faults1) results. A version without games gets a wide interval."""
    index = {v: i for i, v in enumerate(versions)}
    out = [Rated(version=v) for v in versions]
    games: list[Played] = []
    for n, (v0, v1, winner, f0, f1) in enumerate(results):
        if v0 not in index or v1 not in index or v0 == v1:
            continue
        a, b = index[v0], index[v1]
        out[a].games += 1
        out[b].games += 1
        out[a].faults += f0
        out[b].faults += f1
        if winner is None:
            out[a].draws += 1
            out[b].draws += 1
            won = None
        elif winner == 0:
            out[a].wins += 1
            out[b].losses += 1
            won = a
        else:
            out[b].wins += 1
            out[a].losses += 1
            won = b
        games.append(Played(id=str(n), seats=(a, b), final=(0, 0), standard=(0, 0), winner=won))
    rows = [Standing(rank=0, bot=i, name=str(v)) for i, v in enumerate(versions)]
    ratings(rows, games, samples=samples)
    for r, row in zip(out, rows, strict=True):
        r.rating, r.low, r.high = row.rating, row.rating_low, row.rating_high
        if r.games == 0:
            r.low, r.high = r.rating - UNRATED_WIDTH / 2, r.rating + UNRATED_WIDTH / 2
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
