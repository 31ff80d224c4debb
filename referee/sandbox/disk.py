"""How much a bot has written: its scratch directory's size and number of entries,
and (under bwrap) its private /tmp and /dev/shm, read through /proc/<pid>/root.
The watchdog compares it with ``Limits.disk_mib`` and ``Limits.disk_files``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class DiskUsage(NamedTuple):
    bytes: int  # allocated, so a sparse file counts what it really takes
    entries: int  # files, directories, links, ...


def _walk(top: str, budget: int) -> DiskUsage:
    """Size and entries under ``top``, without following links; stops counting once
    ``budget`` entries have been seen (the caller is over its limit then anyway)."""
    total = entries = 0
    stack = [top]
    while stack and entries <= budget:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    entries += 1
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return DiskUsage(total, entries)


def _tmpfs_used(path: str) -> DiskUsage:
    try:
        st = os.statvfs(path)
    except OSError:
        return DiskUsage(0, 0)
    return DiskUsage((st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree)


def disk_usage(scratch: Path, pids: list[int], private_tmp: bool, budget: int) -> DiskUsage:
    """What the bot whose live tree is ``pids`` holds in its writable places. Never
    raises."""
    used = _walk(str(scratch), budget)
    if private_tmp and pids and not _host_root(f"/proc/{pids[-1]}/root"):
        # The deepest process is the bot itself, inside the sandbox's mount namespace
        # (while the sandbox is still being set up it may not be there yet: its root
        # is then this machine's, whose /tmp is not the bot's).
        root = f"/proc/{pids[-1]}/root"
        for place in ("tmp", "dev/shm"):
            extra = _tmpfs_used(f"{root}/{place}")
            used = DiskUsage(used.bytes + extra.bytes, used.entries + extra.entries)
    return used


def _host_root(root: str) -> bool:
    """Whether ``root`` (a /proc/<pid>/root) is this process's own root directory;
    True also when it cannot be read (the process is gone)."""
    try:
        there, here = os.stat(root), os.stat("/")
    except OSError:
        return True
    return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)
