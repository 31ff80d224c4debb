"""Where the command line's tables and lines are printed: a rich Console that fits a
terminal's width, and that writes whole lines to a pipe or a file.

Rich lays out for 80 columns when its output is not a terminal, so a table piped
into ``cat``, ``less`` or a file had every column cut to "…". There is no width to
fit there: lines are laid out as wide as they need (up to ``PIPE_WIDTH``, or the
``COLUMNS`` the caller set), and without colour or cursor codes (rich writes none
when the output is not a terminal).
"""

from __future__ import annotations

import os

from rich.console import Console

# Wide enough for any table the commands print; a longer line of text wraps.
PIPE_WIDTH = 240


def output_console(stderr: bool = False) -> Console:
    """A Console on stdout (or stderr) sized for where that output goes."""
    console = Console(stderr=stderr)
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console  # a terminal's width, or the width the caller asked for
    return Console(stderr=stderr, width=PIPE_WIDTH)
