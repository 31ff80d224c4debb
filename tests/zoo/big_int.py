"""Zoo: answers round 3 with a 5,000-digit integer where the move is expected
(Python's int() refuses more than 4,300 digits by default), then plays on.

Expected verdict: protocol_error at round 3 (not disqualified).
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.send_raw(b'{"round": 3, "real_move": ' + b"7" * 5000 + b"}\n")
    return True


zoolib.play("big_int", bad)
