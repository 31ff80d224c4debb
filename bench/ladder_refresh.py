"""Cost of the ladder's rating refresh (``matchmaking.rate``), which the server runs
in its own process after every ladder match: wall time and peak memory (Python's
allocations, numpy's included, by tracemalloc) for a ladder of many versions.

    python bench/ladder_refresh.py [--versions 51] [--matches 4000] [--repeat 7]

Matches are between random pairs of versions with random results (a third drawn).
Prints the median and the fastest wall time of ``--repeat`` refreshes, their median
CPU time (the process's, all threads: steadier on a shared machine), and the peak.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.server.matchmaking import rate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--versions", type=int, default=51)
    ap.add_argument("--matches", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(1)
    versions = list(range(1, args.versions + 1))
    results: list[tuple[int, int, int | None, int, int]] = []
    for _ in range(args.matches):
        a, b = rng.sample(versions, 2)
        results.append((a, b, rng.choice([0, 1, None]), 0, 0))
    rate(versions, results)  # warm: imports, first allocations
    times, cpu = [], []
    for _ in range(args.repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        rate(versions, results)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    tracemalloc.start()
    rate(versions, results)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"{args.versions} versions, {args.matches} matches: median {statistics.median(times):.3f} s,"
        f" fastest {min(times):.3f} s, CPU median {statistics.median(cpu):.3f} s,"
        f" peak {peak / 2**20:.1f} MiB (tracemalloc)"
    )


if __name__ == "__main__":
    main()
