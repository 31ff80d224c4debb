"""A hello-world protocol bot for CPython (a thread and the json module, as bots use)."""

import json
import sys
import threading

if sys.stdin.readline():
    names = []
    worker = threading.Thread(target=names.append, args=("hello-python",))
    worker.start()
    worker.join()
    print(json.dumps({"name": names[0]}), flush=True)
    for line in sys.stdin:
        if json.loads(line).get("type") == "end":
            break
        print(json.dumps({"real_move": "rock"}), flush=True)
