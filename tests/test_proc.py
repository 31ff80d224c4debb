"""Bot-process plumbing that the integration tests reach only indirectly."""

from __future__ import annotations

import os
import select
import sys
import time

import pytest
from conftest import match_json, replay_steps

from referee.placement import cpu_placement
from referee.proc import LAUNCHER_TEXT_MAX, Multiplexer, StderrCapture
from referee.sandbox import LAUNCH_TOKEN


def test_stderr_capture_keeps_head_tail_and_a_capped_log_from_the_first_byte(tmp_path):
    log = tmp_path / "bot.stderr.log"
    cap = StderrCapture(keep=10, log=log, log_cap=25)
    cap.feed(LAUNCH_TOKEN + b"0123456789abcdef")
    cap.feed(b"ghijklmnopqrstuvwxyz")
    cap.close()
    assert bytes(cap.head) == b"0123456789"
    assert bytes(cap.tail) == b"qrstuvwxyz"
    assert cap.total == 36
    text = log.read_bytes()
    assert text.startswith(b"0123456789abcdefghijklmno\n")
    assert b"truncated" in text


def test_stderr_capture_drops_the_launch_token_even_split_across_reads(tmp_path):
    log = tmp_path / "bot.stderr.log"
    cap = StderrCapture(log=log)
    cap.feed(b"launcher warning\n" + LAUNCH_TOKEN[:5])
    assert not cap.launched and cap.total == 0  # held back until the token is complete
    cap.feed(LAUNCH_TOKEN[5:] + b"bot line\n")
    cap.close()
    assert cap.launched
    assert bytes(cap.head) == b"launcher warning\nbot line\n"
    assert cap.total == len(b"launcher warning\nbot line\n")
    assert log.read_bytes() == b"launcher warning\nbot line\n"
    # A token the bot prints itself is just text.
    cap2 = StderrCapture()
    cap2.feed(LAUNCH_TOKEN + LAUNCH_TOKEN)
    assert bytes(cap2.head) == LAUNCH_TOKEN


def test_stderr_capture_without_the_token_is_the_launchers_text(tmp_path):
    log = tmp_path / "bot.stderr.log"
    cap = StderrCapture(log=log)
    cap.feed(b"bwrap: Can't mount proc\n")
    cap.close()
    assert not cap.launched
    assert cap.head_text() == "bwrap: Can't mount proc\n"
    assert log.read_bytes() == b"bwrap: Can't mount proc\n"
    # More than a launcher ever writes is no longer held back, and still not the bot's.
    long = StderrCapture()
    long.feed(b"x" * (LAUNCHER_TEXT_MAX + 1))
    assert not long.launched and long.total == LAUNCHER_TEXT_MAX + 1
    assert long.head_text() == "x" * (LAUNCHER_TEXT_MAX + 1)


def test_an_empty_spin_halves_the_budget_down_to_none_and_reset_restores_it():
    budget = 0.0008
    mux = Multiplexer([], fast_wait_s=0.0, spin_s=budget)
    r, w = os.pipe()
    try:
        mux.ep.register(r, select.EPOLLIN)
        seen = []
        for _ in range(5):
            assert mux.ready_soon(1.0) == []
            seen.append(mux.spin_s)
        # A bot slower than the spin stops costing spins after three misses.
        assert seen == [budget / 2, budget / 4, budget / 8, 0.0, 0.0]
        mux.reset_spin()
        os.write(w, b"x\n")
        assert [fd for fd, _mask in mux.ready_soon(1.0)] == [r]
        assert mux.spin_s == budget  # a spin that found something keeps its budget
    finally:
        mux.close()
        os.close(r)
        os.close(w)


def test_ready_soon_waits_no_longer_than_its_timeout():
    # fast_wait_s far above the 20 ms asked for, so that a loaded machine's late
    # wake-up cannot be mistaken for waiting fast_wait_s.
    mux = Multiplexer([], fast_wait_s=10.0, spin_s=0.0001)
    r, w = os.pipe()
    try:
        mux.ep.register(r, select.EPOLLIN)
        t0 = time.monotonic()
        assert mux.ready_soon(0.02) == []
        assert time.monotonic() - t0 < 5.0  # the 20 ms asked for, not fast_wait_s
    finally:
        mux.close()
        os.close(r)
        os.close(w)


def test_spinning_or_not_plays_the_same_match(tmp_path):
    # --spin-us changes how the referee waits, never what happens: the same seeded
    # match with and without spinning records the same turns, actions and outcomes.
    steps = {}
    for spin in ("0", "100"):
        replay = tmp_path / f"spin{spin}.jsonl"
        result = match_json("iocaine", "trickster", "--rounds", "400", "--seed", "11",
                            "--spin-us", spin, "--replay", str(replay))  # fmt: skip
        assert result["reason"] == "complete"
        steps[spin] = [(s["obs"], s["act"], s["out"]) for s in replay_steps(replay)]
    assert len(steps["0"]) == 400
    assert steps["0"] == steps["100"]


AFFINITY_BOT = """
import os, sys
sys.stderr.write(f"cpus {sorted(os.sched_getaffinity(0))}\\n")
sys.stderr.flush()
for line in sys.stdin:
    if '"hello"' in line:
        print('{"name": "affinity"}', flush=True)
    elif '"turn"' in line:
        r = line.split('"round":')[1].split(",")[0].split("}")[0]
        move = ["rock", "paper", "scissors", "lizard", "spock"][int(r) * 7 % 5]
        print('{"round": %s, "real_move": "%s"}' % (r, move), flush=True)
"""


def test_cpu_placement_spreads_the_seats_over_the_cpus():
    assert cpu_placement([0], 2) is None
    assert cpu_placement([0, 1], 2) == (0, [1, 0])
    assert cpu_placement([2, 5, 7], 2) == (2, [5, 7])
    assert cpu_placement([0, 1, 2, 3], 3) == (0, [1, 2, 3])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two CPUs")
def test_pin_cpus_pins_each_bot_and_plays_the_same_match(tmp_path):
    bot = tmp_path / "affinity.py"
    bot.write_text(AFFINITY_BOT)
    cpus = sorted(os.sched_getaffinity(0))
    _, seat_cpus = cpu_placement(cpus, 2) or (0, [])
    command = f"{sys.executable} {bot}"
    seen = {}
    for pinned in (False, True):
        replay = tmp_path / f"pinned{pinned}.jsonl"
        result = match_json(command, "iocaine", "--rounds", "300", "--seed", "4",
                            "--replay", str(replay), *(["--pin-cpus"] if pinned else []))  # fmt: skip
        assert result["reason"] == "complete"
        stderr = result["seats"][0]["verdict"]["stderr_head"]
        seen[pinned] = [(s["obs"], s["act"], s["out"]) for s in replay_steps(replay)]
        expected = [seat_cpus[0]] if pinned else cpus
        assert f"cpus {expected}" in stderr, stderr
    assert len(seen[True]) == 300
    assert seen[True] == seen[False]  # speed only, never a result
