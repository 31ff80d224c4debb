"""User-space instructions the referee spends a round, counted by callgrind.

    python bench/callgrind_round.py [--checkout DIR] [--modes plain,gz,none] [--reps N]
                                    [--rounds 2000,6000] [--watchdog] [-- EXTRA MATCH ARGS]

Plays whole ``referee match`` runs of two C bots (bench/bin/cbot, seed 1) under
``valgrind --tool=callgrind`` (the referee process only; the bots run natively) and
prints, for each replay mode, the instructions of the long match less those of the
short one, divided by the rounds between them: start-up, the handshake and scoring
cancel out, what remains is the round loop with its replay record. The counts do
not depend on the CPU's speed, but they do on waiting: a round whose reply is not
there yet when the referee looks costs the referee more (a spin, or a sleep in
the event loop), and on a loaded host that happens more often. So each length is
played ``--reps`` times and the fewest instructions of each length count (the
runs least disturbed), next to each pair's own figure. The bots' watchdog polls
are left out unless ``--watchdog`` is given: they come every 0.1 s of wall time,
and under valgrind a round takes so long that they would weigh tens of times more
on it than natively (and differ between versions of the watchdog, not of the
round). Two checkouts can be
compared this way (``--checkout`` runs another checkout's referee with this
interpreter and its packages, e.g. a ``git worktree`` of an older commit).

Modes: ``plain`` writes a .jsonl replay, ``gz`` a .jsonl.gz one, ``none`` passes
``--no-replay``. The referee leaves idle CPUs alone (``--no-idle-poll``) and
spins for replies as it does by default (``-- --spin-us 0`` to sleep at once).
Valgrind offers OpenSSL no SHA extensions, so hashing costs more instructions
here than on a CPU that has them.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
CBOT = BENCH / "bin" / "cbot"
MODES = {"plain": ".jsonl", "gz": ".jsonl.gz", "none": None}


# The referee's command line, run with the bots' watchdog polls left out: they come
# every WATCHDOG_PERIOD seconds of wall time, and valgrind slows the referee so much
# that they would weigh tens of times more on a round than they do natively.
RUN_REFEREE = "runpy.run_module('referee', run_name='__main__', alter_sys=True)"
WATCHDOG_OFF = "import runpy, referee.match as m; m.WATCHDOG_PERIOD = 1e9; " + RUN_REFEREE


def instructions(
    checkout: Path, rounds: int, mode: str, extra: list[str], tmp: Path, watchdog: bool = False
) -> int:
    """The referee's user-space instructions for one match of ``rounds`` rounds."""
    out = tmp / f"callgrind-{mode}-{rounds}.out"
    suffix = MODES[mode]
    replay = ["--no-replay"] if suffix is None else ["--replay", str(tmp / f"r{suffix}")]
    cmd = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--log-file=/dev/null",
        sys.executable,
        "-c",
        WATCHDOG_OFF if not watchdog else "import runpy; " + RUN_REFEREE,
        "match",
        str(CBOT),
        str(CBOT),
        "--seed",
        "1",
        "--rounds",
        str(rounds),
        "--quiet",
        "--no-idle-poll",
        *replay,
        *extra,
    ]
    # A fixed string hash seed: dictionaries probe alike in every run.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(cmd, cwd=checkout, env=env, stdout=subprocess.DEVNULL, check=True, timeout=1800)
    found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    if found is None:
        raise SystemExit("callgrind wrote no instruction count")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", type=Path, default=BENCH.parent, help="the referee to run")
    ap.add_argument("--modes", default="plain,gz,none", help="plain, gz, none (comma-separated)")
    ap.add_argument("--rounds", default="2000,6000", help="the short and the long match")
    ap.add_argument("--reps", type=int, default=1, help="pairs of matches per mode")
    ap.add_argument(
        "--watchdog", action="store_true", help="keep the watchdog's timed polls of the bots"
    )
    ap.add_argument("extra", nargs="*", help="more `referee match` arguments (after --)")
    args = ap.parse_args()
    low, high = (int(r) for r in args.rounds.split(","))
    if not CBOT.exists():
        CBOT.parent.mkdir(exist_ok=True)
        subprocess.run(["cc", "-O2", "-Wall", "-o", str(CBOT), str(BENCH / "cbot.c")], check=True)
    # Compile the bytecode first, so no match pays for it.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "referee"], cwd=args.checkout)
    with tempfile.TemporaryDirectory(prefix="bench-cg-round-") as tmp:
        for mode in args.modes.split(","):
            short, long = [], []
            for _ in range(args.reps):
                short.append(
                    instructions(args.checkout, low, mode, args.extra, Path(tmp), args.watchdog)
                )
                long.append(
                    instructions(args.checkout, high, mode, args.extra, Path(tmp), args.watchdog)
                )
                print(f"  {args.checkout.name} {mode}: {short[-1]:,} and {long[-1]:,} instructions")
                each = (long[-1] - short[-1]) / (high - low)
                best = (min(long) - min(short)) / (high - low)
                print(f"{mode:6} {each:10,.0f} this pair, {best:10,.0f} the fewest of each length")


if __name__ == "__main__":
    main()
