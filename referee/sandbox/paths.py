"""Which files a bot sees: its command resolved to absolute paths, the read-only
paths it needs (its own files, its interpreter's install prefix), the host system
entries a layer exposes, and the Landlock policy built from them."""

from __future__ import annotations

import ctypes
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .base import libc

# Host entries that may be symlinks into /usr (merged-/usr distros) or real directories.
TOP_LEVEL_SYSTEM = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The few /etc entries that runtimes need: the dynamic loader's cache, Debian's
# alternatives (java), time zone, OpenSSL config (node aborts if it is unreadable) and
# per-JDK config dirs (matched by prefix).
_ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "ssl")
_ETC_PREFIXES = ("java-",)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# Read-only extras for the Landlock policy (bwrap builds its own /proc and /dev). JVMs
# and node read CPU and cgroup facts from here.
_LANDLOCK_EXTRA_RO = ("/sys/devices/system/cpu", "/sys/fs/cgroup")
_PROC_GLOBAL_RO = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys", "/proc/filesystems")
_SYS_LANDLOCK_CREATE_RULESET = 444  # same number on every architecture (since 5.13)


def resolve_command(
    command: Sequence[str | os.PathLike[str]],
) -> tuple[list[str], str, str | None]:
    """Absolute argv, the program's path, and the first path argument (the script)."""
    if not command:
        raise ValueError("empty bot command")
    argv = [os.fspath(part) for part in command]
    first = argv[0]
    found = shutil.which(first) if os.sep not in first else first
    if found is None or not os.path.exists(found):
        raise FileNotFoundError(f"bot program not found: {first!r}")
    argv[0] = os.path.abspath(found)
    script = None
    for i, arg in enumerate(argv[1:], start=1):
        if not arg or arg.startswith("-"):
            continue
        # Only the first existing path counts as the bot's own file (its directory is
        # made visible); later path arguments stay invisible under bwrap/Landlock.
        if script is None and os.path.exists(arg):
            argv[i] = script = os.path.abspath(arg)
        elif os.sep in arg and not os.path.isabs(arg) and os.path.exists(arg):
            argv[i] = os.path.abspath(arg)
    return argv, argv[0], script


def bot_paths(program: str, script: str | None, bot_dir: Path | None) -> list[str]:
    """Read-only paths a bot needs: its dir, its program's install prefixes, the script."""
    paths: list[str] = []
    # A directory as broad as "/", /home or the home dir itself is never exposed whole
    # (a bot started as ~/bot would otherwise see all of the user's files).
    if bot_dir is not None and not _too_broad(bot_dir.resolve()):
        paths.append(str(bot_dir.resolve()))
    for hop in _symlink_chain(program):
        paths.append(_install_prefix(hop))
    if script is not None:
        for hop in _symlink_chain(script):
            if not os.path.isdir(hop):
                paths.append(_install_prefix(hop))
            elif not _too_broad(Path(hop)):
                paths.append(hop)
    # Keep only paths not already visible under /usr or another entry; parents first.
    result: list[str] = []
    for path in sorted(set(paths), key=lambda p: (p.count("/"), p)):
        if path == "/usr" or path.startswith("/usr/"):
            continue
        if any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in result):
            continue
        result.append(path)
    return result


def _symlink_chain(path: str, limit: int = 16) -> list[str]:
    """``path`` and every symlink target after it, as absolute paths (dirs resolved)."""
    chain = []
    current = os.path.abspath(path)
    for _ in range(limit):
        # Resolve directories but not the last component: each hop's location matters
        # (a venv's bin/python lives in the venv even though it links elsewhere).
        head, tail = os.path.split(current)
        current = os.path.join(os.path.realpath(head), tail)
        chain.append(current)
        if not os.path.islink(current):
            break
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    return chain


def _install_prefix(path: str) -> str:
    """The directory to expose for a program file.

    ``<prefix>/bin/x`` exposes ``<prefix>`` when it looks like an install prefix (has
    ``lib``/``lib64`` or is a venv): interpreters load their library from there. A
    directory that is too broad (``/``, a top-level dir, the home dir) is never exposed
    whole; the file alone is exposed instead.
    """
    parent = Path(path).parent
    candidate = parent
    if parent.name == "bin":
        root = parent.parent
        markers = ("lib", "lib64", "libexec", "pyvenv.cfg")
        if any((root / m).exists() for m in markers):
            candidate = root
    elif parent.name == "shims":
        # pyenv/rbenv/asdf shims exec the tool from its root, which holds the versions.
        candidate = parent.parent
    if _too_broad(candidate):
        candidate = parent
    if _too_broad(candidate):
        return path
    return str(candidate)


def _too_broad(path: Path) -> bool:
    return len(path.parts) <= 2 or path == Path.home()


def etc_paths() -> list[str]:
    try:
        names = os.listdir("/etc")
    except OSError:
        return []
    return sorted(
        f"/etc/{name}"
        for name in names
        if name in _ETC_ENTRIES or any(name.startswith(p) for p in _ETC_PREFIXES)
    )


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    try:
        abi = libc().syscall(
            ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET),
            None,
            ctypes.c_size_t(0),
            ctypes.c_uint32(1),  # LANDLOCK_CREATE_RULESET_VERSION
        )
    except (OSError, AttributeError):
        return 0
    return max(int(abi), 0)


def landlock_policy(abi: int, ro_paths: Iterable[str], scratch: Path) -> dict[str, Any]:
    ro = ["/usr", *(p for p in TOP_LEVEL_SYSTEM if os.path.exists(p)), *etc_paths()]
    ro += [p for p in _LANDLOCK_EXTRA_RO if os.path.exists(p)]
    ro += list(ro_paths)
    # "/proc/self" is opened by the shim, so the rule covers the bot's own /proc entry
    # only (its pid does not change at exec). Other processes' entries stay closed:
    # as root, Landlock's ptrace check alone lets /proc/<referee>/environ be read.
    ro += ["/proc/self", *_PROC_GLOBAL_RO]
    return {"abi": abi, "ro": ro, "rw": [str(scratch)], "dev": list(_DEVICES)}
