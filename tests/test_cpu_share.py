"""Fair CPU: a bot that starts 8 busy processes and answers every move at once
cannot slow its opponent (which computes 5 ms a move) beyond its share of the one
CPU their match runs on (``taskset -c 0``): the match takes at most 1.5 times as long
as against an idle bot, or the hog is disqualified (``cpu_share``); and a bot that
thinks in four processes, but only while it owes a move, is not. Timings are
printed; docs/security.md records them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CI_REQUIRED_LAYERS, skip_or_fail

from referee import sandbox

# Timings and placements mean something only with no other test beside them.
pytestmark = pytest.mark.alone

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "tests" / "zoo"
# Long enough for the watchdog's rule, which forgives a burst of about two seconds
# (fairness.DECAY), to reach a steady hog: on a slower host 200 rounds took 3.5 s, the
# hog ran for 3 s of them and was never judged (its excess had reached 0.24 of 0.25).
ROUNDS = "400"


def _match(layer: str, opponent: str, rounds: str = ROUNDS) -> tuple[float, dict]:
    argv = ["taskset", "-c", "0", sys.executable, "-m", "referee", "match"]
    if not opponent.startswith("/"):  # a Python bot of the zoo, else a program
        opponent = f"{sys.executable} {ZOO / opponent}"
    argv += [f"{sys.executable} {ZOO / 'think5ms.py'}", opponent]
    argv += ["--rounds", rounds, "--sandbox", layer, "--json", "--no-replay", "--quiet"]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    return took, json.loads(done.stdout)


ONE_CPU = pytest.mark.skipif(
    shutil.which("taskset") is None or 0 not in os.sched_getaffinity(0),
    reason="needs taskset (util-linux) and CPU 0",
)


@ONE_CPU
@pytest.mark.parametrize("layer", sandbox.LAYERS)
def test_a_cpu_hog_cannot_slow_its_opponent_beyond_its_share(layer: str) -> None:
    try:
        sandbox.choose_layer(layer)
    except sandbox.SandboxError as exc:
        reason = f"layer {layer} does not work here: {exc}"
        if layer in CI_REQUIRED_LAYERS:
            skip_or_fail(reason)
        pytest.skip(reason)
    hog_s, hogged = _match(layer, "cpu_hog.py")
    thinker, hog = (next(s["verdict"] for s in hogged["seats"] if s["seat"] == i) for i in (0, 1))
    print(f"{layer}: against the hog {hog_s:.2f} s; hog verdict {hog.get('status', 'ok')}")
    assert thinker.get("status", "ok") == "ok", thinker
    if hog.get("status") == "cpu_share" and hog.get("disqualified"):
        return  # stopped by the watchdog: its opponent was not slowed for long
    # Not stopped: then it must not have slowed its opponent beyond its share. The
    # match against an idle bot (measured only here: it takes seconds) is the yardstick.
    idle_s, idle = _match(layer, "rock.py")
    print(f"{layer}: against an idle bot {idle_s:.2f} s")
    assert idle["reason"] == "complete"
    assert hog_s <= 1.5 * idle_s, (idle_s, hog_s, hog)


@ONE_CPU
def test_a_bot_that_thinks_in_four_processes_only_on_its_turn_is_not_a_hog() -> None:
    # Both bots compute while they owe a move, one of them in four processes at once
    # on the one CPU: that is their share, in any layer (the watchdog does not
    # depend on it), so the default one is enough.
    _, played = _match("auto", "think_parallel.py", rounds="100")
    assert played["reason"] == "complete"
    for seat in played["seats"]:
        assert seat["verdict"].get("status", "ok") == "ok", seat


@ONE_CPU
def test_eight_busy_threads_of_one_process_cannot_slow_its_opponent_beyond_its_share(
    tmp_path: Path,
) -> None:
    # Threads, not processes: the CPU the watchdog reads (the process's, or its
    # cgroup's) covers them all, and a cgroup's CPU weight shares the CPU by bot.
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        skip_or_fail("no C compiler")
    hog_bin = tmp_path / "busy_threads"
    subprocess.run(
        [cc, "-O1", "-o", str(hog_bin), str(ZOO / "c" / "busy_threads.c")], check=True, timeout=120
    )
    hog_s, hogged = _match("auto", str(hog_bin))
    thinker, hog = (next(s["verdict"] for s in hogged["seats"] if s["seat"] == i) for i in (0, 1))
    print(f"against the threads hog {hog_s:.2f} s; hog verdict {hog.get('status', 'ok')}")
    assert thinker.get("status", "ok") == "ok", thinker
    if hog.get("status") == "cpu_share" and hog.get("disqualified"):
        return
    idle_s, idle = _match("auto", "rock.py")
    print(f"against an idle bot {idle_s:.2f} s")
    assert hog_s <= 1.5 * idle_s, (idle_s, hog_s, hog)
