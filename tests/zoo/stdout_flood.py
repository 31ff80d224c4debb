"""Zoo: stdout flood. At round 3 it answers, then keeps writing valid-looking answer
lines as fast as it can.

Expected verdict: the extra lines are taken in order as the replies to rounds 4, 5
and 6, whose "round" 3 does not match: protocol_error at round 4, disqualified at 6.
"""

import zoolib


def bad(round_: int) -> bool:
    line = b'{"round": 3, "real_move": "rock"}\n' * 1000
    while True:
        zoolib.send_raw(line)


zoolib.play("stdout_flood", bad)
