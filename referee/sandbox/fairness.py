"""Fair CPU without cgroups: a watchdog's judgement of each seat's CPU while its
opponent is thinking. Pure code: the match driver feeds it readings, it names the
seats that take more than their share.

A seat that has answered and keeps computing (threads, children) while another seat
still owes its move takes CPU time from that seat. Between two readings where a seat
was idle at both and another seat thinking at both (so that a bot's own thinking
before it answered is never counted), the CPU the idle seat used is compared with
what it may use: its share of the match's CPUs (their
number divided by the seats), and no less than the thinking seat got itself (two
seats that each get half of one CPU are fair, however busy). What it used beyond
that is its excess; the excess decays, so that a moment's burst is forgiven and a
steady hog is not.
"""

from __future__ import annotations

from collections.abc import Sequence

# Per reading, the excess kept from before (an exponential decay over ~10 readings),
# and the excess CPU seconds at which a seat is stopped.
DECAY = 0.9
LIMIT_S = 0.2


class FairShare:
    """Readings in, seats over their share out."""

    def __init__(self, seats: int, cpus: int) -> None:
        self.share = max(cpus, 1) / max(seats, 1)
        self._last: tuple[float, list[float], list[bool]] | None = None
        self.excess = [0.0] * seats

    def observe(
        self, now: float, cpu_s: Sequence[float], thinking: Sequence[bool]
    ) -> list[tuple[int, str]]:
        """One reading: the time, each seat's tree CPU so far, and whether it owes a
        move. Returns (seat, detail) for each seat over its share."""
        last, self._last = self._last, (now, list(cpu_s), list(thinking))
        if last is None:
            return []
        # Idle or thinking through the whole interval, as far as two readings tell.
        idle = [not now_ and not before for now_, before in zip(thinking, last[2], strict=True)]
        busy = [now_ and before for now_, before in zip(thinking, last[2], strict=True)]
        wall = now - last[0]
        if wall <= 0:
            return []
        used = [max(cpu - before, 0.0) for cpu, before in zip(cpu_s, last[1], strict=True)]
        over = []
        for seat, seat_used in enumerate(used):
            others = [used[o] for o in range(len(used)) if o != seat and busy[o]]
            excess = 0.0
            if idle[seat] and others:
                allowed = max(self.share * wall, max(others))
                excess = max(seat_used - allowed, 0.0)
            self.excess[seat] = self.excess[seat] * DECAY + excess
            if self.excess[seat] > LIMIT_S:
                over.append(
                    (
                        seat,
                        f"used {seat_used:.2f} s of CPU in {wall:.2f} s while its opponent "
                        f"was thinking (share {self.share:g} CPU)",
                    )
                )
        return over
