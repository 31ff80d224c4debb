"""Zoo: stdout flood. At round 3 it answers, then keeps writing valid-looking answer
lines as fast as it can.

Expected verdict: unsolicited_output at round 3 (or output_limit) -> disqualified.
"""

import zoolib


def bad(round_: int) -> bool:
    line = b'{"round": 3, "real_move": "rock"}\n' * 1000
    while True:
        zoolib.send_raw(line)


zoolib.play("stdout_flood", bad)
