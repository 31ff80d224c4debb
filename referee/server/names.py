"""The names competitors choose, for themselves and their bots."""

from __future__ import annotations

NAME_CHARS = 64


def name_problem(name: str, what: str) -> str | None:
    """Why ``name`` cannot be the name of a ``what`` ("bot", ...), or None if it can."""
    if not name or len(name) > NAME_CHARS or not name.isprintable():
        return f"{what} must be 1-{NAME_CHARS} printable characters"
    return None
