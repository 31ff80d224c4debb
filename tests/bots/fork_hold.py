"""A bot that takes its user's process room before play: it forks sleeping children
until a fork is refused (400 at most, so that a host without any limit survives it),
says how many it made on stderr, then plays "rock" every round, holding them.

Where every bot of a match is one user with one RLIMIT_NPROC (an unprivileged
referee without a pids cgroup), it stays within its own process limit and still
leaves its opponent no fork (tests/test_cgroups.py).
"""

import json
import os
import signal
import sys

made = 0
while made < 400:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        while True:
            signal.pause()
    made += 1
print(f"fork_hold: {made} made", file=sys.stderr, flush=True)
if not sys.stdin.readline():
    sys.exit(0)
print(json.dumps({"name": "fork_hold"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    print(json.dumps({"round": msg["round"], "real_move": "rock"}), flush=True)
