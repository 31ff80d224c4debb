"""The HTML replay report in a real headless browser (Debian's ``chromium``).

The page's script writes its state into ``#status`` once it has drawn: how many
non-blank pixels each plot canvas has, how many table rows are rendered, and
any JavaScript error. ``--dump-dom`` gives the DOM after the load, so the test
reads that; a screenshot shows the page is not blank.
"""

from __future__ import annotations

import base64
import html
import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from conftest import needs, run_cli
from test_verify import build_replay, default_strategy

from referee.games.chaos import Action
from referee.html_report import write_html
from referee.viewer import load_view

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((b for b in BROWSERS if shutil.which(b)), None)

pytestmark = needs(
    BROWSER is None,
    "no headless browser: install Debian's chromium (apt-get install -y chromium)",
)

ROUNDS = 20_000


def browser(profile: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    return subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 20,000-round match (finals length) with shadows, two faults and a late
    disqualification, as an HTML report."""
    directory = tmp_path_factory.mktemp("html")

    def strategy(seat: int, n: int) -> Action | None:
        if seat == 1 and n in (777, 15_000):
            return None
        return default_strategy(seat, n)

    replay = directory / "finals.jsonl"
    build_replay(replay, rounds=ROUNDS, tokens=50, strategy=strategy, dq=(19_990, [1]))
    out = directory / "finals.html"
    write_html(load_view(replay), out)
    return out


def status_of(dom: str) -> dict[str, str]:
    found = re.search(r'<span id="status"([^>]*)>([^<]*)</span>', dom)
    assert found is not None, "no #status element in the DOM"
    attrs = {k: html.unescape(v) for k, v in re.findall(r'data-([\w-]+)="([^"]*)"', found[1])}
    attrs["text"] = found[2]
    return attrs


def test_plots_draw_and_table_shows_rounds(report: Path, tmp_path: Path) -> None:
    proc = browser(tmp_path / "profile", "--dump-dom", report.as_uri())
    dom = proc.stdout
    assert dom, proc.stderr[-2000:]
    status = status_of(dom)
    assert "error" not in status, status
    assert status["ready"] == "yes", status
    assert status["rounds"] == str(ROUNDS - 10)  # disqualified after round 19,990
    ink = dict(item.split(":") for item in status["ink"].split(","))
    assert set(ink) == {"plot-score", "plot-tokens", "plot-freq", "plot-latency"}
    for name, pixels in ink.items():
        assert int(pixels) > 2000, f"{name} looks blank: {pixels} pixels drawn"
    print(f"browser draw time for {ROUNDS} rounds: {status['draw-ms']} ms")
    # Only that the page does not hang: its speed is measured, not tested, and a
    # loaded machine's browser took seconds (the bound was 5 s).
    assert int(status["draw-ms"]) < 60_000
    # The virtualised table holds a window of rows, not all 20,000.
    rows = re.findall(r'<tr data-i="(\d+)"[^>]*><td class="r">(\d+)</td>', dom)
    assert 10 <= len(rows) <= 100 and rows[0] == ("0", "1")
    assert int(status["table-rows"]) == len(rows)
    # Round 1 as both seats saw it: no history yet, full token buckets.
    first = dom[dom.index('<tr data-i="0"') :]
    first = first[: first.index("</tr>")]
    assert first.count("<td>HIGH</td>") == 2


def test_a_match_of_no_rounds_says_so(tmp_path: Path) -> None:
    # A bot that dies at start-up, through the real CLI: no empty plot frames or
    # table, a line instead.
    dead = tmp_path / "dead.sh"
    dead.write_text("#!/bin/sh\nexit 3\n")
    dead.chmod(0o755)
    replay = tmp_path / "none.jsonl"
    proc = run_cli("match", str(dead), "rock", "--replay", str(replay), "--quiet")
    assert proc.returncode == 3 and replay.exists(), proc.stderr
    page = tmp_path / "none.html"
    write_html(load_view(replay), page)
    dom = browser(tmp_path / "profile", "--dump-dom", page.as_uri()).stdout
    status = status_of(dom)
    assert status["ready"] == "yes" and "error" not in status, status
    assert status["rounds"] == "0"
    assert "No rounds were played: nothing to plot." in dom
    assert "No rounds were played.</p>" in dom


def test_link_to_a_shadow_round_highlights_it(report: Path, tmp_path: Path) -> None:
    # default_strategy: seat 0 asks for a shadow when n % 9 == 0 (tokens permitting).
    proc = browser(tmp_path / "profile", "--dump-dom", report.as_uri() + "#round=9")
    status = status_of(proc.stdout)
    assert status["ready"] == "yes" and "error" not in status, status
    row = re.search(r'<tr data-i="8" class="([^"]*)">(.*?)</tr>', proc.stdout)
    assert row is not None
    assert "shadow" in row[1].split() and "current" in row[1].split()
    assert 'class="mv-shown"' in row[2] and "◆" in row[2]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def png_rows(data: bytes) -> list[bytes]:
    """The decompressed scanlines (filter byte included) of an 8-bit RGB(A) PNG."""
    width, height = png_size(data)
    channels = {2: 3, 6: 4}[data[25]]
    pos = 8
    idat = b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + width * channels
    assert len(raw) == stride * height
    return [raw[i * stride : (i + 1) * stride] for i in range(height)]


def test_screenshot_is_not_blank(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    browser(
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,900",
        report.as_uri(),
    )
    assert shot.exists(), "chromium wrote no screenshot"
    data = shot.read_bytes()
    assert png_size(data) == (1280, 900)
    rows = png_rows(data)
    # A blank page's scanlines are all alike; a drawn one has many different ones.
    assert len(set(rows)) > 300, "the screenshot looks blank"
    assert len(data) > 40_000


def test_scrubbing_deep_into_the_match_renders_those_rows(report: Path, tmp_path: Path) -> None:
    # Round 15,000: seat 1 timed out (see the fixture). Only rows near it exist.
    proc = browser(tmp_path / "profile", "--dump-dom", report.as_uri() + "#round=15000")
    status = status_of(proc.stdout)
    assert status["ready"] == "yes" and "error" not in status, status
    rows = [
        int(r) for r in re.findall(r'<tr data-i="\d+"[^>]*><td class="r">(\d+)</td>', proc.stdout)
    ]
    assert rows and min(rows) <= 15_000 <= max(rows) and max(rows) - min(rows) < 100
    row = re.search(r'<tr data-i="14999" class="([^"]*)">(.*?)</tr>', proc.stdout)
    assert row is not None and {"fault", "current"} <= set(row[1].split())
    assert ">timeout</td>" in row[2]


# Runs after the page's own script: drives the controls the way a user would
# (events are dispatched synchronously) and records what the page did.
INTERACTIONS = """
<script>
(function () {
  const out = {};
  const rowsNow = () => [...document.querySelectorAll("#rows tr")].map((tr) => Number(tr.dataset.i));
  const currentRow = () => Number(document.querySelector("#rows tr.current").dataset.i);
  const sum = (canvas) => {
    const px = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let h = 0;
    for (let k = 0; k < px.length; k += 7) h = (h * 31 + px[k]) % 1000000007;
    return h;
  };
  try {
    const slider = document.getElementById("scrub");
    slider.value = "12345";
    slider.dispatchEvent(new Event("input"));
    const rows = rowsNow();
    out.sliderRows = [Math.min(...rows), Math.max(...rows)];
    out.sliderCurrent = currentRow();
    document.getElementById("next-shadow").click();
    out.nextShadow = currentRow();
    document.getElementById("next-fault").click();
    out.nextFault = currentRow();
    document.getElementById("prev-shadow").click();
    out.prevShadow = currentRow();
    const canvas = document.querySelector("#plot-score canvas");
    const over = document.querySelector("#plot-score canvas.overlay");
    const r = over.getBoundingClientRect();
    const at = (x) => ({ clientX: r.left + x, clientY: r.top + 60, bubbles: true });
    const before = sum(canvas);
    over.dispatchEvent(new MouseEvent("mousemove", at(300)));
    out.tip = document.getElementById("tip").textContent;
    over.dispatchEvent(new MouseEvent("mousedown", at(200)));
    over.dispatchEvent(new MouseEvent("mousemove", at(260)));
    window.dispatchEvent(new MouseEvent("mouseup", at(260)));
    out.zoomChanged = sum(canvas) !== before;
    over.dispatchEvent(new MouseEvent("dblclick", at(230)));
    out.resetRestores = sum(canvas) === before;
    over.dispatchEvent(new MouseEvent("mousedown", at(600)));
    window.dispatchEvent(new MouseEvent("mouseup", at(600)));
    out.clickedTo = currentRow();
  } catch (e) {
    out.error = String(e && e.stack ? e.stack : e);
  }
  document.getElementById("status").dataset.interactions = JSON.stringify(out);
})();
</script>
"""


def test_controls_scrub_jump_zoom_and_click(report: Path, tmp_path: Path) -> None:
    page = tmp_path / "interactive.html"
    page.write_text(report.read_text().replace("</body>", INTERACTIONS + "</body>"))
    proc = browser(tmp_path / "profile", "--window-size=1280,900", "--dump-dom", page.as_uri())
    status = status_of(proc.stdout)
    assert "error" not in status, status
    got = json.loads(status["interactions"])
    assert "error" not in got, got["error"]
    # The slider jumps the table to round 12,345 (index 12,344), rendering only nearby rows.
    assert got["sliderCurrent"] == 12_344
    lo, hi = got["sliderRows"]
    assert lo <= 12_344 <= hi and hi - lo < 100
    # Seat 0 asks for a shadow every 9th round, but its 50 tokens ran out long ago:
    # the next shadow after 12,345 does not exist, so the button leaves it; the
    # next fault is seat 1's timeout in round 15,000.
    assert got["nextShadow"] == 12_344
    assert got["nextFault"] == 14_999
    # Back from there to the last round in which a token was spent, per the page's data.
    payload = json.loads(
        re.search(r'id="replay-data">(.*?)</script>', report.read_text(), re.S)[1]  # type: ignore[index]
    )
    mv = base64.b64decode(payload["arrays"]["mv"])
    last_spent = max(i // 2 for i, byte in enumerate(mv) if byte >> 6 & 1)
    assert 0 < last_spent < 14_999 and got["prevShadow"] == last_spent
    assert got["tip"].startswith("round ")
    assert got["zoomChanged"] and got["resetRestores"]
    assert 0 <= got["clickedTo"] < ROUNDS and got["clickedTo"] != 14_999
