"""Zoo: a 100 MB line without a newline at round 3.

Expected verdict: line_too_long at round 3 -> disqualified (the referee must stop
buffering at its line limit, 64 KiB by default).
"""

import zoolib


def bad(round_: int) -> bool:
    chunk = b"x" * (1 << 20)
    for _ in range(100):
        zoolib.send_raw(chunk)
    zoolib.sleep_forever()
    return True


zoolib.play("long_line", bad)
