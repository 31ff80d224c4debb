"""Replay files: gzip, hash chain, truncation, typed reading."""

from __future__ import annotations

import gzip

from conftest import match_json

from referee.replay import Footer, Header, chain_line, iter_lines, read_replay, unseal


def test_gzip_replay_reads_back_and_matches_plain(tmp_path, bot_copy):
    steady = bot_copy("steady.py")
    plain, packed = tmp_path / "a.jsonl", tmp_path / "a.jsonl.gz"
    cmd = f"python3 {steady}"
    for path in (plain, packed):
        match_json(cmd, cmd, "--rounds", "300", "--seed", "3", "--replay", str(path))
    assert gzip.open(packed).read(2) == b'{"'  # a real gzip stream
    a, b = read_replay(plain), read_replay(packed)
    assert isinstance(a.header, Header) and isinstance(a.footer, Footer)
    assert [s.out for s in a.steps] == [s.out for s in b.steps]
    assert len(a.steps) == 300


def test_every_line_is_sealed_and_chained(tmp_path, bot_copy):
    steady = bot_copy("steady.py")
    path = tmp_path / "c.jsonl"
    match_json(f"python3 {steady}", f"python3 {steady}", "--rounds", "50", "--replay", str(path))
    prev = b""
    lines = list(iter_lines(path))
    assert len(lines) == 52  # header, 50 steps, footer
    for line in lines:
        sealed = unseal(line)
        assert sealed is not None
        body, h = sealed
        again, h2 = chain_line(prev, body)
        assert h2 == h and again == line
        prev = h


def test_truncated_files_read_as_a_prefix(tmp_path, bot_copy):
    steady = bot_copy("steady.py")
    cmd = f"python3 {steady}"
    for name in ("t.jsonl", "t.jsonl.gz"):
        path = tmp_path / name
        match_json(cmd, cmd, "--rounds", "2000", "--replay", str(path))
        data = path.read_bytes()
        cut = tmp_path / f"cut-{name}"
        cut.write_bytes(data[: len(data) // 2])
        prefix = read_replay(cut)
        assert prefix.footer is None
        assert 0 < len(prefix.steps) < 2000
        assert [s.n for s in prefix.steps] == list(range(1, len(prefix.steps) + 1))
