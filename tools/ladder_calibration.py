"""Calibration table of the server leaderboard's rank ranges, ``order_prob`` and
rating intervals, from simulated ladders of versions with known ratings whose
matches the server's own matchmaking chooses (pure code, no processes).

    python tools/ladder_calibration.py [--ladders 300] [--seed 1] [--big 20] [--fields 0,1]
    python tools/ladder_calibration.py --fields 10,11   # the population of narrow fields
    python tools/ladder_calibration.py --round-robin [--leagues 400] [--seed 1]

Prints the markdown table of docs/statistics.md ("The server's leaderboard"):
for each field, the share of 95% rank ranges holding the true rank and their mean
width, the share of adjacent orders called with ``order_prob`` >= p that are
right (and how many there were), the share of 95% rating intervals holding the
true (centred) rating and their mean width, and the identical pair's mean share
in one order when the two are adjacent. ``referee/server/calibration.py``
defines the ladders.

With ``--round-robin``: the same rating intervals as ``referee tournament`` shows
them, over double round robins of eight bots (the schedule fixed), at several
gaps between neighbours, with and without draws (docs/statistics.md, "Rating
intervals in tournaments").
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.server.calibration import calibrate_ladder, calibrate_round_robin  # noqa: E402
from referee.stats.calibration import LEVELS  # noqa: E402

# (name, versions, gap in Elo, matches, share of draws between equals, ladders scale)
FIELDS = (
    ("clear", 8, 100.0, 200, 0.0, 1.0),
    ("close", 8, 30.0, 200, 0.0, 1.0),
    ("very close", 8, 10.0, 200, 0.0, 1.0),
    ("close, 4x the matches", 8, 30.0, 800, 0.0, 0.5),
    ("close, draws", 8, 30.0, 200, 0.3, 1.0),
    ("sixteen, clear", 16, 50.0, 400, 0.0, 0.5),
    ("sixteen, close", 16, 20.0, 400, 0.0, 0.5),
)
# Rows 8 and 9 (after the fifty-one-version row 7): the close and very close fields
# with the seven distinct ratings drawn afresh for each ladder as normals of the
# same spread as the equally spaced field (gap * sqrt(48 / 12), 60 and 20 Elo).
NORMAL_FIELDS = (
    ("close, normal ratings", 8, 30.0, 200, 0.0, 1.0),
    ("very close, normal ratings", 8, 10.0, 200, 0.0, 1.0),
)
SPREAD: dict[str, float | tuple[float, float]] = {
    name: gap * math.sqrt(48 / 12) for name, _, gap, *_ in NORMAL_FIELDS
}
# Rows 10 and 11: a population of narrow fields, each with its own spread drawn
# log-uniformly between 5 and 100 Elo (normal ratings), by the matchmaking and on
# pairs drawn at random (every version there from the start); a ladder of random
# pairs costs a twentieth of one with the matchmaking, so it gets ten times as many.
POPULATION_FIELDS = (
    ("spreads 5-100 Elo", 8, 0.0, 200, 0.0, 1.0),
    ("spreads 5-100 Elo, random pairs", 8, 0.0, 200, 0.0, 10.0),
)
SPREAD.update({name: (5.0, 100.0) for name, *_ in POPULATION_FIELDS})
RANDOM_PAIRS = {"spreads 5-100 Elo, random pairs"}
# Tournament pools: gaps in Elo between neighbours, share of draws between equals.
ROUND_ROBIN_GAPS = (0.0, 50.0, 100.0, 200.0, 300.0, 400.0, 600.0, 800.0)
ROUND_ROBIN_DRAWS = (0.0, 0.3)


def round_robin_table(leagues: int, seed: int) -> None:
    print(
        "| gap (Elo) | drawn between equals | leagues | rating interval holds |"
        " its mean width (Elo) | lowest per true place | clean sweeps: n, held |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for k, gap in enumerate(ROUND_ROBIN_GAPS):
        for j, draws in enumerate(ROUND_ROBIN_DRAWS):
            cal = calibrate_round_robin(8, gap, 2, leagues, seed + 100 * k + 10 * j, draws)
            sweeps = f"{cal.sweeps}, {cal.sweep_coverage:.3f}" if cal.sweeps else "0"
            print(
                f"| {gap:g} | {draws:.0%} | {cal.leagues} | {cal.rating_coverage:.4f} |"
                f" {cal.rating_width:.0f} | {min(cal.by_rank):.3f} | {sweeps} |",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ladders", type=int, default=300)
    ap.add_argument("--big", type=int, default=20, help="ladders of 51 versions, 4,000 matches")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fields", help="comma-separated row numbers to run (from 0), default all")
    ap.add_argument("--round-robin", action="store_true", help="the tournament pools' table")
    ap.add_argument("--leagues", type=int, default=400, help="round robins per row")
    args = ap.parse_args()
    start = time.monotonic()
    if args.round_robin:
        round_robin_table(args.leagues, args.seed)
        footer(args.seed, start)
        return
    print(
        "| field | versions | gap (Elo) | matches | ladders | 95% range holds true rank |"
        " mean width |",
        end="",
    )
    print("".join(f" right at >= {p} (n) |" for p in LEVELS), end="")
    print(" rating interval holds | its mean width (Elo) | identical pair: mean P |")
    print("|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(LEVELS) + "---:|---:|---:|")
    fields = [
        *FIELDS,
        ("fifty-one, close", 51, 10.0, 4000, 0.0, 0.0),
        *NORMAL_FIELDS,
        *POPULATION_FIELDS,
    ]
    chosen = {int(k) for k in args.fields.split(",")} if args.fields else set(range(len(fields)))
    for k, (name, n, gap, matches, draws, scale) in enumerate(fields):
        spread = SPREAD.get(name)
        if k not in chosen:
            continue
        ladders = args.big if n == 51 else max(1, round(args.ladders * scale))
        if ladders <= 0:
            continue
        cal = calibrate_ladder(
            n,
            gap,
            matches,
            ladders,
            args.seed + 100 * k,
            draws=draws,
            refresh=max(4, n // 4),
            spread=spread,
            random_order=name in RANDOM_PAIRS,
        )
        cells = "".join(f" {r:.3f} ({c}) |" for c, r in cal.right_at.values())
        print(
            f"| {name}{' (30% drawn between equals)' if draws else ''} | {n} |"
            f" {'–' if isinstance(spread, tuple) else f'{gap:g}'} |"
            f" {matches} | {cal.ladders} | {cal.coverage:.4f} | {cal.mean_width:.2f} |{cells}"
            f" {cal.rating_coverage:.4f} | {cal.rating_width:.0f} | {cal.copies_mean:.3f} |",
            flush=True,
        )
    footer(args.seed, start)


def footer(seed: int, start: float) -> None:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    print(
        f"\n{when}, seed {seed}, 1000 draws per leaderboard,"
        f" {time.monotonic() - start:.0f} s, load {load:.1f}"
    )


if __name__ == "__main__":
    main()
