"""A test bot that names itself after how the referee started it, so a test can
read that from the replay header. Plays rock. Standard library only.

    placement_probe.py latency        ->  lat<the CPU wake-up latency limit in force>
    placement_probe.py cpus [MS]      ->  cpus<the CPUs it may run on, e.g. 0 or 0-1>
    placement_probe.py nice [N]       ->  nice<its nice value>g<its session's group
                                          nice value, or "none">; exits at once,
                                          before the handshake, if N is given and
                                          differs from its nice value

``lat0`` while the referee keeps idle CPUs polling, ``lat2000000000`` when nobody
asks, ``latunknown`` if it cannot read the limit (only the basic containment layer
leaves /dev visible). ``cpus0``, ``cpus0-1``, ...: a league confines a match to its
worker's share of the CPUs, and the bots inherit it. In ``cpus`` mode it also
writes ``cpus <list> slice <ns>`` to stderr at the first turn and whenever either
changes (the time slice it runs in, as /proc/self/sched gives it, or "unknown"),
and takes MS milliseconds over each move (default 0)."""

import json
import os
import struct
import sys
import time


def latency_name() -> str:
    try:
        with open("/dev/cpu_dma_latency", "rb") as f:
            return f"lat{struct.unpack('=i', f.read(4))[0]}"
    except OSError:
        return "latunknown"


def group_nice() -> str:
    # Linux's automatic process groups: "/autogroup-<id> nice <n>".
    try:
        with open("/proc/self/autogroup") as f:
            return f.read().split()[-1]
    except (OSError, IndexError):
        return "none"


def cpus() -> str:
    return "-".join(str(c) for c in sorted(os.sched_getaffinity(0)))


def time_slice() -> str:
    try:
        with open("/proc/self/sched") as f:
            for line in f:
                if line.startswith("se.slice"):
                    return line.split(":")[1].strip()
    except OSError:
        pass
    return "unknown"


mode = sys.argv[1]
if mode == "nice":
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    if len(sys.argv) > 2 and nice != int(sys.argv[2]):
        sys.exit(f"started at nice {nice}, not {sys.argv[2]}")
    name = f"nice{nice}g{group_nice()}"
    move_s = 0.0
else:
    move_s = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0
    name = latency_name() if mode == "latency" else "cpus" + cpus()
seen = ""
sys.stdin.readline()
sys.stdout.write(json.dumps({"name": name}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    if mode == "cpus":
        now = f"cpus {cpus()} slice {time_slice()}"
        if now != seen:
            seen = now
            sys.stderr.write(now + "\n")
            sys.stderr.flush()
        time.sleep(move_s)
    sys.stdout.write(json.dumps({"round": msg["round"], "real_move": "rock"}) + "\n")
    sys.stdout.flush()
