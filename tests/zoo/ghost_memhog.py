"""Zoo: memory hog behind a zombie main thread. At round 3 it starts a thread that
fills memory 64 MiB at a time (up to 6 GiB) and ends its main thread with pthread_exit,
so /proc/<pid>/stat reads like a zombie's (no resident memory) while the thread grows.

Expected verdict: memory_limit -> disqualified (the RSS watchdog must read the memory
through a live thread).
"""

import ctypes
import threading

import zoolib

hoard = []


def fill() -> None:
    for _ in range(96):
        hoard.append(b"\x01" * (64 << 20))
    zoolib.log(f"ghost_memhog: holding {len(hoard) * 64} MiB")
    zoolib.sleep_forever()


def bad(round_: int) -> bool:
    threading.Thread(target=fill).start()
    ctypes.CDLL(None).pthread_exit(None)
    return True


zoolib.play("ghost_memhog", bad)
