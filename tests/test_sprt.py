"""``referee sprt`` through the real CLI, with real bot processes and short matches."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli

IOCAINE = f"{sys.executable} {ROOT / 'sample_bots/python/iocaine.py'}"


def _summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return data


def _header(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt") as f:
        header: dict[str, Any] = json.loads(f.readline())
    return header


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two copies of the random bot: H0 must be accepted."""
    out = tmp_path_factory.mktemp("sprt") / "copies"
    proc = run_cli(
        "sprt", "random", "random", "--rounds", "200", "--elo1", "150", "--elo-model", "logistic", "--seed", "1",
        "-j", "2", "--out", str(out), "-q", timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("H0 accepted: random-new is not 150 Elo stronger"), proc.stdout
    return out


def test_two_copies_of_a_bot_accept_h0(copies: Path) -> None:
    s = _summary(copies)
    assert s["verdict"] == "H0" and s["llr"] <= s["llr_lower"]
    assert sum(s["pentanomial"]) == s["pairs"] > 0
    assert s["wins"] + s["draws"] + s["losses"] == 2 * s["pairs"]
    assert s["elo_low"] < 0 < s["elo_high"]
    # Every counted match left its replay; both legs of a pair share the match
    # seed (the game's randomness) but not the bots' seeds.
    a = _header(copies / "replays" / "pair-00001-a.jsonl.gz")
    b = _header(copies / "replays" / "pair-00001-b.jsonl.gz")
    assert a["seed"] == b["seed"]
    seeds = [bot["seed"] for bot in a["bots"] + b["bots"]]
    assert len(set(seeds)) == 4
    assert [bot["label"] for bot in a["bots"]] == ["random-new", "random-old"]
    assert [bot["label"] for bot in b["bots"]] == ["random-old", "random-new"]
    verify = run_cli("verify", str(copies / "replays" / "pair-00001-b.jsonl.gz"))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # The recorded bot seeds are played again (the random bot depends on its seed).
    rerun = run_cli("rerun", str(copies / "replays" / "pair-00001-b.jsonl.gz"))
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr


def test_resume_gives_the_same_result(copies: Path, tmp_path: Path) -> None:
    """A run cut off after a few matches (the last line half written) and resumed
    ends with the same counts, LLR and verdict as the uninterrupted one."""
    cut = tmp_path / "cut"
    cut.mkdir()
    shutil.copy(copies / "run.json", cut / "run.json")
    lines = (copies / "matches.jsonl").read_text().splitlines(keepends=True)
    (cut / "matches.jsonl").write_text("".join(lines[:5]) + lines[5][:30])
    # The first session's wall time, as its summary recorded it, is counted on.
    (cut / "summary.json").write_text(json.dumps({"wall_s": 1000.0}))
    proc = run_cli("sprt", "--resume", str(cut), "-q", "-j", "2", timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after = _summary(copies), _summary(cut)
    assert after["wall_s"] > 1000.0
    for key in ("pairs", "pentanomial", "wins", "losses", "llr", "elo", "verdict", "line"):
        assert after[key] == before[key], key
    # Result options cannot change on resume.
    bad = run_cli("sprt", "--resume", str(cut), "--elo1", "10")
    assert bad.returncode == 2 and "drop --elo1" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_iocaine_beats_a_weakened_copy(tmp_path: Path) -> None:
    """Iocaine against a copy that plays its first move half of the time: H1."""
    out = tmp_path / "weak"
    proc = run_cli(
        "sprt", "iocaine", f"{IOCAINE} --bias 0.5", "--rounds", "300", "--elo1", "100",
        "--elo-model", "logistic",
        "--seed", "1", "-j", "2", "--out", str(out), "--json", timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    s = json.loads(proc.stdout)
    assert s["verdict"] == "H1", s["line"]
    assert s["line"].startswith("H1 accepted: iocaine-new is stronger (+")
    assert s["elo_low"] > 0
    # As much as fastchess and fishtest show: bounds on the verdict line, LLR
    # progress, W/D/L per seat, draw ratio, nElo, LOS, the estimate after the stop.
    assert "elo0 0, elo1 100 Elo" in s["line"] and "95% [+" in s["line"]
    assert s["llr_progress"] >= 100.0
    assert [sum(seat.values()) for seat in s["seats"]] == [s["pairs"], s["pairs"]]
    assert sum(seat["wins"] for seat in s["seats"]) == s["wins"]
    assert s["draw_ratio"] == s["draws"] / (2 * s["pairs"])
    assert s["nelo_low"] < s["nelo"] < s["nelo_high"] and s["los"] > 0.95
    assert s["elo_stopped_low"] <= s["elo_stopped"] <= s["elo_stopped_high"]
    assert s["elo_high"] - s["elo_low"] > 50  # all pairs won: finite and wide
    assert not list((out / "replays").glob("*.part*"))  # no replay of a cancelled match
    assert s == _summary(out) | {"wall_s": s["wall_s"]}
    replays = sorted((out / "replays").glob("*.jsonl.gz"))
    assert len(replays) >= 2 * s["pairs"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["random"], "give two bots"),
        (["random", "no-such-bot-here"], "no-such-bot-here"),
        (["random", "rock", "--elo0", "5", "--elo1", "0"], "--elo1 must be above --elo0"),
        (["random", "rock", "--game", "nonsense"], "unknown game"),
        (["--resume", "/nonexistent/sprt-dir"], "nothing to resume"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], message: str) -> None:
    proc = run_cli("sprt", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
