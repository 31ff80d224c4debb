"""``referee site``: a finished tournament rendered as static pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import run_cli

LEAGUE = """
name = "mini <league>"
game = "chaos"
seed = 3
jobs = 2
[pool]
legs = 1
rounds = 200
[finals]
finalists = 2
best_of = 1
rounds = 200
[[bot]]
name = "random"
command = "random"
[[bot]]
name = "cycler"
command = "cycler"
[[bot]]
name = "markov-c"
command = "markov-c"
"""


def test_site_of_a_tournament(tmp_path: Path) -> None:
    config = tmp_path / "league.toml"
    config.write_text(LEAGUE)
    league, site = tmp_path / "league", tmp_path / "site"
    proc = run_cli("tournament", "--config", str(config), "--out", str(league), "--quiet")
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("site", str(league), str(site))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((league / "results.json").read_text())
    index = (site / "index.html").read_text()
    assert "<h1>mini &lt;league&gt;</h1>" in index
    standings = index[index.index('id="standings"') : index.index("</table>")]
    for s in results["standings"]:
        assert f"<td>{s['name']}</td>" in standings
        assert f"{s['rating_low']:+.0f} .. {s['rating_high']:+.0f}" in standings
    assert 'id="cross"' in index and 'id="bracket"' in index
    assert f'<strong id="champion">{results["champion"]}</strong>' in index
    links = re.findall(r'<a href="(matches/[^"]+\.html)">', index)
    assert len(set(links)) == len(results["matches"]) == 4
    for link in set(links):
        page = (site / link).read_text()
        assert 'id="replay-data"' in page
    assert all((site / "replays" / f"{m['id']}.jsonl").is_file() for m in results["matches"])


def test_site_of_something_else_is_a_one_line_error(tmp_path: Path) -> None:
    proc = run_cli("site", str(tmp_path), str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("referee site: no results.json in ")
    assert "Traceback" not in proc.stderr
