"""What a prior on the field's spread can and cannot do for ``order_prob`` in a field
whose spread is far below the noise of one rating, in the exact normal model.

    python tools/spread_limits.py [--fields 20000] [--noise 55] [--spread 20] [--seed 1]

Eight versions; each measured rating is its true rating plus independent normal
noise (``--noise`` Elo, about one ladder rating after 50 games). The true ratings
are drawn for each field as normals of ``--spread`` Elo, or ``gap`` apart with
the same spread (rows "evenly spaced"). Given the spread tau the posterior of
the ratings is normal and exact (the normal-normal model, centre known), and
tau's posterior is exact on the ladder's grid (``SPREAD_GRID``), with a prior
proportional to ``tau ** -a`` (a = 0: flat, the ladder's; 1: log-uniform; 2),
or tau fixed at the truth (the oracle, which only a simulation knows). For the
top two of each field's measured order, the share of them called with
``order_prob`` >= p that are truly in that order. docs/statistics.md ("The
server's leaderboard") shows the table and what follows from it.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.stats.ladder import ELO, SPREAD_GRID  # noqa: E402
from referee.stats.sequential import log_norm_cdf  # noqa: E402

VERSIONS = 8
LEVELS = (0.7, 0.8, 0.9)
PRIORS: tuple[tuple[str, float | None], ...] = (
    ("flat (the ladder's)", 0.0),
    ("log-uniform (tau^-1)", 1.0),
    ("tau^-2", 2.0),
    ("the true spread (oracle)", None),
)


def top_pair_calls(
    truth: np.ndarray, noise: float, spread: float, power: float | None, rng: np.random.Generator
) -> dict[float, tuple[int, float]]:
    """For fields ``truth`` (F, VERSIONS) in Elo: (calls, share right) per level."""
    fields = truth.shape[0]
    measured = truth + rng.normal(0.0, noise, truth.shape)
    order = np.argsort(-measured, axis=1)
    first, second = order[:, 0], order[:, 1]
    rows = np.arange(fields)
    gap = measured[rows, first] - measured[rows, second]
    right = truth[rows, first] > truth[rows, second]
    taus = SPREAD_GRID * ELO
    var = taus[None, :] ** 2 + noise**2
    loglik = -0.5 * (VERSIONS * np.log(var) + (measured**2).sum(axis=1)[:, None] / var)
    if power is None:
        weight = np.zeros((fields, len(taus)))
        weight[:, int(np.argmin(np.abs(np.log(taus / spread))))] = 1.0
    else:
        # Each step of the geometric grid spans the same log-width: a prior density
        # tau^-a in tau is weight tau^(1 - a) per step.
        weight = np.exp(loglik - loglik.max(axis=1, keepdims=True)) * taus ** (1.0 - power)
    weight /= weight.sum(axis=1, keepdims=True)
    shrink = taus**2 / (taus**2 + noise**2)
    # Given tau the two posteriors are independent normals: mean k y, variance k noise^2.
    z = np.sqrt(shrink)[None, :] * gap[:, None] / (noise * math.sqrt(2.0))
    prob = (weight * np.exp(log_norm_cdf(z))).sum(axis=1)
    out = {}
    for p in LEVELS:
        called = prob >= p
        out[p] = (int(called.sum()), float(right[called].mean()) if called.any() else float("nan"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fields", type=int, default=20000)
    ap.add_argument("--noise", type=float, default=55.0, help="Elo, one rating's noise")
    ap.add_argument("--spread", type=float, default=20.0, help="Elo, the field's true spread")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    gap = args.spread / math.sqrt((VERSIONS**2 - 1) / 12.0)
    print("| ratings | prior on the spread |" + "".join(f" right at >= {p} (n) |" for p in LEVELS))
    print("|---|---|" + "---:|" * len(LEVELS))
    for kind in ("drawn as normals", "evenly spaced"):
        for name, power in PRIORS:
            rng = np.random.default_rng(args.seed)
            if kind == "evenly spaced":
                truth = np.tile(gap * np.arange(VERSIONS, dtype=float), (args.fields, 1))
            else:
                truth = rng.normal(0.0, args.spread, (args.fields, VERSIONS))
            truth -= truth.mean(axis=1, keepdims=True)
            calls = top_pair_calls(truth, args.noise, args.spread, power, rng)
            cells = "".join(
                f" {share:.3f} ({n}) |" if n else " – (0) |" for n, share in calls.values()
            )
            print(f"| {kind} | {name} |{cells}", flush=True)
    print(
        f"\n{args.fields} fields per row, {VERSIONS} versions, noise {args.noise:g} Elo,"
        f" spread {args.spread:g} Elo, seed {args.seed}"
    )


if __name__ == "__main__":
    main()
