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


def _own_mounts(pid: int) -> bool:
    """Whether ``pid`` is in a mount namespace other than ours (a launch still on its
    way into the sandbox is not: its /tmp is the host's)."""
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
    except OSError:
        return False


def disk_usage(scratch: Path, pids: list[int], private_tmp: bool, budget: int) -> DiskUsage:
    """What the bot whose live tree is ``pids`` holds in its writable places. Never
    raises."""
    used = _walk(str(scratch), budget)
    if private_tmp and pids and _own_mounts(pids[-1]):
        # The deepest process is the bot itself, inside the sandbox's mount namespace.
        root = f"/proc/{pids[-1]}/root"
        for place in ("tmp", "dev/shm"):
            if _same_filesystem(f"{root}/{place}", f"/{place}"):
                # Not the sandbox's own tmpfs: that process is outside the sandbox
                # (its launcher, or a tree listed before the bot started), and the
                # host's whole file system must not be charged to the bot.
                continue
            extra = _tmpfs_used(f"{root}/{place}")
            used = DiskUsage(used.bytes + extra.bytes, used.entries + extra.entries)
    return used


def _same_filesystem(a: str, b: str) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return True  # unreadable: count nothing rather than the wrong thing
