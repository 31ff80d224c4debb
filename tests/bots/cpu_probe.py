"""A test bot that names itself after the CPUs it may run on when it starts
(``cpus0``, ``cpus0-1``, ...): a league confines a match to its worker's share of
the CPUs, and the bots inherit it. Plays rock. Standard library only."""

import json
import os
import sys

name = "cpus" + "-".join(str(c) for c in sorted(os.sched_getaffinity(0)))
sys.stdin.readline()
sys.stdout.write(json.dumps({"name": name}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    sys.stdout.write(json.dumps({"round": msg["round"], "real_move": "rock"}) + "\n")
    sys.stdout.flush()
