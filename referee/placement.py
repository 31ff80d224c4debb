"""CPU placement: which CPUs the referee's round loop and each bot run on
(``--pin-cpus``, a league worker's share). Speed only, never a result."""

from __future__ import annotations

import os
from collections.abc import Sequence


def pin_thread(cpus: set[int]) -> None:
    """Run the calling thread, and what it starts from now on, on ``cpus`` (--pin-cpus,
    a league worker's share); speed only, so a refusal (a cpuset that changed under
    us) is ignored."""
    try:
        os.sched_setaffinity(0, cpus)
    except OSError:
        pass


def cpu_placement(cpus: Sequence[int], seats: int) -> tuple[int, list[int]] | None:
    """(the referee's CPU, each seat's CPU) for ``--pin-cpus``; None on one CPU.

    The referee takes the first CPU and the seats the next ones in turn, so on two
    CPUs the second bot shares the referee's. Measured on two vCPUs with Python bots
    (docs/performance.md): without pinning, the pipe write that hands a bot its turn
    wakes it on the referee's own CPU (a "sync" wake-up), and both bots can end up
    queued there while the other CPU idles.
    """
    if len(cpus) < 2:
        return None
    return cpus[0], [cpus[(seat + 1) % len(cpus)] for seat in range(seats)]
