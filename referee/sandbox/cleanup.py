"""What a bot leaves behind, removed whatever it is: its scratch tree (any depth, any
modes), its System V IPC objects and POSIX shared memory where its layer gives it no
IPC namespace, and the scratch directories of a referee that was killed.

Nothing here raises: a bot must never be able to fail the teardown of its match.

Trees are walked with directory file descriptors, never by path and never by
recursion: a chain of directories deeper than PATH_MAX, or deeper than Python's
recursion limit, is removed like any other. Each directory is opened relative to its
parent with ``O_NOFOLLOW``, so a symbolic link the bot planted is removed, never
followed; going back up opens ``..`` and checks that it is the directory it came
from (device and inode), else it starts again from the top.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .base import Limits
from .identity import bot_uid_range

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
# Passes over the whole tree before giving up (each pass fixes what the last one
# could not: a mode, a directory that changed under it).
_PASSES = 4


def _open_dir(name: str, dir_fd: int | None) -> int | None:
    """A directory fd for ``name`` (relative to ``dir_fd``), giving the directory the
    owner's rights first if it is closed to us; None if it is not a directory."""
    for attempt in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except PermissionError:
            if attempt:
                return None
            try:
                # lstat first: chmod by name follows links, and this must be a directory.
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    return None
                os.chmod(name, 0o700, dir_fd=dir_fd)
            except OSError:
                return None
        except OSError:
            return None
    return None


def _unlink(name: str, dir_fd: int, is_dir: bool) -> bool:
    """Remove one entry of the directory ``dir_fd``; fixes the directory's own mode
    (a bot may leave it read-only) and tries once more."""
    for attempt in range(2):
        try:
            if is_dir:
                os.rmdir(name, dir_fd=dir_fd)
            else:
                os.unlink(name, dir_fd=dir_fd)
            return True
        except FileNotFoundError:
            return True
        except IsADirectoryError:
            is_dir = True
        except OSError as exc:
            if exc.errno == errno.ENOTEMPTY or attempt:
                return False
            with contextlib.suppress(OSError):
                os.fchmod(dir_fd, 0o700)
    return False


def _scan(fd: int) -> list[str]:
    """Unlink every entry of the directory ``fd`` that is not a directory; return the
    names of the directories."""
    subdirs: list[str] = []
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o700)  # read, write and search it, whoever made it
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    subdirs.append(entry.name)
                else:
                    _unlink(entry.name, fd, False)
    except OSError:
        pass
    return subdirs


def _empty_one_pass(top_fd: int) -> None:
    """Remove everything below the directory ``top_fd`` that can be removed, depth
    first, holding one directory descriptor at a time (two while moving)."""
    top = os.fstat(top_fd)
    # The way down: for each directory below the top, (its name, device, inode, the
    # directories of its parent still to do).
    path: list[tuple[str, int, int, list[str]]] = []
    fd = os.dup(top_fd)
    pending = _scan(fd)
    try:
        while True:
            if pending:
                name = pending.pop()
                child = _open_dir(name, fd)
                if child is None:
                    _unlink(name, fd, True)  # closed for good: removed only if empty
                    continue
                st = os.fstat(child)
                path.append((name, st.st_dev, st.st_ino, pending))
                os.close(fd)
                fd = child
                pending = _scan(fd)
                continue
            # This directory is as empty as it gets: remove it from its parent.
            if not path:
                return
            name, _dev, _ino, pending = path.pop()
            want = (path[-1][1], path[-1][2]) if path else (top.st_dev, top.st_ino)
            parent = _parent(fd, want)
            os.close(fd)
            fd = parent
            if fd < 0:
                return  # lost the way up; the next pass starts from the top again
            _unlink(name, fd, True)
    finally:
        if fd >= 0:
            os.close(fd)


def _parent(fd: int, want: tuple[int, int]) -> int:
    """A new fd for ``..`` of ``fd`` if it is the directory ``want`` (device, inode)
    the walk came down from, else -1."""
    try:
        up = os.open("..", _DIR_FLAGS, dir_fd=fd)
    except OSError:
        return -1
    st = os.fstat(up)
    if (st.st_dev, st.st_ino) != want:
        os.close(up)
        return -1
    return up


def remove_tree(top: str | os.PathLike[str]) -> bool:
    """Remove the directory ``top`` and everything in it, whatever its depth, modes or
    owners (as far as this process's rights go); a link at ``top`` is removed, not
    followed. True when nothing is left. Never raises."""
    top = os.fspath(top)
    try:
        parent_fd = os.open(os.path.dirname(top) or ".", _DIR_FLAGS)
    except OSError:
        return not os.path.lexists(top)
    name = os.path.basename(top)
    try:
        for _ in range(_PASSES):
            fd = _open_dir(name, parent_fd)
            if fd is None:
                _unlink(name, parent_fd, False)  # a file or link in its place
            else:
                try:
                    _empty_one_pass(fd)
                except Exception:  # noqa: S110 - a teardown must not fail
                    pass
                finally:
                    os.close(fd)
                _unlink(name, parent_fd, True)
            try:
                os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            except FileNotFoundError:
                return True
            except OSError:
                pass
        return False
    except Exception:
        return False
    finally:
        os.close(parent_fd)


# ---------------------------------------------------------------------------
# Scratch directories, and those of a referee that was killed

SCRATCH_PREFIX = "referee-seat"
# A scratch directory D is owned by whoever holds an flock on D + LOCK_SUFFIX (a file
# next to it, out of the bot's reach). The lock is taken before D exists and let go
# only once D is gone, so a directory whose lock can be taken has no live owner.
LOCK_SUFFIX = ".lock"
_SCRATCH_NAME = re.compile(re.escape(SCRATCH_PREFIX) + r"\d+-[A-Za-z0-9_]+\Z")
# A sweep can win the race for a lock file just made; each loss costs one new name.
_LOCK_ATTEMPTS = 20


class Scratch:
    """A bot's writable directory, with the lock that tells other referees it is in
    use (see :func:`sweep_stale_scratch`)."""

    def __init__(self, seat: int, base: str | None = None) -> None:
        base = base or tempfile.gettempdir()
        for attempt in range(_LOCK_ATTEMPTS):
            fd, lock = tempfile.mkstemp(
                prefix=f"{SCRATCH_PREFIX}{seat}-", suffix=LOCK_SUFFIX, dir=base
            )
            # Another referee's start-up sweep can find the new lock file before we
            # lock it and take it for a dead referee's: it then holds the lock, or has
            # already removed the file. Either way, leave it to that sweep and make
            # another.
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                mine = os.fstat(fd)
                named = os.stat(lock, follow_symlinks=False)
                if (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino):
                    break
                os.close(fd)
            except (BlockingIOError, FileNotFoundError):
                os.close(fd)
            except BaseException:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(lock)
                raise
            if attempt == _LOCK_ATTEMPTS - 1:
                raise BlockingIOError(errno.EAGAIN, "every new lock file was taken by a sweep")
        try:
            os.set_inheritable(fd, False)
            self.path = Path(lock[: -len(LOCK_SUFFIX)])
            self.path.mkdir(mode=0o700)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(lock)
            raise
        self.lock = Path(lock)
        self._fd = fd

    def remove(self) -> bool:
        """Remove the directory, then its lock; True when the directory is gone (the
        lock stays, held, until then). Never raises."""
        gone = remove_tree(self.path)
        if gone and self._fd >= 0:
            with contextlib.suppress(OSError):
                self.lock.unlink()
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        return gone


def _may_be_its_sandbox(uid: int, bot_uids: range) -> bool:
    """Whether a process of ``uid`` may be part of a sandbox that a referee of this
    user made: its own uid, or (a root referee) a bot uid of ``bot_uids``."""
    return uid == os.geteuid() or (os.geteuid() == 0 and uid in bot_uids)


def _processes_naming(directory: str, owned_by: Callable[[int], bool]) -> Iterator[int]:
    """The processes, of a uid ``owned_by`` accepts, that name ``directory`` as a
    whole argument (bwrap's ``--chdir``, ``--tmpfs``) or run in it or below (a bot's
    working directory). The directory's name is random: nothing else has a reason
    to name it. Processes that vanish while read are passed over."""
    me = os.getpid()
    needle = directory.encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            if not owned_by(os.stat(f"/proc/{entry}").st_uid):
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                named = needle in f.read().split(b"\0")
            if not named:
                cwd = os.readlink(f"/proc/{entry}/cwd")
                named = cwd == directory or cwd.startswith(directory + "/")
        except OSError:
            continue
        if named:
            yield int(entry)


def _users_of(directory: str, bot_uids: range) -> list[int]:
    """The processes that run a dead referee's sandbox for the scratch ``directory``:
    of a uid a referee of this user runs its launches and bots as."""
    return list(_processes_naming(directory, lambda uid: _may_be_its_sandbox(uid, bot_uids)))


def _kill_users(directory: str, bot_uids: range) -> int:
    """Kill the sandbox a dead referee left running for ``directory`` (with every
    descendant); returns how many processes were hit. Never raises."""
    from .proctree import kill_tree

    hit = 0
    try:
        # A launch may be starting another process as we look: look again until a
        # pass finds nobody (bounded).
        for _ in range(5):
            pids = _users_of(directory, bot_uids)
            if not pids:
                break
            for pid in pids:
                hit += kill_tree(pid)
    except Exception:  # noqa: S110 - a sweep must not fail
        pass
    return hit


# A scratch directory without a lock file (a referee of a version before the locks
# made it) is swept only once it has not changed for this long, and nothing runs in
# it or names it.
LOCKLESS_STALE_S = 600.0


def _used_by_anyone(directory: str) -> bool:
    """Whether any process runs in ``directory`` (or below) or names it as a whole
    argument, whoever it runs as."""
    if not os.path.isdir("/proc"):
        return True  # cannot tell: in use, for all we know
    return any(_processes_naming(directory, lambda uid: True))


def _sweep_lockless(base: str, name: str, bot_uids: range) -> bool:
    """Remove the lock-less scratch directory ``name`` of ``base`` if it is an older
    referee's that nothing uses any more: unchanged for LOCKLESS_STALE_S, nothing
    running in it or naming it, and owned by this referee's own uid or (a root
    referee) by a bot uid of ``bot_uids`` whose lease no live referee holds (held here while the
    directory is removed, so no bot can be given that uid meanwhile). True when it
    was removed."""
    from .identity import lease_if_free

    directory = os.path.realpath(os.path.join(base, name))
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or time.time() - st.st_mtime < LOCKLESS_STALE_S:
        return False
    if st.st_uid == os.geteuid():
        return not _used_by_anyone(directory) and remove_tree(directory)
    if os.geteuid() != 0 or st.st_uid not in bot_uids:
        return False  # another user's: not ours to judge
    with lease_if_free(st.st_uid) as free:
        return free and not _used_by_anyone(directory) and remove_tree(directory)


def sweep_stale_scratch(base: str | None = None, limits: Limits | None = None) -> list[str]:
    """Remove the scratch directories (and their locks) in ``base`` whose referee is
    gone: those whose lock file this process can lock, killing first what still runs
    of their sandbox (a bwrap whose launcher died while it was set up never armed
    --die-with-parent, and lives on with its bot). A directory without a lock file
    (an older referee's) is removed only by the stricter rule of
    :func:`_sweep_lockless`. As root, the bots' processes and directories are told
    by the uid range of ``limits`` (the referee's configured one; the default range
    when None). Returns the directories removed. Never raises."""
    base = base or tempfile.gettempdir()
    bot_uids = bot_uid_range(limits if limits is not None else Limits())
    removed: list[str] = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    present = set(names)
    for name in names:
        # (A referee of today makes the lock before the directory, and removes it
        # after: a directory without one is an older referee's.)
        if _SCRATCH_NAME.match(name) and name + LOCK_SUFFIX not in present:
            try:
                if _sweep_lockless(base, name, bot_uids):
                    removed.append(os.path.join(base, name))
            except Exception:  # noqa: S110 - a sweep must not fail
                pass
    for name in names:
        if not name.endswith(LOCK_SUFFIX) or not _SCRATCH_NAME.match(name[: -len(LOCK_SUFFIX)]):
            continue
        lock = os.path.join(base, name)
        try:
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                continue  # not a lock a referee of ours made
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its referee is alive
            directory = lock[: -len(LOCK_SUFFIX)]
            # Still the file we locked (not removed and made again by its owner meanwhile).
            with contextlib.suppress(OSError):
                now = os.stat(lock, follow_symlinks=False)
                if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                    continue
                _kill_users(os.path.realpath(directory), bot_uids)
                if remove_tree(directory):
                    os.unlink(lock)
                    removed.append(directory)
        finally:
            os.close(fd)
    return removed


# ---------------------------------------------------------------------------
# System V IPC objects and POSIX shared memory

# /proc/sysvipc/<kind>: the columns that name an object's id, its owner's uid, and
# the pids that made or last used it (shm: creator; msg: last sender and receiver;
# sem keeps none).
_IPC_TABLES = {
    "shm": ("shmid", ("cpid", "lpid")),
    "msg": ("msqid", ("lspid", "lrpid")),
    "sem": ("semid", ()),
}
_IPC_RMID = 0


def _ipc_objects(kind: str) -> list[dict[str, int]]:
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    if not lines:
        return []
    names = lines[0].split()
    rows = []
    for line in lines[1:]:
        values = line.split()
        if len(values) >= len(names):
            with contextlib.suppress(ValueError):
                rows.append({n: int(v) for n, v in zip(names, values, strict=False)})
    return rows


def _ipc_rmid(kind: str, ident: int) -> bool:
    from .base import libc

    lib = libc()
    if kind == "shm":
        result = lib.shmctl(ident, _IPC_RMID, None)
    elif kind == "msg":
        result = lib.msgctl(ident, _IPC_RMID, None)
    else:
        result = lib.semctl(ident, 0, _IPC_RMID)
    return int(result) == 0


def remove_ipc(uid: int | None, pids: set[int]) -> list[str]:
    """Remove the System V shared memory segments, message queues and semaphore sets
    of a bot that had no IPC namespace of its own: every one owned or created by
    ``uid`` (a uid the bot had alone: the referee is root), else the segments and
    queues that one of ``pids`` (the bot's processes) made or used last. Returns
    "kind id" for each removed. Never raises."""
    removed: list[str] = []
    try:
        for kind, (id_col, pid_cols) in _IPC_TABLES.items():
            for row in _ipc_objects(kind):
                owned = uid is not None and uid in (row.get("uid"), row.get("cuid"))
                used = any(row.get(col) in pids for col in pid_cols)
                if (owned or used) and id_col in row and _ipc_rmid(kind, row[id_col]):
                    removed.append(f"{kind} {row[id_col]}")
    except Exception:  # noqa: S110 - a teardown must not fail
        pass
    return removed


# Shared places a bot without a private file system can write to.
SHARED_PLACES = ("/dev/shm", "/tmp", "/var/tmp")


def remove_owned(uid: int, places: tuple[str, ...] = SHARED_PLACES) -> list[str]:
    """Remove every entry directly in ``places`` that ``uid`` owns (POSIX shared
    memory is a file in /dev/shm): for a uid that only the torn-down bot had, all
    of them are its leftovers. Returns the paths removed. Never raises."""
    removed: list[str] = []
    for place in places:
        try:
            names = os.listdir(place)
        except OSError:
            continue
        for name in names:
            path = os.path.join(place, name)
            try:
                if os.lstat(path).st_uid == uid and remove_tree(path):
                    removed.append(path)
            except OSError:
                continue
    return removed


# ---------------------------------------------------------------------------
# The kernel keyrings of a uid

_KEYCTL_CLEAR = 7
_KEY_SPEC_USER_KEYRING = -4
_KEY_SPEC_USER_SESSION_KEYRING = -5
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}


def clear_keyrings(uid: int) -> bool:
    """Empty the user and user-session keyrings of ``uid``, which outlive its
    processes and would be handed to the next bot leased the same uid. Only for a
    uid of a bot's own (the referee is root): a child process becomes ``uid`` and
    clears them. True when both were cleared. Never raises."""
    nr = _SYS_KEYCTL.get(os.uname().machine)
    if nr is None or os.geteuid() != 0:
        return False
    try:
        child = os.fork()
    except OSError:
        return False
    if child == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            from .base import libc

            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            lib = libc()
            cleared = [
                lib.syscall(nr, _KEYCTL_CLEAR, ring, 0, 0, 0) == 0
                for ring in (_KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING)
            ]
            code = 0 if all(cleared) else 1
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(child, 0)
    except OSError:
        return False
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
