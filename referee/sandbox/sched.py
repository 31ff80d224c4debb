"""Scheduling of a bot's threads: the CPUs they may run on and the time slices they
ask for. Speed only: a thread that is gone or refuses is passed over."""

from __future__ import annotations

import ctypes
import os

from .base import libc
from .proctree import tree_tids


def spread_tree(pid: int, cpus: set[int]) -> int:
    """Let every thread of ``pid`` and its descendants run on ``cpus`` (a bot started
    confined to fewer); returns how many threads took it. Speed only: a thread that
    is gone, or refuses, is passed over, and one started during the walk keeps the
    CPUs of the thread that started it."""
    done = 0
    for tid in tree_tids(pid):
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:
            continue
        done += 1
    return done


def slice_tree(pid: int, ns: int) -> int:
    """Ask for time slices of ``ns`` nanoseconds (0: the kernel's default) for every
    thread of ``pid`` and its descendants; threads and processes they start later
    inherit it. Returns how many threads took it: speed only, like spread_tree."""
    return sum(set_slice(tid, ns) for tid in tree_tids(pid))


class _SchedAttr(ctypes.Structure):
    _fields_ = [  # struct sched_attr, first version (48 bytes)
        ("size", ctypes.c_uint32),
        ("sched_policy", ctypes.c_uint32),
        ("sched_flags", ctypes.c_uint64),
        ("sched_nice", ctypes.c_int32),
        ("sched_priority", ctypes.c_uint32),
        ("sched_runtime", ctypes.c_uint64),
        ("sched_deadline", ctypes.c_uint64),
        ("sched_period", ctypes.c_uint64),
    ]


# (sched_setattr, sched_getattr) on this machine; elsewhere no slice is asked for.
_SCHED_ATTR_CALLS = {"x86_64": (314, 315), "aarch64": (274, 275), "riscv64": (274, 275)}.get(
    os.uname().machine
)
_FAIR_POLICIES = (os.SCHED_OTHER, os.SCHED_BATCH)


def set_slice(tid: int, ns: int) -> bool:
    """Ask the kernel to run thread ``tid`` (0: the calling one) in time slices of
    ``ns`` nanoseconds (0: the default), keeping its policy and nice value. Linux
    6.12 and later take the request (sched_attr.sched_runtime of a fair task, kept
    between 0.1 and 100 ms); older kernels accept and ignore it. False where it
    cannot be asked: another architecture, a real-time thread, a thread that is gone
    or not ours."""
    if _SCHED_ATTR_CALLS is None:
        return False
    setattr_nr, getattr_nr = _SCHED_ATTR_CALLS
    lib = libc()
    attr = _SchedAttr()
    size = ctypes.sizeof(attr)
    if lib.syscall(ctypes.c_long(getattr_nr), tid, ctypes.byref(attr), size, 0) != 0:
        return False
    if attr.sched_policy not in _FAIR_POLICIES:
        return False
    attr.size, attr.sched_flags, attr.sched_runtime = size, 0, ns
    return lib.syscall(ctypes.c_long(setattr_nr), tid, ctypes.byref(attr), 0) == 0


def _autogroups_on() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled", "rb") as f:
            return f.read().strip() == b"1"
    except OSError:
        return False


def session_nice(pid: int) -> int | None:
    """The nice value of the scheduling group of ``pid``'s session (Linux's
    automatic process groups, ``/proc/<pid>/autogroup``), or None where the kernel
    has none or ``pid`` is gone."""
    try:
        with open(f"/proc/{pid}/autogroup", "rb") as f:
            fields = f.read().split()  # b"/autogroup-123 nice 0"
    except OSError:
        return None
    if len(fields) != 3 or fields[1] != b"nice":
        return None
    return int(fields[2])


def group_nice_to_carry() -> int:
    """The nice value the session groups of the processes we start should take:
    ours, where the kernel groups processes by session (there a process's own nice
    value counts only against others of its session, so a niced referee's bots,
    each in a session of its own, would otherwise run at the groups' default
    weight); 0 (nothing to do) where it does not or we are not niced."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    return nice if nice > 0 and _autogroups_on() else 0


def carry_nice(pid: int, nice: int) -> bool:
    """Raise the nice value of the scheduling group of ``pid``'s session to
    ``nice`` if it is below (a bot may lower its own group's again where it can
    write /proc). Returns True if it is to be tried again later: the kernel takes
    an unprivileged change of a group's nice value only once every 100 ms, machine
    wide. A group that is gone or not ours is passed over (False), as slice_tree
    passes over threads."""
    now = session_nice(pid)
    if now is None or now >= nice:
        return False
    try:
        fd = os.open(f"/proc/{pid}/autogroup", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.write(fd, str(nice).encode())
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
