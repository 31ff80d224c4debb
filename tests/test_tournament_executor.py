"""The process executor: a worker killed in the middle of a match is replaced and
the match is played again from scratch."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import msgspec
import trio
from conftest import has_content, submit_then

from referee.match import MatchConfig
from referee.tournament.executor import ProcessExecutor, WorkerInfo
from referee.tournament.worker import Job

SLOW_BOT = """\
import json, sys, time
hello = json.loads(sys.stdin.readline())
print(json.dumps({"name": "slow"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "end":
        break
    time.sleep(0.005)
    print(json.dumps({"round": msg["round"], "real_move": "rock"}), flush=True)
"""


def test_a_killed_worker_is_restarted_and_its_match_rerun(tmp_path: Path) -> None:
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    replay = tmp_path / "m1.jsonl"
    cfg = MatchConfig(rounds=200, seed=1, replay=str(replay), log_dir=str(tmp_path / "logs"))
    job = Job(
        id="m1",
        bots=[{"command": [sys.executable, str(bot)], "label": f"slow{k}"} for k in (1, 2)],
        cfg=msgspec.to_builtins(cfg),
    )

    async def main() -> tuple[dict[str, Any], WorkerInfo, int]:
        ex = ProcessExecutor(1, tmp_path / "logs")
        killed: list[int] = []

        async def kill_worker() -> None:
            victim = ex.workers()[0].pid
            assert victim is not None
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

        try:
            # Into the match (the worker has started writing the replay), kill it.
            outcome = await submit_then(ex, job, lambda: has_content(replay), kill_worker)
            return outcome, ex.workers()[0], killed[0]
        finally:
            await ex.aclose()

    outcome, info, victim = trio.run(main)
    assert outcome.steps == 200 and outcome.reason == "complete"
    assert info.restarts == 1 and info.done == 1 and info.pid != victim
    assert [s.stats["faulted_rounds"] for s in outcome.seats] == [0, 0]
