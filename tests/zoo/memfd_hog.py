"""Zoo: memory in a memfd. At round 3 it writes 512 MiB into memfds with write(2)
(32 MiB in each, under the file size limit), never mapping them, so no process's resident set shows a byte of it;
it holds the fd and keeps answering.

Expected verdict: memory_limit -> disqualified where the bot has a memory cgroup (the
memfd's pages are charged to it: the kernel kills the bot at the limit); where the
referee only samples resident sets the pages go unseen, and the bot reports how much
it held ("memfd: held 512 MiB").
"""

import os

import zoolib

TOTAL_MIB = 512
EACH_MIB = 32
held: list[int] = []


def bad(round_: int) -> bool:
    chunk = b"\x03" * (1 << 20)
    for _ in range(TOTAL_MIB // EACH_MIB):
        fd = os.memfd_create("zoo-hog")
        held.append(fd)
        for _ in range(EACH_MIB):
            os.write(fd, chunk)
    zoolib.log(f"memfd: held {TOTAL_MIB} MiB")
    return False


zoolib.play("memfd_hog", bad)
