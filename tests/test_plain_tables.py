"""Tables printed to a pipe or a file are complete: rich lays out for 80 columns when
its output is not a terminal, which cut every column of the standings to "…"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_tournament_tables_piped_are_complete(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "referee", "tournament", "random", "cycler"),
            *("--rounds", "30", "--legs", "1", "--finalists", "0", "-j", "1"),
            *("--out", str(tmp_path / "out")),
        ],
        capture_output=True,  # stdout is a pipe, as in `referee tournament ... | cat`
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout, proc.stdout
    header = next(line for line in proc.stdout.splitlines() if "rank 95%" in line)
    for column in ("bot", "W-D-L", "mean Final", "rating", "95% CI", "P(above next)", "faults"):
        assert column in header, header
    rows = [line for line in proc.stdout.splitlines() if "random" in line and "│" in line]
    assert rows and "\x1b[" not in proc.stdout  # no colour codes into a pipe
    # The progress lines on stderr are whole too (the output directory on one line).
    assert f"output {tmp_path / 'out'}" in proc.stderr, proc.stderr
