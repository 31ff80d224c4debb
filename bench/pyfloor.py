"""pyfloor: the C floor's exchange (bench/floor.c) written in the least Python that
does it, to measure what a referee written in Python can reach on this machine.

    python bench/pyfloor.py [-n ROUNDS] [-t MOVE_MS] [-s SPIN_US] [-p] [-q] [-j] BOT1... -- BOT2...

The options and the output are the floor's. Per round it builds both turn lines
(the same fields and sizes as the referee's), writes both before reading either,
reads the replies without blocking (spinning on a non-blocking epoll for up to
SPIN_US, with the floor's policy, then sleeping in epoll against the move
deadline) and scores them from their "round" and "real_move" alone. What it leaves
out is what the referee adds: trio, the game's rules and checks, fault handling,
timing, stderr capture, containment and the replay. So the referee's rate against
this one says what those cost, and this one's rate against the C floor says what
Python itself costs.

Not a referee: a late or malformed reply ends the run with an error (the
benchmark's bots never send one).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

MOVES = ("rock", "paper", "scissors", "lizard", "spock")
MOVE_OF = {m.encode(): i for i, m in enumerate(MOVES)}
SHOWN = [b'"%s"' % m.encode() for m in MOVES] + [b"null"]  # index -1: no move yet
USAGE = "usage: pyfloor.py [-n ROUNDS] [-t MOVE_MS] [-s SPIN_US] [-p] [-q] [-j] BOT1... -- BOT2..."
# Payoff for (own move, other move) in the protocol's move order: each move beats
# the moves one and three places before it on rock, paper, scissors, spock, lizard.
_RING = (0, 1, 2, 4, 3)
PAYOFF = [
    [0 if a == b else (1 if (_RING[b] - _RING[a]) % 5 in (2, 4) else -1) for b in range(5)]
    for a in range(5)
]


def bucket(tokens: int) -> bytes:
    return (
        b"HIGH" if tokens >= 40 else b"MEDIUM" if tokens >= 20 else b"LOW" if tokens else b"EMPTY"
    )


def hold_idle_poll() -> int:
    """A zero wake-up latency request, held while the file stays open (as floor -q).
    Not referee.wakeup's: importing the referee's modules would be measured too (the
    imports alone cost this floor about 4%)."""
    fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    os.write(fd, (0).to_bytes(4, "little"))
    return fd


def main(argv: list[str]) -> int:
    rounds, move_s, spin_s, pin, idle_poll, as_json = 10_000, 1.0, 0.0, False, False, False
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        flag = argv[i]
        if flag in ("-n", "-t", "-s") and i + 1 < len(argv):
            value = float(argv[i + 1])
            if flag == "-n":
                rounds = int(value)
            elif flag == "-t":
                move_s = value / 1000
            else:
                spin_s = value / 1e6
            i += 2
            continue
        if flag == "-p":
            pin = True
        elif flag == "-q":
            idle_poll = True
        elif flag == "-j":
            as_json = True
        else:
            print(USAGE, file=sys.stderr)
            return 2
        i += 1
    rest = argv[i:]
    if "--" not in rest:
        print(USAGE, file=sys.stderr)
        return 2
    cut = rest.index("--")
    commands = [rest[:cut], rest[cut + 1 :]]
    if not all(commands) or rounds < 1:
        print(USAGE, file=sys.stderr)
        return 2
    _hold = hold_idle_poll() if idle_poll else None

    t0 = time.monotonic()
    cpus = sorted(os.sched_getaffinity(0))
    pin = pin and len(cpus) > 1
    bots = []
    for seat, command in enumerate(commands):
        if pin:  # as floor -p: a child inherits the affinity it is forked with
            os.sched_setaffinity(0, {cpus[(seat + 1) % len(cpus)]})
        bots.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE))
    if pin:
        os.sched_setaffinity(0, {cpus[0]})
    w0, w1 = (b.stdin.fileno() for b in bots)  # type: ignore[union-attr]
    r0, r1 = (b.stdout.fileno() for b in bots)  # type: ignore[union-attr]
    poller = select.epoll()
    for fd in (r0, r1):
        os.set_blocking(fd, False)
        poller.register(fd, select.EPOLLIN)
    read, write, now, poll = os.read, os.write, time.monotonic, poller.poll

    def reply(fd: int, deadline: float) -> bytes:
        """One whole line (the handshake's; the round loop reads inline)."""
        buf = b""
        while not buf.endswith(b"\n"):
            try:
                chunk = read(fd, 65536)
            except BlockingIOError:
                if now() > deadline:
                    raise SystemExit("pyfloor: no reply in time") from None
                poll(0.01)
                continue
            if not chunk:
                raise SystemExit("pyfloor: a bot closed its output")
            buf += chunk
        return buf

    for seat, fd in enumerate((w0, w1)):
        write(
            fd,
            b'{"type":"hello","protocol":1,"game":"chaos","params":{"rounds":%d,"tokens":50,'
            b'"moves":["rock","paper","scissors","lizard","spock"]},"seat":%d,"seats":2,'
            b'"seed":%d,"time":{"handshake_ms":10000,"move_ms":%d,"bank_ms":3000}}\n'
            % (rounds, seat, 4611686018427387903 - seat, int(move_s * 1000)),
        )
    for fd in (r0, r1):
        if b'"name"' not in reply(fd, now() + 10):
            raise SystemExit("pyfloor: a bot failed the handshake")

    head = b'{"type":"turn","round":%d,"opponent_last_visible":%s,"self_last_real":%s,'
    tail = b'"opponent_deception_bucket":"%s"}\n'
    turn = head + tail
    high = bucket(50)
    last0 = last1 = -1
    score = 0
    spin = spin_s
    misses = 0
    t_play = now()
    for rnd in range(1, rounds + 1):
        if not rnd & 255:
            spin, misses = spin_s, 0
        write(w0, turn % (rnd, SHOWN[last1], SHOWN[last0], high))
        write(w1, turn % (rnd, SHOWN[last0], SHOWN[last1], high))
        deadline = now() + move_s
        got0 = got1 = b""
        while not (got0.endswith(b"\n") and got1.endswith(b"\n")):
            if not got0.endswith(b"\n"):
                try:
                    got0 += read(r0, 65536)
                except BlockingIOError:
                    pass
            if not got1.endswith(b"\n"):
                try:
                    got1 += read(r1, 65536)
                except BlockingIOError:
                    pass
            if got0.endswith(b"\n") and got1.endswith(b"\n"):
                break
            t = now()
            if t > deadline:
                raise SystemExit(f"pyfloor: no reply in time in round {rnd}")
            # The floor's spin policy: spin first; a spin that finds nothing halves
            # the budget, and after three such misses only sleep, until round 256k.
            found = False
            if spin > 0:
                until = t + spin
                while now() < until:
                    if poll(0):
                        found = True
                        break
                if not found:
                    misses += 1
                    spin = 0.0 if misses >= 3 else spin / 2
            if not found:
                poll(min(deadline - now(), 0.002))
        moves = []
        for got in (got0, got1):
            at = got.find(b'"round":')
            if at >= 0 and int(got[at + 8 : got.index(b",", at)]) != rnd:
                raise SystemExit(f"pyfloor: a reply for the wrong round in round {rnd}")
            at = got.index(b'"real_move":"') + 13
            moves.append(MOVE_OF[got[at : got.index(b'"', at)]])
        last0, last1 = moves
        score += PAYOFF[last0][last1]
    play = now() - t_play

    for b in bots:
        b.stdin.write(b'{"type":"end","reason":"complete","rounds":%d,"result":null}\n' % rounds)  # type: ignore[union-attr]
        b.stdin.close()  # type: ignore[union-attr]
    for b in bots:
        b.wait()
    wall = now() - t0
    out = {
        "rounds": rounds,
        "wall_s": wall,
        "play_s": play,
        "rounds_per_s": rounds / wall,
        "scores": [score, -score],
        "faults": [0, 0],
    }
    print(
        json.dumps(out)
        if as_json
        else f"rounds {rounds} wall_s {wall:.6f} rounds_per_s {rounds / wall:.0f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
