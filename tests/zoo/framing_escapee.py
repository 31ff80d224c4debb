"""Zoo: an escapee that drops its bot marker. At round 3 it double-forks a
grandchild that calls setsid(), lets go of the referee's pipes and re-executes
itself with an empty environment (no REFEREE_BOT_MARKER), then sleeps; the bot waits
for that exec, plays on and exits at the end, leaving it behind.

Expected verdict: the escape is charged to this bot (its cgroup or its own uid says
whose the process is) and NEVER to its opponent; in a PID namespace it dies with the
namespace (ok). Where nothing ties it to one bot (no cgroup, both bots share the
referee's uid, no PID namespace) it is recorded as unattributed and charged to no
one.
"""

import os
import sys

import zoolib

if len(sys.argv) > 1 and sys.argv[1] == "--sleep":
    zoolib.sleep_forever()


def bad(round_: int) -> bool:
    # The write end closes in the grandchild at its exec: EOF means the marker is gone.
    r, w = os.pipe()  # (not inheritable: closed on exec)
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execve(sys.executable, [sys.executable, __file__, "--sleep"], {})
        os._exit(0)
    os.close(w)
    os.wait()
    os.read(r, 1)
    os.close(r)
    return False


zoolib.play("framing_escapee", bad)
