"""Zoo: memory in a SysV shared memory segment. At round 3 it makes 32
segments of 16 MiB, each attached, filled and detached at once (no process maps
more than 16 MiB at any moment, so a resident set sampled now and then shows next
to nothing), prints "sysv: held 512 MiB" and keeps answering. The segments are
removed by the bot at the end of the match (when it gets "end"); a killed bot
leaves them to the IPC namespace or the teardown.

Expected verdict: memory_limit -> disqualified where the bot has a memory cgroup
(the segment's pages are charged to it); where the referee only samples resident
sets they go unseen ("sysv: held 512 MiB").
"""

import ctypes
import sys

import zoolib

TOTAL = 512 << 20
EACH = 16 << 20
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
segments: list[int] = []


def bad(round_: int) -> bool:
    for _ in range(TOTAL // EACH):
        shmid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(EACH), IPC_CREAT | 0o600)
        if shmid < 0:
            zoolib.log(f"sysv: refused (errno {ctypes.get_errno()})")
            return False
        segments.append(shmid)
        addr = libc.shmat(shmid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            zoolib.log(f"sysv: attach refused (errno {ctypes.get_errno()})")
            return False
        ctypes.memset(addr, 4, EACH)
        libc.shmdt(addr)
    zoolib.log(f"sysv: held {TOTAL >> 20} MiB")
    return False


try:
    zoolib.play("sysv_hog", bad)
finally:
    for shmid in segments:
        libc.shmctl(shmid, IPC_RMID, None)
    sys.stderr.flush()
