"""The names competitors choose, for themselves and their bots.

A name is 1 to 64 characters, printable (no control character, and no format
character such as a bidirectional override or a zero-width joiner: Python's
``str.isprintable``), without spaces at either end, without ``/`` or ``\\`` (a
path separator), ``?``, ``#`` or ``%`` (a name is a part of its page's URL), and
not made of dots alone (``.`` and ``..`` are path steps)."""

from __future__ import annotations

NAME_CHARS = 64
FORBIDDEN = "/\\?#%"


def name_problem(name: str, what: str) -> str | None:
    """Why ``name`` cannot be the name of a ``what`` ("a bot name", ...), or None."""
    if not name or len(name) > NAME_CHARS or not name.isprintable():
        return f"{what} must be 1-{NAME_CHARS} printable characters"
    if name != name.strip():
        return f"{what} cannot start or end with a space"
    bad = sorted({c for c in name if c in FORBIDDEN})
    if bad:
        return f"{what} cannot hold {' or '.join(repr(c) for c in bad)}"
    if set(name) == {"."}:
        return f"{what} cannot be made of dots alone"
    return None
