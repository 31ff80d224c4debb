"""Zoo: calls abort() at round 3.

As pid 1 of a PID namespace (unshare layer) the self-sent SIGABRT is ignored and glibc
falls back to a faulting instruction, so the signal seen may be SIGSEGV.
Expected verdict: crash at round 3 -> disqualified.
"""

import os

import zoolib


def bad(round_: int) -> bool:
    os.abort()


zoolib.play("abort", bad)
