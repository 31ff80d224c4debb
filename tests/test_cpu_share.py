"""Fair CPU: a bot that starts 8 busy processes and answers every move at once
cannot slow its opponent (which computes 5 ms a move) beyond its share of the one
CPU their match runs on (``taskset -c 0``): the match takes at most 1.5 times as long
as against an idle bot, or the hog is disqualified (``cpu_share``). Timings are
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
ROUNDS = "200"


def _match(layer: str, opponent: str) -> tuple[float, dict]:
    argv = ["taskset", "-c", "0", sys.executable, "-m", "referee", "match"]
    argv += [f"{sys.executable} {ZOO / 'think5ms.py'}", f"{sys.executable} {ZOO / opponent}"]
    argv += ["--rounds", ROUNDS, "--sandbox", layer, "--json", "--no-replay", "--quiet"]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    return took, json.loads(done.stdout)


@pytest.mark.skipif(shutil.which("taskset") is None, reason="no taskset (util-linux)")
@pytest.mark.skipif(0 not in os.sched_getaffinity(0), reason="CPU 0 is not ours")
# Known to fail beside other load: when other work takes part of the CPU, the hog
# gets less than its allowance in each reading and is not stopped, while the
# thinking bot's part of the CPU shrinks further (docs/security.md, "Fair CPU").
# Near idle it passes under every layer. Not strict, so that those runs say nothing.
@pytest.mark.xfail(reason="fair CPU beside other load is not achieved yet (issue 27)", strict=False)
@pytest.mark.parametrize("layer", sandbox.LAYERS)
def test_a_cpu_hog_cannot_slow_its_opponent_beyond_its_share(layer: str) -> None:
    try:
        sandbox.choose_layer(layer)
    except sandbox.SandboxError as exc:
        reason = f"layer {layer} does not work here: {exc}"
        if layer in CI_REQUIRED_LAYERS:
            skip_or_fail(reason)
        pytest.skip(reason)
    idle_s, idle = _match(layer, "rock.py")
    hog_s, hogged = _match(layer, "cpu_hog.py")
    thinker, hog = (next(s["verdict"] for s in hogged["seats"] if s["seat"] == i) for i in (0, 1))
    print(f"{layer}: against an idle bot {idle_s:.2f} s, against the hog {hog_s:.2f} s; "
          f"hog verdict {hog.get('status', 'ok')}")  # fmt: skip
    assert idle["reason"] == "complete"
    assert thinker.get("status", "ok") == "ok", thinker
    assert hog_s <= 1.5 * idle_s or (
        hog.get("status") == "cpu_share" and hog.get("disqualified")
    ), (idle_s, hog_s, hog)
