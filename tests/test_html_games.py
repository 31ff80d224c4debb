"""Every game's HTML report, opened in a real headless browser (Debian's ``chromium``),
and the game's own words in ``referee match`` and ``referee replay``.

Each report comes from a short real match between sample bots through the CLI. A
script injected after the page's content measures what the browser drew (the
size of each plot's lines) and counts the table rows; the test compares those
with the replay, read through ``referee.replay``.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from conftest import ROOT, needs, run_cli

from referee.games import GAMES
from referee.html_report import render_replay
from referee.replay import Replay, read_replay
from referee.step_report import verify_summary

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((b for b in BROWSERS if shutil.which(b)), None)
SAMPLES = ROOT / "sample_bots" / "games"

needs_browser = needs(
    BROWSER is None,
    "no headless browser: install Debian's chromium (apt-get install -y chromium)",
)

# What the browser drew: each SVG plot's lines (count and drawn width) and the rows
# of each table, written into the DOM for --dump-dom to carry out.
MEASURE = """
<script>
(function () {
  const out = { plots: {}, tables: {} };
  try {
    for (const svg of document.querySelectorAll("svg.svgplot")) {
      const lines = [...svg.querySelectorAll("polyline.series")];
      out.plots[svg.id] = {
        lines: lines.length,
        width: Math.min(...lines.map((l) => l.getBBox().width)),
        shown: svg.getBoundingClientRect().height,
      };
    }
    for (const table of document.querySelectorAll("table[id]")) {
      out.tables[table.id] = table.querySelectorAll("tbody tr").length;
    }
  } catch (e) {
    out.error = String(e);
  }
  document.body.dataset.measured = JSON.stringify(out);
})();
</script>
"""


def play(tmp_path: Path, name: str, game: str, *args: str) -> Replay:
    replay = tmp_path / f"{name}.jsonl"
    proc = run_cli("match", "--game", game, *args, "--replay", str(replay), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return read_replay(replay)


def measured_report(tmp_path: Path, name: str) -> tuple[dict[str, Any], str]:
    """Write the replay's report with ``referee replay --html``, open it in the
    browser, and return what the page measured and the DOM."""
    out = tmp_path / f"{name}.html"
    proc = run_cli("replay", str(tmp_path / f"{name}.jsonl"), "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / f"{name}-measured.html"
    page.write_text(out.read_text().replace("</body>", MEASURE + "</body>"))
    assert BROWSER is not None
    dom = subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1280,900",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found is not None, "the page's measuring script did not run"
    measured = json.loads(html.unescape(found[1]))
    assert "error" not in measured, measured
    assert 'id="verify" class="ok"' in dom  # the replay verifies, and the page says so
    return measured, dom


def assert_drawn(plot: dict[str, Any], lines: int) -> None:
    assert plot["lines"] == lines
    assert plot["width"] > 100 and plot["shown"] > 50, plot


@needs_browser
def test_liars_dice_report_draws_dice_and_bids(tmp_path: Path) -> None:
    odds = f"python3 {SAMPLES / 'liars_dice' / 'odds.py'}"
    replay = play(tmp_path, "ld", "liars_dice", odds, odds, odds, "--seed", "4")
    measured, dom = measured_report(tmp_path, "ld")
    assert replay.footer is not None
    reveals = [s.out["reveal"] for s in replay.steps if s.out.get("reveal")]
    assert_drawn(measured["plots"]["plot-dice"], lines=3)
    assert measured["tables"]["rounds-table"] == len(reveals) > 1
    assert measured["tables"]["steps-table"] == replay.footer.result.steps
    # Round 1's dice in the table are the dice the replay revealed, seat by seat.
    row = re.search(r'<tr data-round="1">(.*?)</tr>', dom, re.S)
    assert row is not None
    cells = re.findall(r'<td class="dice">(.*?)</td>', row[1], re.S)
    shown = [[int(d) for d in re.findall(r'title="(\d)"', cell)] for cell in cells]
    assert shown == reveals[0]["dice"]
    # How the round ended: the challenger and the call, in words.
    first = reveals[0]
    assert f"seat {first['seat']} " in row[1] and "calls" in row[1]


@needs_browser
def test_rps_stuff_report_draws_stocks_over_time(tmp_path: Path) -> None:
    balance = f"python3 {SAMPLES / 'rps_stuff' / 'balance.py'}"
    replay = play(tmp_path, "rps", "rps_stuff", balance, balance, "--param", "trades=40")
    measured, dom = measured_report(tmp_path, "rps")
    assert replay.footer is not None
    for seat in (0, 1):
        assert_drawn(measured["plots"][f"plot-stock-{seat}"], lines=5)  # one per kind
    assert_drawn(measured["plots"]["plot-balance"], lines=2)
    assert measured["tables"]["steps-table"] == 40
    # The stock table's last stocks are the footer's inventories.
    table = dom[dom.index('id="stocks-table"') :]
    table = table[table.index("<tbody>") :]
    for seat in (0, 1):
        row = re.findall(r"<tr>(.*?)</tr>", table, re.S)[seat]
        counts = [int(c) for c in re.findall(r'<td class="n">(\d+)</td>', row)][:5]
        inventory = replay.footer.result.seats[seat].stats["inventory"]
        assert counts == list(inventory.values())


@needs_browser
def test_ctm_report_draws_commitments_and_reveals(tmp_path: Path) -> None:
    minimax = f"python3 {SAMPLES / 'ctm' / 'minimax.py'}"
    replay = play(tmp_path, "ctm", "ctm", minimax, minimax, "--rounds", "3", "--seed", "2")
    measured, dom = measured_report(tmp_path, "ctm")
    assert measured["tables"]["games-table"] == 3
    assert measured["tables"]["steps-table"] == 12
    assert_drawn(measured["plots"]["plot-wins"], lines=2)
    # Each game's row shows the commitments recorded and the hands revealed against them.
    hands = ("rock", "paper", "scissors")
    for step in replay.steps:
        out = step.out
        row = re.search(rf'<tr data-game="{out["game"]}">(.*?)</tr>', dom, re.S)
        assert row is not None
        if out.get("commitments"):
            for commitment in out["commitments"]:
                assert commitment[:10] in row[1]
        if out.get("hands"):
            for left, right in out["hands"]:
                assert f"{hands[left]} + {hands[right]}" in row[1]


def test_match_help_names_every_game() -> None:
    proc = run_cli("match", "--help")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    for name, cls in GAMES.items():
        assert f"{name}: {cls.title}" in text
        assert f"{name}: {cls.rounds_means}" in text


# Plays legal bids through round 1, then bids on a face that does not exist.
ILLEGAL_BIDDER = """\
import json, sys
json.loads(sys.stdin.readline())
print(json.dumps({"name": "faceless", "version": "1"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "end":
        break
    if msg.get("type") != "turn":
        continue
    if msg["round"] >= 2:
        print(json.dumps({"move": "bid", "quantity": 1, "face": 9}), flush=True)
        continue
    bids = msg["bids"]
    last = bids[-1] if bids else None
    weight = 0 if last is None else last["quantity"] * (2 if last["face"] == 6 else 1)
    if weight + 1 <= sum(msg["dice_counts"]):
        print(json.dumps({"move": "bid", "quantity": weight + 1, "face": 2}), flush=True)
    else:
        print(json.dumps({"move": "liar"}), flush=True)
"""


def test_a_turn_based_fault_is_told_in_the_games_words(tmp_path: Path) -> None:
    bot = tmp_path / "faceless.py"
    bot.write_text(ILLEGAL_BIDDER)
    odds = f"python3 {SAMPLES / 'liars_dice' / 'odds.py'}"
    replay = tmp_path / "ld.jsonl"
    proc = run_cli(
        "match", "--game", "liars_dice", f"python3 {bot}", odds, "--seed", "3",
        "--replay", str(replay),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    faults = read_replay(replay).footer.faults  # type: ignore[union-attr]
    assert [f.kind for f in faults] == ["illegal_move"]
    turn = faults[0].round
    # The turn, and the round it fell in (the bot bids legally through round 1).
    said = rf"fault: turn {turn} \(round [2-9]\d*\) seat 0 illegal_move: face 9 is not 1 to 6"
    assert re.search(said, proc.stdout), proc.stdout
    assert "rounds" not in proc.stdout.replace("max_rounds", "")
    assert re.search(r"liars_dice: \d+ turns", proc.stdout)
    # The replay places the turn in its round.
    shown = run_cli("replay", str(replay))
    assert shown.returncode == 0, shown.stderr
    line = next(ln for ln in shown.stdout.splitlines() if ln.startswith("fault:"))
    assert re.fullmatch(
        rf"fault: turn {turn} \(round [2-9]\d*\) seat 0 illegal_move: face 9.*", line
    )
    assert re.search(r"Result: .*; disqualification, \d+ turns", shown.stdout)
    # So does the HTML report's fault list, and the replay re-played to its end.
    page = render_replay(replay, verify_summary(replay))
    assert re.search(rf"<li>turn {turn} \(round [2-9]\d*\), seat 0: <b>illegal_move</b>", page)
    assert 'id="verify" class="ok"' in page and "could not re-play" not in page


def test_a_cut_or_edited_replay_still_gets_a_report(tmp_path: Path) -> None:
    lines = (ROOT / "tests" / "fixtures" / "replays" / "liars-dice.jsonl").read_bytes()
    lines = lines.splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:11]))
    page = render_replay(cut, verify_summary(cut))
    assert "Incomplete replay: no footer after 10 turns" in page
    assert page.count('<tr data-n="') == 10
    assert 'id="verify" class="bad">INCOMPLETE' in page
    # A bid edited into one the rules refuse: the report shows the turns before it.
    edited = tmp_path / "edited.jsonl"
    step = json.loads(lines[3])
    assert step["act"][step["out"]["seat"]]["move"] == "bid"
    step["act"][step["out"]["seat"]]["face"] = 9
    lines[3] = json.dumps(step).encode() + b"\n"
    edited.write_bytes(b"".join(lines))
    page = render_replay(edited, verify_summary(edited))
    assert "could not re-play this replay past 2 turns" in page and "face 9 is not 1 to 6" in page
    assert page.count('<tr data-n="') == 2
    assert 'id="verify" class="bad">FAIL' in page


def test_the_servers_match_viewer_draws_every_games_report() -> None:
    from referee.server.pages import viewer_html as _viewer_html

    fixtures = ROOT / "tests" / "fixtures" / "replays"
    expected = {
        "liars-dice.jsonl": 'id="rounds-table"',
        "ctm.jsonl": 'id="games-table"',
        "illegal-move.jsonl": 'id="replay-data"',  # Chaos League's interactive report
    }
    for name, marker in expected.items():
        page = _viewer_html(fixtures / name)
        assert page is not None and marker in page, name
    assert _viewer_html(fixtures.parent.parent / "conftest.py") is None


def test_the_shared_report_code_names_no_game() -> None:
    # A new game's report touches only referee/games/ and referee/game_reports/.
    words = {w.lower() for name, cls in GAMES.items() for w in (name, *cls.title.split()[:2])}
    words -= {"rock", "paper", "(commit-turn-move:", "classic", "league"}
    for module in ("step_report.py", "report_page.py", "game_reports/__init__.py"):
        text = (ROOT / "referee" / module).read_text().lower()
        named = sorted(w for w in words if re.search(rf"\b{re.escape(w)}\b", text))
        assert not named, f"{module} names {named}"


def test_verify_counts_steps_in_the_games_words() -> None:
    fixtures = ROOT / "tests" / "fixtures" / "replays"
    assert verify_summary(fixtures / "liars-dice.jsonl").startswith("OK: 27 turns, chain intact")
    assert verify_summary(fixtures / "ctm.jsonl").startswith("OK: 8 steps, chain intact")
    assert verify_summary(fixtures / "timeout-dq.jsonl").startswith("OK: 5 rounds, chain intact")
