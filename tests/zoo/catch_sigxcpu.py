"""Zoo: catches SIGXCPU. Ignores the soft RLIMIT_CPU signal, then from round 3 burns
0.3 s of CPU per move (inside the move limit), so only the CPU budget can stop it.

Expected verdict (run with --cpu-s 1): cpu_limit -> disqualified (the watchdog, or the
hard RLIMIT_CPU SIGKILL one second after SIGXCPU).
"""

import signal
import time

import zoolib

signal.signal(signal.SIGXCPU, lambda signum, frame: zoolib.log("sigxcpu: caught, ignoring"))


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


zoolib.handshake("catch_sigxcpu")
for r in zoolib.turns():
    if r >= zoolib.BAD_ROUND:
        burn(0.3)
    zoolib.move(r)
