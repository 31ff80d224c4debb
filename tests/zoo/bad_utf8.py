"""Zoo: answers round 3 with bytes that are not UTF-8, then plays on.

Expected verdict: protocol_error at round 3 (a round fault: not disqualified).
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.send_raw(b'{"round": 3, "real_move": "rock\xff\xfe"}\n')
    return True


zoolib.play("bad_utf8", bad)
