"""A well-behaved deterministic bot for tests: cycles its moves, shadows every
50th round with the move after its real one. Standard library only."""

import json
import sys

hello = json.loads(sys.stdin.readline())
moves = hello["params"]["moves"]
sys.stdout.write(json.dumps({"name": "steady", "version": "1"}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    r = msg["round"]
    real = moves[(r + hello["seat"]) % len(moves)]
    reply = {"round": r, "real_move": real}
    if r % 50 == 0:
        reply.update(shadow_request=True, shadow_move=moves[(r + 1) % len(moves)])
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
