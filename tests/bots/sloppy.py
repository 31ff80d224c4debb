"""A sloppy bot for the determinism test: it does not echo "round", answers three
rounds twice, and later prints a debug line on stdout, at moments that vary from
run to run (random sleeps, split or joined writes), while what it writes, and in
which order, depends only on its seed.

usage: sloppy.py   (plays chaos or roshambo)
"""

import json
import os
import random
import sys
import time

out = sys.stdout.buffer
hello = json.loads(sys.stdin.readline())
rng = random.Random(hello["seed"])  # what it writes: the same every run
jitter = random.Random(os.urandom(8))  # when it writes it: different every run
moves = hello["params"]["moves"]
twice_at = set(rng.sample(range(10, 100), 3))
debug_at = rng.randint(120, 180)
out.write(b'{"name": "sloppy"}\n')
out.flush()


def pause() -> None:
    if jitter.random() < 0.3:
        time.sleep(jitter.random() * 0.002)


for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    r = msg["round"]
    reply = json.dumps({"real_move": rng.choice(moves)}).encode() + b"\n"
    extra = b""
    if r in twice_at:
        extra = reply
    elif r == debug_at:
        extra = b"debug: the opponent looks random\n"
    pause()
    if extra and jitter.random() < 0.3:
        out.write(reply + extra)  # both lines at once
        out.flush()
        continue
    out.write(reply)
    out.flush()
    if extra:
        if jitter.random() < 0.5:
            time.sleep(jitter.random() * 0.002)
        out.write(extra)
        out.flush()
