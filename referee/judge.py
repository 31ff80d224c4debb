"""The judging of a match: time limits, the time bank, faults and disqualification.

Pure and synchronous: calls in, decisions out. No trio, no processes and no clock
of its own; the caller says when a turn was sent and when a reply arrived (in
seconds, any monotonic origin). The match driver uses it live, both round loops
alike, and ``referee verify`` replays a recorded match through it to re-check
the faults and disqualifications the replay records.

The rules it applies:

* A seat must reply within ``move_s`` of its turn being sent, plus what is left of
  its time bank (``bank_s`` per match). A reply in time that took longer than
  ``move_s`` pays the excess from the bank. A timeout empties the bank.
* Timeouts, protocol errors and illegal moves are round faults: the seat loses
  the step and plays on, until ``max_faults`` of them disqualify it
  (``too_many_faults``). Every other fault disqualifies at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .faults import FATAL_FAULTS, ROUND_FAULTS, Fault, FaultKind, FaultRecord

DETAIL_MAX = 500  # characters of a fault's detail kept in the record


class SeatClock:
    """One seat's time: the move limit, what is left of its bank, its slowest move.

    ``quiet`` is the reply time at or under which ``took`` changes nothing (neither a
    new slowest move nor a charge to the bank): a round loop may skip the call for
    such replies, which are nearly all of them. ``owed_s`` sums the times of the
    replies that came, in time or late: the wall time the seat has owed moves, which
    the CPU-share watchdog weighs its CPU against (a round loop adds to it itself
    when it skips ``took``)."""

    __slots__ = ("move_s", "bank", "max_move", "quiet", "owed_s")

    def __init__(self, move_s: float, bank_s: float) -> None:
        self.move_s = move_s
        self.bank = bank_s
        self.max_move = 0.0
        self.quiet = 0.0
        self.owed_s = 0.0

    def deadline(self, sent: float) -> float:
        """When a reply to a turn sent at ``sent`` is due at the latest."""
        return sent + self.move_s + self.bank

    def took(self, took: float) -> None:
        """A reply in time took ``took`` seconds: note it, charge the bank the excess."""
        if took > self.max_move:
            self.max_move = took
        if took > self.move_s:  # the time bank pays for the excess
            self.bank = max(0.0, self.bank - (took - self.move_s))
        self.quiet = min(self.max_move, self.move_s)

    def late(self, took: float) -> str:
        """A reply that came after its deadline: a timeout all the same. Empties the
        bank; returns the fault's detail."""
        # The same words as silent(): whether a reply came just after its deadline
        # or the deadline was found passed just before it came is a matter of when
        # the referee looked, which must not change the record.
        return self.silent()

    def silent(self) -> str:
        """No reply by the deadline. Empties the bank; returns the fault's detail."""
        detail = f"no reply within {self.move_s:g} s (+{self.bank:.3f} s bank)"
        self.bank = 0.0
        return detail


class Judge:
    """The fault book of one match: every fault in order, round faults counted per
    seat, who is out. ``faults`` and ``seat_faults`` are the lists the replay's
    footer and each seat's verdict show."""

    def __init__(self, seats: int, move_s: float, bank_s: float, max_faults: int) -> None:
        self.clocks = [SeatClock(move_s, bank_s) for _ in range(seats)]
        self.max_faults = max_faults
        self.round_faults = [0] * seats
        self.out = [False] * seats
        self.faults: list[FaultRecord] = []
        self.seat_faults: list[list[FaultRecord]] = [[] for _ in range(seats)]

    def fault(self, seat: int, step: int, kind: FaultKind, detail: str) -> Fault:
        """Record a fault; returns it as a step's record shows it."""
        detail = detail[:DETAIL_MAX]
        rec = FaultRecord(round=step, seat=seat, kind=kind, detail=detail)
        self.faults.append(rec)
        self.seat_faults[seat].append(rec)
        if kind in ROUND_FAULTS:
            self.round_faults[seat] += 1
        return Fault(kind, detail)

    def reply(self, seat: int, step: int, sent: float, arrived: float) -> Fault | None:
        """Judge the time of a reply to the turn sent at ``sent``: a timeout fault if
        it came after the deadline, else None (the bank pays what it must)."""
        clock = self.clocks[seat]
        took = arrived - sent
        clock.owed_s += took
        if arrived > clock.deadline(sent):
            return self.fault(seat, step, FaultKind.TIMEOUT, clock.late(took))
        clock.took(took)
        return None

    def no_reply(self, seat: int, step: int, hint: str = "") -> Fault:
        """The seat's deadline passed without a reply; ``hint`` says what was seen."""
        return self.fault(seat, step, FaultKind.TIMEOUT, self.clocks[seat].silent() + hint)

    def must_go(self, asked: Iterable[int], step: int, fatal: Sequence[int]) -> list[int]:
        """After a step's faults: the seats to disqualify now. ``fatal`` are those
        that must go for a fault of their own; an asked seat at its round-fault
        limit goes too, with a ``too_many_faults`` fault recorded."""
        going = list(fatal)
        for seat in asked:
            if (
                seat not in going
                and self.round_faults[seat] >= self.max_faults
                and not self.out[seat]
            ):
                self.fault(
                    seat,
                    step,
                    FaultKind.TOO_MANY_FAULTS,
                    f"{self.round_faults[seat]} round faults (limit {self.max_faults})",
                )
                going.append(seat)
        return going

    def disqualify(self, seats: Iterable[int]) -> list[int]:
        """Put seats out; returns those that were not out already, in order."""
        newly = [seat for seat in seats if not self.out[seat]]
        for seat in newly:
            self.out[seat] = True
        return newly


def is_fatal(kind: FaultKind) -> bool:
    """Whether a fault of this kind disqualifies at once."""
    return kind in FATAL_FAULTS


def crowding_seat(crashed_last: int, others: Mapping[int, int], limit: int) -> int | None:
    """Where the seats' processes count against one cap they share (an unprivileged
    referee without a pids cgroup: the kernel's RLIMIT_NPROC counts every process of
    the user, and all its bots are that user), the seat that may have made the fork
    of a seat whose bot just died fail: the kernel refuses the fork of whoever asks
    once the user is at the cap, not of whoever filled it.

    Each seat's share is ``limit`` split evenly over the seats sharing it, the dead
    one and the live ``others`` (seat: processes now). The crowder is the live seat
    holding more than its share, the most if several; None when none does, or when
    the dead seat itself held more than its share at its last reading
    (``crashed_last``): its own fork bomb, not a victim of another's."""
    share = limit // (len(others) + 1)
    if crashed_last > share:
        return None
    over = [(held, -seat) for seat, held in others.items() if held > share]
    return -max(over)[1] if over else None
