"""Zoo: closes its stdin at round 3 (after answering it), then keeps running.

Expected verdict: closed_stdin (when the referee sends round 4) -> disqualified.
"""

import os

import zoolib


def bad(round_: int) -> bool:
    zoolib.move(round_)
    os.close(0)
    zoolib.sleep_forever()
    return True


zoolib.play("close_stdin", bad)
