"""Zoo: from round 3 a thread writes 12 files of 8 MiB into its scratch directory
(then keeps them), while the bot answers every move on time (20 ms a move, so that
the match outlasts the writing even on a busy machine).

Expected verdict (run with --disk-mib 16): disk_limit -> disqualified, where the
disk watcher measures the scratch directory; where it is a tmpfs of the limit (the
unshare layer: "disk"), the writes past 16 MiB fail (ENOSPC), "disk: stopped
(OSError)", and the bot plays on (ok). Its files go with its scratch directory at
teardown.
"""

import threading
import time

import zoolib

CHUNK = b"\0" * (1024 * 1024)


def fill() -> None:
    try:
        for i in range(12):
            with open(f"fill-{i}.bin", "wb") as f:
                for _ in range(8):
                    f.write(CHUNK)
        zoolib.log("disk: wrote 96 MiB")
    except OSError as exc:
        zoolib.log(f"disk: stopped ({type(exc).__name__})")


zoolib.handshake("disk_hog")
for r in zoolib.turns():
    if r == zoolib.BAD_ROUND:
        threading.Thread(target=fill, daemon=True).start()
    if r >= zoolib.BAD_ROUND:
        time.sleep(0.02)
    zoolib.move(r)
