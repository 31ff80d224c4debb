"""Finals on a running server: the ladder freezes, the current versions play the
pool-and-bracket tournament, the standings and bracket appear on the site, and a
restart keeps them (and the freeze)."""

from __future__ import annotations

from pathlib import Path

from serverkit import SAMPLES, Server, wait_for, write_config


def test_finals_freeze_the_ladder_and_publish_the_bracket(tmp_path: Path) -> None:
    config = write_config(tmp_path, parallel=1)
    data = tmp_path / "data"
    server = Server(config, data)
    try:
        token = server.add_competitor("alice")
        assert (
            server.submit(token, SAMPLES / "bin" / "minimal_c", "--name", "c-bot").returncode == 0
        )
        assert server.get("/finals").status_code == 404
    finally:
        server.stop()

    finals = Server(config, data, ("--finals",))
    try:
        assert finals.json("/api/leaderboard")["frozen"] is True
        done = wait_for(
            lambda: (
                (r := finals.get("/api/finals")).status_code == 200
                and r.json()["status"] == "complete"
                and r.json()
            ),
            240,
            "the finals to finish",
        )
        summary = done["summary"]
        names = {s["name"] for s in summary["standings"]}
        assert names == {"random", "cycler", "markov-c", "c-bot"}
        # 4 bots, one leg: 6 pool matches, then a best-of-1 final of the top 2.
        assert len(summary["matches"]) == 7
        assert summary["champion"] in names
        final = summary["bracket"]["rounds"][-1]["ties"][0]
        assert final["winner"] == summary["champion"]
        page = finals.get("/finals").text
        assert f'<strong id="champion">{summary["champion"]}</strong>' in page
        game = final["games"][0]
        assert f'href="/finals/matches/{game}"' in page
        assert 'id="replay-data"' in finals.get(f"/finals/matches/{game}").text
        # While frozen, the ladder starts nothing new.
        ladder = {k: v for k, v in finals.counts().items() if k.startswith("ladder.")}
        assert set(ladder) <= {"ladder.done"}
        assert (data / "finals" / "results.json").is_file()
    finally:
        finals.stop()

    again = Server(config, data)
    try:
        assert again.json("/api/finals")["status"] == "complete"
        assert again.json("/api/leaderboard")["frozen"] is True
    finally:
        again.stop()
