"""Scratch directories of matches and the processes that run from them.

A match makes a scratch directory for each bot (``referee-seat*``, the bot's
working directory) in its process's temporary directory, and removes it when the
match ends, with the bots. A match process killed outright cannot: its
directories stay, and so may its bots, whose sandbox need not die with it (bwrap's
``--die-with-parent`` reaches only its own launcher, which may be killed before
it has even set that up, and a sandbox's pid 1 then lives as long as the bot in it
does). Whoever gave the match its temporary directory (``TMPDIR``) can find both
there: a bot runs from its scratch directory and its sandbox names it on its
command line.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def _mentions(pid: str, needle: bytes, root: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if needle in f.read():
                return True
    except OSError:
        pass
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    return cwd == root or cwd.startswith(root + "/")


def processes_using(root: Path) -> list[int]:
    """Processes that run from a directory under ``root`` (their working directory)
    or name one on their command line (a sandbox's launcher and its pid 1)."""
    me = os.getpid()
    needle = (str(root) + "/").encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me and _mentions(entry, needle, str(root)):
            found.append(int(entry))
    return found


def sweep(root: Path) -> tuple[int, int]:
    """Kill every process using ``root`` (with its process group and descendants)
    and remove everything in it. Only for a directory no live match uses. Returns
    (processes killed, entries removed)."""
    from . import sandbox

    root = root.resolve()
    if not root.is_dir():
        return 0, 0
    killed = 0
    # A process may start another while we look (a launcher mid-start): look again
    # until a pass finds nobody.
    for _ in range(5):
        pids = processes_using(root)
        if not pids:
            break
        for pid in pids:
            killed += sandbox.kill_tree(pid) > 0
    removed = 0
    for entry in root.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed += 1
    return killed, removed
