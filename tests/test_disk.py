"""referee.sandbox.disk: what a bot's writable space holds."""

from __future__ import annotations

import os
from pathlib import Path

from referee.sandbox import disk_usage


def test_a_launch_on_its_way_into_the_sandbox_is_not_charged_the_hosts_tmp(tmp_path: Path) -> None:
    # A process in our own mount namespace (here: this one) has the host's /tmp:
    # only the scratch directory counts for it.
    (tmp_path / "a.bin").write_bytes(b"x" * 8192)
    used = disk_usage(tmp_path, [os.getpid()], True, 100)
    assert used.entries == 1 and 8192 <= used.bytes < 65536
