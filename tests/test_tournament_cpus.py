"""Local leagues give each worker's match a share of the CPUs while every worker
has a match (referee/tournament/executor.py: cpu_shares), and the whole machine
to a match that runs alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, TEST_BOTS, has_content, submit_then

from referee.match import BOT_SLICE_NS
from referee.replay import iter_lines
from referee.tournament.executor import cpu_shares

# Timings and placements mean something only with no other test beside them.
pytestmark = pytest.mark.alone

PROBE = TEST_BOTS / "placement_probe.py"
CPUS = sorted(os.sched_getaffinity(0))


def test_shares_are_disjoint_contiguous_and_cover_every_cpu():
    assert cpu_shares([0, 1], 2) == [[0], [1]]
    assert cpu_shares([3, 1, 2, 0], 2) == [[0, 1], [2, 3]]
    assert cpu_shares(list(range(8)), 3) == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert cpu_shares([0, 2, 4], 3) == [[0], [2], [4]]


def test_nothing_is_shared_out_for_one_worker_or_more_workers_than_cpus():
    assert cpu_shares([0, 1, 2, 3], 1) is None
    assert cpu_shares([0, 1], 3) is None
    assert cpu_shares([0], 2) is None


def _names(out: Path) -> dict[str, list[str]]:
    """Each match's bots' names (``cpus<list>``), by match id."""
    got = {}
    for replay in sorted((out / "replays").glob("*.jsonl*")):  # gzip or plain
        header = json.loads(next(iter_lines(replay)))
        got[replay.name.split(".")[0]] = [b["name"] for b in header["bots"]]
    return got


def _league(out: Path, *extra: str) -> dict[str, list[str]]:
    bot = f"{sys.executable} {PROBE} cpus"
    done = subprocess.run(
        [sys.executable, "-m", "referee", "tournament", bot, bot, bot, "--legs", "1"]
        + ["--finalists", "2", "--best-of", "1", "--rounds", "5", "--finals-rounds", "5"]
        + ["--sandbox", "basic", "-j", "2", "--out", str(out), "--quiet"]
        + ["--replay-format", "jsonl", *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return _names(out)


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to share out")
def test_busy_workers_keep_to_their_share_and_a_lone_final_gets_every_cpu(tmp_path):
    names = _league(tmp_path / "league")
    everything = "cpus" + "-".join(map(str, CPUS))
    shares = {"cpus" + "-".join(map(str, s)) for s in cpu_shares(CPUS, 2) or []}
    pool = {k: v for k, v in names.items() if k.startswith("pool-")}
    assert len(pool) == 3 and len(names) == 4, names
    for seats in pool.values():
        # A match's referee and both its bots keep to one share (or, for the last
        # pool match if the other worker was already idle, to none). The probe names
        # itself as it starts, so a spread that lands between the two bots' starts
        # shows as a share for the first seat and every CPU for the second.
        assert all(seat in shares | {everything} for seat in seats), names
        assert seats[0] == seats[1] or seats[1] == everything, names
    # The first two to start did so with all three matches (or two) still to play.
    assert sum(seats[0] in shares for seats in pool.values()) >= 2, names
    # The final is played alone: the whole machine is its.
    (final,) = (v for k, v in names.items() if k.startswith("final-"))
    assert final == [everything, everything], names


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to share out")
def test_no_pin_cpus_leaves_every_match_on_every_cpu(tmp_path):
    names = _league(tmp_path / "league", "--no-pin-cpus")
    everything = "cpus" + "-".join(map(str, CPUS))
    assert names and all(v == [everything, everything] for v in names.values()), names


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to allow fewer of")
def test_the_default_jobs_count_the_cpus_this_process_may_use(tmp_path):
    # Started on one CPU of several (as under taskset or a cpuset), the league runs
    # one worker, not one per CPU of the machine.
    bot = f"{sys.executable} {PROBE} cpus"
    out = tmp_path / "league"
    done = subprocess.run(
        [sys.executable, "-m", "referee", "tournament", bot, bot, bot, "--legs", "1"]
        + ["--finalists", "0", "--rounds", "5", "--sandbox", "basic"]
        + ["--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        preexec_fn=lambda: os.sched_setaffinity(0, {CPUS[0]}),
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (out / "logs").glob("worker-*.log")) == ["worker-1.log"]
    names = _names(out)
    assert len(names) == 3 and all(v == [f"cpus{CPUS[0]}"] * 2 for v in names.values()), names


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to share out")
def test_spread_widens_a_confined_match_in_progress_to_every_cpu(tmp_path):
    # A worker's match starts on its share; when another worker runs out of work
    # the coordinator spreads it, and the bots (inside their sandbox) see every CPU.
    import msgspec
    import trio

    from referee.match import MatchConfig
    from referee.tournament.executor import ProcessExecutor
    from referee.tournament.worker import Job

    logs = tmp_path / "logs"
    cfg = MatchConfig(rounds=150, seed=1, replay=str(tmp_path / "m.jsonl"), log_dir=str(logs))
    bot = [sys.executable, str(PROBE), "cpus", "5"]  # 5 ms a move: about a second
    job = Job(
        id="m",
        bots=[{"command": bot, "label": f"probe{k}"} for k in (1, 2)],
        cfg=msgspec.to_builtins(cfg),
        confine=True,
    )
    share = "-".join(map(str, (cpu_shares(CPUS, 2) or [[]])[0]))
    everything = "-".join(map(str, CPUS))
    replay = tmp_path / "m.jsonl"

    async def main() -> dict:
        ex = ProcessExecutor(2, logs)
        try:
            # Into the match (both bots have answered hello: the header is out), spread.
            return await submit_then(ex, job, lambda: has_content(replay), ex.spread)
        finally:
            await ex.aclose()

    outcome = trio.run(main)
    assert outcome.steps == 150 and outcome.reason == "complete"
    header = json.loads(replay.read_text().splitlines()[0])
    # Started on the worker's share (the name is taken at start) ...
    assert [b["name"] for b in header["bots"]] == [f"cpus{share}"] * 2, header["bots"]
    for seat in (0, 1):
        # ... and on every CPU by the end (the bot reports each change on stderr),
        # with the kernel's own time slice again.
        last = (logs / f"m.seat{seat}.stderr.log").read_text().splitlines()[-1].split()
        assert last[:2] == ["cpus", everything] and last[3] != str(BOT_SLICE_NS), last
