"""Zoo: answers round 3 with "round": 2, then plays on.

Expected verdict: protocol_error at round 3 (not disqualified).
"""

import zoolib


def bad(round_: int) -> bool:
    zoolib.move(round_ - 1)
    return True


zoolib.play("wrong_round", bad)
