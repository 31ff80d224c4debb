"""Zoo: answers round 3 with a JSON string holding a lone surrogate (\ud800), which is
valid JSON syntax but not a Unicode string, then plays on.

Expected verdict: protocol_error at round 3 (not disqualified).
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.send_raw(b'{"round": 3, "real_move": "\\ud800"}\n')
    return True


zoolib.play("lone_surrogate", bad)
