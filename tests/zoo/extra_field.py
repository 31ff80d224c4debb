"""Zoo: answers round 3 with an unknown field ("comment"), then plays on.

Expected verdict: protocol_error at round 3 (not disqualified).
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.send({"round": 3, "real_move": "rock", "comment": "hi"})
    return True


zoolib.play("extra_field", bad)
