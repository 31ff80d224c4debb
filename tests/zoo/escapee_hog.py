"""Zoo: an escapee that holds memory and processes. At round 3 it double-forks a
grandchild that calls setsid(), lets go of the referee's pipes, starts 300 sleeping
processes and then fills 384 MiB; the bot waits until the escapee says it is done
(or is gone) and keeps answering as if nothing happened.

Expected verdict: memory_limit or process_limit -> disqualified wherever the
escapee's processes and memory still count against the bot: its cgroup (any layer),
or its PID namespace (bwrap, unshare: the escapee is re-parented inside it). Without
either it is out of sight until the teardown sweep finds it: escaped_process.
"""

import os
import time

import zoolib

SLEEPERS = 300
FILL_MIB = 384
hoard: list[bytes] = []


def escapee(done: int) -> None:
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    for _ in range(SLEEPERS):
        try:
            if os.fork() == 0:
                zoolib.sleep_forever()
        except OSError:
            break  # refused at the process limit: hold what there is
    for _ in range(FILL_MIB // 16):
        hoard.append(b"\x05" * (16 << 20))
    os.write(done, b"done")
    os.close(done)
    while True:
        time.sleep(60)


def bad(round_: int) -> bool:
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(r)
        if os.fork() == 0:
            escapee(w)
        os._exit(0)
    os.close(w)
    os.wait()
    said = os.read(r, 16)  # b"" when the escapee died first (killed at a limit)
    zoolib.log(f"escapee: {'done' if said else 'gone'}")
    return False


zoolib.play("escapee_hog", bad)
