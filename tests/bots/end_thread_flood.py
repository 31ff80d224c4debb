"""A bot that plays rock every round, then, once the referee has sent ``end``,
starts threads until the kernel refuses one (each thread is a task of its
process-limit), and exits. Only the last reading of its cgroup, at teardown, can
show that refusal: no reading during play could. Standard library only."""

import json
import os
import sys
import threading

json.loads(sys.stdin.readline())
sys.stdout.write(json.dumps({"name": "end_thread_flood"}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    sys.stdout.write(json.dumps({"round": msg["round"], "real_move": "rock"}) + "\n")
    sys.stdout.flush()
hold = threading.Event()
started = 0
try:
    while started < 100_000:
        threading.Thread(target=hold.wait, daemon=True).start()
        started += 1
except RuntimeError:
    pass
sys.stderr.write(f"end_thread_flood: started {started} threads\n")
sys.stderr.flush()
os._exit(0)
