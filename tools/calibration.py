"""Calibration tables of the league rank ranges, ``order_prob`` and ``--until-settled``
from simulated leagues of bots with known strengths (pure numpy, no processes).

    python tools/calibration.py [--leagues 2000] [--settle-leagues 1000] [--seed 1]
                                [--field NAME ...]

Prints the markdown tables of docs/statistics.md: for each field, the share of
95% rank ranges holding the true rank and their mean width, the share of
adjacent orders called with ``order_prob`` >= 0.95, the share of adjacent orders
called with ``order_prob`` >= p that are right with its binomial standard error
(and how many there were), the identical pair's mean share of draws in one order and how often
it was called with 0.95 either way; then the settled league against a balanced
league of the same number of matches. ``referee/stats/calibration.py`` defines
the fields.
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

from referee.stats.calibration import LEVELS, calibrate, settle_versus_balanced  # noqa: E402

# (name, bots, gap, spread): equally spaced strengths ``gap`` apart, or with a
# spread, strengths drawn afresh for each league as normals of that standard
# deviation (the same as the equally spaced field of that name: gap * sqrt((n^2 - 1) / 12)).
# With a pair of spreads, each league's spread is drawn log-uniformly between them
# (a population of fields, from level to the well separated field's 2.3).
FIELDS: tuple[tuple[str, int, float, float | tuple[float, float] | None], ...] = (
    ("well separated", 8, 1.0, None),
    ("close", 8, 0.4, None),
    ("very close", 8, 0.25, None),
    ("fourteen bots, close", 14, 0.4, None),
    ("close, normal strengths", 8, 0.4, 0.4 * math.sqrt(63 / 12)),
    ("very close, normal strengths", 8, 0.25, 0.25 * math.sqrt(63 / 12)),
    ("spreads 0.1-2.3, normal strengths", 8, 0.0, (0.1, 2.3)),
)
SETTLE = (
    ("clear and close gaps (1.2, 0.3)", (1.2, 0.3), 56),
    ("clear and close gaps (1.2, 0.3)", (1.2, 0.3), 112),
    ("close (0.4)", 0.4, 56),
)


def binomial_se(share: float, count: int) -> float:
    """The binomial standard error of a share of ``count`` (0 when there is none)."""
    return math.sqrt(share * (1.0 - share) / count) if count else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--leagues", type=int, default=2000)
    ap.add_argument("--settle-leagues", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--field",
        action="append",
        choices=[f[0] for f in FIELDS],
        help="only this field (repeatable; default all); --settle-leagues 0 skips settling",
    )
    ap.add_argument("--settle-only", action="store_true", help="only the --until-settled table")
    args = ap.parse_args()
    start = time.monotonic()
    if args.settle_only:
        settle_table(args.settle_leagues, args.seed)
        footer(args.seed, args.samples, start)
        return
    print("| field | bots | gap | leagues | 95% range holds true rank | mean width |", end="")
    print(" orders called >= 0.95 |", end="")
    print("".join(f" right at >= {p} ± se (n) |" for p in LEVELS), end="")
    print(" identical pair: mean P | called >= 0.95 |")
    print("|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(LEVELS) + "---:|---:|")
    for k, (name, n, gap, spread) in enumerate(FIELDS):
        if args.field and name not in args.field:
            continue
        start_field = time.monotonic()
        cal = calibrate(
            n, gap, 2, args.leagues, args.seed + 100 * k, samples=args.samples, spread=spread
        )
        cells = "".join(
            f" {r:.3f} ± {binomial_se(r, c):.3f} ({c}) |" for c, r in cal.right_at.values()
        )
        print(
            f"| {name} | {n} | {'–' if isinstance(spread, tuple) else gap} | {cal.leagues} |"
            f" {cal.coverage:.4f} |"
            f" {cal.mean_width:.2f} | {cal.called_95:.3f} |{cells}"
            f" {cal.copies_mean:.3f} | {cal.copies_sure:.3f} |",
            flush=True,
        )
        print(f"{name}: {time.monotonic() - start_field:.0f} s", file=sys.stderr)
    print()
    if args.settle_leagues > 0:
        settle_table(args.settle_leagues, args.seed)
    footer(args.seed, args.samples, start)


def settle_table(leagues: int, seed: int) -> None:
    """The settled league against a balanced one of the same number of matches."""
    print(
        "| field (8 bots, 2 legs) | extra matches | leagues | adjacent orders right:"
        " settled | balanced | whole order right: settled | balanced |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, (name, gap, budget) in enumerate(SETTLE):
        s, b, s_all, b_all = settle_versus_balanced(
            8, gap, 2, budget, leagues, seed + 1000 + k, samples=400
        )
        print(
            f"| {name} | {budget} | {leagues} | {s:.3f} | {b:.3f} | {s_all:.3f} | {b_all:.3f} |",
            flush=True,
        )


def footer(seed: int, samples: int, start: float) -> None:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    print(
        f"\n{when}, seed {seed}, {samples} draws per league (400 when settling),"
        f" {time.monotonic() - start:.0f} s, load {load:.1f}"
    )


if __name__ == "__main__":
    main()
