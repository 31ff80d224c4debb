"""Two checkouts of the referee, the same work, in turns: did a change slow anything?

    python bench/ab.py OTHER_CHECKOUT [--reps N] [--rounds R] [--only NAMES]

OTHER_CHECKOUT is another working tree of this repository (a ``git worktree`` of
the commit before a refactoring, say) with its own ``make venv bots`` done. Both
referees play the same bots (this checkout's builds, so only the referee differs),
one after the other in every repetition, so the machine's drift and other load
hit both alike. Each row prints this checkout's figure against the other's, the
median of the per-repetition ratios and in how many repetitions this one was
faster. Nothing here is pass/fail: a row is "slower beyond noise" when the
median ratio is below 1 and this checkout lost in nearly every repetition.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
BIN = HERE / "bench" / "bin"
SAMPLES = HERE / "sample_bots"
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


class Side:
    """One checkout: its interpreter (its own venv) and its source tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / ".venv" / "bin" / "python"
        if not self.python.exists():
            sys.exit(f"ab: {root} has no .venv; run `make venv bots` there first")

    def run(self, args: list[str], timeout: float = 900) -> tuple[str, float]:
        """Run ``python -m referee ARGS`` in this checkout; output and wall time."""
        t0 = time.monotonic()
        done = subprocess.run(
            [str(self.python), "-m", "referee", *args],
            cwd=self.root,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        wall = time.monotonic() - t0
        if done.returncode != 0:
            raise SystemExit(
                f"ab: referee in {self.root} exited {done.returncode}: {done.stderr.strip()[-300:]}"
            )
        return done.stdout, wall


def match_rate(
    side: Side, bot1: list[str], bot2: list[str], rounds: int, tmp: Path, record: bool = True
) -> tuple[float, float]:
    """Rounds a second over the time spent playing them, and rounds per second of the
    referee's own CPU while playing (steadier: the bots' scheduling does not enter
    it); replay written unless not ``record``."""
    out, _ = side.run(
        [
            "match",
            shlex.join(bot1),
            shlex.join(bot2),
            "--rounds",
            str(rounds),
            "--seed",
            "1",
            "--json",
            "--quiet",
            *(["--replay", str(tmp / "ab.jsonl")] if record else ["--no-replay"]),
        ]
    )
    result = json.loads(out)
    if result["steps"] != rounds:
        raise SystemExit(f"ab: a match in {side.root} stopped at {result['steps']}")
    return rounds / float(result["play_s"]), rounds / float(result["referee"]["play_cpu_s"])


def league_rate(side: Side, bots: list[str], rounds: int, tmp: Path) -> tuple[float]:
    """Matches a minute of a small round robin at -j 1."""
    out_dir = tmp / f"league-{time.monotonic_ns()}"
    cmd = ["tournament", *bots, "--legs", "1", "--rounds", str(rounds), "--finalists", "0"]
    cmd += ["--seed", "1", "-j", "1", "--out", str(out_dir), "--quiet"]
    _, wall = side.run(cmd)
    n = len(bots) * (len(bots) - 1) // 2
    return (n / wall * 60,)


def verify_rate(side: Side, replay: Path) -> tuple[float]:
    """Replays verified a second (one 10,000-round replay, start-up included)."""
    _, wall = side.run(["verify", str(replay)])
    return (1 / wall,)


def startup_rate(side: Side, tmp: Path) -> tuple[float]:
    """Ten-round matches a second of two sample bots: launch, handshake, teardown."""
    rock = [sys.executable, str(SAMPLES / "python" / "rock.py")]
    _, wall = side.run(
        ["match", shlex.join(rock), shlex.join(rock), "--rounds", "10", "--no-replay", "--quiet"]
    )
    return (1 / wall,)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="the other checkout (with its own .venv)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--only", default="", help="comma list of row names")
    ap.add_argument("--no-replay", action="store_true", help="matches without a replay record")
    args = ap.parse_args()
    this, other = Side(HERE), Side(args.other.resolve())
    from run import build  # bench/run.py, beside this script

    build()  # the C bot, compiled when missing or older than its source
    cbot = BIN / "cbot"
    py = [sys.executable]
    tmp = Path(tempfile.mkdtemp(prefix="ab-"))

    # A replay both sides can read: written by the other (older) checkout.
    out, _ = other.run(
        [
            "match",
            str(cbot),
            str(cbot),
            "--rounds",
            str(args.rounds),
            "--seed",
            "1",
            "--quiet",
            "--replay",
            str(tmp / "shared.jsonl"),
        ]
    )

    def pair(bot0: list[str], bot1: list[str]) -> Callable[[Side], tuple[float, ...]]:
        """A row that times a match between these two bots on a side."""
        return lambda s: match_rate(s, bot0, bot1, args.rounds, tmp, not args.no_replay)

    pybot = py + [str(HERE / "bench" / "pybot.py")]
    rows: dict[str, tuple[str, Callable[[Side], tuple[float, ...]]]] = {
        "c": ("C bots, rounds/s", pair([str(cbot)], [str(cbot)])),
        "py": ("no-JSON Python bots, rounds/s", pair(pybot, pybot)),
        "sdk": (
            "sample bots random vs cycler (Python SDK), rounds/s",
            pair(
                py + [str(SAMPLES / "python" / "random_bot.py")],
                py + [str(SAMPLES / "python" / "cycler.py")],
            ),
        ),
        "league": (
            "league of 4 sample bots, 1,000 rounds, -j 1, matches/min",
            lambda s: league_rate(s, ["rock", "cycler", "random", "frequency"], 1000, tmp),
        ),
        "verify": (
            "verify a 10,000-round replay, replays/s",
            lambda s: verify_rate(s, tmp / "shared.jsonl"),
        ),
        "startup": ("10-round match start to end, matches/s", lambda s: startup_rate(s, tmp)),
    }
    wanted = [r for r in args.only.split(",") if r] or list(rows)
    for key in wanted:
        label, fn = rows[key]
        mine: list[tuple[float, ...]] = []
        theirs: list[tuple[float, ...]] = []
        for i in range(args.reps):
            # Alternate who goes first so neither always meets a warmer machine.
            order = (this, other) if i % 2 == 0 else (other, this)
            got = {side.root: fn(side) for side in order}
            mine.append(got[this.root])
            theirs.append(got[other.root])
        # A match row measures two things: the rate, and the rate per referee CPU second.
        labels = [label, f"{label.split(',')[0]}, rounds per referee CPU second while playing"]
        for k in range(len(mine[0])):
            report(labels[k], [m[k] for m in mine], [t[k] for t in theirs])


def report(label: str, mine: list[float], theirs: list[float]) -> None:
    """One printed row: medians, the paired median ratio, its range, the wins."""
    ratios = [m / t for m, t in zip(mine, theirs, strict=True)]
    faster = sum(r > 1 for r in ratios)
    print(
        f"{label}: this {statistics.median(mine):,.2f} vs other "
        f"{statistics.median(theirs):,.2f}; paired median {statistics.median(ratios):.3f}x "
        f"(range {min(ratios):.2f}-{max(ratios):.2f}), faster in {faster} of {len(ratios)}",
        flush=True,
    )


if __name__ == "__main__":
    main()
