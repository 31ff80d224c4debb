"""A bot that makes one of a newcomer's first mistakes, for the tests that check the
referee explains it (tests/test_failure_messages.py).

usage: newcomer.py MODE
  crash       raises an exception at round 3 (a traceback on stderr, exit code 1)
  unflushed   never flushes stdout: the ready message stays in its buffer
  turn_unflushed  flushes the ready message, never a reply
  debug       prints a debug line on stdout before its reply to round 2
  no_newline  answers round 1 without the newline at the end of the line
  linger      plays, then ignores "end" and stays alive
Plays "rock" otherwise, echoing the round. Standard library only.
"""

import json
import sys
import time

mode = sys.argv[1]
out = sys.stdout
json.loads(sys.stdin.readline())
out.write(json.dumps({"name": f"newcomer-{mode}"}) + "\n")
if mode != "unflushed":
    out.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    r = msg["round"]
    if mode == "crash" and r == 3:
        print("about to look up a missing key", file=sys.stderr)
        moves = {}
        print(moves["rock"])
    if mode == "debug" and r == 2:
        out.write(f"thinking about round {r}: my opponent played rock twice in a row\n")
    end = "" if mode == "no_newline" else "\n"
    out.write(json.dumps({"round": r, "real_move": "rock"}) + end)
    if mode not in ("unflushed", "turn_unflushed"):
        out.flush()
if mode == "linger":
    sys.stdin.close()
    time.sleep(60)
