"""Zoo: answers round 3 with an array nested 32,000 deep as the move (64,000 bytes:
just inside the 64 KiB line limit), then plays on. A recursive parser would hit
RecursionError, which is not a ValueError.

Expected verdict: protocol_error at round 3 (not disqualified).
"""

import zoolib

DEPTH = 32_000


def bad(round_: int) -> bool:
    zoolib.send_raw(b'{"real_move":' + b"[" * DEPTH + b"]" * DEPTH + b"}\n")
    return True


zoolib.play("deep_array_64k", bad)
