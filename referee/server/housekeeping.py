"""Where a server's matches keep their scratch files, and the sweep at start-up of
what a killed server left there.

Every match the server plays on its machine makes a scratch directory for each bot
(``referee-seat*``, the bot's working directory, removed when the match ends).
The server points its workers' temporary directory (``TMPDIR``) at ``scratch/`` in
its data directory, so that everything of that kind belongs to one data directory,
and only one server runs on a data directory at a time (``server.lock``). A
server stopped with SIGTERM ends its matches, and the matches remove their
directories; one killed with ``kill -9`` (or whose worker was killed) may leave
directories there, and bot processes that still run from them. The next server on
that data directory, holding the lock, removes both before it plays anything; the
scratch directories and bots of other servers on the machine are never touched
(they live under their own data directories).
"""

from __future__ import annotations

import os
from pathlib import Path

SCRATCH = "scratch"


def scratch_root(data_dir: Path) -> Path:
    """The parent of this data directory's bot scratch directories, made if missing.

    It may be entered by every uid (0711: the bots run as uids of their own and
    must reach their scratch directory, which is theirs alone) but listed only by
    the server."""
    root = data_dir.resolve() / SCRATCH
    root.mkdir(exist_ok=True)
    os.chmod(root, 0o711)
    return root


def sweep(data_dir: Path) -> tuple[int, int]:
    """Kill the bots and remove the scratch directories a server of ``data_dir``
    left behind (call it holding the data directory's lock, before any match
    starts). Returns (processes killed, entries removed)."""
    from .. import scratch

    return scratch.sweep(scratch_root(data_dir))
