"""A bot that plays rock every round, then, once the referee has sent ``end``,
starts threads until the kernel refuses one (each thread is a task of its
process limit, 256), and exits. Only the last reading of its cgroup, at teardown,
can show that refusal: no reading during play could. It starts 240 threads
before it answers hello (under the limit with its launcher's few processes: no
fault), so that the dozen left take a millisecond even on a loaded machine, well
within the referee's grace period after ``end``. Standard library only."""

import json
import os
import sys
import threading

hold = threading.Event()
started = 0


def start_threads(up_to: int) -> None:
    global started
    while started < up_to:
        threading.Thread(target=hold.wait, daemon=True).start()
        started += 1


json.loads(sys.stdin.readline())
start_threads(240)
sys.stdout.write(json.dumps({"name": "end_thread_flood"}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    sys.stdout.write(json.dumps({"round": msg["round"], "real_move": "rock"}) + "\n")
    sys.stdout.flush()
try:
    start_threads(100_000)
except RuntimeError:
    pass
sys.stderr.write(f"end_thread_flood: started {started} threads\n")
sys.stderr.flush()
os._exit(0)
