"""Zoo: a daemon that hides as a zombie. At round 3 it double-forks; the grandchild
calls setsid(), keeps the bot's stdout open, starts a sleeping thread and ends its main
thread with pthread_exit. Its /proc entry then shows a zombie (state Z, cmdline and
environ unreadable) while the process lives on in the other thread. The bot itself
plays on and exits normally at the end.

Expected verdict: ok under a PID namespace (bwrap, unshare); escaped_process under
basic/landlock: the sweep must see through the zombie main thread, kill the process
and attribute it to this bot.
"""

import ctypes
import os
import threading

import zoolib


def bad(round_: int) -> bool:
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            threading.Thread(target=zoolib.sleep_forever).start()
            ctypes.CDLL(None).pthread_exit(None)
        os._exit(0)
    os.wait()
    return False


zoolib.play("ghost_daemon", bad)
