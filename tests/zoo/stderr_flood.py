"""Zoo: writes 4 MiB to stderr at round 3, then answers validly.

stderr is not protocol: the referee must keep draining it (a full stderr pipe would
block the bot and look like a hang) and keep only a capped head and tail.
Expected verdict: ok.
"""

import sys

import zoolib


def bad(round_: int) -> bool:
    chunk = b"e" * 65535 + b"\n"
    for _ in range(64):
        sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.flush()
    zoolib.log("stderr_flood: 4 MiB written")
    return False


zoolib.play("stderr_flood", bad)
