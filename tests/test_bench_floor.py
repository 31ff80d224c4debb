"""Keeps the benchmark from rotting: the C floor builds and drives two C bots,
and bench/run.py's smoke path runs end to end (without touching docs/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    # Build into a temporary directory: the test must not race a running `make bench`.
    out = tmp_path_factory.mktemp("bench-bin")
    paths = {}
    for name in ("floor", "cbot"):
        paths[name] = out / name
        subprocess.run(
            ["cc", "-O2", "-Wall", "-Werror", "-o", str(paths[name]), str(BENCH / f"{name}.c")],
            check=True,
        )
    return paths


# -q holds the zero wake-up latency request, as the referee does by default; where
# this user may not, the floor must refuse rather than measure something else.
CAN_HOLD = os.access("/dev/cpu_dma_latency", os.W_OK)


@pytest.mark.parametrize(
    "how",
    [(), ("-s", "100"), ("-s", "100", "-p"), ("-q",), ("-s", "100", "-p", "-q"), ("-S", "100000")],
)
def test_floor_drives_two_cbots(built: dict[str, Path], how: tuple[str, ...]) -> None:
    cbot = str(built["cbot"])
    done = subprocess.run(
        [str(built["floor"]), "-j", "-n", "1000", *how, cbot, "--", cbot],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if "-q" in how and not CAN_HOLD:
        assert done.returncode != 0 and "cpu_dma_latency" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["rounds"] == 1000
    assert out["faults"] == [0, 0]
    assert out["scores"] == [0, 0]  # rock against rock, every round
    assert out["rounds_per_s"] > 0


def test_floor_drives_python_bots(built: dict[str, Path]) -> None:
    pybot = [sys.executable, str(BENCH / "pybot.py")]
    done = subprocess.run(
        [str(built["floor"]), "-j", "-n", "200", *pybot, "--", *pybot],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["faults"] == [0, 0]


def _probe_slices(built: dict[str, Path], *how: str) -> list[str]:
    """The time slice each of two probe bots reports (tests/bots/placement_probe.py)."""
    probe = [sys.executable, str(ROOT / "tests" / "bots" / "placement_probe.py"), "cpus"]
    done = subprocess.run(
        [str(built["floor"]), "-j", "-n", "5", *how, *probe, "--", *probe],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return [line.split()[3] for line in done.stderr.splitlines() if line.startswith("cpus ")]


def test_floor_bots_ask_for_the_slice_given(built: dict[str, Path]) -> None:
    # As the referee's bots do on one CPU (referee/match.py BOT_SLICE_NS).
    default, asked = _probe_slices(built), _probe_slices(built, "-S", "300000")
    if "unknown" in default or asked == default:
        pytest.skip(f"this kernel shows or takes no time slice requests: {default}")
    assert asked == ["300000", "300000"] and "300000" not in default


def test_floor_rejects_bad_usage(built: dict[str, Path]) -> None:
    done = subprocess.run([str(built["floor"]), "-n", "10", str(built["cbot"])], timeout=10)
    assert done.returncode == 2


def test_run_py_smoke() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "--only", "floor-smoke", "--no-write"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "floor smoke: 1,000 rounds C vs C" in done.stdout


# -- bench/pyfloor.py: the same exchange in plain Python ------------------------

PYFLOOR = [sys.executable, str(BENCH / "pyfloor.py")]
PYBOT = [sys.executable, str(BENCH / "pybot.py")]


@pytest.mark.parametrize("how", [(), ("-s", "100"), ("-s", "100", "-p")])
def test_pyfloor_drives_two_python_bots(how: tuple[str, ...]) -> None:
    done = subprocess.run(
        [*PYFLOOR, "-j", "-n", "300", *how, *PYBOT, "--", *PYBOT],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["rounds"] == 300 and out["faults"] == [0, 0]
    assert out["scores"] == [0, 0]  # rock against rock
    assert 0 < out["play_s"] <= out["wall_s"]


# Answers every turn with a move that depends on the round, and the wrong round
# number from round 5 on when asked to.
_ECHO_BOT = r"""
import sys
lie = "lie" in sys.argv
moves = ["rock", "paper", "scissors", "lizard", "spock"]
for line in sys.stdin:
    if '"hello"' in line:
        print('{"name":"echo"}', flush=True)
    elif '"turn"' in line:
        r = int(line.split('"round":')[1].split(",")[0])
        shown = r + 1 if lie and r >= 5 else r
        print('{"round":%d,"real_move":"%s"}' % (shown, moves[r % 5]), flush=True)
"""


def test_pyfloor_scores_the_moves_it_reads() -> None:
    # Seat 0 plays moves[r % 5] against rock: rounds 1-6 are paper +1, scissors
    # -1, lizard -1, spock +1, rock 0, paper +1.
    echo = [sys.executable, "-c", _ECHO_BOT]
    done = subprocess.run(
        [*PYFLOOR, "-j", "-n", "6", *echo, "--", *PYBOT],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scores"] == [1, -1]


def test_pyfloor_refuses_a_reply_for_another_round() -> None:
    liar = [sys.executable, "-c", _ECHO_BOT, "lie"]
    done = subprocess.run(
        [*PYFLOOR, "-j", "-n", "20", *liar, "--", *PYBOT],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "wrong round in round 5" in done.stderr


def test_pyfloor_rejects_bad_usage() -> None:
    done = subprocess.run([*PYFLOOR, "-n", "10", *PYBOT], capture_output=True, timeout=10)
    assert done.returncode == 2 and b"usage" in done.stderr
