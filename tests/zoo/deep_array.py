"""Zoo: answers round 3 with an array nested 100,000 deep, then plays on.

The line is 200,000 bytes, over the protocol's 64 KiB line limit, so the limit fires
before any parser sees it.
Expected verdict: line_too_long at round 3 -> disqualified.
(deep_array_64k.py nests as deep as fits in one legal line.)
"""

import zoolib

DEPTH = 100_000


def bad(round_: int) -> bool:
    zoolib.send_raw(b"[" * DEPTH + b"]" * DEPTH + b"\n")
    return True


zoolib.play("deep_array", bad)
