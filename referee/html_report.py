"""One self-contained HTML page for a replay (``referee replay FILE --html OUT``).

The page needs nothing from outside: the CSS and JavaScript in ``assets/`` are
inlined, the plots are drawn on <canvas> by that script, and the match is
embedded as a few typed arrays (base64), about 8 bytes per seat per round,
instead of the raw replay (~550 bytes per round). Summary tables are rendered
here, in Python, so they read without JavaScript.

Embedded arrays (interleaved by seat, index = round * 2 + seat):

* ``mv``: uint8, real move | shown move << 3 | token spent << 6 | shadow asked << 7
  (moves are indices into ``moves``; 7 means no move)
* ``obs``: uint8, the turn as sent: opponent_last_visible | self_last_real << 3 |
  bucket << 6 (HIGH, MEDIUM, LOW, EMPTY)
* ``points``: int8; ``fault``: uint8 index into ``faultKinds`` (0 = none)
* ``us``: uint32 reply latency in microseconds, 0xffffffff for no reply
* ``n``: int32 round numbers, only when they are not ``first``, ``first + 1``, ...
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from .games import GAMES
from .replay_view import OtherGame, ViewData, load_view
from .report_page import asset, document, heading_html, summary_html

NO_MOVE = 7
NO_US = 0xFFFFFFFF


def _b64(array: Any) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


def _moves3(values: Any) -> Any:
    """Move indices (-1 = none) as 3-bit codes (7 = none)."""
    v = values.astype(np.int16)
    return np.where(v < 0, NO_MOVE, v).astype(np.uint8)


def encode_arrays(data: ViewData) -> dict[str, str]:
    mv = (
        _moves3(data.real)
        | (_moves3(data.shown) << 3)
        | (data.spent.astype(np.uint8) << 6)
        | (data.request.astype(np.uint8) << 7)
    )
    bucket = np.where(data.obs_bucket < 0, 0, data.obs_bucket).astype(np.uint8)
    obs = _moves3(data.obs_opp) | (_moves3(data.obs_self) << 3) | (bucket << 6)
    us = np.where(data.us < 0, NO_US, np.minimum(data.us, NO_US - 1)).astype("<u4")
    arrays = {
        "mv": _b64(mv.astype(np.uint8)),
        "obs": _b64(obs.astype(np.uint8)),
        "points": _b64(data.points.astype(np.int8)),
        "fault": _b64(data.fault.astype(np.uint8)),
        "us": _b64(us),
    }
    if data.rounds and not np.array_equal(
        data.n, np.arange(data.n[0], data.n[0] + data.rounds, dtype=np.int32)
    ):
        arrays["n"] = _b64(data.n.astype("<i4"))
    return arrays


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


# Both tables (the fixed header and the scrolled rows) share these column widths.
_SEAT_COLUMNS = (
    ("saw opp.", "6.5%", "sep"),
    ("saw self", "6.5%", ""),
    ("bucket", "5.5%", ""),
    ("real", "6.5%", ""),
    ("shown to opp.", "8.5%", ""),
    ("pts", "3%", "n"),
    ("total", "4%", "n"),
    ("tokens", "4.5%", "n"),
    ("ms", "4%", "n"),
    ("fault", "4%", ""),
)
_COLGROUP = (
    '<colgroup><col style="width:5%">'
    + "".join(f'<col style="width:{w}">' for _n, w, _c in _SEAT_COLUMNS * 2)
    + "</colgroup>"
)


def _table_head(labels: list[str]) -> str:
    seats = "".join(
        f'<th colspan="{len(_SEAT_COLUMNS)}" class="s{s} sep">seat {s}: {_e(label)}</th>'
        for s, label in enumerate(labels)
    )
    names = "".join(f'<th class="{c}">{_e(n)}</th>' for n, _w, c in _SEAT_COLUMNS * 2)
    return f'<tr><th></th>{seats}</tr><tr><th class="n">round</th>{names}</tr>'


def render_html(data: ViewData, verify: str | None = None) -> str:
    """The page; ``verify`` is ``referee verify``'s line for the replay, if known."""
    h = data.header
    labels = data.labels
    payload = {
        "rounds": data.rounds,
        "first": int(data.n[0]) if data.rounds else 1,
        "moves": list(data.moves),
        "labels": labels,
        "tokens": data.start_tokens(),
        "faultKinds": data.fault_kinds,
        "arrays": encode_arrays(data),
    }
    # "</" inside a <script> element would end it early.
    data_json = msgspec.json.encode(payload).decode().replace("</", "<\\/")
    word = GAMES[h.game].step_word
    body = f"""{heading_html(h, word, data.rounds)}
{summary_html(h, data.footer, data.events, word, data.rounds, verify=verify)}
<h2>Plots</h2>
<div id="plots" class="plots"></div>
<h2 id="rounds">Rounds</h2>
<div class="controls">
<button id="prev-shadow" type="button">&larr; shadow</button>
<button id="next-shadow" type="button">shadow &rarr;</button>
<button id="next-fault" type="button">fault &rarr;</button>
<input id="scrub" type="range" min="1" max="1" value="1" aria-label="round">
round <input id="round-in" type="number" value="1">
<span id="shadow-count" class="hint"></span>
</div>
<div class="hint">What each seat was sent before the round (saw opp. = opponent_last_visible,
saw self = self_last_real, bucket = opponent_deception_bucket), what it played, and what
followed. Shadow rounds are highlighted; "shown to opp." is the move the opponent sees next
round, marked &#9670; when a token was spent to show it instead of the real move. Click a plot or a row, drag the slider, or use the arrow keys.</div>
<div class="tablewrap"><div class="inner">
<div class="head"><table class="rounds">{_COLGROUP}{_table_head(labels)}</table></div>
<div id="viewport" class="viewport"><div id="spacer" class="spacer">
<table id="rows-table" class="rounds">{_COLGROUP}<tbody id="rows"></tbody></table>
</div></div>
</div></div>
<div id="tip" class="tip"></div>
<footer>Generated by referee {_e(h.referee_version)} from a replay
({data.rounds} rounds). <span id="status" data-ready="no">drawing...</span></footer>
<script type="application/json" id="replay-data">{data_json}</script>"""
    return document(h, body, script=asset("report.js"))


def write_html(data: ViewData, out: Path, verify: str | None = None) -> int:
    """Write the page; returns its size in bytes."""
    return write_page(render_html(data, verify), out)


def write_page(page: str, out: Path) -> int:
    """Write an HTML page; returns its size in bytes."""
    text = page.encode("utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(text)
    return len(text)


def render_replay(path: Path, verify: str | None = None) -> str:
    """The HTML report of any game's replay: the interactive one where the replay
    loads as arrays (``replay_view.load_view``), else the game's step report.
    Raises ReplayError for a file that is not a replay."""
    from .step_report import render_walk, walk

    try:
        return render_html(load_view(path), verify)
    except OtherGame:
        return render_walk(walk(path), verify)
