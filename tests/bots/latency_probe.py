"""A test bot that names itself after the CPU wake-up latency limit the kernel
applies when it starts (``lat0`` while the referee keeps idle CPUs polling,
``lat2000000000`` when nobody asks, ``latunknown`` if it cannot read it: only the
basic containment layer leaves /dev visible). Plays rock. Standard library only."""

import json
import struct
import sys

try:
    with open("/dev/cpu_dma_latency", "rb") as f:
        name = f"lat{struct.unpack('=i', f.read(4))[0]}"
except OSError:
    name = "latunknown"
sys.stdin.readline()
sys.stdout.write(json.dumps({"name": name}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    sys.stdout.write(json.dumps({"round": msg["round"], "real_move": "rock"}) + "\n")
    sys.stdout.flush()
