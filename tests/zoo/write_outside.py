"""Zoo: at round 3 it tries to create <--target> (a path outside its scratch dir, chosen
by the test) and a file next to its own program; reports "write-target: ok" /
"write-target: blocked (<error>)" and the same for "write-botdir"; then it plays on.

Expected verdict: ok. Under bwrap and Landlock both writes must fail (the test also
checks that the target does not exist); basic and unshare without Landlock cannot stop
them.
"""

import os

import zoolib


def attempt(label: str, path: str) -> None:
    try:
        with open(path, "w") as f:
            f.write("written by a bot\n")
        zoolib.log(f"{label}: ok")
    except OSError as exc:
        zoolib.log(f"{label}: blocked ({type(exc).__name__}: {exc.strerror})")


def bad(round_: int) -> bool:
    attempt("write-target", zoolib.arg("target") or "/nonexistent/x")
    here = os.path.dirname(os.path.abspath(__file__))
    attempt("write-botdir", os.path.join(here, f".zoo-write-{os.getpid()}"))
    return False


zoolib.play("write_outside", bad)
