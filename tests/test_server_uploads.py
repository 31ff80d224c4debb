"""Uploads that cannot hurt the server: hostile archives unpacked without recursion
and refused with their reason, the scratch tree removed however deep, and (against a
real server on loopback) bodies streamed to disk under a size cap, a minimum rate
and caps on uploads in flight."""

from __future__ import annotations

import io
import os
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from referee.server.intake import Limits, Refused, remove_tree, sweep_scratch, unpack

LIMITS = Limits(max_files=20, max_unpacked=4 << 20)
BOT = b"print('hi')\n"


def _tar(members: list[tuple[str, bytes | None]], mode: str = "w:gz") -> bytes:
    """A tar of (name, content) members; content None is a directory."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name: wanted here
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name, data in members:
                z.writestr(name, data)
    return buf.getvalue()


def _deep(depth: int) -> str:
    return "d/" * depth + "main.py"


HOSTILE: dict[str, tuple[bytes, str]] = {
    # 20,000 directories deep in one member's name: a few hundred bytes packed.
    "deep.tar.gz": (_tar([(_deep(20_000), BOT)]), "nested 20001 deep, over the limit of 32"),
    "deep-dirs.tar.gz": (
        _tar([("d/" * 33, None), ("main.py", BOT)]),
        "nested 33 deep, over the limit of 32",
    ),
    "deep.zip": (_zip([(_deep(5_000), BOT)]), "nested 5001 deep, over the limit of 32"),
    "twice.tar.gz": (_tar([("main.py", BOT), ("main.py", BOT)]), "the name appears twice"),
    "twice-dot.tar": (
        _tar([("main.py", BOT), ("./main.py", BOT)], mode="w"),
        "the name appears twice",
    ),
    "twice.zip": (_zip([("main.py", BOT), ("main.py", BOT)]), "the name appears twice"),
    "file-then-dir.tar.gz": (
        _tar([("lib", BOT), ("lib/x.py", BOT), ("main.py", BOT)]),
        "lib is both a file and a directory",
    ),
    "dir-then-file.zip": (
        _zip([("lib/x.py", BOT), ("lib", BOT), ("main.py", BOT)]),
        "lib is both a directory and a file",
    ),
    "long-name.tar.gz": (_tar([("x" * 300 + ".py", BOT)]), "name too long"),
    "many-dirs.tar.gz": (
        _tar([(f"d{i}/", None) for i in range(30)] + [("main.py", BOT)]),
        "too many directories: more than 20",
    ),
    # A header bomb: members by the thousand, each a few bytes packed.
    "headers.tar.gz": (
        _tar([("d/", None)] * 5000),
        "too many archive members: more than 40",
    ),
    "headers.zip": (
        _zip([(f"f{i}.py", b"") for i in range(5000)]),
        "too many archive members: 5000, over 40",
    ),
    "bomb.tar.gz": (_tar([("main.py", b"\0" * (5 << 20))]), "a file unpacks to more than 4 MiB"),
    "bombs.zip": (
        _zip([(f"f{i}.py", b"\0" * (1 << 20)) for i in range(6)]),
        "the archive unpacks to more than 4 MiB",
    ),
    "truncated.tar.gz": (_tar([("main.py", BOT * 1000)])[:-40], "not a readable tar archive"),
    "garbage.zip": (b"PK\x03\x04" + b"\xff" * 100, "not a readable zip archive"),
}


@pytest.mark.parametrize("filename", sorted(HOSTILE))
def test_hostile_archive_is_refused_with_its_reason(tmp_path: Path, filename: str) -> None:
    data, reason = HOSTILE[filename]
    source = tmp_path / "body"
    source.write_bytes(data)
    store = tmp_path / "versions"
    started = time.monotonic()
    with pytest.raises(Refused) as refused:
        unpack(source, filename, None, store, LIMITS)
    assert reason in str(refused.value), str(refused.value)
    assert refused.value.status == 400
    assert time.monotonic() - started < 5
    assert list(store.iterdir()) == [], "the scratch directory was left behind"


def test_a_good_archive_unpacks_with_directories(tmp_path: Path) -> None:
    source = tmp_path / "body"
    source.write_bytes(_tar([("lib/", None), ("lib/util.py", b"x = 1\n"), ("main.py", BOT)]))
    got = unpack(source, "bot.tar.gz", None, tmp_path / "versions", LIMITS)
    assert got.command == ["python3", "main.py"] and got.files == 2
    assert (tmp_path / "versions" / got.sha256 / "lib" / "util.py").read_bytes() == b"x = 1\n"
    assert [p.name for p in (tmp_path / "versions").iterdir()] == [got.sha256]


def test_compiled_source_is_not_run_by_an_interpreter(tmp_path: Path) -> None:
    source = tmp_path / "bot.c"
    source.write_bytes(b"int main(void) { return 0; }\n")
    with pytest.raises(Refused) as refused:
        unpack(source, "bot.c", None, tmp_path / "versions", LIMITS)
    assert "C source: build it first" in str(refused.value)
    assert "python3" not in str(refused.value)


def _deep_tree(base: Path, depth: int) -> None:
    """``depth`` nested directories under ``base``, made one component at a time (the
    whole path is far beyond PATH_MAX), with a file at the bottom."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("main.py", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    finally:
        os.close(fd)


def test_start_up_sweep_removes_a_tree_too_deep_for_a_recursive_walk(tmp_path: Path) -> None:
    # What the old unpacker left behind: 20,011 directories under versions/upload-*.
    versions = tmp_path / "versions"
    (versions / "upload-old").mkdir(parents=True)
    _deep_tree(versions / "upload-old", 5000)
    (versions / "upload-file").write_bytes(b"x")
    (versions / "0123abcd").mkdir()  # a stored version stays
    assert sweep_scratch(versions) == 2
    assert [p.name for p in versions.iterdir()] == ["0123abcd"]
    remove_tree(tmp_path / "missing")  # nothing there: nothing to do
