"""The pure judge (referee/judge.py), driven by a fake clock: time bank, deadlines,
slowest move, fault counting and disqualification, without a process or trio."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from referee.faults import FaultKind
from referee.judge import Judge, SeatClock, crowding_seat


class FakeClock:
    """Seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


def test_a_reply_within_the_move_limit_costs_nothing() -> None:
    clock, judge = FakeClock(), Judge(2, move_s=1.0, bank_s=3.0, max_faults=3)
    sent = clock.now
    assert judge.clocks[0].deadline(sent) == sent + 4.0
    assert judge.reply(0, 1, sent, clock.advance(0.25)) is None
    assert judge.clocks[0].bank == 3.0
    assert judge.clocks[0].max_move == 0.25
    assert judge.faults == [] and judge.round_faults == [0, 0]


def test_the_bank_pays_for_a_slow_move_and_then_runs_out() -> None:
    clock, judge = FakeClock(), Judge(2, move_s=1.0, bank_s=3.0, max_faults=3)
    sent = clock.now
    assert judge.reply(0, 1, sent, clock.advance(2.5)) is None  # 1.5 s from the bank
    assert judge.clocks[0].bank == 1.5
    assert judge.clocks[0].max_move == 2.5
    assert judge.clocks[1].bank == 3.0  # the other seat's bank is its own
    sent = clock.now
    assert judge.clocks[0].deadline(sent) == sent + 2.5
    fault = judge.reply(0, 2, sent, clock.advance(2.6))  # after the deadline
    assert fault is not None and fault.kind is FaultKind.TIMEOUT
    # The same words as no reply at all (see SeatClock.late), the bank as it stood.
    assert fault.detail == "no reply within 1 s (+1.500 s bank)"
    assert judge.clocks[0].bank == 0.0
    assert judge.clocks[0].max_move == 2.5  # a late reply is not a move
    assert judge.round_faults == [1, 0]


def test_no_reply_is_a_timeout_that_empties_the_bank() -> None:
    judge = Judge(2, move_s=0.5, bank_s=2.0, max_faults=3)
    fault = judge.no_reply(1, 7)
    assert (fault.kind, fault.detail) == (
        FaultKind.TIMEOUT,
        "no reply within 0.5 s (+2.000 s bank)",
    )
    assert judge.clocks[1].bank == 0.0
    assert [(f.round, f.seat, f.kind) for f in judge.faults] == [(7, 1, "timeout")]
    assert judge.seat_faults == [[], judge.faults]


def test_round_faults_up_to_the_limit_disqualify() -> None:
    judge = Judge(2, move_s=1.0, bank_s=0.0, max_faults=3)
    for step in (3, 4):
        judge.fault(0, step, FaultKind.PROTOCOL_ERROR, "bad")
        assert judge.must_go([0, 1], step, []) == []
    judge.fault(0, 5, FaultKind.ILLEGAL_MOVE, "no such move")
    assert judge.must_go([0, 1], 5, []) == [0]
    last = judge.faults[-1]
    assert (last.round, last.seat, last.kind) == (5, 0, FaultKind.TOO_MANY_FAULTS)
    assert last.detail == "3 round faults (limit 3)"
    assert judge.disqualify([0]) == [0]
    assert judge.out == [True, False]
    assert judge.disqualify([0, 1]) == [1]  # seat 0 was out already


def test_a_fatal_fault_goes_alone_without_a_second_fault() -> None:
    judge = Judge(2, move_s=1.0, bank_s=0.0, max_faults=1)
    judge.fault(0, 2, FaultKind.TIMEOUT, "slow")
    judge.fault(1, 2, FaultKind.CRASH, "exit code 3")
    assert judge.round_faults == [1, 0]  # a crash is not a round fault
    assert judge.must_go([0, 1], 2, [1]) == [1, 0]
    assert [f.kind for f in judge.faults] == ["timeout", "crash", "too_many_faults"]


def test_a_seat_not_asked_or_out_is_not_disqualified_again() -> None:
    judge = Judge(3, move_s=1.0, bank_s=0.0, max_faults=1)
    judge.fault(2, 1, FaultKind.TIMEOUT, "slow")
    assert judge.must_go([0, 1], 1, []) == []  # seat 2 was not asked this step
    judge.disqualify([2])
    assert judge.must_go([2], 2, []) == []


def test_a_long_detail_is_cut() -> None:
    judge = Judge(1, move_s=1.0, bank_s=0.0, max_faults=3)
    fault = judge.fault(0, 1, FaultKind.PROTOCOL_ERROR, "x" * 2000)
    assert len(fault.detail) == 500 and judge.faults[0].detail == fault.detail


@given(st.lists(st.floats(min_value=0.0, max_value=3.0), max_size=40))
def test_skipping_quiet_replies_changes_nothing(tooks: list[float]) -> None:
    """The two-seat loop calls ``took`` only for a reply over ``quiet``: the clock
    must end the same as when every reply is noted."""
    always, skipping = SeatClock(1.0, 2.0), SeatClock(1.0, 2.0)
    for took in tooks:
        always.took(took)
        if took > skipping.quiet:
            skipping.took(took)
        assert (skipping.bank, skipping.max_move) == (always.bank, always.max_move)


def test_a_seat_over_its_share_of_a_shared_process_cap_is_the_crowder() -> None:
    # Two seats share 256: each one's share is 128.
    assert crowding_seat(2, {1: 250}, 256) == 1
    assert crowding_seat(2, {1: 128}, 256) is None  # at its share: not over it
    assert crowding_seat(2, {1: 3}, 256) is None  # the death is the bot's own
    # The dead seat was over its share itself: its own fork bomb.
    assert crowding_seat(129, {1: 250}, 256) is None
    # Three seats: shares of 85; the one holding the most of those over it.
    assert crowding_seat(1, {0: 90, 2: 120}, 256) == 2
    assert crowding_seat(1, {0: 120, 2: 120}, 256) == 0
    assert crowding_seat(1, {}, 256) is None


def test_a_reply_just_late_and_no_reply_read_the_same() -> None:
    # Whether a reply came just after its deadline or the deadline was found passed
    # just before it came depends on when the referee looked (and so on the layer's
    # speed): the record must not. Before, the one read "reply after 1.000 s" and
    # the other "no reply within 1 s".
    judge = Judge(2, move_s=1.0, bank_s=0.0, max_faults=3)
    late = judge.reply(0, 1, sent=0.0, arrived=1.0005)
    silent = judge.no_reply(1, 1)
    assert late is not None and late.kind == silent.kind == FaultKind.TIMEOUT
    assert late.detail == silent.detail == "no reply within 1 s (+0.000 s bank)"
