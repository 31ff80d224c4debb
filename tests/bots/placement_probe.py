"""A test bot that names itself after how the referee started it, so a test can
read that from the replay header. Plays rock. Standard library only.

    placement_probe.py latency   ->  lat<the CPU wake-up latency limit in force>
    placement_probe.py cpus      ->  cpus<the CPUs it may run on, e.g. 0 or 0-1>

``lat0`` while the referee keeps idle CPUs polling, ``lat2000000000`` when nobody
asks, ``latunknown`` if it cannot read the limit (only the basic containment layer
leaves /dev visible). ``cpus0``, ``cpus0-1``, ...: a league confines a match to its
worker's share of the CPUs, and the bots inherit it."""

import json
import os
import struct
import sys


def latency_name() -> str:
    try:
        with open("/dev/cpu_dma_latency", "rb") as f:
            return f"lat{struct.unpack('=i', f.read(4))[0]}"
    except OSError:
        return "latunknown"


def cpus_name() -> str:
    return "cpus" + "-".join(str(c) for c in sorted(os.sched_getaffinity(0)))


name = {"latency": latency_name, "cpus": cpus_name}[sys.argv[1]]()
sys.stdin.readline()
sys.stdout.write(json.dumps({"name": name}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    sys.stdout.write(json.dumps({"round": msg["round"], "real_move": "rock"}) + "\n")
    sys.stdout.flush()
