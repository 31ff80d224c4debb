"""Zoo: at round 3 it makes system calls that the layers' seccomp filter refuses
(referee/sandbox/seccomp.py), each in a form that is harmless where it is allowed, and reports
"<probe>: blocked" when the call failed with EPERM and "<probe>: allowed (...)"
otherwise; then it plays on.

- ptrace: PTRACE_PEEKDATA on itself without being traced (ESRCH when allowed);
- io_uring: io_uring_setup with zero entries (EINVAL when allowed);
- keyring: keyctl(KEYCTL_GET_KEYRING_ID) of the session keyring;
- affinity: sched_setaffinity to the CPUs it already has;
- slice: sched_setattr asking for a 3 ms time slice (Linux 6.12+ honours it);
- mount: mount of a tmpfs on a directory that does not exist (ENOENT when allowed).

Expected verdict: ok; under a layer with "syscalls" isolation every probe is blocked.
"""

import ctypes
import errno
import os
import platform

import zoolib

_NR = {  # x86_64 and the asm-generic table (aarch64, riscv64)
    "x86_64": {"ptrace": 101, "io_uring_setup": 425, "keyctl": 250, "sched_setattr": 314},
    "generic": {"ptrace": 117, "io_uring_setup": 425, "keyctl": 219, "sched_setattr": 274},
}
NR = _NR["x86_64" if platform.machine() == "x86_64" else "generic"]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class SchedAttr(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint32),
        ("sched_policy", ctypes.c_uint32),
        ("sched_flags", ctypes.c_uint64),
        ("sched_nice", ctypes.c_int32),
        ("sched_priority", ctypes.c_uint32),
        ("sched_runtime", ctypes.c_uint64),
        ("sched_deadline", ctypes.c_uint64),
        ("sched_period", ctypes.c_uint64),
    ]


def outcome(result: int) -> str:
    if result >= 0:
        return "allowed (succeeded)"
    err = ctypes.get_errno()
    if err == errno.EPERM:
        return "blocked"
    return f"allowed ({errno.errorcode.get(err, err)})"


def syscall(name: str, *args: object) -> str:
    return outcome(libc.syscall(ctypes.c_long(NR[name]), *args))


def bad(round_: int) -> bool:
    peek = (ctypes.c_long(2), ctypes.c_long(os.getpid()), ctypes.c_long(0), ctypes.c_long(0))
    zoolib.log("ptrace: " + syscall("ptrace", *peek))
    zoolib.log("io_uring: " + syscall("io_uring_setup", ctypes.c_uint32(0), ctypes.c_void_p(0)))
    zoolib.log("keyring: " + syscall("keyctl", ctypes.c_int(0), ctypes.c_int(-3), ctypes.c_int(0)))
    try:
        os.sched_setaffinity(0, os.sched_getaffinity(0))
        zoolib.log("affinity: allowed (succeeded)")
    except OSError as exc:
        ctypes.set_errno(exc.errno or 0)
        zoolib.log("affinity: " + outcome(-1))
    attr = SchedAttr(size=ctypes.sizeof(SchedAttr), sched_nice=os.getpriority(0, 0))
    attr.sched_runtime = 3_000_000
    zoolib.log("slice: " + syscall("sched_setattr", ctypes.c_int(0), ctypes.byref(attr), 0))
    result = libc.mount(b"none", b"/nonexistent-referee-zoo-dir", b"tmpfs", ctypes.c_ulong(0), None)
    zoolib.log("mount: " + outcome(result))
    return False


zoolib.play("refused_syscalls", bad)
