"""Zoo: plays well until its last turn, then allocates 64 MiB in its scratch
directory (fallocate: a few milliseconds) just before it answers, so that no
periodic watchdog reading can fall between the write and the end of play.

Expected verdict (run with --disk-mib 16): disk_limit -> disqualified at the last
round where the disk is walked (the referee reads it once more when play is over);
where scratch is a sized tmpfs ("disk") the allocation fails with ENOSPC.
"""

import os

import zoolib

hello = zoolib.handshake("late_disk_hog")
last = int(hello.get("params", {}).get("rounds", 0))
for r in zoolib.turns():
    if r == last:
        fd = os.open("late.bin", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.posix_fallocate(fd, 0, 64 << 20)
            zoolib.log("late_disk_hog: 64 MiB allocated")
        except OSError as exc:
            zoolib.log(f"late_disk_hog: {type(exc).__name__}")
        os.close(fd)
    zoolib.move(r)
