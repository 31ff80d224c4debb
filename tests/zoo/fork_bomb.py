"""Zoo: fork bomb (bounded). At round 3 it forks a tree of 400 sleeping processes in
its own process group, as fast as it can, and never answers.

Bounded so a broken containment cannot take the test machine down (root is exempt
from RLIMIT_NPROC). Copy-on-write pages count in every process's RSS, so the tree's RSS
grows quickly.
Expected verdict: memory_limit (tree RSS) or timeout -> disqualified; nothing left over.
"""

import os

import zoolib

TOTAL = 400


def bad(round_: int) -> bool:
    budget = TOTAL
    while budget > 0:
        # Each child takes half of the remaining budget: a tree, not a flat fan.
        share = budget // 2
        budget -= share + 1
        if os.fork() == 0:
            budget = share
            continue
    zoolib.sleep_forever()
    return True


zoolib.play("fork_bomb", bad)
