"""A referee with a single CPU writes its replay records in batches (speed only,
referee/match.py RECORD_BATCH): the replay holds the same records in step order,
events in their place, and verifies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from conftest import ROOT, processes_mentioning, run_cli

from referee.match import RECORD_BATCH, BotSpec, Match, MatchConfig

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
