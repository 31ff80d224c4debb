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
CPU of its match. When nobody owes a move the referee is working (reading the replies,
applying the rules, sending the next turns): it is owed one CPU, and each seat may use
the rest, plus the tolerance. On one CPU a bot that keeps computing after it answers
thus slows the whole match, its opponent's moves included, and is judged for it.

The driver reports, at each reading, each seat's tree CPU so far and the wall time it
has owed a move so far (its reply times summed, plus the time since a turn it still
owes was sent). Between two readings that gives, per seat, how long it owed and how
long it could have been pondering while another owed; what it used beyond its
allowance is its excess. The excess decays, so that a moment's burst is forgiven and a
steady hog is not.

Other work on the match's CPUs (other matches, other programs) shrinks every seat's
part of them: beside it a hog gets less CPU in each reading, yet that CPU is just as
much taken from its opponent. So the driver may also report the CPU time spent on the
match's CPUs by anything outside the match, and each seat's run-queue wait. Of the
CPU time in a reading, the part other work took while the seat's opponents were
waiting for a CPU (at most the smaller of the two) is not the match's to share; each
seat's use is weighed as a share of what is left (scaled up by it), as if the match
had its CPUs to itself. Other work on CPUs the opponents did not want (they were
asleep) does not count: it took nothing from them.
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
# The least part of the match's CPUs taken as left to it however much other work took
# (at most a fourfold scale-up, so that the noise of a few clock ticks on a host taken
# over by other work is not blown up into a seat's excess).
LEAST_AVAILABLE = 0.25


class FairShare:
    """Readings in, seats over their share out."""

    def __init__(self, seats: int, cpus: int) -> None:
        self.seats = seats
        self.use_cpus(cpus)
        self._last: tuple[float, list[float], list[float], float, list[float]] | None = None
        self.excess = [0.0] * seats
        # Decayed sums: CPU time on the match's CPUs, and the part of it other work
        # took from each seat's opponents.
        self._capacity = 0.0
        self._held_up = [0.0] * seats

    def use_cpus(self, cpus: int) -> None:
        """The number of CPUs the match runs on (from now on)."""
        self.cpus = max(cpus, 1)
        # The CPUs a seat may ponder on while the others think (one each).
        self.spare = max(self.cpus - (self.seats - 1), 0)
        # A seat's part of the CPUs while every seat owes a move.
        self.share = self.cpus / max(self.seats, 1)
        # The CPUs a seat may use while nobody owes a move (the referee's turn: one).
        self.between = self.cpus - 1

    def observe(
        self,
        now: float,
        cpu_s: Sequence[float],
        owed_s: Sequence[float],
        others_s: float = 0.0,
        waits_s: Sequence[float] | None = None,
    ) -> list[tuple[int, str]]:
        """One reading: the time, each seat's tree CPU so far, and the wall time it
        has owed a move so far; optionally the CPU time anything outside the match
        has spent on the match's CPUs so far and each seat's run-queue wait so far
        (both 0 if not known). Returns (seat, detail) for each seat over its share."""
        waits = list(waits_s) if waits_s is not None else [0.0] * len(cpu_s)
        last = self._last
        self._last = (now, list(cpu_s), list(owed_s), others_s, waits)
        if last is None:
            return []
        wall = now - last[0]
        if wall <= 0:
            return []
        used = [max(cpu - before, 0.0) for cpu, before in zip(cpu_s, last[1], strict=True)]
        owed = [min(max(o - before, 0.0), wall) for o, before in zip(owed_s, last[2], strict=True)]
        taken = max(others_s - last[3], 0.0)
        waited = [max(w - before, 0.0) for w, before in zip(waits, last[4], strict=True)]
        self._capacity = self._capacity * DECAY + self.cpus * wall
        over = []
        for seat, seat_used in enumerate(used):
            mine = owed[seat]
            others = max((owed[o] for o in range(len(owed)) if o != seat), default=0.0)
            # How the interval splits, the owed times overlapping as far as they can
            # (they do: every seat is sent its turn at once, so the one that answers
            # first owed only while the other did too): both owing, only another
            # owing (contested), the seat alone owing, nobody owing (the referee's).
            both = min(mine, others)
            contested = others - both
            alone = mine - both
            between = max(wall - contested - both - alone, 0.0)
            allowed = (
                self.cpus * alone
                + (self.share + TOLERANCE) * both
                + (self.spare + TOLERANCE) * contested
                + (self.between + TOLERANCE) * between
            )
            # What other work took from the opponents: at most what it took, and at
            # most how long they waited for a CPU while they owed a move. Weighed
            # over the same readings as the excess (one reading's clock ticks are
            # too coarse to split the CPU time by).
            waiting = sum(min(waited[o], owed[o]) for o in range(len(owed)) if o != seat)
            self._held_up[seat] = self._held_up[seat] * DECAY + min(taken, waiting)
            available = max(1.0 - self._held_up[seat] / self._capacity, LEAST_AVAILABLE)
            excess = max(seat_used / available - allowed, 0.0)
            self.excess[seat] = self.excess[seat] * DECAY + excess
            if self.excess[seat] > LIMIT_S:
                over.append(
                    (
                        seat,
                        f"used {seat_used:.2f} s of CPU in {wall:.2f} s, {contested:.2f} s "
                        f"of them while its opponent was thinking and it was not "
                        f"(allowed {allowed:.2f} s"
                        + (
                            f"; other work left the match {available:.0%} of its CPUs)"
                            if available < 1.0
                            else ")"
                        ),
                    )
                )
        return over
