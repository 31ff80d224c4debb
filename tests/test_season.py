"""A short season (bench/season.py): a real server, a few simulated competitors
(one of them hostile) uploading bots over HTTP while a reader loads pages. The
bench itself asserts: no 5xx and no traceback in the server's log, no lost
accepted submission, every finished match verifies, the server's memory flat,
p99 page latency under its limit, a clean SIGTERM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_a_short_season_holds(tmp_path: Path) -> None:
    out = tmp_path / "season.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "season.py"),
            "--competitors",
            "3",
            "--minutes",
            "0.3",
            "--readers",
            "1",
            "--hostile",
            "0.34",
            "--pause",
            "2",
            "4",
            "--rounds",
            "60",
            "--validation-rounds",
            "30",
            "--cli-verify",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-6000:]
    report = json.loads(out.read_text())
    assert report["problems"] == []
    assert report["accepted_uploads"] >= 1 and report["lost_submissions"] == []
    assert report["verify"]["matches"] >= 1 and report["verify"]["failed"] == []
    assert report["server_exit"] == 0 and report["tracebacks_in_log"] == 0
    assert report["kinds"]["hostile"] >= 1
    assert not [
        k for k in report["answers"] if k.rsplit(": ", 1)[1] not in ("503",) and k[-3] == "5"
    ]
