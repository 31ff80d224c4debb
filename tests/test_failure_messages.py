"""A newcomer's first mistakes, made on purpose by tests/bots/newcomer.py and run
through the real CLI: each failure says what happened and what to try."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import processes_mentioning, run_cli

PY = sys.executable
# Wide enough that rich never wraps a line we look for.
WIDE = {**os.environ, "COLUMNS": "300"}


def newcomer(tmp_path: Path, bot_copy, mode: str, *extra: str, json_out: bool = False):
    bot = bot_copy("newcomer.py")
    replay = tmp_path / "match.jsonl"
    args = [f"{PY} {bot} {mode}", "rock", "--rounds", "20", "--seed", "1"]
    args += ["--replay", str(replay), *extra]
    if json_out:
        args.append("--json")
    proc = run_cli("match", *args, env=WIDE)
    assert processes_mentioning(str(tmp_path)) == [], "a bot process outlived the match"
    return proc, replay


def test_a_crash_shows_the_stderr_tail_and_the_log_path(tmp_path, bot_copy):
    proc, replay = newcomer(tmp_path, bot_copy, "crash")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "crash: the bot exited (exit code 1)" in out
    assert "seat 0 (crash) stderr, last 5 lines:" in out and "KeyError: 'rock'" in out
    log = replay.parent / "match.seat0.stderr.log"
    assert f"full stderr log: {log}" in out
    assert "KeyError: 'rock'" in log.read_text()
    # The replay keeps the tail and `referee replay` shows it, with the log.
    shown = run_cli("replay", str(replay), env=WIDE)
    assert shown.returncode == 0, shown.stderr
    assert "KeyError: 'rock'" in shown.stdout and str(log) in shown.stdout
    page = tmp_path / "match.html"
    drawn = run_cli("replay", str(replay), "--html", str(page))
    assert drawn.returncode == 0, drawn.stderr
    text = page.read_text()
    assert "seat 0 (crash) stderr, last 5 lines" in text and "KeyError: &#x27;rock&#x27;" in text


def test_a_silent_handshake_names_the_missing_flush(tmp_path, bot_copy):
    proc, _ = newcomer(tmp_path, bot_copy, "unflushed", "--handshake-timeout", "0.5", json_out=True)
    assert proc.returncode == 3, proc.stderr
    fault = json.loads(proc.stdout)["seats"][0]["verdict"]["faults"][0]
    assert fault["kind"] == "handshake"
    assert "no ready message within 0.5 s" in fault["detail"]
    assert "nothing was read from its stdout (is it flushed after each line?)" in fault["detail"]


@pytest.mark.parametrize(
    ("mode", "hint"),
    [
        ("turn_unflushed", "nothing was read from its stdout (is it flushed after each line?)"),
        ("no_newline", "33 bytes arrived without a newline (end each line with \\n)"),
    ],
    ids=["missing_flush", "missing_newline"],
)
def test_a_silent_first_turn_names_what_is_missing(tmp_path, bot_copy, mode, hint):
    proc, _ = newcomer(
        tmp_path,
        bot_copy,
        mode,
        "--move-timeout",
        "0.3",
        "--time-bank",
        "0",
        "--max-faults",
        "1",
        json_out=True,
    )
    assert proc.returncode == 0, proc.stderr
    fault = json.loads(proc.stdout)["seats"][0]["verdict"]["faults"][0]
    assert (fault["round"], fault["kind"]) == (1, "timeout")
    assert hint in fault["detail"]


def test_a_debug_line_on_stdout_is_shown_with_the_hint(tmp_path, bot_copy):
    proc, _ = newcomer(tmp_path, bot_copy, "debug")
    assert proc.returncode == 0, proc.stderr
    assert (
        "fault: round 2 seat 0 unsolicited_output: a line that is not a reply: "
        "'thinking about round 2: my opponent played rock twice in a row' "
        "(debug output belongs on stderr)" in proc.stdout
    )


def test_a_debug_line_in_a_game_with_notices_says_notices_need_no_reply(tmp_path):
    bot = tmp_path / "chatty.py"
    bot.write_text(
        "import sys\n"
        "sys.stdin.readline()\n"
        'print(\'{"name": "chatty"}\', flush=True)\n'
        "sys.stdin.readline()\n"
        "print('ok, noted', flush=True)\n"
        "sys.stdin.read()\n"
    )
    proc = run_cli(
        "match", f"{PY} {bot}", "ld-odds", "--game", "liars_dice", "--no-replay", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    fault = json.loads(proc.stdout)["seats"][0]["verdict"]["faults"][0]
    assert fault["kind"] == "unsolicited_output"
    assert "'ok, noted'" in fault["detail"] and "notices need no reply" in fault["detail"]


def test_a_sample_bot_in_a_game_it_does_not_play_is_refused_before_the_match(tmp_path):
    proc = run_cli("match", "ld-odds", "rock", "--rounds", "5", "--no-replay")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "sample bot 'ld-odds' does not play chaos; it plays liars_dice" in proc.stderr
    assert "Traceback" not in proc.stderr
    league = tmp_path / "league"
    proc = run_cli("tournament", "rock", "ld-odds", "--rounds", "5", "--out", str(league))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "sample bot 'ld-odds' does not play chaos; it plays liars_dice" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert not (league / "matches").exists()


def test_a_bot_that_outlives_end_is_noted_in_the_verdict_and_the_summary(tmp_path, bot_copy):
    from referee.replay import read_replay

    proc, replay = newcomer(tmp_path, bot_copy, "linger")
    assert proc.returncode == 0, proc.stderr
    assert "seat 0 (linger): did not exit within 500 ms after end; killed" in proc.stdout
    footer = read_replay(replay).footer
    assert footer is not None
    verdict = footer.verdicts[0]
    assert verdict.killed_by_referee and verdict.status == "ok"
    assert verdict.extra["after_end"] == "did not exit within 500 ms after end; killed"
