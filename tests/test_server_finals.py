"""Finals on a running server: the ladder freezes, the current versions play the
pool-and-bracket tournament, the standings and bracket appear on the site, a
restart keeps them (and the freeze), and ``referee site`` publishes them as
static pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import ROOT, run_cli
from serverkit import Server, wait_for, write_config

from referee.server.display import signed


def test_finals_freeze_the_ladder_and_publish_the_bracket(tmp_path: Path) -> None:
    # Three at once: the three pool matches in one go, then the final.
    config = write_config(tmp_path, parallel=3)
    data = tmp_path / "data"
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
        assert names == {"random", "cycler", "markov-c"}
        # 3 bots, one leg: 3 pool matches, then a best-of-1 final of the top 2.
        assert len(summary["matches"]) == 4
        assert summary["champion"] in names
        final = summary["bracket"]["rounds"][-1]["ties"][0]
        assert final["winner"] == summary["champion"]
        page = finals.get("/finals").text
        assert f'<strong id="champion">{summary["champion"]}</strong>' in page
        game = final["games"][0]
        assert f'href="/finals/matches/{game}"' in page
        viewer = finals.get(f"/finals/matches/{game}").text
        assert 'id="replay-data"' in viewer
        # The bots' paths on the server are not the public's.
        for shown in (viewer, finals.get("/api/finals").text):
            assert str(ROOT) not in shown and str(data) not in shown
        # Frozen from the start: the ladder played nothing.
        assert not any(k.startswith("ladder.") for k in finals.counts())
    finally:
        finals.stop()

    again = Server(config, data)
    try:
        assert again.json("/api/finals")["status"] == "complete"
        assert again.json("/api/leaderboard")["frozen"] is True
    finally:
        again.stop()

    # The finals are an ordinary tournament output: referee site publishes them.
    site = tmp_path / "site"
    proc = run_cli("site", str(data / "finals"), str(site))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((data / "finals" / "results.json").read_text())
    index = (site / "index.html").read_text()
    assert "<h1>Test &lt;ladder&gt;: finals</h1>" in index
    # The subtitle's parts are set apart alike ("4 matches&middot; ratings" was not).
    assert f"{len(results['matches'])} matches &middot; ratings: Bradley-Terry" in index
    standings = index[index.index('id="standings"') : index.index("</table>")]
    for s in results["standings"]:
        ranks = f"{s['rank_low']}" + (
            f"-{s['rank_high']}" if s["rank_high"] != s["rank_low"] else ""
        )
        assert f'<td class="n">{ranks}</td><td>{s["name"]}</td>' in standings
        # The rating's interval as [low, high]: it is often far from symmetric.
        assert f"[{signed(s['rating_low'])}, {signed(s['rating_high'])}]" in standings
    assert 'id="cross"' in index and 'id="bracket"' in index
    assert f'<strong id="champion">{results["champion"]}</strong>' in index
    links = re.findall(r'<a href="(matches/[^"]+\.html)">', index)
    assert len(set(links)) == len(results["matches"]) == 4
    for link in set(links):
        assert 'id="replay-data"' in (site / link).read_text()
    assert all((site / "replays" / f"{m['id']}.jsonl.gz").is_file() for m in results["matches"])


def test_site_of_something_else_is_a_one_line_error(tmp_path: Path) -> None:
    proc = run_cli("site", str(tmp_path), str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("referee site: no results.json in ")
    assert "Traceback" not in proc.stderr
