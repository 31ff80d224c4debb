"""``referee replay`` (terminal and --html) and ``referee rerun`` on real matches
between tiny deterministic Python bots, played through the CLI."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import skip_or_fail

from referee.replay import iter_lines, read_replay
from referee.viewer import braille_chart, load_view, parse_range

ROOT = Path(__file__).resolve().parent.parent

# Cycles the moves; spends a token every 37th round (so buckets change too).
CYCLER = """\
import json, sys
hello = json.loads(sys.stdin.readline())
moves = hello["params"]["moves"]
print(json.dumps({"name": "cycler", "version": "1"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    r = msg["round"]
    reply = {"round": r, "real_move": moves[r % len(moves)]}
    if r % 37 == 0 or r >= CHANGE_AT:
        reply.update(shadow_request=True, shadow_move=moves[(r + 2) % len(moves)])
    print(json.dumps(reply), flush=True)
"""

# Answers what it was shown; shadows every 101st round.
ECHO = """\
import json, sys
hello = json.loads(sys.stdin.readline())
moves = hello["params"]["moves"]
print(json.dumps({"name": "echo"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    r = msg["round"]
    seen = msg["opponent_last_visible"] or moves[0]
    reply = {"round": r, "real_move": moves[(moves.index(seen) + 1 + r % 3) % len(moves)]}
    if r % 101 == 0:
        reply.update(shadow_request=True, shadow_move=moves[0])
    print(json.dumps(reply), flush=True)
"""


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "140"}
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=timeout,
    )


def write_bots(directory: Path, change_at: int = 10**9) -> tuple[Path, Path]:
    a = directory / "a.py"
    b = directory / "b.py"
    a.write_text(CYCLER.replace("CHANGE_AT", str(change_at)))
    b.write_text(ECHO)
    return a, b


def play(directory: Path, rounds: int, name: str) -> Path:
    a, b = directory / "a.py", directory / "b.py"
    replay = directory / name
    proc = cli(
        "match",
        f"python3 {a}",
        f"python3 {b}",
        "--rounds",
        str(rounds),
        "--seed",
        "1",
        "--replay",
        str(replay),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    return replay


@pytest.fixture(scope="module")
def big_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("big")
    write_bots(directory)
    return play(directory, 10_000, "big.jsonl")


def steps_of(path: Path) -> dict[int, dict[str, Any]]:
    """The steps as the replay reader gives them back (turn messages included)."""
    out = {}
    for line in iter_lines(path):
        rec = json.loads(line)
        if rec["type"] == "step":
            out[rec["n"]] = rec
    return out


# -- terminal view ----------------------------------------------------------------------


def test_real_match_replay_verifies(big_replay: Path) -> None:
    proc = cli("verify", str(big_replay))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("OK: 10000 rounds, chain intact, result matches")


def test_terminal_view_of_10000_rounds(big_replay: Path) -> None:
    started = time.process_time()  # CPU time: the wall clock also counts other processes
    data = load_view(big_replay)
    load_s = time.process_time() - started
    assert data.rounds == 10_000 and data.footer is not None
    assert load_s < 5.0, f"loading 10,000 rounds took {load_s:.2f} s"
    proc = cli("replay", str(big_replay))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for text in ("cycler", "echo", "final", "standard", "anti_exploitation"):
        assert text in out
    assert "deception_efficiency" in out and "verdict" in out and "ok" in out
    # The printed numbers are the footer's, seat by seat, not only the labels.
    footer = json.loads(big_replay.read_bytes().splitlines()[-1])
    assert footer["type"] == "footer"
    seats = footer["result"]["seats"]

    def row(label: str) -> list[str]:
        line = next(x for x in out.splitlines() if x.lstrip("│ ").startswith(label + " "))
        return [cell.strip() for cell in line.strip("│").split("│")[1:]]

    for key in ("final", "standard", "anti_exploitation", "deception_efficiency"):
        printed = [float(cell) for cell in row(key)]
        assert printed == [seat["scores"][key] for seat in seats], (key, printed)
    assert [int(cell) for cell in row("placement")] == [seat["placement"] for seat in seats]
    for cell, seat in zip(row("stats"), seats, strict=True):
        for stat in ("points", "wins", "draws", "losses"):
            assert f"{stat}={seat['stats'][stat]}" in cell, (cell, seat["stats"])
    winner = footer["result"]["winner"]
    assert f"Result: seat {winner} (" in out and " wins;" in out
    chart = out[out.index("Cumulative points") :]
    assert re.search("[\u2801-\u28ff]", chart), "no braille chart"
    # Marker rows: shadows and bucket changes of both seats.
    s0 = next(line for line in chart.splitlines() if line.strip().startswith("s0 "))
    s1 = next(line for line in chart.splitlines() if line.strip().startswith("s1 "))
    assert "•" in s0 and "▼" in s0 and "•" in s1 and "▼" in s1
    assert "10000" in chart  # the x axis


def test_round_range_table_shows_what_each_seat_saw(big_replay: Path) -> None:
    proc = cli("replay", str(big_replay), "--rounds", "36-38")
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout[proc.stdout.index("Rounds 36-38") :]
    steps = steps_of(big_replay)
    rows = [line.split() for line in table.splitlines()]
    for n in (36, 37, 38):
        row = next(r for r in rows if r[:1] == [str(n)])
        obs = steps[n]["obs"][0]
        act = steps[n]["act"][0]
        expected = [
            str(n),
            "0",
            obs["opponent_last_visible"] or "-",
            obs["self_last_real"] or "-",
            obs["opponent_deception_bucket"],
            act["real_move"],
        ]
        assert row[:6] == expected
    assert not any(r[:1] == ["39"] for r in rows)
    # Round 37 is seat 0's shadow: the request, and seat 1's next turn shows it.
    shadow = steps[37]["act"][0]["shadow_move"]
    assert steps[37]["out"][2][0] is True
    row37 = next(r for r in rows if r[:1] == ["37"])
    assert row37[6] == shadow and "50→49" in row37
    row38_seat1 = rows[rows.index(next(r for r in rows if r[:1] == ["38"])) + 1]
    assert row38_seat1[:2] == ["1", shadow]


def test_bad_range_and_bad_file(tmp_path: Path) -> None:
    assert parse_range("4000-4100") == (4000, 4100)
    assert parse_range("7") == (7, 7)
    proc = cli("replay", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 4 and "Traceback" not in proc.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    proc = cli("replay", str(bad))
    assert proc.returncode == 4 and "not a replay" in proc.stderr
    proc = cli("replay", str(bad), "--rounds", "9-3")
    assert proc.returncode == 2
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b'{"type":"header","format":"referee-re')
    proc = cli("replay", str(cut))
    assert proc.returncode == 4 and "cut off inside its first line" in proc.stderr


def test_outputs_that_cannot_be_written_are_one_line_errors(
    big_replay: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    for command in (
        ("replay", str(big_replay), "--html", str(blocker / "x.html")),
        ("schemas", str(blocker / "schemas")),
        ("rerun", str(big_replay), "--keep", str(blocker / "again.jsonl")),  # before playing
    ):
        proc = cli(*command)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(blocker) in lines[0], proc.stderr


def test_braille_chart_draws_both_series() -> None:
    up = np.arange(1000)
    lines, lo, hi = braille_chart([up, -up], ["cyan", "magenta"], width=40, height=6)
    assert (lo, hi) == (-999, 999)
    assert len(lines) == 6 and all(len(line.plain) == 40 for line in lines)
    # Rising line: top-right cell and bottom-left region are inked.
    assert lines[0].plain[-1] != " " and lines[-1].plain[-1] != " "
    assert lines[0].plain[0] == " "


# -- HTML --------------------------------------------------------------------------------


def test_html_export_of_10000_rounds(big_replay: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    started = time.perf_counter()
    proc = cli("replay", str(big_replay), "--html", str(out))
    took = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stderr
    page = out.read_text(encoding="utf-8")
    size = len(page.encode())
    print(f"HTML for 10,000 rounds: {size / 1024:.0f} KiB in {took:.2f} s (incl. start-up)")
    assert size < 600_000, "the data must be embedded compactly, not as the raw replay"
    # A tenth of the replay as read back (every turn message and action field).
    assert size < sum(len(line) for line in iter_lines(big_replay)) / 10
    # Self-contained: nothing is loaded from elsewhere.
    assert "http://" not in page and "https://" not in page
    assert "<link" not in page and " src=" not in page
    assert "<script>" in page and "<style>" in page
    # The embedded arrays decode to the recorded match.
    blob = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert blob is not None
    payload = json.loads(blob.group(1))
    assert payload["rounds"] == 10_000 and payload["first"] == 1
    points = np.frombuffer(base64.b64decode(payload["arrays"]["points"]), dtype=np.int8)
    assert points.shape == (20_000,)
    footer = json.loads(big_replay.read_text().splitlines()[-1])
    stats = [s["stats"]["points"] for s in footer["result"]["seats"]]
    assert [int(points[0::2].sum()), int(points[1::2].sum())] == stats
    mv = np.frombuffer(base64.b64decode(payload["arrays"]["mv"]), dtype=np.uint8)
    spent = (mv >> 6) & 1
    assert int(spent.sum()) == sum(s["stats"]["tokens_spent"] for s in footer["result"]["seats"])
    # Scores for people: three decimals on the page, the replay's exact value in the
    # cell's title (six-decimal pairs were hard to read).
    final = footer["result"]["seats"][0]["scores"]["final"]
    assert f'<span title="{final!r}">{final:+.3f}</span>' in page
    assert not re.search(r"<td class=\"num\">[-+]?\d\.\d{6}</td>", page)


# -- rerun ---------------------------------------------------------------------------------


def test_rerun_of_a_deterministic_match_is_identical(big_replay: Path) -> None:
    proc = cli("rerun", str(big_replay))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "IDENTICAL: 10000 rounds" in proc.stdout
    assert proc.stdout.count("files unchanged") == 2


def test_rerun_reports_first_divergence_and_changed_files(tmp_path: Path) -> None:
    write_bots(tmp_path)
    replay = play(tmp_path, 300, "small.jsonl.gz")
    kept = tmp_path / "again.jsonl"
    proc = cli("rerun", str(replay), "--keep", str(kept))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert kept.exists() and cli("verify", str(kept)).returncode == 0
    # The bot changes its mind from round 150 on: a different executable.
    write_bots(tmp_path, change_at=150)
    proc = cli("rerun", str(replay))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "seat 0 a: FILES CHANGED" in proc.stdout
    assert "seat 1 b: files unchanged" in proc.stdout
    different = next(line for line in proc.stdout.splitlines() if "DIFFERENT" in line)
    assert different.startswith("DIFFERENT: round 150: seat 0's action differs: "), different
    assert "shadow_move nothing in the record" in different
    assert "shadow_request false in the record, true in the rerun" in different
    assert "after 149 identical rounds" in proc.stdout


def test_rerun_of_a_non_replay_fails_cleanly(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text("{}\n")
    proc = cli("rerun", str(bad))
    assert proc.returncode == 4 and "Traceback" not in proc.stderr


def test_turn_based_games_show_readable_rows_in_their_own_words(tmp_path: Path) -> None:
    bots = sorted((ROOT / "sample_bots" / "games" / "liars_dice").glob("*.py"))
    if not bots:
        skip_or_fail("no Python Liar's Dice sample bot")
    replay = tmp_path / "dice.jsonl"
    proc = cli(
        "match",
        *[f"python3 {bots[0]}"] * 3,
        "--game",
        "liars_dice",
        "--seed",
        "2",
        "--replay",
        str(replay),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    proc = cli("replay", str(replay), "--rounds", "1-3")
    assert proc.returncode == 0, proc.stderr
    assert "liars_dice" in proc.stdout and "seat 2" in proc.stdout and "Result:" in proc.stdout
    # The game's own plot, in braille cells, with every seat in its legend.
    chart = proc.stdout[proc.stdout.index("Dice left after each round") :]
    assert re.search("[\u2801-\u28ff]", chart) and "round " in chart
    legend = next(line for line in chart.splitlines() if "━━" in line)
    assert all(f"odds#{k}" in legend for k in (1, 2, 3))
    table = proc.stdout[proc.stdout.index("Turns 1-3") :]
    # One row per turn, in words: the turn, its round, who acted and what it did.
    steps = read_replay(replay).steps[:3]
    rows = [line for line in table.splitlines() if re.match(r"\s+\d+\s+round \d+", line)]
    assert [int(r.split()[0]) for r in rows] == [s.n for s in steps]
    for row, step in zip(rows, steps, strict=True):
        seat = next(k for k, a in enumerate(step.act) if a is not None)
        act = step.act[seat]
        words = f"bids {act['quantity']}×{act['face']}" if act["move"] == "bid" else "calls"
        assert f"#{seat + 1}: {words}" in row, row
    assert "{" not in table  # no raw JSON
