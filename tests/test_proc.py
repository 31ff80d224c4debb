"""Bot-process plumbing that the integration tests reach only indirectly."""

from __future__ import annotations

import os
import select
import time

from conftest import match_json, replay_steps

from referee.proc import Multiplexer, StderrCapture


def test_stderr_capture_keeps_head_tail_and_a_capped_log_from_the_first_byte(tmp_path):
    log = tmp_path / "bot.stderr.log"
    cap = StderrCapture(keep=10, log=log, log_cap=25)
    cap.feed(b"0123456789abcdef")
    cap.feed(b"ghijklmnopqrstuvwxyz")
    cap.close()
    assert bytes(cap.head) == b"0123456789"
    assert bytes(cap.tail) == b"qrstuvwxyz"
    assert cap.total == 36
    text = log.read_bytes()
    assert text.startswith(b"0123456789abcdefghijklmno\n")
    assert b"truncated" in text


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
    mux = Multiplexer([], fast_wait_s=0.5, spin_s=0.0001)
    r, w = os.pipe()
    try:
        mux.ep.register(r, select.EPOLLIN)
        t0 = time.monotonic()
        assert mux.ready_soon(0.02) == []
        assert time.monotonic() - t0 < 0.4  # the 20 ms asked for, not fast_wait_s
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
