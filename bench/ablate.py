"""Where the referee's per-round CPU goes, by ablation (a prototype, not a test).

    python bench/ablate.py [--rounds N] [--reps N] [--variants a,b,...]

Each variant plays one C-vs-C match in a fresh interpreter with one part of the
driver switched off or replaced (by patching in that child process only; nothing
in referee/ is changed), and reports the referee's CPU microseconds per round in the round loop.
Variants run alternately, so load on the machine hits them alike. The difference
from ``base`` is what that part costs; ``bare-trio`` is the lower bound: the same
exchange written as the smallest correct trio loop (no replay, no fault policy).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CBOT = ROOT / "bench" / "bin" / "cbot"

CHILD = r"""
import json, os, sys, time
import msgspec, trio
from referee import match as M, proc as P
variant, rounds, replay, cbot = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sandbox = "auto"

if variant == "no-replay":
    replay = None
elif variant == "sandbox-basic":
    sandbox = "basic"
elif variant == "no-watchdog":
    M.Match._watchdog = lambda self, step, force: []
elif variant == "bare-trio":
    pass
elif variant != "base":
    raise SystemExit(f"unknown variant {variant}")


async def bare(rounds):
    # Two bots, turns encoded with msgspec, replies decoded into the real Action
    # type, a deadline per read, parked in trio only when a read would block.
    from referee.games.chaos import Action, Turn
    import subprocess
    enc = msgspec.json.Encoder().encode
    dec = msgspec.json.Decoder(Action).decode
    procs = [subprocess.Popen([cbot], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(2)]
    fds = [(p.stdin.fileno(), p.stdout.fileno()) for p in procs]
    for _w, r in fds:
        os.set_blocking(r, False)
    bufs = [b"", b""]
    async def line(i, deadline):
        while True:
            nl = bufs[i].find(b"\n")
            if nl >= 0:
                out, bufs[i] = bufs[i][:nl], bufs[i][nl + 1:]
                return out
            try:
                data = os.read(fds[i][1], 65536)
            except BlockingIOError:
                with trio.move_on_at(deadline):
                    await trio.lowlevel.wait_readable(fds[i][1])
                continue
            if not data:
                raise EOFError
            bufs[i] += data
    for i in range(2):
        os.write(fds[i][0], b'{"type":"hello"}\n')
    for i in range(2):
        await line(i, time.monotonic() + 10)
    last = [None, None]
    c = time.process_time()
    start_count()
    for r in range(1, rounds + 1):
        for i in range(2):
            os.write(fds[i][0], enc(Turn(r, last[1 - i], last[i], "HIGH")) + b"\n")
        deadline = time.monotonic() + 1.0
        for i in range(2):
            last[i] = dec(await line(i, deadline)).real_move
        if r % 256 == 0:
            await trio.lowlevel.checkpoint()
    stop_count()
    LOOP[0] = time.process_time() - c
    for i in range(2):
        os.write(fds[i][0], b'{"type":"end"}\n')
        procs[i].stdin.close()
        procs[i].wait()

# CPU of the round loop alone: spawning, probing the sandbox and scoring are
# fixed costs per match and would blur a per-round figure.
LOOP = [0.0]
OPS = [0]
COUNT = os.environ.get("ABLATE_OPCODES") == "1"

def tracer(frame, event, arg):
    # Every bytecode executed, in the loop and everything it calls.
    frame.f_trace_opcodes = True
    if event == "opcode":
        OPS[0] += 1
    return tracer

def start_count():
    if COUNT:
        sys.settrace(tracer)

if COUNT:
    # The watchdog runs every 0.1 s of wall time; tracing slows the loop ~50x, so
    # counted in it the watchdog would look ~50x more frequent per round than it is.
    # (It also pushes its next turn out of reach, or the loop would ask every round.)
    def _no_watchdog(self, step, force):
        self._next_watch = float("inf")
        return []
    M.Match._watchdog = _no_watchdog

def stop_count():
    if COUNT:
        sys.settrace(None)
play = M.Match._play
async def timed_play(self):
    c = time.process_time()
    start_count()
    await play(self)
    stop_count()
    LOOP[0] = time.process_time() - c
M.Match._play = timed_play

c0, w0 = time.process_time(), time.monotonic()
if variant == "bare-trio":
    trio.run(bare, rounds)
else:
    # Counting bytecodes, no spinning: its empty polls are waiting, not work.
    cfg = M.MatchConfig(
        rounds=rounds, seed=1, replay=replay, sandbox=sandbox, **({"spin_us": 0} if COUNT else {})
    )
    out = trio.run(M.run_match, [M.BotSpec([cbot]), M.BotSpec([cbot])], cfg)
    assert out.result.steps == rounds and not out.faults, out.faults
cpu, wall = time.process_time() - c0, time.monotonic() - w0
print(json.dumps({"cpu_us": LOOP[0] / rounds * 1e6, "rate": rounds / wall, "ops": OPS[0] / rounds}))
"""

VARIANTS = (
    "base",
    "no-replay",
    "no-watchdog",
    "sandbox-basic",
    "bare-trio",
)


def run(variant: str, rounds: int, tmp: Path, opcodes: bool = False) -> dict:
    env = dict(os.environ, ABLATE_OPCODES="1" if opcodes else "0")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, variant, str(rounds), str(tmp / "m.jsonl"), str(CBOT)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{variant} failed: {done.stderr[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=10_000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument(
        "--opcodes",
        action="store_true",
        help="count Python bytecodes executed per round instead (deterministic: "
        "no other load moves it; 1,000 rounds, one run each)",
    )
    args = p.parse_args()
    variants = args.variants.split(",")
    if args.opcodes:
        with tempfile.TemporaryDirectory(prefix="bench-ablate-") as tmp:
            print(f"{'variant':<14} {'bytecodes/round':>16}")
            for v in variants:
                out = run(v, 1_000, Path(tmp), opcodes=True)
                print(f"{v:<14} {out['ops']:>16,.0f}", flush=True)
        return
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    rate: dict[str, list[float]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory(prefix="bench-ablate-") as tmp:
        for rep in range(args.reps):
            for v in variants:
                out = run(v, args.rounds, Path(tmp))
                cpu[v].append(out["cpu_us"])
                rate[v].append(out["rate"])
            print(f"rep {rep + 1}: " + "  ".join(f"{v} {cpu[v][-1]:.1f}" for v in variants))
    base = statistics.median(cpu["base"]) if "base" in cpu else None
    # The median says what is typical; the minimum is least moved by other load.
    print(
        f"\n{'variant':<14} {'CPU us/round median':>20} {'vs base':>8} {'min':>6} {'rounds/s':>9}"
    )
    for v in variants:
        c = statistics.median(cpu[v])
        diff = f"{c - base:+.1f}" if base is not None else ""
        print(
            f"{v:<14} {c:>20.1f} {diff:>8} {min(cpu[v]):>6.1f} {statistics.median(rate[v]):>9,.0f}"
        )


if __name__ == "__main__":
    main()
