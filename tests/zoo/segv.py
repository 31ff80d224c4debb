"""Zoo: a real segmentation fault at round 3 (reads address 0 through ctypes).

A hardware fault is delivered even to a PID namespace's pid 1, unlike kill(self).
Expected verdict: crash at round 3, killed by SIGSEGV in every layer (bwrap reports it
as exit status 139, which the referee decodes) -> disqualified.
"""

import ctypes

import zoolib


def bad(round_: int) -> bool:
    ctypes.string_at(0)
    return True


zoolib.play("segv", bad)
