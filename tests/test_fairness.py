"""referee.sandbox.fairness with a fake clock: which seat takes more than its share
of the CPU while its opponent is thinking."""

from __future__ import annotations

from referee.sandbox import FairShare


def _play(
    fair: FairShare, ticks: int, used: tuple[float, float], owed: tuple[float, float]
) -> list[tuple[int, str]]:
    """``ticks`` readings 0.1 s apart; in each interval seat i uses ``used[i]`` CPU
    seconds and owes a move for ``owed[i]`` of the 0.1 s."""
    cpu = [0.0, 0.0]
    owed_s = [0.0, 0.0]
    over: list[tuple[int, str]] = []
    fair.observe(0.0, cpu, owed_s)
    for tick in range(1, ticks + 1):
        cpu = [cpu[0] + used[0], cpu[1] + used[1]]
        owed_s = [owed_s[0] + owed[0], owed_s[1] + owed[1]]
        over += fair.observe(tick * 0.1, cpu, owed_s)
    return over


def test_a_hog_is_named_while_its_opponent_thinks_on_one_cpu() -> None:
    # Seat 1 answered at once and burns 0.09 s of each 0.1 s; seat 0, thinking, gets 0.01 s.
    over = _play(FairShare(2, 1), 20, (0.01, 0.09), (0.1, 0.0))
    assert over and {seat for seat, _ in over} == {1}
    assert "while its opponent was thinking" in over[0][1]


def test_an_even_split_of_one_cpu_is_still_pondering() -> None:
    # Half the only CPU while the opponent owes its move: the thinking seat is owed
    # the CPU, so the ponderer is named (within a second of steady play).
    over = _play(FairShare(2, 1), 10, (0.05, 0.05), (0.1, 0.0))
    assert {seat for seat, _ in over} == {1}


def test_what_a_runtime_does_after_a_reply_is_forgiven() -> None:
    assert _play(FairShare(2, 1), 1000, (0.09, 0.008), (0.1, 0.0)) == []


def test_a_spare_cpu_may_be_pondered_on() -> None:
    # Two CPUs: the thinking seat needs one, the other may use the other one.
    assert _play(FairShare(2, 2), 1000, (0.1, 0.1), (0.1, 0.0)) == []
    assert _play(FairShare(2, 2), 50, (0.05, 0.15), (0.1, 0.0))


def test_computing_while_the_referee_works_between_rounds_takes_its_cpu() -> None:
    # Nobody owes a move: the referee is reading replies and sending turns. On one CPU
    # a busy seat takes that CPU from it (and slows the whole match); on two it may
    # use the one the referee does not need.
    assert {seat for seat, _ in _play(FairShare(2, 1), 20, (0.0, 0.1), (0.0, 0.0))} == {1}
    assert _play(FairShare(2, 2), 1000, (0.0, 0.1), (0.0, 0.0)) == []


def test_a_hog_whose_own_processes_slow_its_replies_is_named() -> None:
    # Measured on one CPU with a cpu cgroup per seat: the hog answers at once, but its 8
    # busy processes delay each reply, so it owes a move for 0.03 s of each 0.1 s and
    # gets half the CPU; its opponent owes 0.092 s of it. Counting the time nobody owed
    # (the referee's) as free let its excess settle just under the limit, and the
    # opponent's match took twice as long.
    over = _play(FairShare(2, 1), 20, (0.048, 0.049), (0.092, 0.03))
    assert {seat for seat, _ in over} == {1}


def test_a_seat_thinking_alone_may_use_every_cpu() -> None:
    assert _play(FairShare(2, 2), 1000, (0.2, 0.0), (0.1, 0.0)) == []


def test_seats_thinking_together_share_the_cpus() -> None:
    assert _play(FairShare(2, 1), 1000, (0.05, 0.05), (0.1, 0.1)) == []
    # Two threads against one on a CPU both want: two thirds is within the tolerance.
    assert _play(FairShare(2, 1), 1000, (0.067, 0.033), (0.1, 0.1)) == []
    # Eight busy processes against one thread, both owing a move: not a share.
    over = _play(FairShare(2, 1), 20, (0.011, 0.089), (0.1, 0.1))
    assert {seat for seat, _ in over} == {1}


def test_a_quick_bot_against_a_slow_one_on_one_cpu_is_fair() -> None:
    # Seat 0 computes 2 ms a move, seat 1 5 ms, both at once on one CPU: a round
    # takes 7 ms, seat 0 answers after about 4 ms and then waits. Per 0.1 s: seat 0
    # owes 0.057 s and uses 0.029 s, seat 1 owes all of it and uses 0.071 s.
    assert _play(FairShare(2, 1), 1000, (0.029, 0.071), (0.057, 0.1)) == []


def test_thinking_before_answering_is_not_pondering() -> None:
    # Seat 1 thought for 0.09 s of the interval (half the CPU, with seat 0 thinking
    # too), then answered and stopped.
    fair = FairShare(2, 1)
    fair.observe(0.0, [0.0, 0.0], [0.0, 0.0])
    assert fair.observe(0.1, [0.055, 0.045], [0.1, 0.09]) == []
    assert fair.excess == [0.0, 0.0]


def test_a_burst_is_forgiven() -> None:
    fair = FairShare(2, 1)
    fair.observe(0.0, [0.0, 0.0], [0.0, 0.0])
    # One interval with about 0.15 s of excess, then fair play: never over the limit.
    assert fair.observe(0.1, [0.0, 0.16], [0.1, 0.0]) == []
    cpu, owed = [0.0, 0.16], [0.1, 0.0]
    for tick in range(2, 100):
        cpu = [cpu[0] + 0.09, cpu[1] + 0.005]
        owed = [owed[0] + 0.1, owed[1]]
        assert fair.observe(tick * 0.1, cpu, owed) == []


def _beside(
    fair: FairShare,
    ticks: int,
    used: tuple[float, float],
    owed: tuple[float, float],
    others: float,
    waited: tuple[float, float],
) -> list[tuple[int, str]]:
    """As _play, with other work taking ``others`` CPU seconds of the match's CPUs in
    each 0.1 s and each seat waiting ``waited[i]`` for a CPU."""
    cpu, owed_s, waits = [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]
    others_s = 0.0
    over: list[tuple[int, str]] = []
    fair.observe(0.0, cpu, owed_s, others_s, waits)
    for tick in range(1, ticks + 1):
        cpu = [cpu[i] + used[i] for i in (0, 1)]
        owed_s = [owed_s[i] + owed[i] for i in (0, 1)]
        waits = [waits[i] + waited[i] for i in (0, 1)]
        others_s += others
        over += fair.observe(tick * 0.1, cpu, owed_s, others_s, waits)
    return over


def test_beside_other_work_a_hog_is_still_named() -> None:
    # One CPU shared with a busy loop of its own scheduling group: the thinking seat
    # (owing all the time) and the hog get a third each. The hog's own processes
    # slow its replies, so it owes 0.04 s of each 0.1 s. Judged against the wall
    # clock alone that stays under the limit; as a share of the CPU other work left
    # the match, it is the same steady pondering as on an idle machine.
    used, owed, waited = (0.033, 0.035), (0.1, 0.04), (0.067, 0.9)
    assert _play(FairShare(2, 1), 1000, used, owed) == []
    over = _beside(FairShare(2, 1), 50, used, owed, 0.033, waited)
    assert over and {seat for seat, _ in over} == {1}
    assert "other work left the match" in over[0][1]


def test_other_work_on_a_cpu_nobody_waited_for_counts_for_nothing() -> None:
    # Seat 0 thinks by sleeping (it owes, but never waits for a CPU), other work
    # takes nearly all the CPU, and seat 1 does a little after each reply.
    assert _beside(FairShare(2, 1), 1000, (0.0, 0.008), (0.1, 0.0), 0.09, (0.0, 0.0)) == []


def test_beside_other_work_thinking_alone_and_together_is_fair() -> None:
    # Seat 0 thinks alone, gets half the CPU beside other work, while seat 1's idle
    # tree waits for nothing; then both think and get a third each.
    assert _beside(FairShare(2, 1), 1000, (0.05, 0.0), (0.1, 0.0), 0.05, (0.05, 0.0)) == []
    assert _beside(FairShare(2, 1), 1000, (0.033, 0.033), (0.1, 0.1), 0.033, (0.067, 0.067)) == []
