"""Zoo: at round 3 it probes what it may do with privileges (issue 27's table), each
in a form that is harmless where it is allowed, reports on stderr, and plays on:

- "root: yes|no" (its real and effective uid) and "caps: none|<CapEff hex>";
- raw: opening a raw ICMP socket;
- hostname: sethostname to the name the host already has;
- renice-self: setpriority(self, -20), to run ahead of its opponent;
- renice-other: setpriority on its parent, to the nice value it already has.

Expected verdict: ok; never root and no capability in any layer; the rest blocked
where docs/security.md says so.
"""

import ctypes
import os
import socket

import zoolib

libc = ctypes.CDLL(None, use_errno=True)


def sethostname(name: bytes) -> None:
    if libc.sethostname(name, len(name)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def attempt(label: str, action) -> None:  # type: ignore[no-untyped-def]
    try:
        action()
        zoolib.log(f"{label}: allowed")
    except OSError as exc:
        zoolib.log(f"{label}: blocked ({type(exc).__name__})")


def bad(round_: int) -> bool:
    zoolib.log("root: " + ("yes" if 0 in (os.getuid(), os.geteuid()) else "no"))
    status = dict(
        line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
    )
    cap_eff = status["CapEff"].strip()
    zoolib.log("caps: " + ("none" if int(cap_eff, 16) == 0 else cap_eff))
    attempt(
        "raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
    )
    attempt("hostname", lambda: sethostname(socket.gethostname().encode()))
    attempt("renice-self", lambda: os.setpriority(os.PRIO_PROCESS, 0, -20))
    parent = os.getppid()
    if parent == 0:  # pid 1 of its own PID namespace: nothing else is in sight
        zoolib.log("renice-other: blocked (no other process visible)")
        return False
    attempt(
        "renice-other",
        lambda: os.setpriority(os.PRIO_PROCESS, parent, os.getpriority(os.PRIO_PROCESS, parent)),
    )
    return False


zoolib.play("privileges", bad)
