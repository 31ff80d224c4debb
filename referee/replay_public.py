"""A replay as anyone may read it: the public copy of a replay that a server (or a
static site) shows to everyone but the bots' owners.

A replay records each bot's command line (with the server's absolute paths of
its files) in its header and each bot's stderr in its footer. Both are the
owner's business. The public copy keeps every step and every result as they
are, and changes two things: each part of a command that is a path is cut to
its file name, and the footer's ``stderr_head`` and ``stderr_tail`` are emptied
(``stderr_bytes``, the count, stays). The hash chain is then sealed again from
the header on, so ``referee verify`` checks the public copy as it checks any
replay (a lean step's hash seals what the rules give back, the step in full or
its turn lines, which the rules give again here).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from .replay import GZIP_LEVEL, chain_line, sealed_lines, unseal

_decode = msgspec.json.decode
_encode = msgspec.json.encode


def public_command(argv: list[Any]) -> list[Any]:
    """A command without the paths it was run from: a part that is a path is cut
    to its file name ("/srv/data/versions/ab12/bot.py" -> "bot.py")."""
    return [os.path.basename(a) if isinstance(a, str) and "/" in a else a for a in argv]


def without_paths(value: Any) -> Any:
    """JSON data (a tournament's results, say) with every bot's command (an
    ``argv`` or ``command`` list) cut as ``public_command`` cuts it."""
    if isinstance(value, dict):
        return {
            k: public_command(v)
            if k in ("argv", "command") and isinstance(v, list)
            else without_paths(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_paths(v) for v in value]
    return value


def _public_header(header: dict[str, Any]) -> dict[str, Any]:
    for bot in header.get("bots") or []:
        if isinstance(bot, dict) and isinstance(bot.get("command"), list):
            bot["command"] = public_command(bot["command"])
    return header


def _public_footer(footer: dict[str, Any]) -> dict[str, Any]:
    for verdict in footer.get("verdicts") or []:
        if isinstance(verdict, dict):
            for key in ("stderr_head", "stderr_tail"):
                if key in verdict:
                    verdict[key] = ""
    return footer


def public_lines(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The public copy of a replay's stored lines (see the module's doc), sealed
    again. Stops at the first line without a seal (a cut or a corrupt line): what
    follows it could not be verified anyway. Pure: no I/O."""
    stored = list(lines)
    prev = b""
    for line, (full, sealed) in zip(stored, sealed_lines(stored), strict=True):
        parts = unseal(line)
        if parts is None:
            return
        body = parts[0]
        if sealed is None and full != line:
            # A lean step of format 1.1: its hash seals the step in full.
            sealed = (unseal(full) or (body, b""))[0]
        if body.startswith(b'{"type":"header"'):
            body = _encode(_public_header(_decode(body)))
            sealed = None
        elif body.startswith(b'{"type":"footer"'):
            body = _encode(_public_footer(_decode(body)))
            sealed = None
        if sealed is None:
            out, prev = chain_line(prev, body)
        else:
            # The line stays as it is; its hash seals more than the line (lean steps).
            _, prev = chain_line(prev, sealed)
            out = body[:-1] + b',"h":"' + prev + b'"}\n'
        yield out


def write_public_replay(source: Path, dest: Path) -> None:
    """Write the public copy of the replay ``source`` to ``dest`` (gzip if ``dest``
    ends in ``.gz``), atomically: a reader never finds half of it."""
    from .replay import read_lines

    with open(source, "rb") as f:
        lines = list(read_lines(f, expand=False))
    data = b"".join(public_lines(lines))
    if dest.name.endswith(".gz"):
        data = gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(f"{dest.name}.{os.urandom(6).hex()}.part")
    part.write_bytes(data)
    os.replace(part, dest)
