"""The cheapest useful Python bot (stdlib only, no json import), for benchmarks.

Answers hello with a name and every turn with rock, echoing the round number.
With ``--stamp`` it writes ``round1 <time.time()>`` to stderr when round 1
arrives, so the benchmark can measure the time from launching the referee to the
first round. (Stderr, not a file: a contained bot cannot write outside its
scratch directory, but the referee keeps the head of every bot's stderr.)
"""

import sys
import time


def main() -> None:
    stamp = "--stamp" in sys.argv
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
            if stamp and round_text == b"1":
                sys.stderr.write(f"round1 {time.time()!r}\n")
                sys.stderr.flush()
            out.write(b'{"round":' + round_text + b',"real_move":"rock"}\n')
            out.flush()
        elif line.startswith(b'{"type":"hello"'):
            out.write(b'{"name":"pybot"}\n')
            out.flush()
        elif line.startswith(b'{"type":"end"'):
            return


if __name__ == "__main__":
    main()
