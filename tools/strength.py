"""Strength table of the sample bots: real 10,000-round matches through the CLI.

    python tools/strength.py [--rounds 10000] [--seeds 1 2] [-j 2]

Prints markdown tables: Iocaine against every other sample bot (both seats, each
seed), and the trickster's standard score with tokens on and off against the
Markov and frequency bots, and what the sceptic and Markov lose to the trickster.
Used for docs/bots.md; the test suite checks the same claims on shorter matches.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def match(a: str, b: str, rounds: int, seed: int, tokens: int | None = None) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "referee",
        "match",
        a,
        b,
        "--rounds",
        str(rounds),
        "--seed",
        str(seed),
        "--json",
        "--no-replay",
    ]
    if tokens is not None:
        cmd += ["--tokens", str(tokens)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout)


def points(result: dict, seat: int) -> int:
    return int(result["seats"][seat]["stats"]["points"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=10_000)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    p.add_argument("-j", type=int, default=2)
    args = p.parse_args()
    opponents = [
        "random",
        "rock",
        "cycler",
        "frequency",
        "markov",
        "trickster",
        "sceptic",
        "markov-c",
        "cycler-c",
        "frequency-js",
        "random-js",
        "pattern-rs",
    ]
    jobs = [(o, s, seat) for o in opponents for s in args.seeds for seat in (0, 1)]

    def run(job: tuple[str, int, int]) -> tuple[str, int]:
        opp, seed, seat = job
        pair = ("iocaine", opp) if seat == 0 else (opp, "iocaine")
        return opp, points(match(*pair, args.rounds, seed), seat)

    with ThreadPoolExecutor(args.j) as pool:
        rows = list(pool.map(run, jobs))
    print(
        f"Iocaine's net points per {args.rounds:,}-round match (seeds {args.seeds}, both seats):\n"
    )
    print("| opponent | matches | mean net points | min | max | share of rounds |")
    print("|---|---:|---:|---:|---:|---:|")
    for opp in opponents:
        pts = [p for o, p in rows if o == opp]
        mean = sum(pts) / len(pts)
        print(
            f"| {opp} | {len(pts)} | {mean:+.0f} | {min(pts):+d} | {max(pts):+d} "
            f"| {mean / args.rounds:+.1%} |"
        )

    print("\nTrickster's net points (seat 0) with tokens on (50) and off (0):\n")
    print("| opponent | seed | tokens 50 | tokens 0 |")
    print("|---|---:|---:|---:|")
    for opp in ("markov", "frequency"):
        for seed in args.seeds:
            on = points(match("trickster", opp, args.rounds, seed), 0)
            off = points(match("trickster", opp, args.rounds, seed, tokens=0), 0)
            print(f"| {opp} | {seed} | {on:+d} | {off:+d} |")
    print("\nWhat each loses to the trickster (its net points, seat 1):\n")
    print("| bot | seed | net points vs trickster |")
    print("|---|---:|---:|")
    for opp in ("sceptic", "markov"):
        for seed in args.seeds:
            print(
                f"| {opp} | {seed} | {points(match('trickster', opp, args.rounds, seed), 1):+d} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
