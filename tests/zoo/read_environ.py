"""Zoo: at round 3 it reads /proc/<ppid>/environ (the referee's environment, unless a
PID namespace hides it) and scans every /proc/*/environ it can read for the variable
named by --name=VAR (set by the test in the referee's environment). It reports
"environ: found VAR in pid N" or "environ: VAR not found (read K of M)" -- never the
value -- then plays on.

Expected verdict: ok. Under bwrap, unshare and Landlock the variable must not be found.
"""

import os

import zoolib

NAME = (zoolib.arg("name") or "REFEREE_ZOO_SECRET").encode()


def bad(round_: int) -> bool:
    readable = 0
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        pids = []  # Landlock may refuse to list /proc at all
    found = None
    for pid in [str(os.getppid()), *pids]:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        readable += 1
        if any(v.startswith(NAME + b"=") for v in env.split(b"\0")):
            found = pid
            break
    if found is not None:
        zoolib.log(f"environ: found {NAME.decode()} in pid {found}")
    else:
        zoolib.log(f"environ: {NAME.decode()} not found (read {readable} of {len(pids)})")
    return False


zoolib.play("read_environ", bad)
