"""Zoo: daemonised grandchild holding stdout. At round 3 it double-forks; the grandchild
calls setsid() and sleeps forever with the bot's stdout still open, so stdout EOF
never arrives. The bot itself plays on and exits normally at the end.

Expected verdict: ok under a PID namespace (bwrap, unshare); escaped_process under
basic/landlock (the grandchild was re-parented to the referee and is swept).
"""

import os

import zoolib


def bad(round_: int) -> bool:
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            zoolib.sleep_forever()
        os._exit(0)
    os.wait()
    return False


zoolib.play("daemon_stdout", bad)
