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
