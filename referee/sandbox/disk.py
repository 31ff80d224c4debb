"""How much a bot has written: its scratch directory's size and number of entries,
and (under bwrap) its private /tmp and /dev/shm, read through /proc/<pid>/root.
The watchdog compares it with ``Limits.disk_mib`` and ``Limits.disk_files``.

Where the layer made the scratch directory a tmpfs of the disk limit ("disk"), the
kernel caps its bytes and nothing is walked: :func:`tmpfs_usage` reads what its file
systems say of themselves (statvfs), for the entry count the layer could not cap."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import NamedTuple


class DiskUsage(NamedTuple):
    bytes: int  # allocated, so a sparse file counts what it really takes
    entries: int  # files, directories, links, ...
    complete: bool = True  # False when the walk stopped at its entry or time budget


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _walk(top: str, budget: int, budget_s: float | None = None) -> DiskUsage:
    """Size and entries under ``top``, without following links, walked with directory
    file descriptors (no path grows with the depth, so nothing deeper than PATH_MAX
    is missed) and without recursion. Stops once ``budget`` entries have been seen
    (the caller is over its limit then anyway) or after ``budget_s`` seconds: a walk
    is bounded whatever the tree, so it cannot stall the match. Never raises."""
    deadline = None if budget_s is None else time.monotonic() + budget_s
    total = entries = 0
    try:
        fd = os.open(top, _DIR_FLAGS)
    except OSError:
        return DiskUsage(0, 0)
    top_st = os.fstat(fd)
    # The way down: (device, inode, the parent's directories still to walk) per level.
    path: list[tuple[int, int, list[str]]] = []
    complete = True
    try:
        pending = _scan(fd)
        total += pending[1]
        entries += pending[2]
        todo = pending[0]
        while True:
            if entries > budget or (deadline is not None and time.monotonic() > deadline):
                complete = False
                break
            if todo:
                name = todo.pop()
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue  # gone, replaced, or closed to us (then it holds nothing we can see)
                st = os.fstat(child)
                path.append((st.st_dev, st.st_ino, todo))
                os.close(fd)
                fd = child
                todo, size, count = _scan(fd)
                total += size
                entries += count
                continue
            if not path:
                break
            _dev, _ino, todo = path.pop()
            want = (path[-1][0], path[-1][1]) if path else (top_st.st_dev, top_st.st_ino)
            try:
                up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            except OSError:
                complete = False
                break
            os.close(fd)
            fd = up
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != want:
                complete = False  # moved under us: what was counted stands
                break
    finally:
        os.close(fd)
    return DiskUsage(total, entries, complete)


def _scan(fd: int) -> tuple[list[str], int, int]:
    """(subdirectory names, bytes, entries) of the directory ``fd`` itself."""
    subdirs: list[str] = []
    total = entries = 0
    try:
        with os.scandir(fd) as it:
            for entry in it:
                entries += 1
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    subdirs.append(entry.name)
    except OSError:
        pass
    return subdirs, total, entries


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


def disk_usage(
    scratch: Path, pids: list[int], private_tmp: bool, budget: int, budget_s: float | None = None
) -> DiskUsage:
    """What the bot whose live tree is ``pids`` holds in its writable places; the walk
    of its scratch directory stops at ``budget`` entries or ``budget_s`` seconds.
    Never raises."""
    used = _walk(str(scratch), budget, budget_s)
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
            used = used._replace(
                bytes=used.bytes + extra.bytes, entries=used.entries + extra.entries
            )
    return used


def tmpfs_usage(scratch: Path, pids: list[int], private_tmp: bool) -> DiskUsage:
    """What the bot whose live tree is ``pids`` holds in its own tmpfs (the scratch
    directory, and /tmp and /dev/shm when ``private_tmp``), as those file systems
    count it: a few statvfs calls through ``/proc/<pid>/root``, whatever the tree.
    A tmpfs's own root directory is not an entry. A place that is still
    the host's (a launch on its way into the sandbox) counts nothing. Never raises."""
    if not pids or not _own_mounts(pids[-1]):
        return DiskUsage(0, 0)
    root = f"/proc/{pids[-1]}/root"
    used = DiskUsage(0, 0)
    places = [(f"{root}{scratch}", str(scratch))]
    if private_tmp:
        places += [(f"{root}/{p}", f"/{p}") for p in ("tmp", "dev/shm")]
    for inside, host in places:
        if _same_filesystem(inside, host):
            continue
        extra = _tmpfs_used(inside)
        used = used._replace(
            bytes=used.bytes + extra.bytes,
            entries=used.entries + max(0, extra.entries - 1),
        )
    return used


def _same_filesystem(a: str, b: str) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return True  # unreadable: count nothing rather than the wrong thing
