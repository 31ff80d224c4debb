"""Zoo: at round 3 it builds a chain of 3000 nested directories in its scratch
directory (deeper than PATH_MAX and than Python's recursion limit), walking down
with directory file descriptors, with a 1 MiB file at the bottom; then it plays on
and leaves the chain behind.

Expected verdict: ok in every layer (the tree is within the disk limits), and the
match still ends with its result: the teardown removes the chain without recursion
(``shutil.rmtree`` raised RecursionError on it, which crashed the referee).
"""

import os

import zoolib

DEPTH = 3000


def bad(round_: int) -> bool:
    zoolib.log(f"scratch: {os.getcwd()}")
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(DEPTH):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    out = os.open("bottom.bin", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
    os.write(out, b"\1" * (1 << 20))
    os.close(out)
    os.close(fd)
    zoolib.log(f"deep_tree: {DEPTH} levels")
    return False


zoolib.play("deep_tree", bad)
