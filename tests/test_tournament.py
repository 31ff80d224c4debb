"""``referee tournament`` end to end: the real CLI, real bot processes, short matches."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EIGHT = ["random", "rock", "cycler", "frequency", "markov", "iocaine", "trickster", "sceptic"]
FAST = ["--rounds", "200", "--finals-rounds", "200", "--move-timeout", "1", "--quiet"]

FAULTY_BOT = """\
import json, sys
hello = json.loads(sys.stdin.readline())
print(json.dumps({"name": "faulty"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "end":
        break
    if msg["round"] == 5:
        sys.exit(3)  # crash in round 5
    print(json.dumps({"round": msg["round"], "real_move": "paper"}), flush=True)
"""


def referee(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee", "tournament", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]


def kill_after(args: list[str], out: Path, done: int) -> None:
    """Start ``referee tournament ARGS`` writing to ``out`` and SIGKILL its whole
    process group once ``done`` matches are committed (it must not finish first)."""
    victim = subprocess.Popen(
        [sys.executable, "-m", "referee", "tournament", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, killed whole below
    )
    try:
        deadline = time.monotonic() + 60
        while _done(out / "tournament.sqlite") < done:
            assert victim.poll() is None, "finished before it could be interrupted"
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.02)
    finally:
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()


def without_timing(value: Any) -> Any:
    """results.json minus what is measured rather than decided (the ``timing`` keys)."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k != "timing"}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def test_eight_bot_league(tmp_path: Path) -> None:
    out = tmp_path / "league"
    # One leg (two legs, seats swapped, are checked in the resume test's league).
    proc = referee(*EIGHT, *FAST, "--legs", "1", "--finalists", "8", "--best-of", "1",
                   "--seed", "7", "-j", "2", "--out", str(out), "--json")  # fmt: skip
    _ok(proc)
    brief = json.loads(proc.stdout)
    assert brief["complete"] and brief["champion"] in EIGHT
    results = json.loads((out / "results.json").read_text())
    pool = [m for m in results["matches"] if m["stage"] == "pool"]
    assert len(pool) == 8 * 7 // 2  # single round robin
    # Where the league's CPU went: every part measured, the parts add up to the total.
    cpu = brief["timing"]["cpu"]
    assert cpu["matches"] == len(results["matches"])
    parts = ["bots_thinking_s", "bots_startup_s", "referee_rounds_s", "referee_setup_s",
             "referee_finish_s", "workers_other_s", "coordinator_s"]  # fmt: skip
    assert all(cpu[k] > 0 for k in parts), cpu
    assert abs(sum(cpu[k] for k in parts) - cpu["total_s"]) < 0.01, cpu
    assert 0 < cpu["bots_thinking_share"] < 1, cpu
    assert len({frozenset(m["bots"]) for m in pool}) == 28  # every pair once
    rounds = results["bracket"]["rounds"]
    assert [r["name"] for r in rounds] == ["Quarter-finals", "Semi-finals", "Final"]
    assert [len(r["ties"]) for r in rounds] == [4, 2, 1]
    standings = results["standings"]
    seeds = [s["name"] for s in standings]
    first = rounds[0]["ties"]
    assert [(t["a"], t["b"]) for t in first] == [
        (seeds[0], seeds[7]),
        (seeds[3], seeds[4]),
        (seeds[1], seeds[6]),
        (seeds[2], seeds[5]),
    ]
    assert rounds[2]["ties"][0]["winner"] == results["champion"]
    finals = [m for m in results["matches"] if m["stage"] == "final"]
    assert len(finals) == 7  # best-of-1 ties (best-of-3 is in the resume test)
    for m in results["matches"]:
        # A league stores its replays compressed unless told otherwise.
        assert m["replay"].endswith(".jsonl.gz") and (out / m["replay"]).is_file()
    with open(out / "standings.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["name"] for r in rows] == seeds
    assert sum(r["finish"] == "champion" for r in rows) == 1
    # Rank ranges and adjacent order probabilities, the same in both files.
    for r, j in zip(rows, results["standings"], strict=True):
        assert int(r["rank_low"]) <= int(r["rank"]) <= int(r["rank_high"])
        assert (int(r["rank_low"]), int(r["rank_high"])) == (j["rank_low"], j["rank_high"])
        assert (r["order_prob"] or None) == (
            None if j["order_prob"] is None else str(j["order_prob"])
        )
    assert all(0.5 <= j["order_prob"] <= 1.0 for j in results["standings"][:-1])
    assert results["standings"][-1]["order_prob"] is None
    with open(out / "results.csv") as f:
        assert len(list(csv.DictReader(f))) == len(results["matches"])
    assert not list((out / "replays").glob("*.part.jsonl*"))


def _done(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            row = conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'").fetchone()
    except sqlite3.OperationalError:  # created but no tables yet
        return 0
    return int(row[0])


def test_resume_after_sigkill_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        'name = "resume test"\nseed = 11\n'
        "[pool]\nlegs = 2\nrounds = 200\n"
        "[finals]\nfinalists = 4\nbest_of = 3\nrounds = 200\n"
        "[limits]\nmove_timeout = 1.0\n"
        + "".join(
            f'[[bot]]\nname = "{b}"\ncommand = "{b}"\n'
            for b in ["rock", "cycler", "markov", "trickster"]
        )
    )
    whole = tmp_path / "whole"
    _ok(referee("--config", str(cfg), "--out", str(whole), "-j", "1", "--quiet"))
    pool = [m for m in json.loads((whole / "results.json").read_text())["matches"]
            if m["stage"] == "pool"]  # fmt: skip
    assert len({tuple(m["bots"]) for m in pool}) == len(pool) == 4 * 3  # seats swapped in leg 2

    part = tmp_path / "part"
    kill_after(["--config", str(cfg), "--out", str(part), "-j", "2", "--quiet"], part, 5)
    done_before = _done(part / "tournament.sqlite")
    total = len(json.loads((whole / "results.json").read_text())["matches"])
    assert done_before < total
    assert not (part / "results.json").exists()
    finished = _finished_matches(part)
    assert len(finished) == done_before >= 5

    resumed = referee("--resume", str(part), "-j", "2", "--json")
    _ok(resumed)
    a = without_timing(json.loads((whole / "results.json").read_text()))
    b = without_timing(json.loads((part / "results.json").read_text()))
    assert a["standings"] == b["standings"]
    assert a["bracket"] == b["bracket"]
    assert a["matches"] == b["matches"]
    assert a == b
    # Nothing that was finished before the kill was played again: its record (finish
    # time, result) and its replay file (same inode, mtime and bytes) are untouched.
    with sqlite3.connect(part / "tournament.sqlite") as conn:
        (n,) = conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'").fetchone()
    assert n == total
    after = _finished_matches(part)
    replayed = [m for m, before in finished.items() if after.get(m) != before]
    assert not replayed, f"matches finished before the kill were played again: {replayed}"


def _finished_matches(out: Path) -> dict[str, tuple[Any, ...]]:
    """Per finished match: its finish time, result and the identity of its replay file."""
    with sqlite3.connect(out / "tournament.sqlite") as conn:
        rows = conn.execute(
            "SELECT id, finished_at, result, replay FROM matches WHERE status = 'done'"
        ).fetchall()
    finished = {}
    for match_id, finished_at, result, replay in rows:
        path = out / replay
        info = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        finished[match_id] = (finished_at, result, info.st_ino, info.st_mtime_ns, digest)
    return finished


def test_until_settled_plays_extra_pairs_and_resumes_to_the_same_result(tmp_path: Path) -> None:
    """Extra seat-swapped pairs for uncertain adjacent orders, within the budget; a
    run killed while settling and resumed ends exactly as an uninterrupted one."""
    # Two copies of random: their order is a coin flip, so it never settles.
    args = ["random", "random", "cycler-c", "minimal-c", "--rounds", "200"]
    args += ["--finalists", "0", "--seed", "5", "--until-settled", "8", "--quiet"]
    whole = tmp_path / "whole"
    _ok(referee(*args, "--out", str(whole), "-j", "2"))
    a = without_timing(json.loads((whole / "results.json").read_text()))
    extra = [m for m in a["matches"] if m["stage"] == "settle"]
    assert 2 <= len(extra) <= 8 and len(extra) % 2 == 0
    pool = [m for m in a["matches"] if m["stage"] == "pool"]
    assert len(pool) == 12
    # Each extra pair is two matches between adjacent bots with the seats swapped.
    for first, second in zip(extra[::2], extra[1::2], strict=True):
        assert first["bots"] == second["bots"][::-1]
    ranks = {s["name"]: s["rank"] for s in a["standings"]}
    assert all(abs(ranks[m["bots"][0]] - ranks[m["bots"][1]]) <= 3 for m in extra)
    assert sum(s["played"] for s in a["standings"]) == 2 * (len(pool) + len(extra))

    part = tmp_path / "part"
    kill_after([*args, "--out", str(part), "-j", "2"], part, len(pool) + 1)
    _ok(referee("--resume", str(part), "-j", "2", "--quiet"))
    b = without_timing(json.loads((part / "results.json").read_text()))
    assert a["matches"] == b["matches"]
    assert a == b


def test_a_crashing_bot_ranks_last_and_its_faults_are_listed(tmp_path: Path) -> None:
    bot = tmp_path / "faulty.py"
    bot.write_text(FAULTY_BOT)
    out = tmp_path / "t"
    proc = referee("rock", "cycler", "markov", "iocaine", f"python {bot}", *FAST,
                   "--legs", "1", "--finalists", "4", "--seed", "3", "-j", "2",
                   "--out", str(out))  # fmt: skip
    _ok(proc)
    results = json.loads((out / "results.json").read_text())
    assert results["complete"]
    last = results["standings"][-1]
    assert last["name"] == "faulty"
    assert last["faults"] == 4 and last["disqualified"] == 4 and last["wins"] == 0
    assert last["finish"] == ""
    crashes = [
        f
        for m in results["matches"]
        for s in m["seats"]
        if s["bot"] == "faulty"
        for f in s["verdict"]["faults"]
    ]
    assert [(f["kind"], f["round"]) for f in crashes] == [("crash", 5)] * 4
    with open(out / "results.csv") as f:
        rows = [r for r in csv.DictReader(f) if "faulty" in (r["bot0"], r["bot1"])]
    assert len(rows) == 4 and all("faulty:crash@5" in r["faults"] for r in rows)


def test_a_bot_imitating_a_launcher_failure_loses_and_the_league_goes_on(
    tmp_path: Path,
) -> None:
    # A launcher failure voids a match and, after three tries, stops the league; a bot
    # that only prints a launcher's error and exits must get neither.
    fake = ROOT / "tests" / "zoo" / "fake_launcher.py"
    out = tmp_path / "t"
    proc = referee("rock", "cycler", f"python {fake}", *FAST, "--legs", "1",
                   "--finalists", "0", "--seed", "3", "--out", str(out))  # fmt: skip
    _ok(proc)
    results = json.loads((out / "results.json").read_text())
    assert results["complete"]
    last = results["standings"][-1]
    assert last["name"] == "fake_launcher"
    assert last["played"] == 2 and last["disqualified"] == 2 and last["wins"] == 0
    kinds = [
        f["kind"]
        for m in results["matches"]
        for s in m["seats"]
        if s["bot"] == "fake_launcher"
        for f in s["verdict"]["faults"]
    ]
    assert kinds == ["handshake", "handshake"]


def test_bad_config_is_one_line(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[pool]\nlegs = 2\nrounds_per_match = 5\n")
    proc = referee("--config", str(cfg), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "rounds_per_match" in proc.stderr


@pytest.mark.parametrize("extra", [["--seed", "5"], ["rock"]])
def test_resume_refuses_result_changes(tmp_path: Path, extra: list[str]) -> None:
    proc = referee("--resume", str(tmp_path), *extra)
    assert proc.returncode == 2 and "--resume" in proc.stderr


def test_replay_format_plain_on_request(tmp_path: Path) -> None:
    """``--replay-format jsonl`` keeps a league's replays plain; they still verify."""
    out = tmp_path / "plain"
    _ok(
        referee(
            "rock",
            "cycler",
            "--legs",
            "1",
            "--rounds",
            "30",
            "--finalists",
            "0",
            "--replay-format",
            "jsonl",
            "--out",
            str(out),
            "--quiet",
        )
    )
    replays = sorted((out / "replays").iterdir())
    assert [p.name for p in replays] == ["pool-01-02-1.jsonl"]
    assert replays[0].read_bytes().startswith(b'{"type":"header"')
    check = subprocess.run(
        [sys.executable, "-m", "referee", "verify", str(replays[0])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0 and check.stdout.startswith("OK: 30 rounds"), check.stdout
