"""Same seed, same result, even for a sloppy bot: tests/bots/sloppy.py (and its Node
twin) answer some rounds twice and print a debug line on stdout at moments that
vary from run to run. The referee judges lines by their content and order, never
by when they arrive (protocol/README.md, "Extra lines"), so every run of the same
seed gives the same match, record for record.

The first run goes through the real CLI; the others play the recorded match again
as ``referee rerun`` does (real bot processes, without the CLI's start-up each
time), and compare every turn, action, fault kind, outcome, event and the result.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import trio
from conftest import TEST_BOTS, needs, run_cli

from referee.bot_command import BotSpec
from referee.match import run_match
from referee.replay import read_replay
from referee.rerun import compare_replays, match_config_for, read_header

PY = sys.executable


def same_seed_again(tmp_path: Path, command: str, runs: int) -> None:
    recorded = tmp_path / "recorded.jsonl"
    proc = run_cli(
        "match",
        command,
        f"{PY} {TEST_BOTS / 'steady.py'}",
        "--rounds",
        "200",
        "--seed",
        "5",
        "--replay",
        str(recorded),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    faults = result["seats"][0]["verdict"]["faults"]
    # The debug line ends the match for the sloppy bot; its replies before it were
    # taken in order, one ahead after each round it answered twice.
    assert [f["kind"] for f in faults] == ["unsolicited_output"], faults
    assert "'debug: the opponent looks random'" in faults[0]["detail"]
    assert result["reason"] == "disqualification" and result["winner"] == 1
    header = read_header(recorded)
    specs = [BotSpec(command=list(b.command), label=b.label) for b in header.bots]
    for run in range(1, runs):
        again = tmp_path / f"again{run}.jsonl"
        trio.run(run_match, specs, match_config_for(header, again, None))
        divergence, steps = compare_replays(recorded, again)
        assert divergence is None, f"run {run + 1}: {divergence.describe()}"
        assert steps == result["steps"]
    footer = read_replay(recorded).footer
    assert footer is not None and footer.faults[0].round == result["steps"]


def test_a_sloppy_python_bot_gets_the_same_result_from_the_same_seed_20_times(tmp_path):
    same_seed_again(tmp_path, f"{PY} {TEST_BOTS / 'sloppy.py'}", runs=20)


@needs(shutil.which("node") is None, "node is not installed")
def test_a_sloppy_node_bot_gets_the_same_result_from_the_same_seed(tmp_path):
    same_seed_again(tmp_path, f"node {TEST_BOTS / 'sloppy.js'}", runs=8)
