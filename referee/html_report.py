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
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from .explain import tail_lines
from .replay_view import ViewData

NO_MOVE = 7
NO_US = 0xFFFFFFFF


def _asset(name: str) -> str:
    return (resources.files("referee") / "assets" / name).read_text(encoding="utf-8")


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


def _score(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:+.6f}" if value else "0"
    return _e(value)


def _stderr_html(labels: list[str], verdicts: list[Any]) -> str:
    """For each seat that faulted or wrote to stderr: the last lines of its stderr,
    folded; and the note of a bot the referee had to kill after ``end``."""
    out = ""
    for seat, (label, v) in enumerate(zip(labels, verdicts, strict=False)):
        note = v.extra.get("after_end")
        if note:
            out += f'<div class="bad">seat {seat} ({_e(label)}): {_e(note)}</div>'
        tail = tail_lines(v.stderr_tail or v.stderr_head)
        if tail and (v.status != "ok" or v.stderr_bytes):
            out += (
                f"<details><summary>seat {seat} ({_e(label)}) stderr, last {len(tail)} "
                f"lines</summary><pre>{_e(chr(10).join(tail))}</pre></details>"
            )
    return out


def _summary_html(data: ViewData) -> str:
    """The result line, a compact score table, and the rest (commands, seeds,
    digests, every statistic and measurement) folded away so the plots stay in view."""
    h = data.header
    labels = data.labels
    seat_head = "".join(
        f'<th class="s{s}">seat {s}: {_e(label)}</th>' for s, label in enumerate(labels)
    )
    main: list[str] = []
    more: list[str] = []

    def row(into: list[str], name: str, cells: list[str], num: bool = False) -> None:
        cls = ' class="num"' if num else ""
        into.append(
            f"<tr><th>{_e(name)}</th>" + "".join(f"<td{cls}>{c}</td>" for c in cells) + "</tr>"
        )

    bots = h.bots
    row(more, "bot name", [_e(f"{b.name or '?'} {b.version or ''}".strip()) for b in bots])
    row(more, "command", [f"<code>{_e(' '.join(b.command))}</code>" for b in bots])
    row(more, "seed", [_e(b.seed) for b in bots])
    row(more, "sha256", [f"<code>{_e(b.sha256 or '-')}</code>" for b in bots])
    footer = data.footer
    result_line = ""
    if footer is not None:
        seats = footer.result.seats
        verdicts = footer.verdicts
        row(main, "placement", [_e(s.placement) for s in seats])
        for key in seats[0].scores:
            row(main, key, [_score(s.scores.get(key, 0.0)) for s in seats], num=True)
        row(
            main,
            "verdict",
            [
                (f'<span class="bad">{_e(v.status)}</span>' if v.status != "ok" else "ok")
                + (" (disqualified)" if v.disqualified else "")
                + (f", {len(v.faults)} faults" if v.faults else "")
                for v in verdicts
            ],
        )
        for key in seats[0].stats:
            row(more, key, [_e(s.stats.get(key, "")) for s in seats], num=True)
        row(more, "max move ms", [_e(f"{v.max_move_ms:g}") for v in verdicts], num=True)
        row(
            more,
            "CPU s / peak RSS MiB",
            [_e(f"{v.cpu_s:g} / {v.peak_rss_kib / 1024:.0f}") for v in verdicts],
        )
        row(more, "exit", [_e(v.signal or v.exit_code) for v in verdicts])
        r = footer.result
        who = "a draw" if r.winner is None else f"seat {r.winner} ({labels[r.winner]}) wins"
        result_line = (
            f'<div class="result"><b>Result:</b> {_e(who)}; {_e(r.reason)}, '
            f"{r.steps} rounds, {footer.wall_s:g} s wall</div>"
        )
        if footer.faults:
            items = "".join(
                f"<li>round {f.round}, seat {f.seat}: <b>{_e(f.kind)}</b> {_e(f.detail)}</li>"
                for f in footer.faults[:30]
            )
            if len(footer.faults) > 30:
                items += f"<li>... {len(footer.faults) - 30} more</li>"
            result_line += (
                f'<details><summary class="bad">{len(footer.faults)} faults</summary>'
                f"<ul>{items}</ul></details>"
            )
        result_line += _stderr_html(labels, footer.verdicts)
    else:
        result_line = (
            '<div class="result bad">Incomplete replay: no footer after '
            f"{data.rounds} rounds (the referee stopped mid-match)</div>"
        )
    for e in data.events:
        result_line += (
            f'<div class="bad">event: round {e.n}: {_e(e.kind)} seats {_e(e.seats)} '
            f"{_e(e.detail)}</div>"
        )
    head = f"<tr><th></th>{seat_head}</tr>"
    return (
        f'{result_line}<table class="summary">{head}{"".join(main)}</table>'
        "<details><summary>Bots, seeds, file digests, statistics and measurements</summary>"
        f'<table class="summary">{head}{"".join(more)}</table></details>'
    )


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


def render_html(data: ViewData) -> str:
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
    params = ", ".join(f"{k} {v}" for k, v in h.params.items() if k != "moves")
    title = f"{labels[0]} vs {labels[1]}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}: {_e(h.game)} replay</title>
<style>
{_asset("report.css")}
</style>
</head>
<body>
<h1><span class="s0">{_e(labels[0])}</span> vs <span class="s1">{_e(labels[1])}</span></h1>
<div class="sub">{_e(h.game)} ({_e(params)}) &middot; match seed {_e(h.seed)} &middot;
started {_e(h.started)} &middot; referee {_e(h.referee_version)} &middot;
containment {_e(h.containment.get("layer", "?"))} &middot; {data.rounds} rounds recorded</div>
{_summary_html(data)}
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
<script type="application/json" id="replay-data">{data_json}</script>
<script>
{_asset("report.js")}
</script>
</body>
</html>
"""


def write_html(data: ViewData, out: Path) -> int:
    """Write the page; returns its size in bytes."""
    text = render_html(data).encode("utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(text)
    return len(text)
