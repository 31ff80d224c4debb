"""Submission intake: an upload (one file, a .tar.gz/.tgz/.tar or a .zip), received
into a file of the data directory, checked and unpacked into a fresh directory, then
stored content-addressed by sha256.

Nothing in an archive is trusted. Every member is read and checked before a byte is
written: absolute names, ``..`` components, links of any kind, device files and
FIFOs, a name given twice (or as a file and a directory), a tree nested deeper than
``Limits.max_depth`` or a name longer than ``MAX_NAME_BYTES`` are refused; the file
and directory counts and the declared unpacked size are checked as the members are
read (so a bomb of headers stops at the limit too), and the bytes actually written
are counted as well (a zip can lie about its sizes). Nothing here recurses: a tree
is made from its list of directories and removed by a loop over file descriptors,
so no archive can exhaust the interpreter's stack, and the scratch directory is
removed whatever happens.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shlex
import stat
import struct
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

import msgspec

# Commands tried, in order, for an archive without --command.
DEFAULT_ENTRIES = ("main.py", "bot.py", "index.js", "main.js", "bot.js", "main", "bot")
INTERPRETERS = {".py": "python3", ".js": "node"}
# Sources of compiled languages: an upload of one cannot run as it is.
COMPILED = {
    ".c": "C",
    ".h": "C",
    ".cc": "C++",
    ".cpp": "C++",
    ".cxx": "C++",
    ".rs": "Rust",
    ".go": "Go",
    ".java": "Java",
    ".zig": "Zig",
    ".hs": "Haskell",
    ".ml": "OCaml",
    ".cs": "C#",
    ".swift": "Swift",
    ".kt": "Kotlin",
}
# A member's whole name, in bytes; well within the kernel's PATH_MAX (4096) with
# the data directory's own path in front.
MAX_NAME_BYTES = 1024
# One component of a name (the kernel's NAME_MAX).
MAX_PART_BYTES = 255
# The content of one PAX or GNU long-name header: tarfile reads it whole into
# memory, so one declaring gigabytes (a few MB compressed) is refused before that.
MAX_META_HEADER = 64 << 10
# Scratch directories of uploads being unpacked, in the store (``versions/``).
SCRATCH_PREFIX = "upload-"
_CHUNK = 1 << 16
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class Refused(Exception):
    """An upload that cannot be accepted; the message says why, ``status`` is the
    HTTP status to answer with (a 4xx, or 503 when the server has no room)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Limits(msgspec.Struct, frozen=True):
    max_files: int = 200  # regular files; directories may number as many again
    max_unpacked: int = 64 << 20
    max_depth: int = 32  # components of a member's name


class Unpacked(msgspec.Struct, frozen=True):
    sha256: str
    command: list[str]  # relative to the version's directory
    files: int
    size: int


def _check_name(name: str, limits: Limits) -> PurePosixPath:
    path = PurePosixPath(name)
    if not name or name.startswith("/") or path.is_absolute():
        raise Refused(f"archive member {name[:200]!r}: absolute paths are not allowed")
    if ".." in path.parts:
        raise Refused(f"archive member {name[:200]!r}: '..' is not allowed")
    if "\\" in name or "\x00" in name:
        raise Refused(f"archive member {name[:200]!r}: bad characters in the name")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts:
        raise Refused(f"archive member {name[:200]!r}: empty name")
    if len(parts) > limits.max_depth:
        raise Refused(
            f"archive member {name[:200]!r}...: nested {len(parts)} deep, "
            f"over the limit of {limits.max_depth}"
        )
    size = len(name.encode("utf-8", "surrogateescape"))
    if size > MAX_NAME_BYTES or any(
        len(p.encode("utf-8", "surrogateescape")) > MAX_PART_BYTES for p in parts
    ):
        raise Refused(
            f"archive member {name[:200]!r}...: name too long "
            f"(at most {MAX_NAME_BYTES} bytes, {MAX_PART_BYTES} a component)"
        )
    return PurePosixPath(*parts)


class _Plan:
    """The tree an archive describes, checked member by member before anything is
    written: its directories, and its files in archive order (each with what opens
    its content and its mode)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.members = 0
        self.kinds: dict[PurePosixPath, str] = {}  # "file" or "dir"
        self.dirs: list[PurePosixPath] = []
        self.files: list[tuple[PurePosixPath, int, Callable[[], IO[bytes]], int]] = []
        self.declared = 0

    def member(self, name: str, is_dir: bool = False) -> PurePosixPath | None:
        """The member's checked name; None for the archive's own top directory
        ("./", as ``tar -C DIR .`` writes it), which is nothing to make."""
        self.members += 1
        if self.members > 2 * self.limits.max_files:
            raise Refused(f"too many archive members: more than {2 * self.limits.max_files}")
        if is_dir and name and not name.startswith("/") and set(name) <= {".", "/"}:
            if all(part == "." for part in PurePosixPath(name).parts):
                return None
        return _check_name(name, self.limits)

    def _dir(self, rel: PurePosixPath, name: str) -> None:
        kind = self.kinds.get(rel)
        if kind == "file":
            raise Refused(f"archive member {name[:200]!r}: {rel} is both a file and a directory")
        if kind is None:
            self.kinds[rel] = "dir"
            self.dirs.append(rel)
            if len(self.dirs) > self.limits.max_files:
                raise Refused(f"too many directories: more than {self.limits.max_files}")

    def add_dir(self, rel: PurePosixPath, name: str) -> None:
        for parent in reversed(rel.parents[:-1]):
            self._dir(parent, name)
        self._dir(rel, name)

    def add_file(
        self, rel: PurePosixPath, name: str, size: int, opener: Callable[[], IO[bytes]], mode: int
    ) -> None:
        for parent in reversed(rel.parents[:-1]):
            self._dir(parent, name)
        kind = self.kinds.get(rel)
        if kind == "file":
            raise Refused(f"archive member {name[:200]!r}: the name appears twice")
        if kind == "dir":
            raise Refused(f"archive member {name[:200]!r}: {rel} is both a directory and a file")
        self.kinds[rel] = "file"
        if len(self.files) >= self.limits.max_files:
            raise Refused(f"too many files: more than {self.limits.max_files}")
        if size > self.limits.max_unpacked:
            raise Refused(f"a file unpacks to more than {self.limits.max_unpacked >> 20} MiB")
        self.declared += size
        if self.declared > self.limits.max_unpacked:
            raise Refused(
                f"the archive unpacks to more than {self.limits.max_unpacked >> 20} MiB "
                "(declared sizes)"
            )
        self.files.append((rel, size, opener, mode))


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bytes = 0

    def written(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.limits.max_unpacked:
            raise Refused(
                f"the archive unpacks to more than {self.limits.max_unpacked >> 20} MiB "
                "(stopped while unpacking)"
            )


def _copy(src: IO[bytes], dest: Path, budget: _Budget, mode: int) -> None:
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


def _plan_tar(tar: tarfile.TarFile, plan: _Plan) -> None:
    # Member by member (``next``), not ``getmembers``: a bomb of headers stops at
    # the member limit instead of filling the memory first.
    while True:
        m = tar.next()
        if m is None:
            return
        rel = plan.member(m.name, m.isdir())
        if rel is None:
            continue
        if m.issym() or m.islnk():
            raise Refused(f"archive member {m.name[:200]!r}: links are not allowed")
        if m.isdir():
            plan.add_dir(rel, m.name)
        elif m.isreg():
            plan.add_file(rel, m.name, m.size, _tar_opener(tar, m), m.mode)
        else:
            raise Refused(f"archive member {m.name[:200]!r}: only regular files are allowed")


def _tar_opener(tar: tarfile.TarFile, m: tarfile.TarInfo) -> Callable[[], IO[bytes]]:
    def opener() -> IO[bytes]:
        src = tar.extractfile(m)
        if src is None:
            raise Refused(f"archive member {m.name[:200]!r}: unreadable")
        return src

    return opener


def _plan_zip(archive: zipfile.ZipFile, plan: _Plan) -> None:
    infos = archive.infolist()
    if len(infos) > 2 * plan.limits.max_files:
        raise Refused(f"too many archive members: {len(infos)}, over {2 * plan.limits.max_files}")
    for info in infos:
        rel = plan.member(info.filename, info.is_dir())
        if rel is None:
            continue
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise Refused(f"archive member {info.filename[:200]!r}: links are not allowed")
        if info.is_dir():
            plan.add_dir(rel, info.filename)
            continue
        if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
            raise Refused(f"archive member {info.filename[:200]!r}: only regular files are allowed")
        plan.add_file(rel, info.filename, info.file_size, _zip_opener(archive, info), mode)


def _zip_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], IO[bytes]]:
    return lambda: archive.open(info)


def _write(plan: _Plan, root: Path, budget: _Budget, what: str) -> None:
    for rel in plan.dirs:  # every parent is listed before its children
        os.mkdir(root.joinpath(*rel.parts), 0o755)
    for rel, _size, opener, mode in plan.files:
        try:
            with opener() as src:
                _copy(src, root.joinpath(*rel.parts), budget, mode)
        except Refused:
            raise
        except OSError as exc:
            if exc.errno is not None:  # writing (no room?): the caller tells which
                raise
            raise Refused(
                f"archive member {str(rel)[:200]!r}: cannot unpack the {what}: {_one_line(exc)}"
            ) from None
        except Exception as exc:  # a corrupt member: the archive library's own words
            raise Refused(
                f"archive member {str(rel)[:200]!r}: cannot unpack the {what}: {_one_line(exc)}"
            ) from None


def _one_line(exc: BaseException) -> str:
    """An archive library's error as one line of at most 300 characters."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def _tar_cap(limits: Limits) -> int:
    """The most bytes a tar within the limits can hold: its files, and for each of
    its members a header, a long-name or PAX header and their padding, and the end."""
    members = 2 * limits.max_files
    return limits.max_unpacked + members * (MAX_META_HEADER + 4 * 512) + 20 * 512


def _decompressed(source: Path, target: Path, limits: Limits) -> bool:
    """Write the tar within a compressed upload to ``target`` (the caller removes
    it), stopped at ``_tar_cap``: a stream that decompresses to more holds more than
    the limits allow. False if the upload is not compressed."""
    import bz2
    import gzip
    import lzma

    with open(source, "rb") as f:
        magic = f.read(6)
    openers: dict[bytes, Any] = {b"\x1f\x8b": gzip.open, b"BZh": bz2.open, b"\xfd7zXZ": lzma.open}
    opener = next((o for m, o in openers.items() if magic.startswith(m)), None)
    if opener is None:
        return False
    cap = _tar_cap(limits)
    written = 0
    with opener(source, "rb") as src, open(target, "xb") as out:
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > cap:
                raise Refused(
                    f"the archive unpacks to more than {limits.max_unpacked >> 20} MiB "
                    "(stopped while decompressing)"
                )
            out.write(chunk)
    return True


def _tar_number(field: bytes) -> int:
    """A tar header's number: octal text, or base-256 when the first bit is set."""
    if field[0] & 0x80:
        value = int.from_bytes(field[1:], "big")
        return -value if field[0] == 0xFF else value
    text = field.replace(b"\0", b" ").strip()
    return int(text or b"0", 8)


def _check_tar_headers(path: Path) -> None:
    """Walk the (uncompressed) tar's headers as tarfile will, and refuse a long-name
    or PAX header over ``MAX_META_HEADER`` before tarfile reads it into memory. A
    header tarfile cannot read ends the walk: tarfile then says what is wrong."""
    with open(path, "rb") as f:
        size_override: int | None = None
        while True:
            block = f.read(512)
            if len(block) < 512 or block == bytes(512):
                return
            try:
                size = _tar_number(block[124:136])
                checksum = _tar_number(block[148:156])
            except ValueError:
                return
            # As tarfile computes it: the checksum field counted as spaces, the bytes
            # unsigned or (some old tars) signed.
            rest = block[:148] + block[156:]
            unsigned = 256 + sum(rest)
            signed = 256 + sum(struct.unpack("504b", rest))
            if checksum not in (unsigned, signed):
                return
            kind = block[156:157]
            if kind in (tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.XGLTYPE) or kind in (
                tarfile.GNUTYPE_LONGNAME,
                tarfile.GNUTYPE_LONGLINK,
            ):
                if size > MAX_META_HEADER:
                    raise Refused(
                        f"an archive header of {size:,} bytes (a long name or PAX "
                        f"header), over the limit of {MAX_META_HEADER >> 10} KiB"
                    )
                content = f.read(size)
                f.seek(-size % 512, os.SEEK_CUR)
                if kind in (tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE):
                    # It may give the next member's size (tarfile skips by that one).
                    for match in re.finditer(rb"(?:^|\n)\d+ size=(\d+)\n", content):
                        size_override = int(match[1])
                continue
            if size_override is not None:
                size, size_override = size_override, None
            if kind == tarfile.GNUTYPE_SPARSE:
                extended = block[482]
                while extended:
                    more = f.read(512)
                    if len(more) < 512:
                        return
                    extended = more[504]
            if kind in tarfile.REGULAR_TYPES or kind not in tarfile.SUPPORTED_TYPES:
                f.seek(size + (-size % 512), os.SEEK_CUR)


def _unpack_archive(source: Path, root: Path, limits: Limits, budget: _Budget, kind: str) -> int:
    """Read, check, then write the archive's tree under ``root``; its file count."""
    plan = _Plan(limits)
    archive: Any = None
    plain = source.with_name(source.name + ".tar")
    try:
        if kind == "tar":
            tar = plain if _decompressed(source, plain, limits) else source
            _check_tar_headers(tar)
            archive = tarfile.open(tar, mode="r:")
            _plan_tar(archive, plan)
        else:
            archive = zipfile.ZipFile(source)
            _plan_zip(archive, plan)
        _write(plan, root, budget, f"{kind} archive")
    except Refused:
        raise
    except OSError as exc:
        if exc.errno is not None:  # writing the tree: the caller tells which
            raise
        raise Refused(f"not a readable {kind} archive: {_one_line(exc)}") from None
    except Exception as exc:
        # Whatever a malformed archive makes its library raise (TarError, BadZipFile,
        # EOFError, zlib and lzma errors, ...): the upload's fault, said as it is.
        raise Refused(f"not a readable {kind} archive: {_one_line(exc)}") from None
    finally:
        if archive is not None:
            archive.close()
        plain.unlink(missing_ok=True)
    return len(plan.files)


def _single_name(filename: str) -> str:
    name = PurePosixPath(filename.replace("\\", "/")).name
    if not name or name in (".", "..") or name.startswith("."):
        return "bot"
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:100]


def _walk_files(root: Path) -> Iterator[Path]:
    """Every regular file under ``root``, without recursion."""
    stack = [root]
    while stack:
        directory = stack.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)


def tree_digest(root: Path) -> str:
    """sha256 over the tree: every file's relative path, executable bit and content."""
    h = hashlib.sha256()
    # In the order of the paths' components (as sorting Path objects gives).
    for path in sorted(_walk_files(root), key=lambda p: p.relative_to(root).parts):
        rel = path.relative_to(root).as_posix()
        h.update(rel.encode() + b"\0" + (b"x" if os.access(path, os.X_OK) else b"-") + b"\0")
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(_CHUNK), b""):
                h.update(hashlib.sha256(chunk).digest())
    return h.hexdigest()


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything under it, however deep (a tree an old version
    left 20,000 directories deep is beyond both the stack of a recursive walk and
    the kernel's PATH_MAX): a loop that holds one directory descriptor at a time and
    names only single components relative to it. Links are removed, never followed."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        os.unlink(path)
        return
    names: list[str] = []  # the way down from ``path``
    try:
        while True:
            below = None
            with os.scandir(fd) as entries:
                listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
            for name, is_dir in listed:
                if is_dir:
                    below = name
                    break
                os.unlink(name, dir_fd=fd)
            if below is not None:
                child = os.open(below, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(below)
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(path)


def sweep_scratch(directory: Path, prefix: str = SCRATCH_PREFIX) -> int:
    """Remove what uploads left in ``directory`` (names starting with ``prefix``)
    when the server was killed while they were received or unpacked, or when an
    older version failed to clean up. How many were removed."""
    removed = 0
    if not directory.is_dir():
        return 0
    for entry in list(os.scandir(directory)):
        if entry.name.startswith(prefix):
            remove_tree(Path(entry.path))
            removed += 1
    return removed


def default_command(root: Path, single: str | None) -> list[str]:
    def for_file(name: str) -> list[str]:
        suffix = Path(name).suffix.lower()
        if suffix in INTERPRETERS:
            return [INTERPRETERS[suffix], name]
        if os.access(root / name, os.X_OK):
            return ["./" + name]
        if suffix in COMPILED:
            raise Refused(
                f"{name!r} is {COMPILED[suffix]} source: build it first and upload the "
                "program (or an archive with the program and --command)"
            )
        raise Refused(f"cannot tell how to run {name!r}: give --command")

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


def archive_kind(filename: str) -> str | None:
    """ "tar", "zip", or None for a single file, by the upload's file name."""
    lower = filename.lower()
    if lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.xz", ".tar.bz2")):
        return "tar"
    if lower.endswith(".zip"):
        return "zip"
    return None


def unpack(
    source: Path,
    filename: str,
    command: str | None,
    store: Path,
    limits: Limits,
) -> Unpacked:
    """Check and unpack the upload in the file ``source`` into ``store/<sha256>/``
    (kept if it exists: the content is the same). Refused on anything unsafe or over
    a limit; the scratch directory is gone afterwards, whatever happened."""
    store.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=store))
    try:
        budget = _Budget(limits)
        kind = archive_kind(filename)
        single: str | None = None
        try:
            if kind is not None:
                files = _unpack_archive(source, tmp, limits, budget, kind)
            else:
                single = _single_name(filename)
                size = source.stat().st_size
                if size > limits.max_unpacked:
                    raise Refused(f"a file unpacks to more than {limits.max_unpacked >> 20} MiB")
                with open(source, "rb") as src:
                    head = src.read(4)
                    src.seek(0)
                    executable = head == b"\x7fELF" or head[:2] == b"#!"
                    _copy(src, tmp / single, budget, 0o755 if executable else 0)
                files = 1
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise Refused("the server has no room to unpack the upload now", 503) from None
            raise Refused(f"cannot unpack the upload: {exc.strerror or exc}") from None
        if files == 0:
            raise Refused("the upload holds no file")
        argv = check_command(tmp, command) if command else default_command(tmp, single)
        digest = tree_digest(tmp)
        # mkdtemp made it private; bots run under uids of their own and must read it.
        os.chmod(tmp, 0o755)
        final = store / digest
        if not final.exists():
            os.rename(tmp, final)
        return Unpacked(sha256=digest, command=argv, files=files, size=budget.bytes)
    finally:
        remove_tree(tmp)  # gone already if it became the version's directory
