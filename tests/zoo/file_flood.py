"""Zoo: at round 3 it creates 20000 empty files in its scratch directory (more than
the 16384 entries of ``disk_files``, and no byte over the disk limit) and keeps
them; it reports "files: 20000" or "files: stopped after N (<error>)" on stderr,
then plays on, 20 ms a move (so that the match outlasts the watchdog's next
reading).

Expected verdict: where the kernel caps the scratch tmpfs's inodes ("inodes": the
unshare layer), the creation fails with ENOSPC and the bot plays on (ok); elsewhere
the watchdog counts the entries, by a walk or (bwrap: a tmpfs whose inodes it cannot
cap) by the tmpfs's own count: disk_limit, disqualified.
"""

import errno
import os
import time

import zoolib

COUNT = 20000


def bad(round_: int) -> bool:
    made = 0
    try:
        for i in range(COUNT):
            os.close(os.open(f"f{i}", os.O_WRONLY | os.O_CREAT, 0o600))
            made += 1
        zoolib.log(f"files: {made}")
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        zoolib.log(f"files: stopped after {made} ({name})")
    return False


zoolib.handshake("file_flood")
for r in zoolib.turns():
    if r == zoolib.BAD_ROUND:
        bad(r)
    if r >= zoolib.BAD_ROUND:
        time.sleep(0.02)
    zoolib.move(r)
