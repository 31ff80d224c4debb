"""Zoo: a fork bomb that counts. At round 3 it forks sleeping children one after
another until a fork is refused (or 400 are made, so that a host without any limit
survives it), reports "forks: N made, then refused" (or "forks: N made") and never
answers.

Expected verdict: process_limit -> disqualified where the bot has a pids cgroup: the
kernel refuses the fork that would pass the limit, exactly at it. Where the process
count is sampled: process_limit, memory_limit or timeout, whichever comes first.
"""

import os

import zoolib

TOTAL = 400


def bad(round_: int) -> bool:
    made = 0
    refused = ""
    while made < TOTAL:
        try:
            pid = os.fork()
        except OSError as exc:
            refused = f", then refused ({exc.strerror})"
            break
        if pid == 0:
            zoolib.sleep_forever()
        made += 1
    zoolib.log(f"forks: {made} made{refused}")
    zoolib.sleep_forever()
    return True


zoolib.play("fork_cap", bad)
