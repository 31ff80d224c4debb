"""``referee gauntlet`` through the real CLI, with real bot processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli

STORED_POOL = ROOT / "referee" / "pools" / "chaos.json"


def _pool(tmp_path: Path) -> Path:
    path = tmp_path / "pool.json"
    path.write_text(
        json.dumps(
            {
                "game": "chaos",
                "rounds": 200,
                "bots": {
                    "rock": {"elo": -400.0},
                    "markov-c": {"elo": 100.0},
                    "random": {"elo": 0.0},
                },
            }
        )
    )
    return path


def _gauntlet(*args: str) -> dict[str, Any]:
    proc = run_cli("gauntlet", *args, "--json", "-j", "2", timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_precision_stops_after_a_whole_round(tmp_path: Path) -> None:
    out = tmp_path / "g"
    s = _gauntlet(
        "cycler-c", "--pool-file", str(_pool(tmp_path)), "--precision", "5000",
        "--seed", "2", "--out", str(out),
    )  # fmt: skip
    # One pair (two matches) against each of the three pool bots, then stop.
    assert (s["rounds"], s["games"]) == (1, 6)
    assert [r["name"] for r in s["opponents"]] == ["rock", "markov-c", "random"]
    assert all(
        r["pairs"] == 1 and r["wins"] + r["draws"] + r["losses"] == 2 for r in s["opponents"]
    )
    assert s["elo_low"] < s["elo"] < s["elo_high"]
    assert s["elo_high"] - s["elo_low"] < 5000
    assert s["line"].startswith("cycler-c: ") and "on the pool pool's scale" in s["line"]
    assert json.loads((out / "summary.json").read_text())["elo"] == s["elo"]
    assert len(list((out / "replays").glob("pair-*.jsonl.gz"))) >= 6


def test_without_precision_plays_the_rounds_asked(tmp_path: Path) -> None:
    s = _gauntlet(
        "cycler-c", "--pool-file", str(_pool(tmp_path)), "--max-rounds", "2",
        "--seed", "2", "--out", str(tmp_path / "g"),
    )  # fmt: skip
    assert (s["rounds"], s["games"]) == (2, 12)
    by = {r["name"]: r for r in s["opponents"]}
    # Markov beats a fixed cycle every time.
    assert by["markov-c"]["losses"] == 4
    assert s["faults"] == {}


def test_a_sample_bot_is_rated_near_its_stored_rating(tmp_path: Path) -> None:
    """The done-when check for one bot: its interval against the stored pool (one
    pair against every other sample bot) contains its stored pool rating."""
    stored = json.loads(STORED_POOL.read_text())
    s = _gauntlet("markov-c", "--max-rounds", "1", "--seed", "7", "--out", str(tmp_path / "g"))
    assert "markov-c" not in [r["name"] for r in s["opponents"]]  # not played against itself
    assert len(s["opponents"]) == len(stored["bots"]) - 1
    assert s["elo_low"] <= stored["bots"]["markov-c"]["elo"] <= s["elo_high"]


@pytest.mark.parametrize(
    "args,message",
    [
        ([], "give one bot"),
        (["rock", "--pool-file", "/nonexistent/pool.json"], "no stored pool ratings"),
        (["rock", "--pool", "nobody"], "not in the pool"),
        (["rock", "--game", "roshambo", "--pool-file", "POOL"], "rates chaos bots"),
    ],
)
def test_usage_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    args = [str(_pool(tmp_path)) if a == "POOL" else a for a in args]
    if "--pool" in args and "--pool-file" not in args:
        args += ["--pool-file", str(_pool(tmp_path))]
    proc = run_cli("gauntlet", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
