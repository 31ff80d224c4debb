"""A configurable misbehaving bot for the referee's fault tests.

usage: faulty.py MODE ROUND
  sleep    sleep PAUSE s (argument 3, default 30) before answering ROUND
  hang     stop answering from ROUND on
  exit     exit with code 3 at ROUND
  garbage  answer ROUND with a broken JSON object
  badmove  answer ROUND with an unknown move
  noshadow answer ROUND asking for a shadow move without naming one (illegal)
  twice    answer ROUND with two lines
  crash5   (alias) exit at round 5
  memafter answer ROUND, then hold PAUSE MiB of touched memory (and play on)
Plays "rock" otherwise. Standard library only.
"""

import json
import sys
import time

mode = sys.argv[1]
at = int(sys.argv[2]) if len(sys.argv) > 2 else 5
pause = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
out = sys.stdout
hello = json.loads(sys.stdin.readline())
out.write(json.dumps({"name": f"faulty-{mode}"}) + "\n")
out.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    r = msg["round"]
    reply = json.dumps({"round": r, "real_move": "rock"}) + "\n"
    if r == at or (mode == "hang" and r >= at):
        if mode == "sleep":
            time.sleep(pause)
        elif mode == "hang":
            continue
        elif mode in ("exit", "crash5"):
            sys.exit(3)
        elif mode == "garbage":
            reply = "{this is not json\n"
        elif mode == "badmove":
            reply = json.dumps({"round": r, "real_move": "dynamite"}) + "\n"
        elif mode == "noshadow":
            reply = json.dumps({"round": r, "real_move": "rock", "shadow_request": True}) + "\n"
        elif mode == "twice":
            reply = reply + reply
        elif mode == "burn":  # CPU, not sleep: `pause` seconds of busy loop
            end = time.process_time() + pause
            while time.process_time() < end:
                pass
    out.write(reply)
    out.flush()
    if r == at and mode == "memafter":
        held = bytearray(int(pause) << 20)  # zero pages: touch each one
        for i in range(0, len(held), 4096):
            held[i] = 1
