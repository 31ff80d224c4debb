"""Zoo: busy loop. At round 3 it spins on the CPU forever without answering.

Expected verdict: timeout (x3 -> disqualified); cpu_limit if the CPU budget is tiny.
"""

import zoolib


def bad(round_: int) -> bool:
    n = 0
    while True:
        n += 1


zoolib.play("busy", bad)
