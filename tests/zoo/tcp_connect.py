"""Zoo: at round 3 it tries a TCP connection to 127.0.0.1:<--port>, a listener the
test opens on the host, and reports "tcp: connected" or "tcp: blocked (<error>)" on
stderr; then it plays on.

Expected verdict: ok. Under bwrap/unshare (own network namespace) and Landlock ABI >= 4
the connection must fail; the test also checks that its listener saw nobody.
"""

import socket

import zoolib

PORT = int(zoolib.arg("port", "9") or 9)


def bad(round_: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=0.3) as s:
            s.sendall(b"hello from a bot\n")
        zoolib.log("tcp: connected")
    except OSError as exc:
        zoolib.log(f"tcp: blocked ({type(exc).__name__}: {exc.strerror or exc})")
    return False


zoolib.play("tcp_connect", bad)
