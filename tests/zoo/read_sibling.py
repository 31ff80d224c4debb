"""Zoo: at round 3 it tries to read <--secret>, a file in another bot's directory
(made by the test), and reports "read-sibling: ok <first line>" or
"read-sibling: blocked (<error>)"; then it plays on.

The path is passed as --secret=PATH, never as a bare argument, so the launcher does
not mistake it for this bot's own file.
Expected verdict: ok. bwrap and Landlock must block the read; basic and unshare
without Landlock cannot.
"""

import zoolib


def bad(round_: int) -> bool:
    try:
        with open(zoolib.arg("secret") or "/nonexistent") as f:
            zoolib.log(f"read-sibling: ok {f.readline().strip()}")
    except OSError as exc:
        zoolib.log(f"read-sibling: blocked ({type(exc).__name__}: {exc.strerror})")
    return False


zoolib.play("read_sibling", bad)
