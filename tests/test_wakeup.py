"""Idle CPUs kept polling during a match (referee/wakeup.py), and the referee's
own process kept to one thread while it plays."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest
import trio
from conftest import ROOT, TEST_BOTS, match_json

from referee.match import BotSpec, MatchConfig, run_match
from referee.wakeup import DEVICE, IdlePollHold, current_limit_us

# Timings and placements mean something only with no other test beside them.
pytestmark = pytest.mark.alone

STEADY = TEST_BOTS / "steady.py"
CAN_HOLD = os.access(DEVICE, os.W_OK)
NOBODY_ASKS = 2_000_000_000  # the kernel's value when no process holds a request


def test_the_hold_writes_a_zero_limit_and_keeps_the_file_open(tmp_path):
    # A plain file stands in for the device: what is written, and when it is closed.
    device = tmp_path / "latency"
    device.write_bytes(b"")
    hold = IdlePollHold(str(device))
    assert hold.acquire() is True and hold.held
    assert device.read_bytes() == struct.pack("=i", 0)
    fd = hold._fd
    assert fd is not None and os.get_inheritable(fd) is False  # bots never inherit it
    hold.release()
    assert not hold.held
    with pytest.raises(OSError):
        os.fstat(fd)  # closed: that is what ends the request
    hold.release()  # a second release is harmless


def test_without_the_device_the_hold_is_refused_quietly(tmp_path):
    hold = IdlePollHold(str(tmp_path / "missing"))
    assert hold.acquire() is False
    assert not hold.held
    hold.release()


@pytest.mark.skipif(not CAN_HOLD, reason=f"{DEVICE} is not writable by this user")
def test_the_kernel_applies_the_limit_while_held():
    before = current_limit_us()
    if before != NOBODY_ASKS:
        pytest.skip(f"another process holds a latency request ({before} us)")
    with IdlePollHold() as hold:
        assert hold.held
        assert current_limit_us() == 0
    assert current_limit_us() == NOBODY_ASKS


def _limits_during_a_match(idle_poll: bool) -> tuple[list[int | None], bool]:
    seen: list[int | None] = []
    bots = [BotSpec([sys.executable, str(STEADY)]), BotSpec([sys.executable, str(STEADY)])]
    cfg = MatchConfig(rounds=600, seed=3, idle_poll=idle_poll)
    outcome = trio.run(run_match, bots, cfg, lambda step, total, _: seen.append(current_limit_us()))
    assert outcome.result.steps == 600
    return seen, outcome.idle_poll


@pytest.mark.skipif(not CAN_HOLD, reason=f"{DEVICE} is not writable by this user")
def test_a_match_holds_the_limit_while_it_plays_and_drops_it_after():
    if current_limit_us() != NOBODY_ASKS:
        pytest.skip("another process holds a latency request")
    seen, held = _limits_during_a_match(idle_poll=True)
    assert held is True
    assert seen and set(seen) == {0}, seen  # progress is reported every 256 rounds
    assert current_limit_us() == NOBODY_ASKS
    seen, held = _limits_during_a_match(idle_poll=False)
    assert held is False
    assert seen and set(seen) == {NOBODY_ASKS}, seen


def test_the_cli_reports_whether_idle_cpus_were_kept_polling():
    bot = f"{sys.executable} {STEADY}"
    common = (bot, bot, "--rounds", "20", "--seed", "1", "--no-replay")
    assert match_json(*common)["referee"]["idle_poll"] is CAN_HOLD
    assert match_json(*common, "--no-idle-poll")["referee"]["idle_poll"] is False


def test_numpy_starts_no_worker_threads_in_the_referee():
    # OpenBLAS's worker thread busy-waits after numpy's import and took a CPU from
    # the bots for the first thousands of rounds of every match.
    code = (
        "import os, referee, numpy; "
        "numpy.ones((64, 64)) @ numpy.ones((64, 64)); "
        "print(len(os.listdir('/proc/self/task')))"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


PROBE = TEST_BOTS / "placement_probe.py"
needs_device = pytest.mark.skipif(
    not (CAN_HOLD and os.access(DEVICE, os.R_OK)), reason=f"{DEVICE} is not usable here"
)


# The bots now run as an unprivileged uid of their own (issue 27), and the device is
# root's: the probe reads "latunknown". Until the test process itself observes the
# limit during play, these two are known failures when the referee runs as root.
@pytest.mark.xfail(
    os.geteuid() == 0, reason="the bot's own uid cannot read the device", strict=False
)
@needs_device
def test_a_bot_sees_idle_cpus_kept_polling_unless_asked_not_to():
    if current_limit_us() != NOBODY_ASKS:
        pytest.skip("another process holds a latency request")
    bot = f"{sys.executable} {PROBE} latency"
    common = (bot, bot, "--rounds", "5", "--no-replay", "--sandbox", "basic")
    seen = [s["name"] for s in match_json(*common)["seats"]]
    assert seen == ["lat0", "lat0"]
    seen = [s["name"] for s in match_json(*common, "--no-idle-poll")["seats"]]
    assert seen == [f"lat{NOBODY_ASKS}"] * 2


@pytest.mark.parametrize("cluster", [False, True])
def test_a_league_keeps_idle_cpus_polling_only_while_cpus_are_left_over(cluster):
    from referee.tournament.command import idle_poll_for

    cpus = len(os.sched_getaffinity(0))
    assert idle_poll_for(cpus, cluster) is False
    assert idle_poll_for(cpus + 1, cluster) is False
    if cpus > 1:  # (a league runs at least one match at a time)
        assert idle_poll_for(cpus - 1, cluster) is (not cluster)


# The bots now run as an unprivileged uid of their own (issue 27), and the device is
# root's: the probe reads "latunknown". Until the test process itself observes the
# limit during play, these two are known failures when the referee runs as root.
@pytest.mark.xfail(
    os.geteuid() == 0, reason="the bot's own uid cannot read the device", strict=False
)
@needs_device
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_league_matches_hold_the_limit_with_one_job_and_not_with_one_per_cpu(tmp_path):
    if current_limit_us() != NOBODY_ASKS:
        pytest.skip("another process holds a latency request")
    bot = f"{sys.executable} {PROBE} latency"
    cpus = len(os.sched_getaffinity(0))
    halt = f"lat{NOBODY_ASKS}"
    for jobs, extra, expected in ((1, [], "lat0"), (cpus, [], halt), (1, ["--no-idle-poll"], halt)):
        out = tmp_path / f"j{jobs}{''.join(extra)}"
        done = subprocess.run(
            [sys.executable, "-m", "referee", "tournament", bot, bot, "--legs", "1"]
            + ["--finalists", "0", "--rounds", "5", "--sandbox", "basic", "-j", str(jobs)]
            + ["--out", str(out), "--quiet", *extra],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        replays = sorted((out / "replays").glob("*.jsonl"))
        assert replays
        for replay in replays:
            header = json.loads(replay.read_text().splitlines()[0])
            assert [b["name"] for b in header["bots"]] == [expected, expected], (jobs, header)
