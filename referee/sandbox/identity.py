"""Who a bot runs as. When the referee is root, each bot gets an unprivileged uid (and
the same gid) of its own from ``Limits.uid_first`` .. ``uid_first + uid_count - 1``,
leased for as long as its tree may live, so that two bots, in one match or in two
matches running side by side, never share a uid: they cannot signal or renice each
other, nor touch each other's files. When the referee is not root, the bot keeps the
referee's uid (and holds no capabilities either way).

A lease is an exclusive ``flock`` on a file per uid in a root-owned directory, held
by this process until :func:`release_uid` (or until it exits): it works across the
processes of a league without any other coordination.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .base import Limits, SandboxError


class BotUnreachable(SandboxError):
    """The uid a bot runs as cannot open the bot's own files: a set-up mistake
    of whoever runs the referee, not a fault of the bot."""


_leases: dict[int, int] = {}  # uid -> fd holding its lock


def _lock_path() -> Path:
    base = Path("/run") if os.path.isdir("/run") else Path(tempfile.gettempdir())
    return base / "referee-uids"


def _lock_dir() -> Path:
    path = _lock_path()
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = path.lstat()
    except OSError as exc:
        raise SandboxError(f"cannot keep bot uid leases in {path}: {exc}") from exc
    # Anyone else's directory (made by a bot beforehand, say) could fake the leases.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise SandboxError(f"{path} is not a directory of root's alone")
    return path


def bot_uid_range(limits: Limits) -> range:
    """The uids a root referee with these limits leases to its bots."""
    return range(limits.uid_first, limits.uid_first + limits.uid_count)


def ever_leased() -> frozenset[int]:
    """The uids some root referee on this machine has leased to a bot, whatever its
    range (a lease's file stays after the lease); empty where the leases cannot be
    read. Never raises."""
    try:
        names = os.listdir(_lock_path())
    except OSError:
        return frozenset()
    return frozenset(int(name) for name in names if name.isdigit())


def lease_uid(limits: Limits) -> tuple[int, int] | None:
    """(uid, gid) for one bot when the referee is root, else None."""
    if os.geteuid() != 0:
        return None
    if limits.uid_first < 1 or limits.uid_count < 1:
        raise SandboxError("the bots' uid range must start above 0 and hold at least one uid")
    directory = _lock_dir()
    for uid in bot_uid_range(limits):
        if uid in _leases:
            continue
        fd = os.open(directory / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _leases[uid] = fd
        return uid, uid
    raise SandboxError(
        f"all {limits.uid_count} bot uids from {limits.uid_first} are in use by running bots"
    )


@contextlib.contextmanager
def lease_if_free(uid: int) -> Iterator[bool]:
    """Hold the lease of ``uid`` for the block if no referee holds it (a root
    referee only); yields whether this process holds it. Never raises of its own."""
    fd = -1
    if os.geteuid() == 0 and uid not in _leases:
        try:
            fd = os.open(_lock_dir() / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (OSError, SandboxError):
            if fd >= 0:
                os.close(fd)
            fd = -1
    try:
        yield fd >= 0
    finally:
        if fd >= 0:
            os.close(fd)


def release_uid(uid: int | None) -> None:
    """End the lease of ``uid`` (once nothing of its bot can be left). Never raises."""
    fd = _leases.pop(uid, None) if uid is not None else None
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def lease_held(uid: int) -> bool:
    """Whether some referee holds the lease of ``uid`` now: a process of that uid may
    be a live bot's, not one left behind. False for a uid never leased, and where
    the leases cannot be read (the caller is not root). Never raises."""
    if uid in _leases:
        return True
    try:
        fd = os.open(_lock_path() / str(uid), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go at once, by the close
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def unreachable(path: str, uid: int, gid: int, need: int) -> str | None:
    """Why ``uid`` (with only ``gid``) cannot use ``path`` with the permission bits
    ``need`` (``os.R_OK``, ``os.X_OK``), by the ordinary permission rules applied to
    the file and its own directory; None when it can. A bot's own files in a
    root-only directory are the usual case: the bot starts, cannot open its script,
    and exits at once."""
    target = Path(os.path.abspath(path))
    for place, bits in ((target.parent, os.X_OK), (target, need)):
        try:
            st = place.stat()
        except OSError:
            return None  # not ours to judge: the launch reports what is missing
        if st.st_uid == uid:
            allowed = (st.st_mode >> 6) & 7
        elif st.st_gid == gid:
            allowed = (st.st_mode >> 3) & 7
        else:
            allowed = st.st_mode & 7
        if allowed & bits != bits:
            return f"{place} is mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}"
    return None
