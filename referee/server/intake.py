"""Submission intake: an upload (one file, a .tar.gz/.tgz/.tar or a .zip) checked and
unpacked into a fresh directory, then stored content-addressed by sha256.

Nothing in an archive is trusted: absolute names, ``..`` components, links of any
kind, device files and FIFOs are refused before a byte is written; the file count
and the declared unpacked size are checked first, and the bytes actually written
are counted too (a zip can lie about its sizes), so a bomb stops at the limit.
"""

from __future__ import annotations

import hashlib
import io
import os
import shlex
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec

# Commands tried, in order, for an archive without --command.
DEFAULT_ENTRIES = ("main.py", "bot.py", "index.js", "main.js", "bot.js", "main", "bot")
INTERPRETERS = {".py": "python3", ".js": "node"}
_CHUNK = 1 << 16


class Refused(Exception):
    """An upload that cannot be accepted; the message says why (a 4xx)."""


class Limits(msgspec.Struct, frozen=True):
    max_files: int = 200
    max_unpacked: int = 64 << 20


class Unpacked(msgspec.Struct, frozen=True):
    sha256: str
    command: list[str]  # relative to the version's directory
    files: int
    size: int


def _check_name(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if not name or name.startswith("/") or path.is_absolute():
        raise Refused(f"archive member {name!r}: absolute paths are not allowed")
    if ".." in path.parts:
        raise Refused(f"archive member {name!r}: '..' is not allowed")
    if "\\" in name or "\x00" in name:
        raise Refused(f"archive member {name!r}: bad characters in the name")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts:
        raise Refused(f"archive member {name!r}: empty name")
    return PurePosixPath(*parts)


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.files = 0
        self.bytes = 0

    def file(self, declared: int) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise Refused(f"too many files: more than {self.limits.max_files}")
        if declared > self.limits.max_unpacked:
            raise Refused(f"a file unpacks to more than {self.limits.max_unpacked >> 20} MiB")

    def declare(self, total: int) -> None:
        if total > self.limits.max_unpacked:
            raise Refused(
                f"the archive unpacks to {total:,} bytes, over the limit of "
                f"{self.limits.max_unpacked >> 20} MiB"
            )

    def written(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.limits.max_unpacked:
            raise Refused(
                f"the archive unpacks to more than {self.limits.max_unpacked >> 20} MiB "
                "(stopped while unpacking)"
            )


def _copy(src: Any, dest: Path, budget: _Budget, mode: int) -> None:
    read = src.read
    # O_EXCL: a name twice in an archive cannot overwrite (or follow) anything.
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = read(_CHUNK)
            if not chunk:
                break
            budget.written(len(chunk))
            out.write(chunk)
    os.chmod(dest, 0o755 if mode & 0o111 else 0o644)


def _target(root: Path, rel: PurePosixPath) -> Path:
    dest = root.joinpath(*rel.parts)
    for parent in reversed(dest.relative_to(root).parents):
        d = root / parent
        if d.is_symlink():
            raise Refused(f"archive member {rel}: goes through a link")
        d.mkdir(exist_ok=True)
    return dest


def _unpack_tar(data: bytes, root: Path, budget: _Budget) -> None:
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        members = tar.getmembers()
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise Refused(f"not a readable tar archive: {exc}") from None
    files = []
    for m in members:
        rel = _check_name(m.name)
        if m.issym() or m.islnk():
            raise Refused(f"archive member {m.name!r}: links are not allowed")
        if m.isdir():
            continue
        if not m.isreg():
            raise Refused(f"archive member {m.name!r}: only regular files are allowed")
        budget.file(m.size)
        files.append((m, rel))
    budget.declare(sum(m.size for m, _ in files))
    for m, rel in files:
        src = tar.extractfile(m)
        if src is None:
            raise Refused(f"archive member {m.name!r}: unreadable")
        _copy(src, _target(root, rel), budget, m.mode)


def _unpack_zip(data: bytes, root: Path, budget: _Budget) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise Refused(f"not a readable zip archive: {exc}") from None
    files = []
    for info in infos:
        rel = _check_name(info.filename)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise Refused(f"archive member {info.filename!r}: links are not allowed")
        if info.is_dir():
            continue
        if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
            raise Refused(f"archive member {info.filename!r}: only regular files are allowed")
        budget.file(info.file_size)
        files.append((info, rel, mode))
    budget.declare(sum(i.file_size for i, _, _ in files))
    for info, rel, mode in files:
        try:
            with archive.open(info) as src:
                _copy(src, _target(root, rel), budget, mode)
        except (zipfile.BadZipFile, zlib_error(), EOFError, RuntimeError) as exc:
            raise Refused(f"archive member {info.filename!r}: cannot unpack: {exc}") from None


def zlib_error() -> type[Exception]:
    import zlib

    return zlib.error


def _single_name(filename: str) -> str:
    name = PurePosixPath(filename.replace("\\", "/")).name
    if not name or name in (".", "..") or name.startswith("."):
        return "bot"
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:100]


def tree_digest(root: Path) -> str:
    """sha256 over the tree: every file's relative path, executable bit and content."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        h.update(rel.encode() + b"\0" + (b"x" if os.access(path, os.X_OK) else b"-") + b"\0")
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(_CHUNK), b""):
                h.update(hashlib.sha256(chunk).digest())
    return h.hexdigest()


def default_command(root: Path, single: str | None) -> list[str]:
    def for_file(name: str) -> list[str]:
        suffix = Path(name).suffix
        if suffix in INTERPRETERS:
            return [INTERPRETERS[suffix], name]
        if os.access(root / name, os.X_OK):
            return ["./" + name]
        raise Refused(f'cannot tell how to run {name!r}: give --command (e.g. "python3 {name}")')

    if single is not None:
        return for_file(single)
    for entry in DEFAULT_ENTRIES:
        if (root / entry).is_file():
            return for_file(entry)
    raise Refused("the archive has none of " + ", ".join(DEFAULT_ENTRIES) + ": give --command")


def check_command(root: Path, command: str) -> list[str]:
    """The command as an argv; every relative file it names must be in the upload."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise Refused(f"cannot parse the command {command!r}: {exc}") from None
    if not argv or len(command) > 1000:
        raise Refused("the command is empty or too long")
    for part in argv:
        if ".." in PurePosixPath(part).parts:
            raise Refused(f"the command may not name files outside the bot: {part!r}")
    first = argv[0]
    if "/" in first and not first.startswith("/"):
        if not (root / first).is_file():
            raise Refused(f"the command's program {first!r} is not in the upload")
    return argv


def unpack(
    data: bytes,
    filename: str,
    command: str | None,
    store: Path,
    limits: Limits,
) -> Unpacked:
    """Check and unpack an upload into ``store/<sha256>/`` (kept if it exists: the
    content is the same). Refused on anything unsafe or over a limit."""
    store.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="upload-", dir=store))
    try:
        budget = _Budget(limits)
        lower = filename.lower()
        single: str | None = None
        if lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.xz", ".tar.bz2")):
            _unpack_tar(data, tmp, budget)
        elif lower.endswith(".zip"):
            _unpack_zip(data, tmp, budget)
        else:
            single = _single_name(filename)
            budget.file(len(data))
            budget.declare(len(data))
            _copy(
                io.BytesIO(data),
                tmp / single,
                budget,
                0o755 if data[:4] == b"\x7fELF" or data[:2] == b"#!" else 0,
            )
        if budget.files == 0:
            raise Refused("the upload holds no file")
        argv = check_command(tmp, command) if command else default_command(tmp, single)
        digest = tree_digest(tmp)
        final = store / digest
        if final.exists():
            shutil.rmtree(tmp)
        else:
            os.rename(tmp, final)
        return Unpacked(sha256=digest, command=argv, files=budget.files, size=budget.bytes)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
