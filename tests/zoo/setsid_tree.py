"""Zoo: setsid fork tree. At round 3 it starts a tree of 40 sleeping processes, each in
its own session (out of reach of killpg), keeps playing validly and exits at the end,
leaving the tree behind.

Expected verdict: ok under a PID namespace (bwrap, unshare: the tree dies with the
namespace); escaped_process under basic/landlock (the subreaper sweep finds them).
"""

import os

import zoolib

TOTAL = 40


def spawn_tree() -> None:
    budget = TOTAL
    while budget > 0:
        share = budget // 2
        budget -= share + 1
        if os.fork() == 0:
            os.setsid()
            # The tree must not hold the referee's pipes, or EOF would never come.
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            budget = share
            if budget == 0:
                zoolib.sleep_forever()
            continue
    if os.getpid() != MAIN:
        zoolib.sleep_forever()


MAIN = os.getpid()


def bad(round_: int) -> bool:
    spawn_tree()
    return False


zoolib.play("setsid_tree", bad)
