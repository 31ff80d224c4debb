"""Zoo: at round 3 it sends SIGKILL to its parent (the referee, unless a PID namespace
hides it) and, only when it can see it is in a fresh PID namespace (pid <= 2), SIGTERM
to every process it can reach (kill(-1)); it reports each result on stderr and plays on.

NEVER run this under the basic layer: it would kill the referee. Under bwrap the
parent is the sandbox's own init (which ignores it), under unshare the bot is pid 1
itself, under Landlock ABI >= 6 signals out of the domain are refused.
Expected verdict: ok (and the referee survives to print the result).
"""

import os
import signal

import zoolib


def bad(round_: int) -> bool:
    ppid = os.getppid()
    if ppid > 1:
        try:
            os.kill(ppid, signal.SIGKILL)
            zoolib.log(f"kill-parent: sent to {ppid}")
        except OSError as exc:
            zoolib.log(f"kill-parent: blocked ({type(exc).__name__}: {exc.strerror})")
    else:
        zoolib.log(f"kill-parent: blocked (no parent visible, ppid={ppid})")
    # kill(-1) reaches every process the caller may signal. Outside a PID namespace a
    # containment bug would let it hit the whole machine, so only try it inside one.
    if os.getpid() > 2:
        zoolib.log("kill-all: skipped (not in a fresh PID namespace)")
        return False
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        os.kill(-1, signal.SIGTERM)
        zoolib.log("kill-all: sent (inside the PID namespace only)")
    except OSError as exc:
        zoolib.log(f"kill-all: blocked ({type(exc).__name__}: {exc.strerror})")
    return False


zoolib.play("signal_referee", bad)
