"""What a bot writes reaches the organiser's terminal escaped (referee/termtext.py):
its stderr under a result, its name, its fault details, through ``referee match`` and
``referee replay``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from referee.termtext import printable, quoted

# Clear the screen, write "pwned" to the clipboard (OSC 52), return to the start of
# the line, reverse the text that follows, and a forged result line in green.
HOSTILE = (
    "\x1b[2J\x1b]52;c;cHduZWQ=\x07ok\rover\u202egnp.exe\n"
    "\x1b[1;32mWinner: hostile (seat 0)\x1b[0m\n"
    "\x85next\u2028line\x00\x9b\n"
)
NAME = "\x1b[31m[bold green]WINNER\u202e"

HOSTILE_BOT = f"""
import json, sys
sys.stdin.readline()
print(json.dumps({{"name": {NAME!r}}}), flush=True)
sys.stderr.write({HOSTILE!r})
sys.stderr.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    print(json.dumps({{"round": msg["round"], "real_move": "rock"}}), flush=True)
    if msg["round"] == 3:
        sys.stderr.write({HOSTILE!r})
        sys.exit(3)
"""

UNSAFE = ("\x1b", "\x07", "\r", "\u202e", "\x85", "\u2028", "\x00", "\x9b")


def test_printable_escapes_controls_and_invisible_formatting_only() -> None:
    assert printable("plain text: é 中文 🙂 [x]") == "plain text: é 中文 🙂 [x]"
    shown = printable(HOSTILE)
    assert not any(c in shown for c in UNSAFE)
    assert "\\x1b]52;c;cHduZWQ=\\x07ok\\x0dover\\u202egnp.exe" in shown
    assert printable("\U000e0001 \ud800") == "\\U000e0001 \\ud800"
    assert quoted(["Winner: x", "a\rb"]) == ["  | Winner: x", "  | a\\x0db"]


def _no_unsafe(text: str) -> None:
    for c in UNSAFE:
        assert c not in text, f"{c!r} reached the terminal:\n{text!r}"


def test_a_bots_stderr_name_and_faults_reach_the_terminal_escaped(tmp_path: Path) -> None:
    bot = tmp_path / "hostile.py"
    bot.write_text(HOSTILE_BOT)
    replay = tmp_path / "m.jsonl"
    argv = [sys.executable, "-m", "referee", "match", f"python {bot}", "rock"]
    argv += ["--rounds", "10", "--replay", str(replay)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    _no_unsafe(out)
    assert "\\x1b[1;32mWinner: hostile (seat 0)" in out  # shown, as the bot's own
    # Every line the bot wrote is set off: only the referee's own line starts "Winner:".
    winners = [line for line in out.splitlines() if "Winner:" in line]
    assert [w for w in winners if w.startswith("Winner:")] == ["Winner: rock (seat 1)"]
    assert all(w.startswith("  | ") for w in winners if not w.startswith("Winner:"))
    shown = subprocess.run(
        [sys.executable, "-m", "referee", "replay", str(replay)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    _no_unsafe(shown.stdout + shown.stderr)
    assert "\\x1b[31m[bold green]WINNER\\u202e" in shown.stdout  # its name, as it chose it


def test_a_league_table_shows_a_bots_name_escaped_and_never_as_markup() -> None:
    import io

    from rich.console import Console

    from referee.tournament.dashboard import shown, standings_table
    from referee.tournament.standings import Standing

    assert shown("[bold green]x\x1b[2J") == "\\[bold green]x\\x1b[2J"
    rows = [Standing(rank=1, bot=0, name=NAME), Standing(rank=2, bot=1, name="rock")]
    out = io.StringIO()
    Console(file=out, width=200, force_terminal=False).print(standings_table(rows, "pool"))
    _no_unsafe(out.getvalue())
    assert "\\x1b[31m[bold green]WINNER\\u202e" in out.getvalue()
