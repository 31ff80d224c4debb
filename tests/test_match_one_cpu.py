"""A referee with a single CPU writes its replay records in batches and has its
bots ask for short time slices (speed only, referee/match.py RECORD_BATCH and
BOT_SLICE_NS): the replay holds the same records in step order, events in their
place, and verifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from conftest import ROOT, TEST_BOTS, processes_mentioning, run_cli

from referee import sandbox
from referee.match import BOT_SLICE_NS, RECORD_BATCH, BotSpec, Match, MatchConfig

PY = sys.executable
ALL_CPUS = os.sched_getaffinity(0)
ONE_CPU = {min(ALL_CPUS)}


def _kinds_and_steps(path: Path) -> list[tuple[str, int | None]]:
    return [(r["type"], r.get("n")) for r in map(json.loads, path.read_text().splitlines())]


def test_records_stay_in_step_order_around_a_disqualification(tmp_path, bot_copy) -> None:
    faulty, steady = bot_copy("faulty.py"), bot_copy("steady.py")
    replay = tmp_path / "match.jsonl"
    # The bot exits when round 100 arrives, with dozens of records still batched.
    done = subprocess.run(
        [
            PY, "-m", "referee", "match", f"{PY} {faulty} exit 100", f"{PY} {steady}",
            "--rounds", "300", "--seed", "5", "--replay", str(replay), "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        preexec_fn=lambda: os.sched_setaffinity(0, ONE_CPU),
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stderr
    verdict = json.loads(done.stdout)["seats"][0]["verdict"]
    assert verdict["status"] == "crash" and verdict["round"] == 100 and verdict["disqualified"]
    records = _kinds_and_steps(replay)
    assert records[0][0] == "header" and records[-1][0] == "footer"
    assert records[1:-1] == [("step", n) for n in range(1, 101)] + [("event", 100)]
    assert run_cli("verify", str(replay)).returncode == 0
    assert processes_mentioning(str(tmp_path)) == []


def _play_spying(
    cpus: set[int], steady: Path, replay: Path, rounds: int = 200, spread_at: int | None = None
) -> list[int]:
    """Play a match with the referee (and so its bots) on ``cpus``, widened to every
    CPU at the first progress report at or after step ``spread_at``; returns, for
    each step record in the order written, how many steps the rules were ahead."""
    match: Match

    def progress(step: int, total: int, state: Any) -> None:
        if spread_at is not None and step >= spread_at:
            match.spread(ALL_CPUS)

    cfg = MatchConfig(rounds=rounds, replay=str(replay))
    match = Match([BotSpec(command=[PY, str(steady)])] * 2, cfg, progress=progress)
    write = match.writer.write
    ahead: list[int] = []

    def spy(record: Any) -> bytes:
        if record.__class__.__name__ == "Step":
            ahead.append(match._state.step - record.n)
        return write(record)

    match.writer.write = spy  # type: ignore[method-assign]
    os.sched_setaffinity(0, cpus)
    try:
        outcome = trio.run(match.run)
    finally:
        os.sched_setaffinity(0, ALL_CPUS)
    assert outcome.result is not None and run_cli("verify", str(replay)).returncode == 0
    steps = [n for kind, n in _kinds_and_steps(replay) if kind == "step"]
    assert steps == list(range(1, rounds + 1))
    return ahead


def test_one_cpu_batches_the_records_and_two_write_each_round(tmp_path, bot_copy) -> None:
    steady = bot_copy("steady.py")
    assert max(_play_spying(ONE_CPU, steady, tmp_path / "one.jsonl")) >= RECORD_BATCH
    if len(ALL_CPUS) < 2:
        pytest.skip("one CPU only: the record-by-record case needs two")
    assert max(_play_spying(ALL_CPUS, steady, tmp_path / "all.jsonl")) == 1


@pytest.mark.skipif(len(ALL_CPUS) < 2, reason="needs a second CPU to spread to")
def test_a_match_spread_mid_batch_writes_the_batch_then_each_round(tmp_path, bot_copy) -> None:
    # At the progress report of step 256 the batch holds the records since step 224.
    ahead = _play_spying(ONE_CPU, bot_copy("steady.py"), tmp_path / "m.jsonl", 600, 256)
    assert max(ahead[:200]) >= RECORD_BATCH
    assert set(ahead[300:]) == {1}


def _slice_of(task: str) -> str:
    """The time slice of /proc/<task> ("<pid>" or "<pid>/task/<tid>") in ns."""
    for line in Path(f"/proc/{task}/sched").read_text().splitlines():
        if line.startswith("se.slice"):
            return line.split(":")[1].strip()
    return "unknown"


# A child at nice 3 with a second thread; it says "ready" once both are so.
CHILD = """
import os, sys, threading, time
os.nice(3)
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
"""


def _slices_taken(ns: int) -> tuple[int, set[str], int]:
    """Ask for slices of ``ns`` for a child with two threads; returns how many
    threads took the request, the slices they then show, and the child's nice."""
    child = subprocess.Popen([PY, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        took = sandbox.slice_tree(child.pid, ns)
        tasks = Path(f"/proc/{child.pid}/task").iterdir()
        return (
            took,
            {_slice_of(f"{child.pid}/task/{t.name}") for t in tasks},
            os.getpriority(os.PRIO_PROCESS, child.pid),
        )
    finally:
        child.kill()
        child.wait()


KERNEL_TAKES_SLICES = _slices_taken(300_000)[1] == {"300000"}
needs_slices = pytest.mark.skipif(
    not KERNEL_TAKES_SLICES, reason="this kernel does not take time slice requests (Linux 6.12+)"
)


@needs_slices
def test_a_slice_request_reaches_every_thread_and_keeps_the_nice_value() -> None:
    # The child adds 3 to the nice value it inherits (pytest may itself run niced).
    child_nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 3)
    assert _slices_taken(300_000) == (2, {"300000"}, child_nice)
    took, slices, nice = _slices_taken(0)  # 0: the kernel's default
    assert took == 2 and "300000" not in slices and len(slices) == 1 and nice == child_nice


def _probe_slices(tmp_path: Path, cpus: set[int]) -> list[str]:
    """The time slice each probe bot ran its first turn in, in a match on ``cpus``."""
    replay = tmp_path / f"probe{len(cpus)}.jsonl"
    bot = f"{PY} {TEST_BOTS / 'placement_probe.py'} cpus"
    done = subprocess.run(
        [PY, "-m", "referee", "match", bot, bot, "--rounds", "20", "--replay", str(replay)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        preexec_fn=lambda: os.sched_setaffinity(0, cpus),
    )
    assert done.returncode == 0, done.stderr
    logs = [tmp_path / f"probe{len(cpus)}.seat{seat}.stderr.log" for seat in (0, 1)]
    return [log.read_text().split()[3] for log in logs]


@needs_slices
def test_bots_sharing_one_cpu_run_in_short_slices_and_others_in_the_default(tmp_path) -> None:
    assert _probe_slices(tmp_path, ONE_CPU) == [str(BOT_SLICE_NS)] * 2
    if len(ALL_CPUS) < 2:
        pytest.skip("one CPU only: the default case needs two")
    assert str(BOT_SLICE_NS) not in _probe_slices(tmp_path, ALL_CPUS)
