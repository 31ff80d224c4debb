"""Zoo: at round 3 it sends a UDP datagram to 127.0.0.1:<--port>, where the test listens
on the host, and reports "udp: sent" or "udp: blocked (<error>)"; then it plays on.

A successful sendto proves nothing inside a network namespace (the datagram goes to
the sandbox's own loopback), so the test checks what its socket received.
Expected verdict: ok. Nothing may arrive under bwrap/unshare. Landlock does not cover
UDP: under the landlock layer it arrives (a known gap).
"""

import socket

import zoolib

PORT = int(zoolib.arg("port", "9") or 9)


def bad(round_: int) -> bool:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"hello from a bot", ("127.0.0.1", PORT))
        zoolib.log("udp: sent")
    except OSError as exc:
        zoolib.log(f"udp: blocked ({type(exc).__name__}: {exc.strerror or exc})")
    return False


zoolib.play("udp_send", bad)
