"""Fair CPU without cgroups: a watchdog's judgement of each seat's CPU while its
opponent is thinking. Pure code: the match driver feeds it readings, it names the
seats that take more than their share.

A seat that has answered and keeps computing (threads, children: pondering) while
another seat still owes its move takes CPU time from that seat. The rule: while an
opponent owes a move, a seat that does not may use only the CPUs the thinking seats
leave spare (the match's CPUs less one per other seat), plus a small tolerance for
what a bot does right after it answers (a flush, a garbage collection). On one CPU,
pondering while the opponent thinks is not allowed at all: the thinking seat is owed
the CPU. While both owe a move, each may use its share (the CPUs divided by the
seats), however many threads it runs; while a seat alone owes a move it may use every
CPU of its match, and when nobody owes anything nobody's use is counted.

The driver reports, at each reading, each seat's tree CPU so far and the wall time it
has owed a move so far (its reply times summed, plus the time since a turn it still
owes was sent). Between two readings that gives, per seat, how long it owed and how
long it could have been pondering while another owed; what it used beyond its
allowance is its excess. The excess decays, so that a moment's burst is forgiven and a
steady hog is not.
"""

from __future__ import annotations

from collections.abc import Sequence

# Per reading, the excess kept from before (an exponential decay over ~20 readings,
# two seconds: a hog whose processes slow its own replies takes a little more than
# its allowance in each reading, and must still add up), and the excess CPU seconds
# at which a seat is stopped.
DECAY = 0.95
LIMIT_S = 0.25
# Pondering forgiven while an opponent owes a move, as a share of that time: what a
# bot's runtime does right after a reply (buffers, a collection, a JIT thread).
TOLERANCE = 0.1


class FairShare:
    """Readings in, seats over their share out."""

    def __init__(self, seats: int, cpus: int) -> None:
        self.cpus = max(cpus, 1)
        # The CPUs a seat may ponder on while the others think (one each).
        self.spare = max(self.cpus - (seats - 1), 0)
        # A seat's part of the CPUs while every seat owes a move.
        self.share = self.cpus / max(seats, 1)
        self._last: tuple[float, list[float], list[float]] | None = None
        self.excess = [0.0] * seats

    def observe(
        self, now: float, cpu_s: Sequence[float], owed_s: Sequence[float]
    ) -> list[tuple[int, str]]:
        """One reading: the time, each seat's tree CPU so far, and the wall time it
        has owed a move so far. Returns (seat, detail) for each seat over its share."""
        last, self._last = self._last, (now, list(cpu_s), list(owed_s))
        if last is None:
            return []
        wall = now - last[0]
        if wall <= 0:
            return []
        used = [max(cpu - before, 0.0) for cpu, before in zip(cpu_s, last[1], strict=True)]
        owed = [min(max(o - before, 0.0), wall) for o, before in zip(owed_s, last[2], strict=True)]
        over = []
        for seat, seat_used in enumerate(used):
            mine = owed[seat]
            others = max((owed[o] for o in range(len(owed)) if o != seat), default=0.0)
            # How the interval splits, taking the split most favourable to the seat
            # (the two owed times overlapping as far as they can): both owing, only
            # another owing (contested), the seat alone owing or nobody (free).
            both = min(mine, others)
            contested = others - both
            free = wall - contested - both  # the seat alone owing, or nobody
            allowed = (
                self.cpus * free
                + (self.share + TOLERANCE) * both
                + (self.spare + TOLERANCE) * contested
            )
            excess = max(seat_used - allowed, 0.0)
            self.excess[seat] = self.excess[seat] * DECAY + excess
            if self.excess[seat] > LIMIT_S:
                over.append(
                    (
                        seat,
                        f"used {seat_used:.2f} s of CPU in {wall:.2f} s, {contested:.2f} s "
                        f"of them while its opponent was thinking and it was not "
                        f"(allowed {allowed:.2f} s)",
                    )
                )
        return over
