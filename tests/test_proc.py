"""Bot-process plumbing that the integration tests reach only indirectly."""

from __future__ import annotations

from referee.proc import StderrCapture


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
