"""Shared plumbing for the hostile zoo bots (standard library only).

Every zoo bot speaks the normal protocol (protocol/README.md) until round
``BAD_ROUND``, where it does its one bad thing; this module holds the normal part so
that each bot file shows only its misbehaviour. Bots that probe the sandbox report
what happened on stderr as ``<probe>: <result>`` and keep playing validly, so a test
can read the outcome from the verdict's stderr tail.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

BAD_ROUND = 3

_in = sys.stdin.buffer
_out = sys.stdout.buffer


def log(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def send_raw(data: bytes) -> None:
    _out.write(data)
    _out.flush()


def send(obj: Any) -> None:
    send_raw(json.dumps(obj).encode() + b"\n")


def move(round_: int, real: str = "rock") -> None:
    send({"round": round_, "real_move": real})


def handshake(name: str) -> dict[str, Any]:
    """Read hello, answer with our name; exit quietly if the referee is gone."""
    line = _in.readline()
    if not line:
        sys.exit(0)
    hello = json.loads(line)
    send({"name": name})
    return hello


def turns() -> Iterator[int]:
    """Yield each turn's round number; stop at ``end`` or EOF."""
    while True:
        line = _in.readline()
        if not line:
            return
        msg = json.loads(line)
        if msg.get("type") != "turn":
            return
        yield msg["round"]


def play(name: str, bad: Any = None, at: int = BAD_ROUND) -> None:
    """Play "rock" every round; at round ``at`` call ``bad(round)`` instead of moving.

    ``bad`` returns True when it has already answered the round itself.
    """
    handshake(name)
    for round_ in turns():
        if round_ == at and bad is not None:
            if bad(round_):
                continue
        move(round_)


def sleep_forever() -> None:
    import time

    while True:
        time.sleep(3600)


def arg(name: str, default: str | None = None) -> str | None:
    """Value of a ``--name=value`` argument (never a bare path: see catalog.py)."""
    prefix = f"--{name}="
    for a in sys.argv[1:]:
        if a.startswith(prefix):
            return a[len(prefix) :]
    return default
