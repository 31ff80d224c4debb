"""Quick wake-ups: keep idle CPUs polling while a match plays.

Every round the referee hands each bot its turn with a pipe write, and that write
wakes the bot. If the CPU the bot sleeps on is idle, the kernel has usually put it
into a halt state, and bringing it back takes an interrupt between CPUs; on a
virtual machine that is a trip through the hypervisor, paid partly inside the
referee's write. On the two-vCPU AMD host of docs/performance.md such a write
cost 9.4 us with idle CPUs halting and 1.15 us with them polling.

Linux's PM QoS interface takes a limit on that wake-up latency from any process
holding ``/dev/cpu_dma_latency`` open: a process writes a 32-bit number of
microseconds, and while the file stays open the cpuidle governor never chooses
an idle state slower to leave than that. With a limit of 0 only the polling idle
state is left, and a CPU polling in idle is woken by setting a flag, without an
interrupt. The request ends when the file is closed or its holder dies, so
nothing outlives the referee. Latency-sensitive tools (cyclictest, tuned's
latency profiles) use the same interface.

What it costs: idle CPUs spin instead of sleeping, for the length of the match
(power, and on a shared host the CPU time of idle vCPUs). It is the same for
every seat and changes speed only, never a result. Opening the device needs write
access to it (root, by default); where that is refused, the match plays as it
would without it, and the outcome says so.
"""

from __future__ import annotations

import os
import struct

DEVICE = "/dev/cpu_dma_latency"


class IdlePollHold:
    """A zero CPU wake-up latency request, held from ``acquire`` to ``release``."""

    def __init__(self, device: str = DEVICE) -> None:
        self.device = device
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> bool:
        """Ask for it; True if the kernel took the request. Never raises: a
        machine without the device, or a user without access, plays on without."""
        if self._fd is not None:
            return True
        try:
            # O_CLOEXEC: a bot must never inherit the descriptor, or it could write a
            # request of its own through it, or keep it alive past the match.
            fd = os.open(self.device, os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            # The kernel reads a native-endian signed 32-bit value in microseconds.
            os.write(fd, struct.pack("=i", 0))
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        """Drop the request (closing the file is what ends it); safe to repeat."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> IdlePollHold:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def current_limit_us(device: str = DEVICE) -> int | None:
    """The latency limit the kernel applies now (the smallest request of all its
    holders; 2,000,000,000 when nobody asks), or None if it cannot be read."""
    try:
        with open(device, "rb") as f:
            data = f.read(4)
    except OSError:
        return None
    if len(data) != 4:
        return None
    return int(struct.unpack("=i", data)[0])
