"""What the organiser typed for a bot, turned into a command line the referee can
start (``resolve_command``), and what identifies the bot's files (``file_digest``,
``bot_dir_of``)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from .errors import UsageError


class BotSpec(msgspec.Struct, frozen=True):
    """A bot as the organiser named it: a command line and an optional label."""

    command: list[str]
    label: str | None = None


def file_digest(command: Sequence[str]) -> str | None:
    """sha256 over every file the command names (the executable, its script...),
    so a changed bot is noticed on re-run."""
    h = hashlib.sha256()
    found = False
    for i, arg in enumerate(command):
        path = shutil.which(arg) if i == 0 else arg
        if not path or not os.path.isfile(path):
            continue
        found = True
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest() if found else None


def bot_dir_of(command: Sequence[str]) -> Path | None:
    """The directory holding the bot's own files: its script (the first file argument,
    never a later data-file argument, which could expose someone else's directory),
    else its executable."""
    for arg in command[1:]:
        if "/" in arg and os.path.isfile(arg):
            return Path(arg).resolve().parent
    exe = shutil.which(command[0]) if command else None
    return Path(exe).resolve().parent if exe else None


def resolve_command(text_or_argv: str | Sequence[str]) -> list[str]:
    """Turn what the user typed into an argv, or raise UsageError with a fix to try."""
    import shlex

    from .catalog import lookup_sample_bot

    if isinstance(text_or_argv, str):
        text = text_or_argv.strip()
        if not text:
            raise UsageError("empty bot command")
        sample = lookup_sample_bot(text)
        if sample is not None and not os.path.exists(text):
            return sample
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise UsageError(f"cannot parse bot command {text!r}: {exc}") from None
    else:
        argv = list(text_or_argv)
    if not argv:
        raise UsageError("empty bot command")
    exe = argv[0]
    if exe in ("python", "python3"):
        # Bots run under the referee's own interpreter: a version-manager shim would
        # add ~150 ms per start and may not work inside the sandbox.
        argv[0] = sys.executable
    elif "/" in exe:
        if not os.path.exists(exe):
            raise UsageError(f"bot executable not found: {exe}")
        if os.path.isdir(exe):
            raise UsageError(f"bot executable is a directory: {exe}")
        if not os.access(exe, os.X_OK):
            hint = " (try: chmod +x, or 'python3 FILE')" if exe.endswith(".py") else ""
            raise UsageError(f"bot executable is not executable: {exe}{hint}")
        argv[0] = os.path.abspath(exe)
    else:
        found = shutil.which(exe)
        if found is None:
            raise UsageError(f"bot executable not found on PATH: {exe}")
        argv[0] = found
    # Script arguments that are files become absolute: the bot runs in a scratch dir.
    return [argv[0]] + [os.path.abspath(a) if os.path.isfile(a) else a for a in argv[1:]]
