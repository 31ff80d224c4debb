"""Shared helpers: run the real CLI, find leftover bot processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).resolve().parent / "bots"

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


async def submit_then(
    executor: Any,
    job: Any,
    ready: Callable[[], bool],
    then: Callable[[], Awaitable[None]],
    timeout: float = 30,
) -> Any:
    """Submit ``job`` to a tournament executor and, while it plays, wait until
    ``ready()`` holds (checked every 10 ms, failing after ``timeout`` s), then await
    ``then()``; returns the match outcome."""
    import trio

    result: dict[str, Any] = {}
    async with trio.open_nursery() as nursery:

        async def play() -> None:
            result["outcome"] = await executor.submit(job)

        nursery.start_soon(play)
        with trio.fail_after(timeout):
            while not ready():
                await trio.sleep(0.01)
        await then()
    return result["outcome"]


def has_content(path: Path) -> bool:
    """A file that exists and is not empty (a replay whose header is out)."""
    return path.exists() and path.stat().st_size > 0


def replay_steps(path: Path) -> list[dict[str, Any]]:
    """The step records of a plain replay file, as JSON values."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [line for line in lines if line["type"] == "step"]


def run_cli(
    *args: str,
    timeout: float = 120,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """``python -m referee ARGS`` as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd or ROOT,
        env=env,
    )


def match_json(*args: str, timeout: float = 120) -> dict[str, Any]:
    proc = run_cli("match", *args, "--json", timeout=timeout)
    assert proc.returncode in (0, 3), proc.stderr
    return json.loads(proc.stdout)


def proc_files(*names: str) -> Iterator[tuple[int, dict[str, bytes]]]:
    """(pid, {name: contents}) for every other process whose /proc/<pid>/<name>
    files could all be read (a process may vanish, or hide them, meanwhile)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        files = _read_proc(f"/proc/{entry}", names)
        if files is None or not all(files.values()):
            # A main thread that called pthread_exit is a zombie whose files cannot be
            # read while its other threads run on: read them through a live thread.
            for tid in _listdir(f"/proc/{entry}/task"):
                if tid != entry:
                    files = _read_proc(f"/proc/{entry}/task/{tid}", names) or files
                    break
        if files is not None:
            yield int(entry), files


def _read_proc(where: str, names: tuple[str, ...]) -> dict[str, bytes] | None:
    files = {}
    try:
        for name in names:
            with open(f"{where}/{name}", "rb") as f:
                files[name] = f.read()
    except OSError:
        return None
    return files


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line contains ``text`` (a test's unique path)."""
    needle = text.encode()
    return [pid for pid, f in proc_files("cmdline") if needle in f["cmdline"]]


@pytest.fixture
def bot_copy(tmp_path: Path):
    """Copy a test bot into the test's own directory, so leftover processes are
    recognisable by path and nothing is shared between tests."""

    def make(name: str) -> Path:
        target = tmp_path / name
        target.write_bytes((TEST_BOTS / name).read_bytes())
        return target

    return make
