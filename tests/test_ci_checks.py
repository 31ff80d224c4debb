"""CI=true turns a missing tool into a failure, not a skip (conftest.py, .ci/run).

The suite is run again, in part, in a child pytest whose PATH lacks one tool: under
CI=true the tests that need the tool fail and say what is missing, and the session
check reports the area as not run; without CI they skip with the same reason.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, unrun_areas

BWRAP_TESTS = (
    "tests/test_sandbox.py::test_auto_picks_a_working_layer",
    "tests/test_sandbox.py::test_tmpfs_is_capped_under_bwrap",
)
BROWSER_TESTS = ("tests/test_html_browser.py::test_screenshot_is_not_blank",)


def path_without(tool: str, farm: Path) -> str:
    """A PATH of one directory holding links to every program on PATH but ``tool``."""
    farm.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            target = farm / name
            if name != tool and not target.exists() and not target.is_symlink():
                target.symlink_to(os.path.join(directory, name))
    return str(farm)


def child_pytest(tests: tuple[str, ...], path: str, ci: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = path
    if ci:
        env["CI"] = "true"
    # Without Hypothesis's plugin, which these tests do not use: it imports all of
    # Hypothesis, a second of each child's start-up.
    argv = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"]
    return subprocess.run(
        [*argv, "-p", "no:hypothesispytest", *tests],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.parametrize(
    ("tool", "tests", "area"),
    [
        ("bwrap", BWRAP_TESTS, "the bwrap sandbox layer"),
        ("chromium", BROWSER_TESTS, "the headless browser tests"),
    ],
    ids=["bwrap", "chromium"],
)
def test_a_missing_tool_fails_under_ci_and_skips_outside(
    tool: str, tests: tuple[str, ...], area: str, tmp_path: Path
) -> None:
    path = path_without(tool, tmp_path / "bin")
    strict = child_pytest(tests, path, ci=True)
    out = strict.stdout + strict.stderr
    assert strict.returncode == 1, out
    assert "CI=true, but" in out and tool in out.split("CI=true, but", 1)[1], out
    assert f"CI=true, but {area}" in out, out
    assert re.search(r"\d+ (failed|errors?)\b", out.splitlines()[-1]), out
    lenient = child_pytest(tests, path, ci=False)
    out = lenient.stdout + lenient.stderr
    assert lenient.returncode == 0, out
    assert "skipped" in out.splitlines()[-1] and "failed" not in out.splitlines()[-1], out


def test_unrun_areas_needs_one_pass_per_selected_area() -> None:
    bwrap = "tests/test_sandbox.py::test_kill[bwrap]"
    unshare = "tests/test_zoo.py::test_zoo_bot[unshare-fork_bomb]"
    browser = "tests/test_html_browser.py::test_screenshot_is_not_blank"
    other = "tests/test_scoring.py::test_bounds"
    # Nothing of an area selected (a -k subset): nothing to say about it.
    assert unrun_areas([other], {other}) == []
    # Selected and passed: fine; selected and only skipped: named.
    assert unrun_areas([bwrap, unshare, browser], {bwrap, unshare, browser}) == []
    missing = unrun_areas([bwrap, unshare, browser, other], {unshare, other})
    assert [m.split(":")[0] for m in missing] == [
        "the bwrap sandbox layer",
        "the headless browser tests",
    ]
    # Landlock and basic tests are not the bwrap layer's.
    assert unrun_areas(["tests/test_sandbox.py::test_kill[landlock]"], set()) == []
