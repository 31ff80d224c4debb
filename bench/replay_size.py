"""Replay size and cost: the gzip level, bytes per round, the record's CPU.

    python bench/replay_size.py levels FILE...     # gzip levels 1..9 on replays
    python bench/replay_size.py sizes [--rounds N] # bytes per round, three games
    python bench/replay_size.py cpu [--pairs N]    # a match's CPU with and without replay

``levels`` compresses each replay as ``ReplayWriter`` does (line by line, a sync
flush every ``FLUSH_EVERY`` lines, a final flush) at every level and reports the
CPU it took, scaled to 10,000 rounds, and the size; the level to use is the
cheapest one within 10% of the best size. ``sizes`` plays one match of Chaos
League, RoShamBo and Liar's Dice with sample bots and reports the bytes per step of
the replay, plain and gzip (the decompressed lines too: what a reader sees).
``cpu`` alternates matches with a replay and without one (pairs of runs, so a load
that changes over time hits both alike) and reports the referee's CPU per round.
Sizes do not depend on the machine's load; CPU figures do, less so as pairs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.replay import iter_lines  # noqa: E402

# The writer flushes every quarter second; a 10,000-round match takes a few seconds.
FLUSH_EVERY = 1000
SIZE_SLACK = 1.10  # "within 10% of the best size"

MATCHES = {
    "chaos": ["iocaine", "trickster", "--seed", "2026"],
    "roshambo": ["iocaine", "frequency", "--game", "roshambo", "--seed", "2026"],
    "liars_dice": ["ld-odds", "ld-expect", "--game", "liars_dice", "--seed", "2026"],
}


def compress_like_writer(lines: list[bytes], level: int) -> tuple[int, float]:
    """(bytes written, CPU seconds) for ``lines`` through one gzip stream."""
    start = time.process_time()
    z = zlib.compressobj(level, zlib.DEFLATED, 31)
    size = 0
    for i, line in enumerate(lines, start=1):
        size += len(z.compress(line))
        if i % FLUSH_EVERY == 0:
            size += len(z.flush(zlib.Z_SYNC_FLUSH))
    size += len(z.flush(zlib.Z_FINISH))
    return size, time.process_time() - start


def steps_in(lines: list[bytes]) -> int:
    return sum(1 for line in lines if line.startswith(b'{"type":"step"'))


def levels(files: list[Path], repeat: int) -> None:
    for path in files:
        with open(path, "rb") as f:
            lines = f.read().splitlines(keepends=True)  # the bytes on disk, as written
        if lines and lines[0][:2] == b"\x1f\x8b":
            lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
        steps = max(1, steps_in(lines))
        raw = sum(map(len, lines))
        print(f"{path.name}: {steps} steps, {raw} bytes plain ({raw / steps:.1f} B/step)")
        print("level   bytes  B/step  CPU ms/10k steps")
        rows = []
        for level in range(1, 10):
            runs = [compress_like_writer(lines, level) for _ in range(repeat)]
            size = runs[0][0]
            cpu = min(c for _, c in runs) * 10_000 / steps
            rows.append((level, size, cpu))
            print(f"{level:5d} {size:7d} {size / steps:7.1f} {cpu * 1e3:10.1f}")
        best = min(size for _, size, _ in rows)
        fit = [r for r in rows if r[1] <= best * SIZE_SLACK]
        pick = min(fit, key=lambda r: r[2])
        print(f"cheapest within 10% of the best size ({best}): level {pick[0]}\n")


def play(game: str, replay: Path, rounds: int | None, extra: list[str]) -> None:
    argv = [sys.executable, "-m", "referee", "match", *MATCHES[game], *extra]
    if rounds is not None and game != "liars_dice":
        argv += ["--rounds", str(rounds)]
    argv += ["--replay", str(replay), "--json"] if replay.name else ["--json"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{game}: {done.stderr[-2000:]}")


def sizes(rounds: int | None) -> None:
    print("game         steps  plain B/step  gzip B/step  read back B/step")
    with tempfile.TemporaryDirectory() as tmp:
        for game in MATCHES:
            plain = Path(tmp) / f"{game}.jsonl"
            packed = Path(tmp) / f"{game}.jsonl.gz"
            play(game, plain, rounds, [])
            play(game, packed, rounds, [])
            lines = list(iter_lines(plain))
            steps = max(1, steps_in(lines))
            read_back = sum(map(len, lines))
            print(
                f"{game:11s} {steps:6d} {plain.stat().st_size / steps:13.1f}"
                f" {packed.stat().st_size / steps:12.1f} {read_back / steps:17.1f}"
            )


def cpu(pairs: int, rounds: int) -> None:
    """The referee's own CPU per round (bots excluded: ``--json`` reports it), with
    and without a replay, alternating."""
    with_replay: list[float] = []
    without: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(pairs):
            for record in (i % 2 == 0, i % 2 != 0):
                target = with_replay if record else without
                replay = Path(tmp) / f"m{i}.jsonl.gz"
                argv = [sys.executable, "-m", "referee", "match", *MATCHES["chaos"]]
                argv += ["--rounds", str(rounds), "--json", "--no-idle-poll"]
                argv += ["--replay", str(replay)] if record else ["--no-replay"]
                done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
                if done.returncode not in (0, 3):
                    raise SystemExit(done.stderr[-2000:])
                result = json.loads(done.stdout)
                ref = result["referee"]
                # The rounds (the record is written one step late, while the bots
                # think) and the end of the match (the last records, the flush).
                target.append((ref["play_cpu_s"] + ref["finish_cpu_s"]) / rounds * 1e6)
    diffs = [a - b for a, b in zip(with_replay, without, strict=True)]
    print(f"{pairs} pairs of {rounds}-round Chaos League matches (gzip replay vs none)")
    print(f"with replay:    median {statistics.median(with_replay):.2f} us/round")
    print(f"without:        median {statistics.median(without):.2f} us/round")
    print(f"paired difference: median {statistics.median(diffs):+.2f} us/round")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    lv = sub.add_parser("levels")
    lv.add_argument("files", nargs="+", type=Path)
    lv.add_argument("--repeat", type=int, default=5)
    sz = sub.add_parser("sizes")
    sz.add_argument("--rounds", type=int, default=None)
    cp = sub.add_parser("cpu")
    cp.add_argument("--pairs", type=int, default=10)
    cp.add_argument("--rounds", type=int, default=10_000)
    args = p.parse_args()
    if args.what == "levels":
        levels(args.files, args.repeat)
    elif args.what == "sizes":
        sizes(args.rounds)
    else:
        cpu(args.pairs, args.rounds)


if __name__ == "__main__":
    main()
