"""Zoo: at round 3 it builds a chain of 1100 nested directories (deeper than
Python's recursion limit) continued by 8 with names of 255 characters (the path is
then longer than PATH_MAX) and writes 32 MiB at its bottom, then plays on and
leaves it all behind. A walk by path cannot reach the files (ENAMETOOLONG) and
counted none of them; a recursive removal raised RecursionError.

Expected verdict (run with --disk-mib 16): disk_limit -> disqualified where the
disk is walked; where scratch is a sized tmpfs (the unshare layer: "disk") the
writes fail with ENOSPC and it plays on. The chain goes with its scratch
directory at teardown.
"""

import os

import zoolib

DEPTH = 1100
LONG_NAMES = 8  # 1100 * 2 + 8 * 256 = 4248 characters > PATH_MAX (4096)
CHUNK = b"\1" * (1 << 20)


def bad(round_: int) -> bool:
    zoolib.log(f"scratch: {os.getcwd()}")
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for name in ["d"] * DEPTH + ["L" * 255] * LONG_NAMES:
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    try:
        for i in range(4):
            out = os.open(f"fill-{i}.bin", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
            try:
                for _ in range(8):
                    os.write(out, CHUNK)
            finally:
                os.close(out)
    except OSError as exc:  # a layer whose scratch is a sized tmpfs: ENOSPC
        zoolib.log(f"deep_disk_hog: stopped ({type(exc).__name__})")
        return False
    finally:
        os.close(fd)
    zoolib.log(f"deep_disk_hog: 32 MiB at depth {DEPTH + LONG_NAMES}")
    return False


zoolib.play("deep_disk_hog", bad)
