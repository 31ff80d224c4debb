"""Zoo: at round 3 it leaves processes in the states a teardown finds hardest: a
child stopped by SIGSTOP, a zombie child it never reaps, and a grandchild that
stopped itself after its parent exited (an orphan, stopped). Then it plays on and,
after its last move, stops itself.

Expected verdict: ok where a PID namespace takes the tree down; escaped_process
where the orphan reaches the referee's subreaper (basic, landlock); never a crash of
the referee, and no process is left.
"""

import os
import signal

import zoolib


def bad(round_: int) -> bool:
    stopped = os.fork()
    if stopped == 0:
        zoolib.sleep_forever()
    os.kill(stopped, signal.SIGSTOP)
    if os.fork() == 0:
        os._exit(0)  # a zombie: never reaped
    middle = os.fork()
    if middle == 0:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        if os.fork() == 0:
            os.setsid()
            os.kill(os.getpid(), signal.SIGSTOP)
            zoolib.sleep_forever()
        os._exit(0)
    os.waitpid(middle, 0)
    zoolib.log("stopped_zombies: left")
    return False


zoolib.handshake("stopped_zombies")
for r in zoolib.turns():
    if r == zoolib.BAD_ROUND:
        bad(r)
    zoolib.move(r)
os.kill(os.getpid(), signal.SIGSTOP)
