"""Zoo: from round 3 on, 8 busy processes (forked, so no interpreter lock holds them
back) burn CPU for the rest of the match, while it answers every move at once.

Expected verdict: cpu_share -> disqualified wherever the opponent is slowed (the
referee's CPU-share watchdog); never a fault of the opponent's.
"""

import os

import zoolib

HOGS = 8


def hog() -> None:
    for _ in range(HOGS):
        if os.fork() == 0:
            while True:
                pass


def bad(round_: int) -> bool:
    hog()
    return False


zoolib.play("cpu_hog", bad)
