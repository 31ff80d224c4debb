"""Replay size and cost: the gzip level, bytes per round, the record's CPU.

    python bench/replay_size.py levels FILE...     # gzip levels 1..9 on replays
    python bench/replay_size.py sizes [--tree DIR] # bytes per round, three games
    python bench/replay_size.py cpu [--before DIR] # the referee's CPU, with and without replay
    python bench/replay_size.py league OUT         # a league's replays, against format 1.0
    python bench/replay_size.py writer             # the record's CPU per round, alone

``levels`` compresses each replay as ``ReplayWriter`` does (line by line, a sync
flush every ``FLUSH_EVERY`` lines, a final flush) at every level and reports the
CPU it took, scaled to 10,000 rounds, and the size; the level to use is the
cheapest one within 10% of the best size. ``sizes`` plays one match of Chaos
League, RoShamBo and Liar's Dice with sample bots and reports the bytes per step of
the replay, plain and gzip (the decompressed lines too: what a reader sees).
``cpu`` alternates matches with a replay and without one (and, with ``--before``,
with an earlier checkout's replay), so a load that changes over time hits all
alike, and reports the referee's CPU per round. ``--tree``/``--before`` name the
source of another referee (``git archive REV | tar -x -C DIR``); it runs with this
checkout's Python packages. Sizes do not depend on the machine's load; CPU
figures do, less so paired.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
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


def referee_argv(tree: Path | None) -> tuple[list[str], dict[str, str] | None]:
    """How to run ``referee``: this checkout's, or the one whose source is in
    ``tree`` (e.g. an earlier commit unpacked with ``git archive``)."""
    if tree is None:
        return [sys.executable, "-m", "referee"], None
    env = dict(os.environ, PYTHONPATH=str(tree))
    return [sys.executable, "-m", "referee"], env


def play(game: str, replay: Path | None, rounds: int | None, tree: Path | None) -> dict:
    base, env = referee_argv(tree)
    argv = [*base, "match", *MATCHES[game], "--json", "--quiet"]
    if rounds is not None and game != "liars_dice":
        argv += ["--rounds", str(rounds)]
    argv += ["--replay", str(replay)] if replay is not None else ["--no-replay"]
    done = subprocess.run(argv, cwd=tree or ROOT, capture_output=True, text=True, env=env)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{game}: {done.stderr[-2000:]}")
    result: dict = json.loads(done.stdout)
    return result


def sizes(rounds: int | None, tree: Path | None) -> None:
    """Per step: the files (header and footer included), the step lines alone as
    stored, and the step lines as read back (in full)."""
    print("game         steps  file B/step  gzip file B/step  step line B  read back B")
    with tempfile.TemporaryDirectory() as tmp:
        for game in MATCHES:
            plain = Path(tmp) / f"{game}.jsonl"
            packed = Path(tmp) / f"{game}.jsonl.gz"
            play(game, plain, rounds, tree)
            play(game, packed, rounds, tree)
            stored = plain.read_bytes().splitlines(keepends=True)
            steps = max(1, steps_in(stored))
            step_bytes = sum(len(x) for x in stored if x.startswith(b'{"type":"step"'))
            full = [x for x in iter_lines(plain) if x.startswith(b'{"type":"step"')]
            print(
                f"{game:11s} {steps:6d} {plain.stat().st_size / steps:12.1f}"
                f" {packed.stat().st_size / steps:17.1f} {step_bytes / steps:12.1f}"
                f" {sum(map(len, full)) / steps:11.1f}"
            )


def cpu(pairs: int, rounds: int, before: Path | None) -> None:
    """The referee's own CPU per round (bots excluded: ``--json`` reports the rounds'
    and the end's CPU of the referee process), with a gzip replay and without one,
    and (``before``) with the replay of an earlier checkout, in alternating order."""
    variants: list[tuple[str, bool, Path | None]] = [
        ("gzip replay", True, None),
        ("no replay", False, None),
    ]
    if before is not None:
        variants.append(("gzip replay, before", True, before))
    cpu_us: dict[str, list[float]] = {label: [] for label, _, _ in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(pairs):
            order = variants if i % 2 == 0 else variants[::-1]
            for label, record, tree in order:
                replay = Path(tmp) / f"m{i}.jsonl.gz" if record else None
                ref = play("chaos", replay, rounds, tree)["referee"]
                # The rounds (each record is written one step late, while the bots
                # think) and the end of the match (the last records, the flush).
                cpu_us[label].append((ref["play_cpu_s"] + ref["finish_cpu_s"]) / rounds * 1e6)
    print(f"{pairs} runs of each, {rounds}-round Chaos League matches, alternating")
    base = cpu_us["gzip replay"]
    for label, values in cpu_us.items():
        diffs = [v - b for v, b in zip(values, base, strict=True)]
        print(
            f"{label:22s} median {statistics.median(values):6.2f} us/round, "
            f"min {min(values):6.2f}; paired difference to gzip replay: "
            f"median {statistics.median(diffs):+6.2f}"
        )


def league(out: Path) -> None:
    """A league's replays on disk against the same matches in format 1.0, plain (the
    lines as read back are exactly those, but for the header's format_minor)."""
    stored = full = steps = 0
    files = sorted(p for p in (out / "replays").glob("*.jsonl*") if ".part." not in p.name)
    for path in files:
        stored += path.stat().st_size
        for line in iter_lines(path):
            if line.startswith(b'{"type":"step"'):
                steps += 1
            elif line.startswith(b'{"type":"header"'):
                line = re.sub(rb',"format_minor":\d+', b"", line)
            full += len(line)
    print(f"{len(files)} replays, {steps} rounds")
    print(f"on disk:                   {stored:12,d} bytes, {stored / steps:6.1f} B/round")
    print(f"format 1.0, plain (before): {full:12,d} bytes, {full / steps:6.1f} B/round")
    print(f"ratio: {stored / full:.3f}")


def writer_cost(steps: int, repeat: int) -> None:
    """The replay record's CPU per round in the referee's process, alone: the same
    Chaos League steps (turns as sent, decoded actions echoing the round as the
    sample bots do, outcomes) through ``ReplayWriter`` in format 1.0 (every step in
    full) and 1.2 (lean), plain and gzip, in alternation; best and median of
    ``repeat`` runs. Playing whole matches measures this too, but on a loaded
    machine the referee's wait for the bots (a short spin) swamps it."""
    import random

    import msgspec

    from referee.games.chaos import Action, ChaosLeague
    from referee.replay import ReplayWriter, Step

    game = ChaosLeague(rounds=steps)
    state = game.new_state(1)
    rng = random.Random(1)
    records = []
    moves = list(game.moves)
    for n in range(1, steps + 1):
        obs = game.encode_turns(state)
        acts = []
        for seat in (0, 1):
            if state.tokens[seat] and rng.random() < 0.05:
                acts.append(Action(rng.choice(moves), True, rng.choice(moves), n))
            else:
                acts.append(Action(rng.choice(moves), round=n))
        out = game.resolve(state, acts)
        us = [rng.randrange(50, 3000), rng.randrange(50, 3000)]
        records.append(Step(n, [msgspec.Raw(o) for o in obs], acts, us, [None, None], out))
    variants = {
        "1.0 plain": (".jsonl", None),
        "1.0 gzip": (".jsonl.gz", None),
        "1.2 plain": (".jsonl", game),
        "1.2 gzip": (".jsonl.gz", game),
    }
    cpu_us: dict[str, list[float]] = {k: [] for k in variants}
    size: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            for label, (suffix, lean) in variants.items() if i % 2 else reversed(variants.items()):
                path = Path(tmp) / f"w{suffix}"
                start = time.process_time()
                w = ReplayWriter(path, game=lean)
                write = w.write
                for rec in records:
                    write(rec)
                w.close()
                cpu_us[label].append((time.process_time() - start) / steps * 1e6)
                size[label] = path.stat().st_size
    print(f"{steps} Chaos League steps through ReplayWriter, {repeat} runs each, alternating")
    for label, values in cpu_us.items():
        print(
            f"{label:10s} best {min(values):5.2f} us/step, median {statistics.median(values):5.2f};"
            f" {size[label] / steps:6.1f} bytes/step"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    lv = sub.add_parser("levels")
    lv.add_argument("files", nargs="+", type=Path)
    lv.add_argument("--repeat", type=int, default=5)
    sz = sub.add_parser("sizes")
    sz.add_argument("--rounds", type=int, default=None)
    sz.add_argument("--tree", type=Path, help="run the referee whose source is in TREE")
    cp = sub.add_parser("cpu")
    cp.add_argument("--pairs", type=int, default=10)
    cp.add_argument("--rounds", type=int, default=10_000)
    cp.add_argument("--before", type=Path, help="also time the referee whose source is here")
    wr = sub.add_parser("writer")
    wr.add_argument("--steps", type=int, default=10_000)
    wr.add_argument("--repeat", type=int, default=9)
    lg = sub.add_parser("league")
    lg.add_argument("out", type=Path, help="a tournament's output directory")
    args = p.parse_args()
    if args.what == "levels":
        levels(args.files, args.repeat)
    elif args.what == "writer":
        writer_cost(args.steps, args.repeat)
    elif args.what == "league":
        league(args.out)
    elif args.what == "sizes":
        sizes(args.rounds, args.tree)
    else:
        cpu(args.pairs, args.rounds, args.before)


if __name__ == "__main__":
    main()
