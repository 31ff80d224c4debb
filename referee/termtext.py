"""Text a bot chose (its stderr, its name, what it sent), made safe to show on a
terminal: every control or invisible formatting character is written as an escape
(``\\x1b``, ``\\r``, ``\\u202e``), so a bot cannot clear the organiser's screen,
write to the clipboard (OSC 52), move the cursor, reorder text with bidirectional
overrides, or pass its own line off as the referee's. Pure functions, no I/O."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# Controls (C0, DEL, C1), invisible formatting (bidi overrides and isolates, zero
# width characters, the BOM), line and paragraph separators, surrogates (undecodable
# bytes kept by "surrogateescape") and unassigned code points.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})

QUOTE_PREFIX = "  | "  # before each line a bot wrote, so none reads as the referee's


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on, or that does not show,
    replaced by its escape; plain text is returned as it is."""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for ch in text:
        if ch == " " or unicodedata.category(ch) not in _ESCAPED_CATEGORIES:
            out.append(ch)
        else:
            code = ord(ch)
            if code < 0x100:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    return "".join(out)


def quoted(lines: Iterable[str], prefix: str = QUOTE_PREFIX) -> list[str]:
    """Lines a bot wrote, each made printable and set off by ``prefix``."""
    return [prefix + printable(line) for line in lines]
