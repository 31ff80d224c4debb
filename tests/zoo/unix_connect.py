"""Zoo: at round 3 it tries to connect to the host's Unix sockets that the test
listens on: a 0777 pathname socket in /tmp (``--tmp-socket``), one in another temporary
directory (``--dir-socket``) and an abstract one (``--abstract``, without its leading
NUL). It reports "unix-tmp: connected" or "unix-tmp: blocked (<error>)" (likewise
"unix-dir", "unix-abstract") and whether a connected pair still works ("socketpair:
ok": runtimes use one); then it plays on.

Expected verdict: ok. Every layer but basic keeps the host's sockets out of reach; the
test also checks that its listeners saw nobody.
"""

import errno
import socket

import zoolib


def connect(probe: str, address: str) -> None:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            s.connect(address)
            s.sendall(b"hello from a bot\n")
        zoolib.log(f"{probe}: connected")
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        zoolib.log(f"{probe}: blocked ({name})")


def bad(round_: int) -> bool:
    connect("unix-tmp", zoolib.arg("tmp-socket", "/nonexistent") or "")
    connect("unix-dir", zoolib.arg("dir-socket", "/nonexistent") or "")
    connect("unix-abstract", "\0" + (zoolib.arg("abstract", "none") or ""))
    a, b = socket.socketpair()
    a.sendall(b"x")
    zoolib.log("socketpair: ok" if b.recv(1) == b"x" else "socketpair: broken")
    a.close()
    b.close()
    return False


zoolib.play("unix_connect", bad)
