"""The server plays its matches at a lower CPU priority than itself (``ladder.nice``),
so its pages do not wait behind the bots: a real ``referee serve`` whose ladder bots
and a submitted bot's validation match report the nice value they were started at
(and, where the kernel groups processes by session, their session group's)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from serverkit import Server, wait_for

from referee.server.config import load_competition
from referee.tournament.config import ConfigError
from referee.tournament.worker import worker_command, worker_popen_args

PROBE = ROOT / "tests" / "bots" / "placement_probe.py"
NICE = 7
AUTOGROUPS = Path("/proc/sys/kernel/sched_autogroup_enabled").exists() and (
    Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
)

CONFIG = f"""
name = "nice"
game = "chaos"
seed = 3

[ladder]
rounds = 30
parallel = 1
validation_rounds = 20
nice = {NICE}

[registration]
mode = "open"

[limits]
handshake_timeout = 60.0

[[bot]]
name = "probe-a"
command = "python3 {PROBE} nice"

[[bot]]
name = "probe-b"
command = "python3 {PROBE} nice"
"""


def test_matches_run_at_ladder_nice_below_the_server(tmp_path: Path) -> None:
    config = tmp_path / "competition.toml"
    config.write_text(CONFIG)
    # The server inherits this process's nice value; its matches run NICE below it
    # (the kernel stops at 19).
    expected = min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE)
    # Where the kernel groups processes by session, each bot's session group takes
    # that nice value too (else the bots weigh as much as the server): as root at
    # once, before the bot runs; otherwise the kernel may defer an unprivileged
    # change (one per 100 ms machine-wide), so the bot may still see its default.
    group = {"none"} if not os.path.exists("/proc/self/autogroup") else {"0"}
    if AUTOGROUPS:
        group = {str(expected)} if os.geteuid() == 0 else {str(expected), "0"}
    server = Server(config, tmp_path / "data")
    try:
        wait_for(
            lambda: server.counts().get("ladder.done", 0) >= 1, 120, "a ladder match to finish"
        )
        done = server.json("/api/matches?kind=ladder&status=done&limit=1")[0]
        seats = server.json(f"/api/matches/{done['id']}")["outcome"]["seats"]
        for seat in seats:
            assert seat["name"] in {f"nice{expected}g{g}" for g in group}, seat["name"]
        # A validation match too: the probe leaves before its handshake (and so is
        # refused) unless it starts at the expected nice value.
        token = server.sign_up("carol")
        r = server.upload(
            token,
            PROBE.read_bytes(),
            filename="probe.py",
            name="probe-c",
            command=f"python3 probe.py nice {expected}",
        )
        assert r.status_code == 200, r.text
        assert r.json()["accepted"] is True, r.text
    finally:
        server.stop()


def test_a_nice_value_out_of_range_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "competition.toml"
    config.write_text(CONFIG.replace(f"nice = {NICE}", "nice = 20"))
    with pytest.raises(ConfigError, match="ladder.nice must be from 0 to 19, not 20"):
        load_competition(config)


@pytest.mark.skipif(
    not AUTOGROUPS or os.geteuid() != 0,
    reason="needs the kernel's session groups, and root (an unprivileged change may be deferred)",
)
def test_a_niced_match_worker_nices_its_session_group() -> None:
    # As the server starts it (ladder.nice): in a session of its own, whose group
    # would otherwise weigh as much as the server's.
    worker = subprocess.Popen(
        worker_command(NICE), stderr=subprocess.DEVNULL, **worker_popen_args()
    )
    try:
        expected = str(min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
        group = Path(f"/proc/{worker.pid}/autogroup")
        wait_for(lambda: group.read_text().split()[-1] == expected, 30, "the group's nice value")
    finally:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait(timeout=30)
