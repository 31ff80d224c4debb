"""referee.sandbox.fairness with a fake clock: which seat takes more than its share
of the CPU while its opponent is thinking."""

from __future__ import annotations

from referee.sandbox import FairShare


def _play(fair: FairShare, ticks: int, used: tuple[float, float], thinking: tuple[bool, bool]):
    cpu = [0.0, 0.0]
    over: list[tuple[int, str]] = []
    fair.observe(0.0, cpu, thinking)
    for tick in range(1, ticks + 1):
        cpu = [cpu[0] + used[0], cpu[1] + used[1]]
        over += fair.observe(tick * 0.1, cpu, thinking)
    return over


def test_a_hog_is_named_while_its_opponent_thinks_on_one_cpu() -> None:
    # Seat 1 answered and burns 0.09 s of each 0.1 s; seat 0, thinking, gets 0.01 s.
    over = _play(FairShare(2, 1), 20, (0.01, 0.09), (True, False))
    assert over and {seat for seat, _ in over} == {1}
    assert "while its opponent was thinking" in over[0][1]


def test_sharing_a_cpu_evenly_is_fair() -> None:
    # A bot pondering on one thread gets what the thinking one gets: fair, for ever.
    assert _play(FairShare(2, 1), 1000, (0.05, 0.05), (True, False)) == []


def test_a_cpu_of_its_own_is_its_share_on_two() -> None:
    assert _play(FairShare(2, 2), 1000, (0.1, 0.1), (True, False)) == []
    assert _play(FairShare(2, 2), 50, (0.05, 0.15), (True, False))


def test_computing_when_nobody_waits_is_not_counted() -> None:
    assert _play(FairShare(2, 1), 1000, (0.0, 0.1), (False, False)) == []
    assert _play(FairShare(2, 1), 1000, (0.1, 0.1), (True, True)) == []


def test_thinking_before_answering_is_not_pondering() -> None:
    # Seat 1 thought (and used its CPU) until just before the reading that finds it
    # idle: that interval is not counted against it.
    fair = FairShare(2, 1)
    fair.observe(0.0, [0.0, 0.0], [True, True])
    assert fair.observe(0.1, [0.0, 0.5], [True, False]) == []
    assert fair.excess == [0.0, 0.0]


def test_a_burst_is_forgiven() -> None:
    fair = FairShare(2, 1)
    fair.observe(0.0, [0.0, 0.0], [True, False])
    # One interval with 0.15 s of excess, then fair play: never over the limit.
    assert fair.observe(0.1, [0.0, 0.2], [True, False]) == []
    cpu = [0.0, 0.2]
    for tick in range(2, 100):
        cpu = [cpu[0] + 0.05, cpu[1] + 0.05]
        assert fair.observe(tick * 0.1, cpu, [True, False]) == []
