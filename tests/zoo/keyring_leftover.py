"""Zoo: at round 3 it adds a key to its user keyring (@u), which belongs to its uid
rather than to any of its processes, and reports "keyring: added <description>" (or
"keyring: blocked" where the seccomp filter refuses keyring calls); then it plays on.

Expected verdict: ok in every layer; the key is gone after the match where the bot
had a uid of its own (the referee is root), so the next bot of that uid cannot read it.
"""

import ctypes
import errno
import os
import platform

import zoolib

ADD_KEY = 248 if platform.machine() == "x86_64" else 217
KEY_SPEC_USER_KEYRING = -4
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bad(round_: int) -> bool:
    description = f"zoo-key-{os.urandom(4).hex()}".encode()
    payload = b"left for the next bot"
    key = libc.syscall(
        ctypes.c_long(ADD_KEY),
        b"user",
        description,
        payload,
        ctypes.c_size_t(len(payload)),
        ctypes.c_int(KEY_SPEC_USER_KEYRING),
    )
    if key >= 0:
        zoolib.log(f"keyring: added {description.decode()}")
    else:
        err = ctypes.get_errno()
        zoolib.log("keyring: blocked" if err == errno.EPERM else f"keyring: {errno.errorcode[err]}")
    return False


zoolib.play("keyring_leftover", bad)
