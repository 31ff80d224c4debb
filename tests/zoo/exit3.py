"""Zoo: exits with status 3 at round 3 instead of answering.

Expected verdict: crash at round 3 (exit_code 3) -> disqualified.
"""

import os

import zoolib


def bad(round_: int) -> bool:
    os._exit(3)


zoolib.play("exit3", bad)
