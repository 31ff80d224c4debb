"""Zoo: at round 3 it asks to be traced by its parent (PTRACE_TRACEME), then forks a
child that exits at once. Where the call is allowed (basic: no seccomp filter) its
parent is the referee, which gets a stop report instead of an exit when the child's
SIGCHLD comes (``os.waitstatus_to_exitcode`` raised on it and crashed the
referee). The bot plays on.

Expected verdict: ok in every layer; "ptrace: blocked" where the filter refuses it.
"""

import ctypes
import errno
import os

import zoolib

libc = ctypes.CDLL(None, use_errno=True)
PTRACE_TRACEME = 0


def bad(round_: int) -> bool:
    if libc.ptrace(PTRACE_TRACEME, 0, None, None) < 0:
        err = ctypes.get_errno()
        zoolib.log("ptrace: blocked" if err == errno.EPERM else f"ptrace: {errno.errorcode[err]}")
    else:
        zoolib.log("ptrace: traced")
    for _ in range(3):
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
    zoolib.log("ptrace_fork: forked")
    return False


zoolib.play("ptrace_fork", bad)
