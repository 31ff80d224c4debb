"""Where a server's matches keep their scratch files, and the sweep at start-up of
what a killed server left there.

Every match the server plays on its machine makes a scratch directory for each bot
(``referee-seat*``, the bot's working directory, removed when the match ends).
The server points its workers' temporary directory (``TMPDIR``) at ``scratch/`` in
its data directory, so that everything of that kind belongs to one data directory,
and only one server runs on a data directory at a time (``server.lock``). A
server stopped with SIGTERM ends its matches, and the matches remove their
directories; one killed with ``kill -9`` (or whose worker was killed) may leave
directories there, and bot processes that still run from them. The next server on
that data directory, holding the lock, removes both before it plays anything; the
scratch directories and bots of other servers on the machine are never touched
(they live under their own data directories).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SCRATCH = "scratch"


def scratch_root(data_dir: Path) -> Path:
    """The parent of this data directory's bot scratch directories, made if missing.

    It may be entered by every uid (0711: the bots run as uids of their own and
    must reach their scratch directory, which is theirs alone) but listed only by
    the server."""
    root = data_dir.resolve() / SCRATCH
    root.mkdir(exist_ok=True)
    os.chmod(root, 0o711)
    return root


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


def leftover_processes(root: Path) -> list[int]:
    """Processes that run from a scratch directory under ``root`` (their working
    directory) or name one on their command line (a sandbox's launcher)."""
    me = os.getpid()
    needle = (str(root) + "/").encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me and _mentions(entry, needle, str(root)):
            found.append(int(entry))
    return found


def sweep(data_dir: Path) -> tuple[int, int]:
    """Kill the bots and remove the scratch directories a server of ``data_dir``
    left behind (call it holding the data directory's lock, before any match
    starts). Returns (processes killed, directories removed)."""
    from .. import sandbox

    root = scratch_root(data_dir)
    killed = 0
    # A process may start another while we look (a bot's launcher mid-start): look
    # again until a pass finds nobody.
    for _ in range(5):
        pids = leftover_processes(root)
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
