"""The page every HTML replay report is built on, whatever the game: the heading,
the result with its score table, the verdicts, the faults and the verify status,
in one self-contained document (CSS inlined, plots as inline SVG or drawn by an
inlined script; nothing is fetched from the network).

The interactive per-round report (``html_report``) and the per-step report
(``step_report``) both render through here; nothing here knows one game from
another.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import msgspec

from .explain import tail_lines
from .replay import Event, Footer, Header

# Seat colours: seats 0 and 1 match the stylesheet's --seat0 and --seat1.
SEAT_COLOURS = ("#1c8fc9", "#c0398f", "#2f9e44", "#e8890c", "#6741d9", "#868e96")


def asset(name: str) -> str:
    return (resources.files("referee") / "assets" / name).read_text(encoding="utf-8")


def e(value: Any) -> str:
    """``value`` as escaped HTML text (attribute-safe)."""
    return html.escape(str(value), quote=True)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def seat_colour(seat: int) -> str:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


def labels_of(header: Header) -> list[str]:
    """Each seat's name for tables: the organiser's label, the bot's own name, or
    the end of its command."""
    return [b.label or b.name or " ".join(b.command)[-30:] or f"seat {b.seat}" for b in header.bots]


def _score(value: Any) -> str:
    """A score for people: three decimals, the exact value (as the replay holds it)
    in the title."""
    if isinstance(value, float):
        shown = f"{value:+.3f}" if round(value, 3) else "0"
        return f'<span title="{value!r}">{shown}</span>'
    return e(value)


def fault_place(step: int, word: str, places: Mapping[int, str]) -> str:
    """ "turn 14 (round 3)": a step in the game's own words."""
    where = places.get(step, "")
    return f"{word} {step}" + (f" ({where})" if where else "")


def stderr_html(labels: Sequence[str], verdicts: Sequence[Any]) -> str:
    """For each seat that faulted or wrote to stderr: the last lines of its stderr,
    folded; and the note of a bot the referee had to kill after ``end``."""
    out = ""
    for seat, (label, v) in enumerate(zip(labels, verdicts, strict=False)):
        note = v.extra.get("after_end")
        if note:
            out += f'<div class="bad">seat {seat} ({e(label)}): {e(note)}</div>'
        tail = tail_lines(v.stderr_tail or v.stderr_head)
        if tail and (v.status != "ok" or v.stderr_bytes):
            out += (
                f"<details><summary>seat {seat} ({e(label)}) stderr, last {len(tail)} "
                f"lines</summary><pre>{e(chr(10).join(tail))}</pre></details>"
            )
    return out


def summary_html(
    header: Header,
    footer: Footer | None,
    events: Sequence[Event],
    word: str,
    recorded: int,
    verify: str | None = None,
    places: Mapping[int, str] | None = None,
) -> str:
    """The result line, a compact score table with the verdicts, the faults, the
    verify status, and the rest (commands, seeds, digests, every statistic and
    measurement) folded away so the game's own tables and plots stay in view."""
    labels = labels_of(header)
    places = places or {}
    seat_head = "".join(
        f'<th class="s{s}" style="color:{seat_colour(s)}">seat {s}: {e(label)}</th>'
        for s, label in enumerate(labels)
    )
    main: list[str] = []
    more: list[str] = []

    def row(into: list[str], name: str, cells: list[str], num: bool = False) -> None:
        cls = ' class="num"' if num else ""
        into.append(
            f"<tr><th>{e(name)}</th>" + "".join(f"<td{cls}>{c}</td>" for c in cells) + "</tr>"
        )

    bots = header.bots
    row(more, "bot name", [e(f"{b.name or '?'} {b.version or ''}".strip()) for b in bots])
    row(more, "command", [f"<code>{e(' '.join(b.command))}</code>" for b in bots])
    row(more, "seed", [e(b.seed) for b in bots])
    row(more, "sha256", [f"<code>{e(b.sha256 or '-')}</code>" for b in bots])
    result_line = ""
    if footer is not None:
        seats = footer.result.seats
        verdicts = footer.verdicts
        row(main, "placement", [e(s.placement) for s in seats])
        for key in seats[0].scores:
            row(main, key, [_score(s.scores.get(key, 0.0)) for s in seats], num=True)
        row(
            main,
            "verdict",
            [
                (f'<span class="bad">{e(v.status)}</span>' if v.status != "ok" else "ok")
                + (" (disqualified)" if v.disqualified else "")
                + (f", {plural(len(v.faults), 'fault')}" if v.faults else "")
                for v in verdicts
            ],
        )
        for key in seats[0].stats:
            row(more, key, [e(s.stats.get(key, "")) for s in seats], num=True)
        row(more, "max move ms", [e(f"{v.max_move_ms:g}") for v in verdicts], num=True)
        row(
            more,
            "CPU s / peak RSS MiB",
            [e(f"{v.cpu_s:g} / {v.peak_rss_kib / 1024:.0f}") for v in verdicts],
        )
        row(more, "exit", [e(v.signal or v.exit_code) for v in verdicts])
        r = footer.result
        who = "a draw" if r.winner is None else f"seat {r.winner} ({labels[r.winner]}) wins"
        result_line = (
            f'<div class="result"><b>Result:</b> {e(who)}; {e(r.reason)}, '
            f"{r.steps} {e(word)}s, {footer.wall_s:g} s wall</div>"
        )
        if footer.faults:
            items = "".join(
                f"<li>{e(fault_place(f.round, word, places))}, seat {f.seat}: "
                f"<b>{e(f.kind)}</b> {e(f.detail)}</li>"
                for f in footer.faults[:30]
            )
            if len(footer.faults) > 30:
                items += f"<li>... {len(footer.faults) - 30} more</li>"
            # A few faults are what a reader came for: shown open. Many stay folded.
            shown = " open" if len(footer.faults) <= 5 else ""
            result_line += (
                f'<details id="faults"{shown}><summary class="bad">'
                f"{plural(len(footer.faults), 'fault')}</summary><ul>{items}</ul></details>"
            )
        result_line += stderr_html(labels, footer.verdicts)
    else:
        result_line = (
            '<div class="result bad">Incomplete replay: no footer after '
            f"{recorded} {e(word)}s (the referee stopped mid-match)</div>"
        )
    for ev in events:
        result_line += (
            f'<div class="bad">event: {e(fault_place(ev.n, word, places))}: {e(ev.kind)} '
            f"seats {e(ev.seats)} {e(ev.detail)}</div>"
        )
    if verify is not None:
        cls = "ok" if verify.startswith("OK") else "bad"
        result_line += (
            f'<div class="verify">verify: <span id="verify" class="{cls}">{e(verify)}</span></div>'
        )
    head = f"<tr><th></th>{seat_head}</tr>"
    return (
        f'{result_line}<table class="summary" id="result">{head}{"".join(main)}</table>'
        "<details><summary>Bots, seeds, file digests, statistics and measurements</summary>"
        f'<table class="summary">{head}{"".join(more)}</table></details>'
    )


def heading_html(header: Header, word: str, recorded: int) -> str:
    """The page's title line (the bots, each in its seat's colour) and its sub-line."""
    labels = labels_of(header)
    names = " vs ".join(
        f'<span class="s{s}" style="color:{seat_colour(s)}">{e(label)}</span>'
        for s, label in enumerate(labels)
    )
    params = ", ".join(f"{k} {v}" for k, v in header.params.items() if k != "moves")
    return (
        f"<h1>{names}</h1>\n"
        f'<div class="sub">{e(header.game)} ({e(params)}) &middot; match seed {e(header.seed)} '
        f"&middot; started {e(header.started)} &middot; referee {e(header.referee_version)} "
        f"&middot; containment {e(header.containment.get('layer', '?'))} &middot; "
        f"{recorded} {e(word)}s recorded</div>"
    )


def document(header: Header, body: str, script: str = "") -> str:
    """The whole page: ``body`` (from ``heading_html``, ``summary_html`` and the
    game's own sections) with the stylesheet and, if given, a script inlined."""
    labels = labels_of(header)
    title = " vs ".join(labels)
    script_html = f"<script>\n{script}\n</script>\n" if script else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}: {e(header.game)} replay</title>
<style>
{asset("report.css")}
</style>
</head>
<body>
{body}
{script_html}</body>
</html>
"""


# -- inline SVG plots ------------------------------------------------------------------


def _nice(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.3g}"


class Plot(msgspec.Struct):
    """Series over the same xs, as a report draws them (inline SVG, or braille cells
    in the terminal). Each series is (label, colour, values)."""

    plot_id: str
    title: str
    xs: list[float]
    series: list[tuple[str, str, list[float]]]
    x_word: str
    steps: bool = False  # stairs: a value holds until the next x
    height: int = 220


def line_plot(plot: Plot, width: int = 900) -> str:
    """The plot as an inline SVG, one ``<polyline class="series">`` per series.
    Numbers only go into the drawing; labels are escaped."""
    plot_id, title, xs, series = plot.plot_id, plot.title, plot.xs, plot.series
    x_word, steps, height = plot.x_word, plot.steps, plot.height
    left, right, top, bottom = 52, 12, 26, 30
    inner_w = width - left - right
    inner_h = height - top - bottom
    values = [v for _label, _colour, ys in series for v in ys]
    if not xs or not values:
        return ""
    x0, x1 = float(min(xs)), float(max(xs))
    y0, y1 = min(0.0, float(min(values))), float(max(values))
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * inner_w

    def py(y: float) -> float:
        return top + (y1 - y) / (y1 - y0) * inner_h

    parts = [
        f'<svg id="{e(plot_id)}" class="svgplot" viewBox="0 0 {width} {height}" '
        f'width="100%" role="img" aria-label="{e(title)}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="16" class="t">{e(title)}</text>',
        f'<line class="axis" x1="{left}" y1="{py(y0):.1f}" x2="{width - right}" y2="{py(y0):.1f}"/>',
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{top + inner_h}"/>',
    ]
    for y in (y0, (y0 + y1) / 2, y1):
        parts.append(
            f'<text x="{left - 6}" y="{py(y) + 4:.1f}" class="tick" text-anchor="end">'
            f"{_nice(round(y, 2))}</text>"
        )
    for x, anchor in ((x0, "start"), ((x0 + x1) / 2, "middle"), (x1, "end")):
        word = f"{e(x_word)} " if anchor == "middle" else ""
        parts.append(
            f'<text x="{px(x):.1f}" y="{height - 10}" class="tick" text-anchor="{anchor}">'
            f"{word}{_nice(round(x))}</text>"
        )
    legend_x = width - right
    for label, colour, ys in series:
        points: list[str] = []
        prev_y: float | None = None
        for x, y in zip(xs, ys, strict=True):
            if steps and prev_y is not None:
                points.append(f"{px(x):.1f},{py(prev_y):.1f}")
            points.append(f"{px(x):.1f},{py(y):.1f}")
            prev_y = y
        parts.append(
            f'<polyline class="series" data-label="{e(label)}" fill="none" stroke="{e(colour)}" '
            f'stroke-width="1.6" points="{" ".join(points)}"><title>{e(label)}</title></polyline>'
        )
    # The legend, right-aligned on the title line, last series rightmost.
    legend: list[str] = []
    for label, colour, _ys in reversed(series):
        legend_x -= 22 + 7 * len(label)
        legend.append(
            f'<text x="{legend_x}" y="16" class="legend" style="fill:{e(colour)}">'
            f"&#9632; {e(label)}</text>"
        )
    parts.extend(legend)
    parts.append("</svg>")
    return "".join(parts)
