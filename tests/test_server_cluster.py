"""``referee serve --cluster``: the ladder's matches played on a local Dask
scheduler with two workers (validation stays on the server's machine)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from serverkit import SAMPLES, Server, wait_for, write_config

# (Where dask.distributed is missing, test_cluster's import skips this file, or
# under CI fails it.)
from test_cluster import Cluster


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path / "cluster")
    c.base.mkdir()
    try:
        c.start()
        c.wait_for_workers(2)
        yield c
    finally:
        c.stop()


def test_ladder_on_a_dask_cluster(cluster: Cluster, tmp_path: Path) -> None:
    config = write_config(tmp_path, parallel=2)
    server = Server(config, tmp_path / "data", ("--cluster", cluster.address))
    try:
        token = server.add_competitor("alice")
        proc = server.submit(token, SAMPLES / "bin" / "minimal_c", "--name", "c-bot")
        assert proc.returncode == 0, proc.stderr

        def c_bot_matches() -> int:
            done = server.json("/api/matches?kind=ladder&status=done&limit=200")
            return sum(1 for m in done if "c-bot" in (m["bot0"], m["bot1"]))

        wait_for(lambda: c_bot_matches() >= 1, 240, "a ladder match of c-bot")
        # The uploaded bot reached the workers as an archive and was unpacked in
        # their own caches: that is where its matches were played.
        unpacked = [p for home in cluster.homes for p in (home / "cache").rglob("minimal_c")]
        assert unpacked, "no worker unpacked c-bot"

        def c_bot_rated() -> bool:
            board = server.json("/api/leaderboard")
            return any(e["bot"] == "c-bot" and e["games"] >= 1 for e in board["entries"])

        # The ratings are refreshed just after a match is recorded.
        wait_for(c_bot_rated, 60, "c-bot rated on the leaderboard")
        match = server.json("/api/matches?kind=ladder&status=done&limit=1")[0]
        replay = server.get(f"/matches/{match['id']}/replay.jsonl")
        assert replay.status_code == 200 and replay.text.count("\n") >= 200
    finally:
        server.stop()
