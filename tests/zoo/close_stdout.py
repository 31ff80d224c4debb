"""Zoo: closes its stdout at round 3 instead of answering, then keeps running.

Expected verdict: closed_stdout at round 3 -> disqualified.
"""

import os

import zoolib


def bad(round_: int) -> bool:
    os.close(1)
    zoolib.sleep_forever()
    return True


zoolib.play("close_stdout", bad)
