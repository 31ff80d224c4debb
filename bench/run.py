"""The referee's benchmark: measured against the physical floor and against a peer.

    python bench/run.py [--quick] [--only NAME[,NAME...]] [--reps N] [--no-write]

Scenarios (``--only``): floor-smoke, cc, py, rss, startup, kaggle, tournament,
cluster, iocaine, profile, bytecodes. Each prints its figures as it goes; at the end a table of
results with the issue's targets is printed and written into docs/performance.md
(between the ``bench:begin``/``bench:end`` markers; text outside them is kept).

Why it is built this way:
- The machines are noisy (the same C program swings 2x between runs), so every
  comparison runs its two sides alternately in the same run and takes medians;
  only ratios measured that way mean anything.
- The floor (bench/floor.c) is a minimal C referee doing the same exchange; a
  ratio against it says how much of the physically possible rate the referee gets.
  It runs three ways (sleeping in poll() at once, spinning first as the referee
  does, and also placed on CPUs as ``--pin-cpus`` does) and the fastest counts:
  which one that is depends on the machine. bench/pyfloor.py does the same
  exchange in plain Python: what any referee written in Python could reach.
- Rates are rounds over each side's own time spent playing, from the first turn
  written to the last round resolved (``play_s`` in both sides' JSON), so
  spawning, scoring and interpreter start-up (the ``startup`` scenario) do not
  dilute the per-round figure.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.match import BOT_SLICE_NS
from referee.wakeup import IdlePollHold

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
BIN = BENCH / "bin"
FLOOR = BIN / "floor"
PYFLOOR = BENCH / "pyfloor.py"
CBOT = BIN / "cbot"
PYBOT = BENCH / "pybot.py"
JSBOT = BENCH / "jsbot.js"
SAMPLES = ROOT / "sample_bots"
KAGGLE_VENV = BENCH / ".kaggle-venv"
KAGGLE_RUNTIME = ("jsonschema", "numpy", "requests")
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

# The interpreter that runs this script runs the referee, and the referee starts
# Python bots with its own interpreter, so the floor is given the same one.
PY = sys.executable

# Children run with bytecode caching on, as a user's referee does: with
# PYTHONDONTWRITEBYTECODE set (some shells here set it) every start would compile
# the referee's sources again and the start-up figure would measure that.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

SCENARIOS = (
    "floor-smoke",
    "cc",
    "py",
    "sdk",
    "rss",
    "startup",
    "kaggle",
    "tournament",
    "league",
    "cluster",
    "iocaine",
    "profile",
    "bytecodes",
)


@dataclass
class Row:
    what: str
    measured: str
    target: str = ""
    verdict: str = "info"  # pass, FAIL, info, skipped


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    sections: list[tuple[str, str]] = field(default_factory=list)  # (title, preformatted text)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"  -> {row.what}: {row.measured}" + (f"  [{row.verdict}]" if row.target else ""))

    def skip(self, what: str, why: str) -> None:
        self.add(Row(what, f"skipped: {why}", verdict="skipped"))


class BenchError(Exception):
    """A run that did not produce a usable measurement."""


def judge(ok: bool) -> str:
    return "pass" if ok else "FAIL"


# -- building -----------------------------------------------------------------


def build() -> None:
    """Compile the floor and the C bot into bench/bin/ when missing or stale."""
    BIN.mkdir(exist_ok=True)
    cc = os.environ.get("CC", "cc")
    for src, out in ((BENCH / "floor.c", FLOOR), (BENCH / "cbot.c", CBOT)):
        if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
            continue
        # Compile aside and rename, so a run that starts meanwhile never sees half a file.
        tmp = out.with_name(f".{out.name}.{os.getpid()}")
        subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(src)], check=True)
        os.replace(tmp, out)


# -- running one match --------------------------------------------------------


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, object]:
    """Reap with os.wait4 so the child's own rusage (peak RSS, CPU) comes back."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, rusage
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise BenchError(f"timed out after {timeout:g} s")
        time.sleep(0.005)


# The floor's spin before it sleeps in poll(), in microseconds: the referee's own
# default --spin-us, so that neither side waits in a way the other cannot.
FLOOR_SPIN_US = 100


def _idle_poll_available() -> bool:
    """Whether this user may hold the zero wake-up latency request the referee holds
    by default (referee/wakeup.py): then every floor holds it too (-q), so that the
    referee is never compared with a floor that waits on a slower machine."""
    with IdlePollHold() as hold:
        return hold.held


IDLE_POLL = _idle_poll_available()
_Q = ("-q",) if IDLE_POLL else ()

# The ways the floor waits and places its processes; the floor is the fastest of them.
FLOORS = {
    "floor-poll": (*_Q,),  # sleeps in poll() at once
    "floor-spin": ("-s", str(FLOOR_SPIN_US), *_Q),  # spins first, as the referee does
    "floor-pinned": ("-s", str(FLOOR_SPIN_US), "-p", *_Q),  # and places as --pin-cpus does
}
# The same exchange in plain Python (bench/pyfloor.py), the two ways that are
# fastest here: what any referee written in Python could reach.
PYFLOORS = {
    "pyfloor-spin": ("-s", str(FLOOR_SPIN_US), *_Q),
    "pyfloor-pinned": ("-s", str(FLOOR_SPIN_US), "-p", *_Q),
}


def _on_cpus(cpus: set[int] | None) -> Callable[[], None] | None:
    """A preexec_fn that confines a child (and so its bots) to ``cpus``."""
    if cpus is None:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


def run_floor(
    bot1: Sequence[str],
    bot2: Sequence[str],
    rounds: int,
    how: Sequence[str] = (),
    cpus: set[int] | None = None,
    python: bool = False,
) -> dict:
    """One run of the C floor (or, with ``python``, of bench/pyfloor.py)."""
    program = [PY, str(PYFLOOR)] if python else [str(FLOOR)]
    cmd = [*program, "-j", "-n", str(rounds), *how, *bot1, "--", *bot2]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, preexec_fn=_on_cpus(cpus)
    )
    if done.returncode != 0:
        raise BenchError(f"floor failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    out = json.loads(done.stdout)
    if out["faults"] != [0, 0]:
        raise BenchError(f"floor saw faults: {out}")
    out["wall_rate"] = out["rounds_per_s"]
    # Compared on the same footing as the referee: rounds over the time playing them.
    out["rounds_per_s"] = rounds / out["play_s"]
    return out


def run_referee(
    bot1: Sequence[str],
    bot2: Sequence[str],
    rounds: int,
    replay: str | None,
    extra: Sequence[str] = (),
    timeout: float = 600,
    cpus: set[int] | None = None,
) -> dict:
    """One ``referee match`` as a user runs it (on ``cpus`` if given); returns its
    JSON result plus the process's external wall time, peak RSS and CPU time."""
    cmd = [PY, "-m", "referee", "match", shlex.join(bot1), shlex.join(bot2)]
    cmd += ["--rounds", str(rounds), "--seed", "1", "--json", "--quiet", *extra]
    cmd += ["--replay", replay] if replay else ["--no-replay"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, cwd=ROOT, env=ENV, preexec_fn=_on_cpus(cpus)
        )
        code, ru = _wait(proc, timeout)
        ext = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    if code != 0:
        raise BenchError(f"referee exited {code}: {errors.strip()[-400:]}")
    result = json.loads(text)
    if result["steps"] != rounds or result["reason"] != "complete":
        raise BenchError(f"match did not complete: {result['reason']} at {result['steps']}")
    bad = [f for s in result["seats"] for f in s["verdict"].get("faults", [])]
    if bad:
        raise BenchError(f"bots faulted: {bad[:3]}")
    result["ext_s"] = ext
    # Rounds over the time spent playing them (the floor reports the same play_s),
    # so spawning and scoring do not dilute the per-round figure; start-up has its
    # own row and whole-match wall time is kept as wall_rate.
    result["rate"] = rounds / result["play_s"]
    result["wall_rate"] = rounds / result["wall_s"]
    result["maxrss_kib"] = ru.ru_maxrss  # type: ignore[attr-defined]
    # The referee's own high-water mark (VmHWM): ru_maxrss of a child can carry
    # the forking parent's peak across fork and exec.
    result["peak_kib"] = result.get("referee", {}).get("peak_rss_kib") or result["maxrss_kib"]
    result["cpu_s"] = ru.ru_utime + ru.ru_stime  # type: ignore[attr-defined]
    return result


def alternate(
    runs: dict[str, Callable[[], float]], reps: int, label: str, unit: str = "rounds/s"
) -> dict[str, list[float]]:
    """Run every variant once per repetition, in turn, so drift hits all alike."""
    got: dict[str, list[float]] = {name: [] for name in runs}
    for i in range(reps):
        for name, fn in runs.items():
            got[name].append(fn())
        summary = "  ".join(f"{n} {v[-1]:,.0f}" for n, v in got.items())
        print(f"  {label} rep {i + 1}/{reps}: {summary} {unit}", flush=True)
    return got


def paired(runs: list[float], against: list[float]) -> str:
    """Repetition by repetition, how ``runs`` compare with ``against`` (measured
    next to each other): the median ratio and how often ``runs`` was faster."""
    ratios = [r / a for r, a in zip(runs, against, strict=True)]
    faster = sum(x > 1 for x in ratios)
    return f"median {statistics.median(ratios):.2f}x, faster in {faster} of {len(ratios)}"


def fmt_rate(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f}/s"


# -- scenarios ----------------------------------------------------------------


def scenario_floor_smoke(rep: Report, args: argparse.Namespace) -> None:
    out = run_floor([str(CBOT)], [str(CBOT)], 1000)
    rep.add(Row("floor smoke: 1,000 rounds C vs C", f"{out['rounds_per_s']:,.0f} rounds/s"))


def _versus(
    rep: Report,
    args: argparse.Namespace,
    what: str,
    bot: list[str],
    target: float,
    basic_too: bool,
) -> None:
    rounds = args.rounds
    tmp = Path(tempfile.mkdtemp(prefix="bench-"))
    try:
        replay = str(tmp / "match.jsonl")
        # Which floor is fastest depends on how dearly this machine wakes a
        # sleeping process and where its scheduler puts the bots.
        runs: dict[str, Callable[[], float]] = {
            name: (lambda how=how: run_floor(bot, bot, rounds, how)["rounds_per_s"])
            for name, how in FLOORS.items()
        }
        runs.update(
            {
                name: (
                    lambda how=how: run_floor(bot, bot, rounds, how, python=True)["rounds_per_s"]
                )
                for name, how in PYFLOORS.items()
            }
        )
        runs["referee"] = lambda: run_referee(bot, bot, rounds, replay)["rate"]
        # Not a target: the referee without its replay record, to show the record's share.
        runs["referee-no-replay"] = lambda: run_referee(bot, bot, rounds, None)["rate"]
        if basic_too:
            # Not a target: shows what the default containment layer costs per round.
            runs["referee-basic"] = lambda: run_referee(
                bot, bot, rounds, replay, ["--sandbox", "basic"]
            )["rate"]
        # Not a target either (the targets are judged on the defaults): what the
        # opt-in CPU placement gives a match that has the machine to itself.
        runs["referee-pinned"] = lambda: run_referee(bot, bot, rounds, replay, ["--pin-cpus"])[
            "rate"
        ]
        if IDLE_POLL:
            # Nor this: the referee as it was before it kept idle CPUs polling.
            runs["referee-halt"] = lambda: run_referee(
                bot, bot, rounds, replay, ["--no-idle-poll"]
            )["rate"]
        got = alternate(runs, args.reps, what)
    except BenchError as exc:
        rep.skip(what, str(exc))
        return
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    floor_name = max(FLOORS, key=lambda n: statistics.median(got[n]))
    floor, ref = statistics.median(got[floor_name]), statistics.median(got["referee"])
    others = "; ".join(f"{n} {fmt_rate(got[n])}" for n in FLOORS if n != floor_name)
    ratio = ref / floor
    # The same ratio within each repetition (the referee against the run of that
    # floor just before it): how far this machine's minute-to-minute state moves it.
    per_rep = sorted(r / f for r, f in zip(got["referee"], got[floor_name], strict=True))
    rep.add(
        Row(
            f"{what}, {rounds:,} rounds: referee / floor",
            f"{ratio:.2f}x (referee {fmt_rate(got['referee'])}, {floor_name} "
            f"{fmt_rate(got[floor_name])}; {others}); within each repetition "
            f"{per_rep[0]:.2f}-{per_rep[-1]:.2f}x",
            f">= {target}x",
            judge(ratio >= target),
        )
    )
    pyfloor_name = max(PYFLOORS, key=lambda n: statistics.median(got[n]))
    pyfloor = statistics.median(got[pyfloor_name])
    no_replay = got["referee-no-replay"]
    rep.add(
        Row(
            f"{what}: the same exchange in plain Python (bench/pyfloor.py) / floor",
            f"{pyfloor / floor:.2f}x ({pyfloor_name} {fmt_rate(got[pyfloor_name])}): what a "
            f"referee in Python could reach with no trio, rules, checks, timing or replay; "
            f"the referee gets {ref / pyfloor:.2f}x of it, "
            f"{1e6 / ref - 1e6 / pyfloor:.1f} us more a round",
        )
    )
    rep.add(
        Row(
            f"{what}: referee with --no-replay / floor",
            f"{statistics.median(no_replay) / floor:.2f}x ({fmt_rate(no_replay)}); paired "
            f"against the default: {paired(no_replay, got['referee'])}",
        )
    )
    pinned = got["referee-pinned"]
    rep.add(
        Row(
            f"{what}: referee with --pin-cpus / floor",
            f"{statistics.median(pinned) / floor:.2f}x ({fmt_rate(pinned)}); paired against "
            f"the default: {paired(pinned, got['referee'])}",
        )
    )
    if IDLE_POLL:
        halt = got["referee-halt"]
        rep.add(
            Row(
                f"{what}: referee with --no-idle-poll / floor",
                f"{statistics.median(halt) / floor:.2f}x ({fmt_rate(halt)}); the default "
                f"(idle CPUs polling) against it, paired: {paired(got['referee'], halt)}",
            )
        )
    if basic_too:
        basic = statistics.median(got["referee-basic"])
        rep.add(
            Row(
                f"{what}: referee with --sandbox basic / floor",
                f"{basic / floor:.2f}x ({fmt_rate(got['referee-basic'])}); "
                f"default containment {1e6 / ref - 1e6 / basic:+.0f} us/round against basic",
            )
        )


def scenario_cc(rep: Report, args: argparse.Namespace) -> None:
    _versus(rep, args, "C bots", [str(CBOT)], 0.5, basic_too=True)


def scenario_py(rep: Report, args: argparse.Namespace) -> None:
    _versus(rep, args, "Python bots", [PY, str(PYBOT)], 0.6, basic_too=False)


def _sdk_pairs() -> list[tuple[str, list[str], str, list[str]]]:
    """(helper bot, its command, no-JSON bot, its command) per language: the same
    trivial strategy written on the helper and by hand."""
    pairs = [
        (
            "rock (chaosbot.py)",
            [PY, str(SAMPLES / "python" / "rock.py")],
            "bench/pybot.py",
            [PY, str(PYBOT)],
        )
    ]
    node = shutil.which("node")
    if node:
        pairs.append(
            (
                "random-js (chaosbot.js)",
                [node, str(SAMPLES / "js" / "random.js")],
                "bench/jsbot.js",
                [node, str(JSBOT)],
            )
        )
    return pairs


def _bots_cpu(res: dict) -> list[float]:
    """Each seat's CPU time (the bot's process tree, as its verdict counts it)."""
    return [float(s["verdict"]["cpu_s"]) for s in res["seats"]]


def scenario_sdk(rep: Report, args: argparse.Namespace) -> None:
    """CPU per move of a bot written on the sample helper against the same trivial
    strategy written by hand without JSON, both seats of one match (so both see the
    same load), seats swapped every repetition. A bot's verdict counts its CPU from
    start to exit: a short match's CPU is taken from a long one's, which leaves the
    per-move cost without the interpreter's start-up."""
    long_n, short_n = (4_000, 500) if args.quick else (2 * args.rounds, 1_000)
    for helper, helper_cmd, bare, bare_cmd in _sdk_pairs():
        what = f"SDK overhead: CPU per move, {helper} / {bare}"
        helper_us: list[float] = []
        bare_us: list[float] = []
        try:
            for i in range(args.reps):
                swap = i % 2 == 1
                seats = (bare_cmd, helper_cmd) if swap else (helper_cmd, bare_cmd)
                cpu = {n: _bots_cpu(run_referee(*seats, n, None)) for n in (short_n, long_n)}
                per = [
                    (cpu[long_n][k] - cpu[short_n][k]) / (long_n - short_n) * 1e6 for k in (0, 1)
                ]
                if swap:
                    per.reverse()
                helper_us.append(per[0])
                bare_us.append(per[1])
                print(
                    f"  sdk rep {i + 1}/{args.reps}: {helper} {per[0]:.1f} us, "
                    f"{bare} {per[1]:.1f} us a move",
                    flush=True,
                )
        except BenchError as exc:
            rep.skip(what, str(exc))
            continue
        ratios = sorted(h / b for h, b in zip(helper_us, bare_us, strict=True))
        ratio = statistics.median(ratios)
        rep.add(
            Row(
                what,
                f"{ratio:.2f}x ({statistics.median(helper_us):.1f} vs "
                f"{statistics.median(bare_us):.1f} us; one match, {long_n:,} less "
                f"{short_n:,} rounds; per repetition {ratios[0]:.2f}-{ratios[-1]:.2f}x)",
                "<= 1.5x",
                judge(ratio <= 1.5),
            )
        )
    _sdk_instructions(rep, args)


SDK_TURNS = r"""
import json, random, sys
n, moves = int(sys.argv[1]), ["rock", "paper", "scissors", "lizard", "spock"]
rng, buckets = random.Random(1), ["HIGH", "MEDIUM", "LOW", "EMPTY"]
hello = {"type": "hello", "protocol": 1, "game": "chaos",
         "params": {"rounds": n, "tokens": 50, "moves": moves}, "seat": 0, "seats": 2,
         "seed": 1, "time": {"handshake_ms": 10000, "move_ms": 1000, "bank_ms": 3000}}
out = [json.dumps(hello, separators=(",", ":"))]
for r in range(1, n + 1):
    seen = (None, None) if r == 1 else (rng.choice(moves), rng.choice(moves))
    turn = {"type": "turn", "round": r, "opponent_last_visible": seen[0],
            "self_last_real": seen[1], "opponent_deception_bucket": buckets[min(3, r // 3000)]}
    out.append(json.dumps(turn, separators=(",", ":")))
out.append(json.dumps({"type": "end", "reason": "complete", "rounds": n, "result": None}))
sys.stdout.write("\n".join(out) + "\n")
"""


def _instructions(cmd: Sequence[str], stdin: Path) -> int:
    """User-space instructions ``cmd`` executes reading ``stdin``, counted by callgrind."""
    with tempfile.TemporaryDirectory(prefix="bench-cg-") as tmp, stdin.open("rb") as f:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                "--log-file=/dev/null",
                *cmd,
            ],
            stdin=f,
            stdout=subprocess.DEVNULL,
            check=True,
            timeout=900,
        )
        found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    if found is None:
        raise BenchError("callgrind wrote no instruction count")
    return int(found.group(1))


def _sdk_instructions(rep: Report, args: argparse.Namespace) -> None:
    """The Python pair's instructions per move: unlike CPU time, other load cannot
    move them. The turns come from a file, so the pipes' kernel time (the same for
    both bots: one read and one write a move) is not in them."""
    what = "SDK overhead: user-space instructions per move, rock (chaosbot.py) / bench/pybot.py"
    if shutil.which("valgrind") is None:
        rep.skip(what, "valgrind is not installed")
        return
    n = 2_000 if args.quick else 10_000
    with tempfile.TemporaryDirectory(prefix="bench-sdk-") as tmp:
        turns = {}
        for k in (0, n):
            turns[k] = Path(tmp) / f"turns-{k}.jsonl"
            turns[k].write_text(
                subprocess.run(
                    [PY, "-c", SDK_TURNS, str(k)], capture_output=True, text=True, check=True
                ).stdout
            )
        per = {}
        try:
            for name, cmd in (
                ("rock", [PY, str(SAMPLES / "python" / "rock.py")]),
                ("pybot", [PY, str(PYBOT)]),
            ):
                per[name] = (_instructions(cmd, turns[n]) - _instructions(cmd, turns[0])) / n
        except (subprocess.SubprocessError, OSError) as exc:
            rep.skip(what, f"callgrind failed: {exc}")
            return
    rep.add(
        Row(
            what,
            f"{per['rock'] / per['pybot']:.2f}x ({per['rock']:,.0f} vs {per['pybot']:,.0f} "
            f"instructions; {n:,} turns read from a file, start-up taken off)",
        )
    )


def scenario_rss(rep: Report, args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    try:
        # The replay is encoded, hashed and written as usual, into /dev/null: a
        # 1,000,000-round replay would be hundreds of MB of disk for nothing.
        sink = tmp / "match.jsonl"
        sink.symlink_to(os.devnull)
        # Both bots ask for a shadow every 997 rounds: the referee keeps the token
        # history a real match has (all 50 tokens spent by the millionth round).
        bot = [str(CBOT), "997"]
        sizes = [10_000] if args.quick else [10_000, 1_000_000]
        rss: dict[int, float] = {}
        for n in sizes:
            res = run_referee(bot, bot, n, str(sink), timeout=1800)
            rss[n] = res["peak_kib"] / 1024
            print(f"  rss: {n:,} rounds, replay: peak {rss[n]:.1f} MiB, {res['rate']:,.0f}/s")
        res = run_referee(bot, bot, 10_000, None)
        no_replay = res["peak_kib"] / 1024
        print(f"  rss: 10,000 rounds, --no-replay: peak {no_replay:.1f} MiB")
    except (BenchError, OSError) as exc:
        rep.skip("referee peak RSS", str(exc))
        return
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rep.add(
        Row(
            "referee peak RSS, 10,000 rounds",
            f"{rss[10_000]:.1f} MiB with replay, {no_replay:.1f} MiB with --no-replay",
        )
    )
    if 1_000_000 in rss:
        ratio = rss[1_000_000] / rss[10_000]
        rep.add(
            Row(
                "referee peak RSS, 1,000,000 / 10,000 rounds",
                f"{ratio:.2f} ({rss[1_000_000]:.1f} MiB vs {rss[10_000]:.1f} MiB)",
                "<= 1.2",
                judge(ratio <= 1.2),
            )
        )
    else:
        rep.skip("referee peak RSS, 1,000,000 / 10,000 rounds", "--quick")


STAMP = re.compile(r"round1 ([0-9.]+)")


def _first_round_delay(referee: bool) -> float:
    """Seconds from launching a referee to the later of the two bots seeing round 1."""
    bot = [PY, str(PYBOT), "--stamp"]
    t0 = time.time()
    if referee:
        res = run_referee(bot, bot, 10, None)
        text = "\n".join(s["verdict"].get("stderr_head", "") for s in res["seats"])
    else:
        done = subprocess.run(
            [str(FLOOR), "-j", "-n", "10", *bot, "--", *bot],
            capture_output=True,
            text=True,
            timeout=60,
        )
        text = done.stderr
    stamps = [float(m) for m in STAMP.findall(text)]
    if len(stamps) != 2:
        raise BenchError(f"expected two round-1 stamps, got {text.strip()[:200]!r}")
    return max(stamps) - t0


def scenario_startup(rep: Report, args: argparse.Namespace) -> None:
    got: dict[str, list[float]] = {"floor": [], "referee": []}
    try:
        # Untimed: the first start after an edit compiles the referee's bytecode.
        _first_round_delay(referee=True)
        for i in range(args.reps):
            # The floor's figure is what two Python bots cost to start by themselves.
            got["floor"].append(_first_round_delay(referee=False))
            got["referee"].append(_first_round_delay(referee=True))
            print(
                f"  startup rep {i + 1}/{args.reps}: floor {got['floor'][-1] * 1000:.0f} ms,"
                f" referee {got['referee'][-1] * 1000:.0f} ms",
                flush=True,
            )
    except (BenchError, OSError, ValueError) as exc:
        rep.skip("start-up to round 1", str(exc))
        return
    ref, floor = statistics.median(got["referee"]), statistics.median(got["floor"])
    imports = _import_costs(args.reps)
    rep.add(
        Row(
            "start-up: `referee match` launch to round 1, two Python bots",
            f"{ref:.3f} s (C floor with the same bots: {floor:.3f} s)",
            "< 0.5 s",
            judge(ref < 0.5),
        )
    )
    rep.add(
        Row(
            "start-up: interpreter and imports (process wall time)",
            ", ".join(f"{name} {t:.3f} s" for name, t in imports.items()),
        )
    )


IMPORT_PROBES = {
    "python -c pass": "pass",
    "import trio, msgspec": "import trio, msgspec",
    "import numpy": "import numpy",
    "import referee.cli + referee.match": "import referee.cli, referee.match",
    "... + rich.console": "import referee.cli, referee.match, rich.console",
}


def _import_costs(reps: int) -> dict[str, float]:
    """Where a referee's start goes before it spawns anything: each probe is a fresh
    interpreter, timed from the outside, alternating, medians."""
    got: dict[str, list[float]] = {name: [] for name in IMPORT_PROBES}
    for _ in range(reps):
        for name, code in IMPORT_PROBES.items():
            t0 = time.monotonic()
            subprocess.run([PY, "-c", code], check=True, cwd=ROOT, env=ENV)
            got[name].append(time.monotonic() - t0)
    return {name: statistics.median(v) for name, v in got.items()}


def _kaggle_python() -> Path | None:
    """The peer's private venv, created on first use; None (and why) if impossible."""
    py = KAGGLE_VENV / "bin" / "python"
    if py.exists():
        probe = subprocess.run([str(py), "-c", "import kaggle_environments"], capture_output=True)
        if probe.returncode == 0:
            return py
    print("  kaggle: installing kaggle-environments into bench/.kaggle-venv (first run only)")
    shutil.rmtree(KAGGLE_VENV, ignore_errors=True)
    try:
        subprocess.run([PY, "-m", "venv", str(KAGGLE_VENV)], check=True, timeout=300)
        # kaggle-environments itself without its declared dependencies (jax,
        # open_spiel, transformers, ...: 1.6 GB and minutes to install), plus what
        # its core and the rps environment import. Environments whose imports
        # are missing fail to register with a printed note; rps is unaffected.
        done = subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "--no-deps", "kaggle-environments"],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        if done.returncode == 0:
            done = subprocess.run(
                [str(py), "-m", "pip", "install", "-q", *KAGGLE_RUNTIME],
                capture_output=True,
                text=True,
                timeout=1200,
            )
    except (subprocess.SubprocessError, OSError) as exc:
        raise BenchError(f"cannot create bench/.kaggle-venv: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise BenchError("pip install kaggle-environments failed: " + " | ".join(tail))
    return py


def run_kaggle(py: Path, steps: int, agents: str = "rock") -> dict:
    done = subprocess.run(
        [str(py), str(BENCH / "kaggle_rps.py"), str(steps), agents],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if done.returncode != 0:
        raise BenchError(f"kaggle run failed: {done.stderr.strip()[-300:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["steps"] != steps:
        raise BenchError(f"kaggle played {out['steps']} steps, not {steps}: {out['statuses']}")
    return out


def scenario_kaggle(rep: Report, args: argparse.Namespace) -> None:
    what = "peer: Kaggle rps (signs=5), trivial agents"
    try:
        py = _kaggle_python()
        assert py is not None
        # Kaggle needs ~2.5 ms of CPU a step here: --quick compares 1,000 steps.
        steps = 1_000 if args.quick else args.rounds
        tmp = Path(tempfile.mkdtemp(prefix="bench-kaggle-"))
        info: dict = {}

        def kaggle(agents: str) -> float:
            # The peer plays on the machine the referee plays on: with idle CPUs
            # polling where the referee keeps them so (its one process wakes
            # nobody, so this is for fairness, not for speed).
            with IdlePollHold() if IDLE_POLL else contextlib.nullcontext():
                info.update(run_kaggle(py, steps, agents))
            return float(info["rounds_per_s"])

        replay = str(tmp / "match.jsonl")
        got: dict[str, list[float]] = {
            "kaggle": [],
            "kaggle-sdk": [],
            "referee-sdk": [],
            "referee-py": [],
            "referee-c": [],
            "referee-py-halt": [],
        }
        py_bot, c_bot = [PY, str(PYBOT)], [str(CBOT)]

        def referee_pair() -> None:
            # The sample bots on the Python helper, as a user runs them: the
            # counterpart of Kaggle's cycler and random agents (which Kaggle calls
            # in-process, with no pipes at all).
            got["referee-sdk"].append(run_referee(["cycler"], ["random"], steps, replay)["rate"])
            # The no-JSON Python bot and the C bot, against Kaggle's rock agents:
            # what the referee itself does with bots that cost next to nothing.
            got["referee-py"].append(run_referee(py_bot, py_bot, steps, replay)["rate"])
            got["referee-c"].append(run_referee(c_bot, c_bot, steps, replay)["rate"])
            if IDLE_POLL:  # for reference: idle CPUs left to halt
                got["referee-py-halt"].append(
                    run_referee(py_bot, py_bot, steps, replay, ["--no-idle-poll"])["rate"]
                )

        try:
            # Kaggle is the slow side, so each Kaggle run is sandwiched between
            # referee runs rather than repeated as often as the other comparisons.
            referee_pair()
            # Three Kaggle runs (6-12 s each for 10,000 steps) give the median a middle.
            for i in range(1 if args.quick else max(3, args.reps // 5)):
                got["kaggle-sdk"].append(kaggle("cycler-random"))
                got["kaggle"].append(kaggle("rock"))
                referee_pair()
                print(
                    f"  kaggle rep {i + 1}: kaggle {got['kaggle-sdk'][-1]:,.0f} (cycler, "
                    f"random) {got['kaggle'][-1]:,.0f} (rock, rock), referee "
                    f"{got['referee-sdk'][-1]:,.0f} (sample cycler, random) "
                    f"{got['referee-py'][-1]:,.0f} (no-JSON Python bots) "
                    f"{got['referee-c'][-1]:,.0f} (C bots)"
                    + (
                        f" {got['referee-py-halt'][-1]:,.0f} (Python bots, --no-idle-poll)"
                        if got["referee-py-halt"]
                        else ""
                    )
                    + " rounds/s",
                    flush=True,
                )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except BenchError as exc:
        rep.skip(what, str(exc))
        return
    kag_sdk = statistics.median(got["kaggle-sdk"])
    sdk_ratio = statistics.median(got["referee-sdk"]) / kag_sdk
    per_rep = sorted(r / k for r, k in zip(got["referee-sdk"][1:], got["kaggle-sdk"], strict=True))
    rep.add(
        Row(
            f"{what}: referee / Kaggle, {steps:,} steps, sample bots on the Python helper "
            "(cycler vs random, replay written) against Kaggle's cycler and random agents",
            f"{sdk_ratio:.1f}x (referee {fmt_rate(got['referee-sdk'])}, Kaggle "
            f"{kag_sdk:,.0f} steps/s, kaggle-environments {info.get('version', '?')}; "
            f"Kaggle against the referee run after it: {per_rep[0]:.1f}-{per_rep[-1]:.1f}x)",
            ">= 30x",
            # 1,000 steps are mostly the bots' start-up for the referee: no verdict.
            "n/a (--quick)" if args.quick else judge(sdk_ratio >= 30),
        )
    )
    kag = statistics.median(got["kaggle"])
    py_ratio = statistics.median(got["referee-py"]) / kag
    c_ratio = statistics.median(got["referee-c"]) / kag
    rep.add(
        Row(
            f"{what}: referee / Kaggle, {steps:,} steps, no-JSON bots (bench/pybot.py, "
            "bench/cbot.c) against Kaggle's rock agents",
            f"{py_ratio:.1f}x with the no-JSON Python bot, {c_ratio:.1f}x with C bots "
            f"(Kaggle {kag:,.0f} steps/s): the referee's own speed, not what users' bots get",
        )
    )
    if got["referee-py-halt"]:
        halt_ratio = statistics.median(got["referee-py-halt"]) / kag
        rep.add(
            Row(
                f"{what}: referee with --no-idle-poll / Kaggle, no-JSON Python bots",
                f"{halt_ratio:.1f}x ({fmt_rate(got['referee-py-halt'])})",
            )
        )


def _tournament_help() -> str | None:
    done = subprocess.run(
        [PY, "-m", "referee", "tournament", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
    )
    return done.stdout if done.returncode == 0 else None


def run_tournament(
    jobs: int | None,
    entrants: int,
    rounds: int,
    tmp: Path,
    cluster: str | None = None,
    extra: Sequence[str] = (),
) -> float:
    """Matches per minute of a one-leg round robin (no finals) between C bots, played
    locally with ``-j jobs`` or on a Dask scheduler's workers (``jobs`` None: as many
    matches in flight as the cluster has worker threads)."""
    out_dir = tmp / f"{'cluster' if cluster else 'j'}{jobs or ''}-{time.monotonic_ns()}"
    cmd = [PY, "-m", "referee", "tournament", *([str(CBOT)] * entrants)]
    cmd += ["--legs", "1", "--finalists", "0", "--rounds", str(rounds), "--seed", "1"]
    cmd += ["-j", str(jobs)] if jobs else []
    cmd += ["--cluster", cluster] if cluster else []
    cmd += ["--out", str(out_dir), "--json", "--quiet", *extra]
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=900)
    ext = time.monotonic() - t0
    if done.returncode != 0:
        raise BenchError(f"tournament exited {done.returncode}: {done.stderr.strip()[-300:]}")
    out = json.loads(done.stdout)
    played = sum(s["played"] for s in out["standings"]) // 2
    if not out.get("complete") or played != entrants * (entrants - 1) // 2:
        raise BenchError(f"tournament incomplete: {played} matches played")
    # The tournament's own wall time leaves out interpreter start-up, as wall_s does
    # for a match; fall back to the outside view if it is not reported.
    wall = float(out.get("timing", {}).get("wall_s") or ext)
    return played / wall * 60


# Entrants and rounds per match of the league the tournament and cluster scenarios
# play, by --quick: 6 short matches, or 28 of the game's full length. Throughput is
# a question about real leagues: in 1,000-round matches a worker's start-up (imports,
# ~0.5 s of CPU) and each match's spawn and teardown weigh as much as the play.
TOURNAMENT_LEAGUE = {True: (4, 200), False: (8, 10_000)}


def scenario_tournament(rep: Report, args: argparse.Namespace) -> None:
    what = "tournament throughput, C bots"
    help_text = _tournament_help()
    if help_text is None:
        rep.skip(what, "`referee tournament --help` fails (not available yet)")
        return
    if "--jobs" not in help_text:
        rep.skip(what, "`referee tournament` has no -j/--jobs option")
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench-tour-"))
    entrants, rounds = TOURNAMENT_LEAGUE[args.quick]
    halt = ["--no-idle-poll"]
    nopin = ["--no-pin-cpus"]
    try:
        got = alternate(
            {
                "j1": lambda: run_tournament(1, entrants, rounds, tmp),
                "j2": lambda: run_tournament(2, entrants, rounds, tmp),
                # -j 1 with idle CPUs left to halt, as -j 2 leaves them on two CPUs:
                # the runner's own scaling, with the same match settings on both sides.
                **(
                    {"j1-halt": lambda: run_tournament(1, entrants, rounds, tmp, None, halt)}
                    if IDLE_POLL and "--no-idle-poll" in help_text
                    else {}
                ),
                # -j 2 with every match's processes left to the kernel's placement.
                **(
                    {"j2-nopin": lambda: run_tournament(2, entrants, rounds, tmp, None, nopin)}
                    if "--no-pin-cpus" in help_text
                    else {}
                ),
            },
            # Whether -j 2 scales depends on the second CPU being free, which other
            # work on the machine decides from minute to minute: three rounds.
            1 if args.quick else 3,
            "tournament",
            unit="matches/min",
        )
    except (BenchError, subprocess.SubprocessError, ValueError, KeyError) as exc:
        rep.skip(what, str(exc))
        return
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    j1, j2 = statistics.median(got["j1"]), statistics.median(got["j2"])
    matches = entrants * (entrants - 1) // 2
    rep.add(
        Row(
            f"{what}: -j 2 / -j 1",
            f"{j2 / j1:.2f}x ({j1:,.0f} vs {j2:,.0f} matches/min; "
            f"{matches} matches of {rounds:,} rounds)",
            ">= 1.6x",
            # Six 200-round matches are mostly worker start-up: no verdict.
            "n/a (--quick)" if args.quick else judge(j2 / j1 >= 1.6),
        )
    )
    if "j2-nopin" in got:
        j2n = statistics.median(got["j2-nopin"])
        rep.add(
            Row(
                f"{what}: -j 2 --no-pin-cpus / -j 1",
                f"{j2n / j1:.2f}x ({j2n:,.0f} matches/min): every match left to the "
                f"kernel's placement; the default (a CPU share per worker) against it, "
                f"paired: {paired(got['j2'], got['j2-nopin'])}",
            )
        )
    if not args.quick:
        _one_cpu_match(rep, what)
    if "j1-halt" in got:
        j1h = statistics.median(got["j1-halt"])
        rep.add(
            Row(
                f"{what}: -j 2 / -j 1 --no-idle-poll",
                f"{j2 / j1h:.2f}x ({j1h:,.0f} vs {j2:,.0f} matches/min): the same match "
                f"settings on both sides (on {os.cpu_count()} CPUs -j 2 leaves idle CPUs "
                f"to halt); -j 1 keeps them polling by default, {j1 / j1h:.2f}x as fast",
            )
        )


# The league whose CPU the league scenario splits: the Python sample bots, on the
# helper (sample_bots/python/chaosbot.py), from trivial (rock) to Iocaine.
LEAGUE_BOTS = ("random", "rock", "cycler", "frequency", "markov", "iocaine", "trickster", "sceptic")


def scenario_league(rep: Report, args: argparse.Namespace) -> None:
    """Where a sample-bot league's CPU goes, as `referee tournament --json` reports it."""
    bots = LEAGUE_BOTS[:4] if args.quick else LEAGUE_BOTS
    what = f"league CPU, {len(bots)} Python sample bots"
    rounds = 1_000 if args.quick else 10_000
    tmp = Path(tempfile.mkdtemp(prefix="bench-league-"))
    try:
        cmd = [PY, "-m", "referee", "tournament", *bots, "--legs", "1", "--finalists", "0"]
        cmd += ["--rounds", str(rounds), "--seed", "1", "-j", "2", "--out", str(tmp / "out")]
        done = subprocess.run(
            [*cmd, "--json", "--quiet"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=ENV,
            timeout=1800,
        )
        if done.returncode != 0:
            rep.skip(what, f"tournament exited {done.returncode}: {done.stderr.strip()[-300:]}")
            return
        timing = json.loads(done.stdout)["timing"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cpu = timing["cpu"]
    total = cpu["total_s"]
    parts = [
        ("bots thinking", cpu["bots_thinking_s"]),
        ("bot start-up (interpreter, imports, sandbox)", cpu["bots_startup_s"]),
        ("referee rounds (replay records included)", cpu["referee_rounds_s"]),
        ("referee set-up (spawn, handshake)", cpu["referee_setup_s"]),
        ("referee scoring and teardown", cpu["referee_finish_s"]),
        ("workers' own (imports, jobs, between matches)", cpu["workers_other_s"]),
        ("coordinator", cpu["coordinator_s"]),
    ]
    split = "; ".join(f"{name} {v:.1f} s ({v / total:.0%})" for name, v in parts if v is not None)
    share = cpu["bots_thinking_share"]
    matches = cpu["matches"]
    rep.add(
        Row(
            f"{what}: the bots' thinking / all CPU ({matches} matches of {rounds:,} rounds, -j 2)",
            f"{share:.0%} of {total:.1f} s CPU in {timing['wall_s']:.0f} s: {split}; "
            f"referee {cpu['referee_rounds_s'] / (matches * rounds) * 1e6:.0f} us a round, "
            f"bots {cpu['bots_thinking_s'] / (2 * matches * rounds) * 1e6:.0f} us a move",
            ">= 80%",
            "n/a (--quick)" if args.quick else judge(share >= 0.8),
        )
    )


def _one_cpu_match(rep: Report, what: str) -> None:
    """What -j 2 on two CPUs gives each match: one CPU. The C floor and the referee
    each confined to one, against the same two on the whole machine."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return
    one = {cpus[0]}
    bot = [str(CBOT)]
    pinned = FLOORS["floor-pinned"]
    slices = ["-S", str(BOT_SLICE_NS)]
    tmp = Path(tempfile.mkdtemp(prefix="bench-1cpu-"))
    replay = str(tmp / "match.jsonl")  # a league's matches write replays
    try:
        got = alternate(
            {
                "floor-1cpu": lambda: run_floor(bot, bot, 10_000, cpus=one)["rounds_per_s"],
                # As the referee's bots do on one CPU (Match._set_bot_slices).
                "floor-1cpu-slices": lambda: run_floor(bot, bot, 10_000, slices, cpus=one)[
                    "rounds_per_s"
                ],
                "referee-1cpu": lambda: run_referee(bot, bot, 10_000, replay, cpus=one)["rate"],
                "floor-pinned": lambda: run_floor(bot, bot, 10_000, pinned)["rounds_per_s"],
                "referee": lambda: run_referee(bot, bot, 10_000, replay)["rate"],
            },
            3,
            "one match on one CPU",
        )
    except BenchError as exc:
        rep.skip(f"{what}: one match on one CPU", str(exc))
        return
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    floor = max(med["floor-1cpu"], med["floor-1cpu-slices"])  # the fastest, as elsewhere
    rep.add(
        Row(
            f"{what}: one match confined to one CPU, as -j 2 places each on two CPUs",
            f"referee {med['referee-1cpu']:,.0f}/s, C floor {floor:,.0f}/s "
            f"({med['referee-1cpu'] / floor:.2f}x; the floor's bots with the referee's "
            f"short time slices {med['floor-1cpu-slices']:,.0f}/s, without "
            f"{med['floor-1cpu']:,.0f}/s); on the whole machine "
            f"referee {med['referee']:,.0f}/s, C floor {med['floor-pinned']:,.0f}/s: two "
            f"confined matches play {2 * med['referee-1cpu'] / med['referee']:.2f}x the "
            f"rounds of one match alone, two confined C floors "
            f"{2 * floor / med['floor-pinned']:.2f}x those of one floor alone (the most "
            f"-j 2 / -j 1 can give when nothing is lost between matches; 10,000 rounds, "
            f"replay written)",
        )
    )


CLUSTER_START_TIMEOUT = 60.0


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, ...)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _descendants(root: int) -> dict[int, str]:
    """Every live descendant of ``root`` (whatever its session) with its start time,
    so a process killed later is the same one, not a reused pid."""
    children: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _proc_stat(int(entry.name))
        if fields is None or fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        starts[int(entry.name)] = fields[19]
    found: dict[int, str] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in found and pid in starts:
            found[pid] = starts[pid]
            todo += children.get(pid, [])
    return found


def _still_running(pid: int, start: str) -> bool:
    fields = _proc_stat(pid)
    return fields is not None and fields[0] != "Z" and fields[19] == start


class LoopbackCluster:
    """A real Dask scheduler and workers on 127.0.0.1, each in a session of its own
    (a terminal's Ctrl-C reaches only this script, whose ``finally`` stops them) and
    each worker with its own TMPDIR and bot cache under ``base``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.address = ""
        self.client: Any = None

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        home = self.base / name
        (home / "tmp").mkdir(parents=True)
        with open(home / "process.log", "wb") as log:
            self.procs[name] = subprocess.Popen(
                [PY, "-m", *args],
                cwd=home,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def _log_tail(self, name: str) -> str:
        try:
            text = (self.base / name / "process.log").read_text(errors="replace")
        except OSError:
            return ""
        return " ".join(text.split())[-300:]

    def _check_alive(self, name: str) -> None:
        proc = self.procs[name]
        if proc.poll() is not None:
            raise BenchError(f"{name} exited {proc.returncode}: {self._log_tail(name)}")

    def start_scheduler(self, client_cls: Callable[..., Any]) -> None:
        info = self.base / "scheduler" / "scheduler.json"
        self._spawn(
            "scheduler",
            ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(info)],
            ENV,
        )  # fmt: skip
        deadline = time.monotonic() + CLUSTER_START_TIMEOUT
        while not info.exists() or not info.read_text().strip().endswith("}"):
            self._check_alive("scheduler")
            if time.monotonic() > deadline:
                raise BenchError("the Dask scheduler did not start")
            time.sleep(0.05)
        self.address = json.loads(info.read_text())["address"]
        self.client = client_cls(self.address, timeout=CLUSTER_START_TIMEOUT, set_as_default=False)

    def start_worker(self, name: str) -> None:
        home = self.base / name
        env = {**ENV, "TMPDIR": str(home / "tmp"), "REFEREE_CLUSTER_CACHE": str(home / "cache")}
        self._spawn(
            name,
            ["distributed.cli.dask_worker", self.address, "--nworkers", "1", "--nthreads", "1",
             "--no-nanny", "--no-dashboard", "--name", name, "--local-directory", str(home)],
            env,
        )  # fmt: skip

    def wait_for_workers(self, n: int) -> None:
        """Until the scheduler counts exactly ``n`` workers."""
        deadline = time.monotonic() + CLUSTER_START_TIMEOUT
        while len(self.client.nthreads()) != n:
            for name in self.running():
                self._check_alive(name)
            if time.monotonic() > deadline:
                raise BenchError(f"the scheduler did not reach {n} worker(s)")
            time.sleep(0.1)

    def running(self) -> list[str]:
        return [name for name, proc in self.procs.items() if proc.returncode is None]

    def stop(self, name: str) -> None:
        """SIGTERM its process group, SIGKILL it after 10 s; then whatever it started
        in sessions of their own (the workers' match processes, the bots), which
        should have gone with it, is killed if still there after 5 s."""
        proc = self.procs[name]
        if proc.returncode is not None:
            return
        kids = _descendants(proc.pid) if proc.poll() is None else {}
        try:
            if proc.returncode is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        finally:
            proc.wait()
            deadline = time.monotonic() + 5
            while any(_still_running(p, s) for p, s in kids.items()):
                if time.monotonic() > deadline:
                    for pid, start in kids.items():
                        if _still_running(pid, start):
                            try:
                                os.kill(pid, signal.SIGKILL)
                            except ProcessLookupError:
                                pass
                    break
                time.sleep(0.05)

    def close(self) -> None:
        """Stop everything, workers first, whatever fails on the way."""
        errors: list[BaseException] = []
        if self.client is not None:
            try:
                self.client.close(timeout=5)
            except Exception as exc:  # the processes must go all the same
                errors.append(exc)
        for name in reversed(list(self.procs)):
            try:
                self.stop(name)
            except BaseException as exc:  # Ctrl-C included: stop the others first
                errors.append(exc)
        for err in errors:
            if not isinstance(err, Exception):
                raise err
        if errors:
            print(f"  cluster: while stopping: {errors[0]!r}", flush=True)


def scenario_cluster(rep: Report, args: argparse.Namespace) -> None:
    """The tournament scenario's league played through ``--cluster`` on a loopback
    Dask scheduler with one, then two single-thread workers, alternately."""
    what = "cluster throughput, C bots"
    try:
        from distributed import Client
    except ImportError as exc:
        rep.skip(what, f"`import distributed` fails ({exc}): pip install 'referee[cluster]'")
        return
    help_text = _tournament_help()
    if help_text is None or "--cluster" not in help_text:
        rep.skip(what, "`referee tournament` has no --cluster option")
        return
    entrants, rounds = TOURNAMENT_LEAGUE[args.quick]
    reps = 1 if args.quick else 3
    tmp = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    cluster = LoopbackCluster(tmp)
    got: dict[str, list[float]] = {"1 worker": [], "2 workers": []}
    try:
        cluster.start_scheduler(Client)
        cluster.start_worker("w1")
        cluster.wait_for_workers(1)
        for i in range(reps):
            # A fresh second worker each time: its start-up (match process, bot
            # cache) is in every two-worker figure, as -j 2 pays for its workers.
            if i:
                cluster.stop(f"w2-{i}")
                cluster.wait_for_workers(1)
            got["1 worker"].append(run_tournament(None, entrants, rounds, tmp, cluster.address))
            cluster.start_worker(f"w2-{i + 1}")
            cluster.wait_for_workers(2)
            got["2 workers"].append(run_tournament(None, entrants, rounds, tmp, cluster.address))
            print(
                f"  cluster rep {i + 1}/{reps}: 1 worker {got['1 worker'][-1]:,.0f}, "
                f"2 workers {got['2 workers'][-1]:,.0f} matches/min",
                flush=True,
            )
    except (BenchError, OSError, subprocess.SubprocessError, ValueError, KeyError) as exc:
        rep.skip(what, str(exc))
        return
    finally:
        try:
            cluster.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    one, two = statistics.median(got["1 worker"]), statistics.median(got["2 workers"])
    league = f"{entrants * (entrants - 1) // 2} matches of {rounds:,} rounds"
    rep.add(Row(f"{what}: one Dask worker", f"{one:,.0f} matches/min ({league})"))
    rep.add(Row(f"{what}: two Dask workers", f"{two:,.0f} matches/min ({league})"))
    rep.add(
        Row(
            f"{what}: two workers / one",
            f"{two / one:.2f}x (scheduler and workers on 127.0.0.1, "
            "--nworkers 1 --nthreads 1 each)",
        )
    )


def scenario_iocaine(rep: Report, args: argparse.Namespace) -> None:
    what = "Iocaine sample bot, time per move"
    script = ROOT / "sample_bots" / "python" / "iocaine.py"
    if not script.exists() or "--selftest-timing" not in script.read_text():
        rep.skip(what, "sample_bots/python/iocaine.py --selftest-timing is not there yet")
        return
    rounds = 2_000 if args.quick else 10_000
    done = subprocess.run(
        [PY, str(script), "--selftest-timing", str(rounds)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        rep.skip(what, f"selftest failed: {done.stderr.strip()[-300:]}")
        return
    text = done.stdout
    nums = {
        key: re.search(rf"{key} ([0-9.]+) us", text)
        for key in (
            "mean",
            "p99",
            "first-1000 mean",
            "last-1000 mean",
            "first-1000 cpu median",
            "last-1000 cpu median",
        )
    }
    if any(m is None for m in nums.values()):
        rep.add(Row(what, "unparsed output: " + " ".join(text.split())[:200]))
        return
    v = {k: float(m.group(1)) for k, m in nums.items() if m is not None}
    rep.add(
        Row(
            f"{what} ({rounds:,} rounds, in-process)",
            f"mean {v['mean']:.0f} us, p99 {v['p99']:.0f} us; first-1000 mean "
            f"{v['first-1000 mean']:.0f} us, last-1000 mean {v['last-1000 mean']:.0f} us; "
            f"CPU median first-1000 {v['first-1000 cpu median']:.0f} us, last-1000 "
            f"{v['last-1000 cpu median']:.0f} us",
        )
    )
    found = re.search(r"cpu median per 1000 rounds: ([0-9. ]+)", text)
    blocks = [float(x) for x in found.group(1).split()] if found else []
    pair = re.search(
        r"interleaved cpu median: rounds (\S+) ([0-9.]+) us\s+rounds (\S+) ([0-9.]+) us", text
    )
    if pair is None or len(blocks) < 4:
        # --quick plays 2,000 rounds: too few for a full window and a late state.
        rep.add(Row(f"{what}: growth over the match", f"not measured in {rounds:,} rounds"))
        return
    # The verdict: the bot as it was after 1,000 rounds (every window full: the
    # longest is 1,000 rounds) against the bot near the end, each replaying its next
    # 200 turns from a copy, the two timed in turns. Both are measured in the same
    # moments, so the host's drift during the match cannot pass for growth (the
    # per-block trend below, measured as the match went, read +22.7% in a run whose
    # last blocks fell into the host's slow minutes, and +1.0% in the next).
    early, late = float(pair.group(2)), float(pair.group(4))
    growth = late / early - 1
    steady = blocks[1:]
    slope = statistics.linear_regression(range(len(steady)), steady).slope
    trend = slope * (len(steady) - 1) / statistics.mean(steady)
    rep.add(
        Row(
            f"{what}: growth over the match",
            f"CPU median per move, interleaved: rounds {pair.group(1)} {early:.1f} us, "
            f"rounds {pair.group(3)} {late:.1f} us ({growth:+.1%}); per 1,000-round block "
            f"as the match went: first {blocks[0]:.0f} us (windows filling), then "
            f"{min(steady):.0f}-{max(steady):.0f} us (fitted trend {trend:+.1%})",
            "under +10%",
            judge(growth < 0.10),
        )
    )


def scenario_bytecodes(rep: Report, args: argparse.Namespace) -> None:
    """Python bytecodes executed per round: unlike time, no other load moves it,
    so it tracks the loop's cost from run to run on a noisy machine."""
    what = "Python bytecodes per round in the round loop, C bots"
    done = subprocess.run(
        [PY, str(BENCH / "ablate.py"), "--opcodes", "--variants", "base,bare-trio"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=600,
    )
    counts = dict(re.findall(r"^(base|bare-trio)\s+([0-9,]+)\s*$", done.stdout, re.M))
    if done.returncode != 0 or len(counts) != 2:
        rep.skip(what, f"ablate.py --opcodes failed: {(done.stderr or done.stdout)[-300:]}")
        return
    base, bare = (int(counts[k].replace(",", "")) for k in ("base", "bare-trio"))
    rep.add(
        Row(
            what,
            f"{base:,} (the smallest correct trio loop for the same exchange, without "
            f"replay or game rules: {bare:,})",
        )
    )


PROFILE_CHILD = r"""
import cProfile, io, json, pstats, sys, time
import trio
from referee.match import BotSpec, MatchConfig, run_match

rounds, replay, cbot = int(sys.argv[1]), sys.argv[2], sys.argv[3]
bots = [BotSpec([cbot]), BotSpec([cbot])]
cfg = MatchConfig(rounds=rounds, seed=1, replay=replay)
# Unprofiled first: CPU per round without the profiler's own overhead.
c0, w0 = time.process_time(), time.monotonic()
trio.run(run_match, bots, cfg)
cpu, wall = time.process_time() - c0, time.monotonic() - w0
# Then twice under cProfile: with a CPU clock (where the referee burns CPU) and
# with the default wall clock (where it waits, e.g. a write() that wakes a bot).
tables = {}
for name, timer in (("cpu", time.process_time), ("wall", None)):
    prof = cProfile.Profile(timer) if timer else cProfile.Profile()
    prof.enable()
    trio.run(run_match, bots, cfg)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
    tables[name] = buf.getvalue()
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "tables": tables}))
"""


def _trim_pstats(text: str, root: Path) -> str:
    """The table part of a pstats listing, with this checkout's path cut off."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls")), 0)
    out = [ln.replace(str(root) + os.sep, "") for ln in lines[start:] if ln.strip()]
    # Library paths would name this machine's directories: keep the file name only.
    return "\n".join(re.sub(r"\S*/site-packages/", "", ln) for ln in out)


def scenario_profile(rep: Report, args: argparse.Namespace) -> None:
    what = "referee CPU per round, C bots, in-process"
    rounds = args.rounds
    tmp = Path(tempfile.mkdtemp(prefix="bench-prof-"))
    try:
        done = subprocess.run(
            [PY, "-c", PROFILE_CHILD, str(rounds), str(tmp / "match.jsonl"), str(CBOT)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=ENV,
            timeout=900,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if done.returncode != 0:
        rep.skip(what, f"profile run failed: {done.stderr.strip()[-300:]}")
        return
    out = json.loads(done.stdout.strip().splitlines()[-1])
    us = out["cpu_s"] / rounds * 1e6
    rep.add(
        Row(
            f"{what} ({rounds:,} rounds)",
            f"{us:.0f} us CPU per round; {out['wall_s'] / rounds * 1e6:.0f} us wall per round",
        )
    )
    for name, title in (
        ("cpu", "Top 15 functions by tottime, CPU clock (time.process_time)"),
        ("wall", "Top 15 functions by tottime, wall clock (cProfile's default)"),
    ):
        table = _trim_pstats(out["tables"][name], ROOT)
        rep.sections.append((f"{title}, one {rounds:,}-round C-vs-C match", table))
        print(f"  {title}:\n{table}")


RUNNERS: dict[str, Callable[[Report, argparse.Namespace], None]] = {
    "floor-smoke": scenario_floor_smoke,
    "cc": scenario_cc,
    "py": scenario_py,
    "sdk": scenario_sdk,
    "rss": scenario_rss,
    "startup": scenario_startup,
    "kaggle": scenario_kaggle,
    "tournament": scenario_tournament,
    "league": scenario_league,
    "cluster": scenario_cluster,
    "iocaine": scenario_iocaine,
    "profile": scenario_profile,
    "bytecodes": scenario_bytecodes,
}


# -- the report ---------------------------------------------------------------


def machine() -> list[str]:
    u = platform.uname()
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = []
    for mod in ("trio", "msgspec"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} missing")
    return [
        f"- Date: {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {u.system} {u.release} {u.version} {u.machine}",
        f"- CPU: {cpu}, {os.cpu_count()} logical CPUs",
        f"- Python: {platform.python_implementation()} {platform.python_version()}; "
        + ", ".join(versions),
        f"- Containment of the referee rows (the default, `--sandbox auto`): {_layer()}",
        "- Idle CPUs kept polling (the referee's default, and every floor's -q): "
        + ("yes" if IDLE_POLL else "no: /dev/cpu_dma_latency cannot be opened by this user"),
    ]


def _layer() -> str:
    """The layer `--sandbox auto` picks here: its cost per round is in every row."""
    done = subprocess.run(
        [PY, "-c", "from referee import sandbox; print(sandbox.choose_layer('auto').description)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
    )
    return done.stdout.strip() if done.returncode == 0 else "unknown (no layer passed its test)"


def load() -> str:
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def render(rep: Report, args: argparse.Namespace, load_before: str) -> str:
    lines = [
        f"Measured by `bench/run.py{' --quick' if args.quick else ''}` "
        f"({args.reps} alternating repetitions per comparison, medians).",
        "",
        *machine(),
        # Other work on a 2-CPU machine moves every figure; the load says how much.
        f"- Load average (1/5/15 min) at start: {load_before}; at end: {load()}",
        "",
        "| measure | result | target | verdict |",
        "|---|---|---|---|",
    ]
    for r in rep.rows:
        cells = [c.replace("|", "\\|") for c in (r.what, r.measured, r.target, r.verdict)]
        lines.append("| " + " | ".join(cells) + " |")
    for title, text in rep.sections:
        lines += ["", f"{title}:", "", "```", text, "```"]
    return "\n".join(lines)


def write_doc(body: str) -> None:
    block = f"{BEGIN}\n{body}\n{END}"
    if DOC.exists():
        text = DOC.read_text()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            tail = rest.split(END, 1)[1]
            DOC.write_text(head + block + tail)
            return
        DOC.write_text(text.rstrip("\n") + "\n\n## Latest results\n\n" + block + "\n")
        return
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(
        "# Performance\n\n`make bench` (or `python bench/run.py`) measures the referee "
        "against a C floor and a peer.\n\n## Latest results\n\n" + block + "\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--quick", action="store_true", help="smoke run: 2 repetitions, no 1,000,000 rounds"
    )
    p.add_argument("--only", metavar="NAMES", help=f"comma list of: {', '.join(SCENARIOS)}")
    p.add_argument("--reps", type=int, help="alternating repetitions (default 5, quick 2)")
    p.add_argument("--rounds", type=int, help="rounds per timed match (default 10000)")
    p.add_argument("--no-write", action="store_true", help="do not update docs/performance.md")
    args = p.parse_args(argv)
    args.reps = args.reps or (2 if args.quick else 5)
    args.rounds = args.rounds or 10_000
    if args.only:
        chosen = [s.strip() for s in args.only.split(",") if s.strip()]
        unknown = [s for s in chosen if s not in RUNNERS]
        if unknown:
            p.error(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    else:
        chosen = [s for s in SCENARIOS if s != "floor-smoke"]
    build()
    rep = Report()
    load_before = load()
    t0 = time.monotonic()
    for name in chosen:
        print(f"== {name}", flush=True)
        t = time.monotonic()
        try:
            RUNNERS[name](rep, args)
        except BenchError as exc:
            rep.skip(name, str(exc))
        print(f"   ({time.monotonic() - t:.1f} s)", flush=True)
    body = render(rep, args, load_before)
    print()
    print(body)
    print(f"\nbench: {time.monotonic() - t0:.0f} s in all")
    if not args.no_write:
        write_doc(body)
        print(f"bench: results written to {DOC.relative_to(ROOT)}")
    # Only a broken floor is an error: every other scenario may skip with a reason.
    return (
        1
        if "floor-smoke" in chosen
        and not any(r.what.startswith("floor smoke") for r in rep.rows if r.verdict != "skipped")
        else 0
    )


if __name__ == "__main__":
    sys.exit(main())
