"""Zoo: at round 3 it makes a System V shared memory segment (4 MiB, touched), a
message queue holding a message, a semaphore set, and a POSIX shared memory file
in /dev/shm, all under keys and a name it reports on stderr ("ipc: key=0x...",
"posix-shm: /name"); then it plays on and leaves them.

Expected verdict: ok in every layer; none of them is left on the host after the
match (an IPC namespace of its own, or the referee removes them: see the test).
"""

import ctypes
import os
import random

import zoolib

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_CREAT = 0o1000
SIZE = 4 << 20


class MsgBuf(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 64)]


def bad(round_: int) -> bool:
    key = random.randrange(1 << 24, 1 << 30)
    zoolib.log(f"ipc: key={key:#x}")
    made = []
    shmid = libc.shmget(key, SIZE, IPC_CREAT | 0o600)
    if shmid >= 0:
        addr = libc.shmat(shmid, None, 0)
        if addr not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(addr, 1, SIZE)
            libc.shmdt(ctypes.c_void_p(addr))
        made.append("shm")
    msqid = libc.msgget(key, IPC_CREAT | 0o600)
    if msqid >= 0:
        msg = MsgBuf(1, b"left behind")
        libc.msgsnd(msqid, ctypes.byref(msg), 64, 0)
        made.append("msg")
    if libc.semget(key, 4, IPC_CREAT | 0o600) >= 0:
        made.append("sem")
    name = f"/zoo-ipc-{key:x}"
    zoolib.log(f"posix-shm: {name}")
    try:
        fd = os.open("/dev/shm" + name, os.O_CREAT | os.O_RDWR, 0o600)
        os.write(fd, b"\1" * 65536)
        os.close(fd)
        made.append("posix")
    except OSError as exc:
        zoolib.log(f"posix-shm: blocked ({type(exc).__name__})")
    zoolib.log("ipc: made " + ",".join(made))
    return False


zoolib.play("ipc_leftovers", bad)
