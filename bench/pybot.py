"""The cheapest useful Python bot (stdlib only, no json import), for benchmarks.

Answers hello with a name and every turn with rock, echoing the round number.
With ``--stamp FILE`` it writes ``time.time()`` to FILE when round 1 arrives, so
the benchmark can measure the time from launching the referee to the first round.
"""

import sys
import time


def main() -> None:
    stamp = sys.argv[sys.argv.index("--stamp") + 1] if "--stamp" in sys.argv else None
    read = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    while True:
        line = read()
        if not line:
            return
        # The referee writes compact JSON: the tag sits at a fixed place.
        if line.startswith(b'{"type":"turn"'):
            i = line.index(b'"round":') + 8
            round_text = line[i : line.index(b",", i)]
            if stamp is not None and round_text == b"1":
                with open(stamp, "w") as f:
                    f.write(repr(time.time()))
            out.write(b'{"round":' + round_text + b',"real_move":"rock"}\n')
            out.flush()
        elif line.startswith(b'{"type":"hello"'):
            out.write(b'{"name":"pybot"}\n')
            out.flush()
        elif line.startswith(b'{"type":"end"'):
            return


if __name__ == "__main__":
    main()
