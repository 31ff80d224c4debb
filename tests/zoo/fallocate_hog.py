"""Zoo: at round 3 it allocates 1 GiB in its scratch directory with fallocate, as 64
files of 16 MiB (each under RLIMIT_FSIZE), which takes milliseconds where the disk
is the host's, and keeps them; it reports "fallocate: 1024 MiB" or "fallocate:
stopped after N MiB (<error>)" on stderr, then plays on, 20 ms a move (so that the
match outlasts the watchdog's next reading, 100 ms, even on an idle machine).

Expected verdict: where the layer's scratch directory is a tmpfs of --disk-mib
("disk"), the kernel stops it at the limit with ENOSPC and the bot plays on (ok);
elsewhere the disk watcher finds 1 GiB at its next look: disk_limit, disqualified.
"""

import errno
import os
import time

import zoolib

FILE = 16 * 1024 * 1024


def bad(round_: int) -> bool:
    done = 0
    try:
        for i in range(64):
            fd = os.open(f"falloc-{i}.bin", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(fd, 0, FILE)
            finally:
                os.close(fd)
            done += FILE
        zoolib.log(f"fallocate: {done >> 20} MiB")
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        zoolib.log(f"fallocate: stopped after {done >> 20} MiB ({name})")
    return False


zoolib.handshake("fallocate_hog")
for r in zoolib.turns():
    if r == zoolib.BAD_ROUND:
        bad(r)
    if r >= zoolib.BAD_ROUND:
        time.sleep(0.02)
    zoolib.move(r)
