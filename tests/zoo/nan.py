"""Zoo: answers round 3 with a NaN (not JSON), then plays on.

Expected verdict: protocol_error at round 3 (not disqualified).
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.send_raw(b'{"round": NaN, "real_move": "rock"}\n')
    return True


zoolib.play("nan", bad)
