"""``referee replay``: a replay in the terminal (summary, score chart, round table)
or exported as one self-contained HTML page (``--html``, see ``html_report``).

The file is streamed once into numpy arrays (``replay_view.load_view``);
everything shown is computed from those.
The charts are drawn here with Unicode braille cells: no plotting dependency.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from .errors import ReplayError
from .explain import seat_notes, stderr_log_path
from .faults import FaultRecord
from .replay_view import BUCKETS, SEAT_STYLES, OtherGame, ViewData, load_view
from .report_page import Plot
from .step_report import Walk, render_walk, report_for, verify_summary, walk
from .termtext import printable

_DOTS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))


def _column_ranges(values: NDArray[Any], columns: int) -> tuple[NDArray[Any], NDArray[Any]]:
    """Min and max of ``values`` over each of ``columns`` equal slices of the rounds,
    so a spike inside a slice still shows."""
    n = len(values)
    edges = np.linspace(0, n, columns + 1).astype(np.int64)
    edges[1:] = np.maximum(edges[1:], edges[:-1] + 1)
    edges = np.minimum(edges, n)
    starts = np.minimum(edges[:-1], n - 1)
    lo = np.minimum.reduceat(values, starts)
    hi = np.maximum.reduceat(values, starts)
    return lo, hi


def braille_chart(
    series: Sequence[NDArray[Any]],
    styles: Sequence[str],
    width: int = 70,
    height: int = 12,
) -> tuple[list[Text], float, float]:
    """Lines of a chart of several series over the same rounds; returns the lines
    and the value range. Each series covers min..max of its slice in each dot column."""
    dot_cols = width * 2
    dot_rows = height * 4
    all_lo = min(float(np.min(s)) for s in series)
    all_hi = max(float(np.max(s)) for s in series)
    if all_hi == all_lo:
        all_hi += 1
        all_lo -= 1
    scale = (dot_rows - 1) / (all_hi - all_lo)
    cells = np.zeros((len(series), height, width), dtype=np.int32)
    for k, values in enumerate(series):
        lo, hi = _column_ranges(values, dot_cols)
        top = np.round((all_hi - hi) * scale).astype(np.int64)
        bottom = np.round((all_hi - lo) * scale).astype(np.int64)
        for x in range(dot_cols):
            for y in range(int(top[x]), int(bottom[x]) + 1):
                cells[k, y // 4, x // 2] |= _DOTS[x % 2][y % 4]
    zero_row = int(round(all_hi * scale)) // 4 if all_lo <= 0 <= all_hi else -1
    lines = []
    for row in range(height):
        text = Text()
        for col in range(width):
            present = [k for k in range(len(series)) if cells[k, row, col]]
            if not present:
                text.append("┈" if row == zero_row else " ", style="grey37")
                continue
            bits = 0
            for k in present:
                bits |= int(cells[k, row, col])
            style = styles[present[0]] if len(present) == 1 else "bold white"
            text.append(chr(0x2800 + bits), style=style)
        lines.append(text)
    return lines, all_lo, all_hi


def marker_row(data: ViewData, seat: int, width: int) -> Text:
    """One character per chart column: a fault (✗), a bucket change (▼) or a
    shadow (•) of this seat somewhere in the column's rounds, the worst shown."""
    n = data.rounds
    edges = np.linspace(0, n, width + 1).astype(np.int64)
    fault = np.add.reduceat(data.fault[:, seat] > 0, np.minimum(edges[:-1], n - 1))
    change = np.add.reduceat(data.bucket_changes()[:, seat], np.minimum(edges[:-1], n - 1))
    shadow = np.add.reduceat(data.spent[:, seat], np.minimum(edges[:-1], n - 1))
    empty = edges[1:] <= edges[:-1]
    text = Text()
    for c in range(width):
        if empty[c]:
            text.append(" ")
        elif fault[c]:
            text.append("✗", style="bold red")
        elif change[c]:
            text.append("▼", style="bold yellow")
        elif shadow[c]:
            text.append("•", style="blue")
        else:
            text.append("·", style="grey30")
    return text


# -- summary and table ----------------------------------------------------------------


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:+.6f}" if value else "0"
    return str(value)


def summary(data: ViewData | Walk, replay: Path | None = None) -> Group:
    """The header, the result table and the faults, in the game's own words; with
    ``replay``, also where each seat's stderr log lies next to it."""
    h = data.header
    labels = [printable(label) for label in data.labels]  # a bot's name is its own choice
    if isinstance(data, Walk):
        word, recorded, where = data.word, data.recorded, data.where
    else:
        word, recorded = "round", data.rounds

        def where(n: int) -> str:
            return f"round {n}"

    lines: list[Any] = []
    params = ", ".join(f"{k}={v}" for k, v in h.params.items() if k != "moves")
    lines.append(
        Text.assemble(
            ("Replay ", "bold"),
            f"{h.game} ({params}), match seed {h.seed}, started {h.started}, "
            f"referee {h.referee_version}, containment {h.containment.get('layer', '?')}",
        )
    )
    limits = ", ".join(f"{k} {v}" for k, v in h.time.items())
    lines.append(Text(f"time limits: {limits}; max faults {h.max_faults}", style="dim"))
    table = Table(show_header=True, header_style="bold", pad_edge=False)
    table.add_column("")
    for seat, label in enumerate(labels):
        table.add_column(
            Text(f"seat {seat}: {label}"), style=SEAT_STYLES[seat % len(SEAT_STYLES)].split()[-1]
        )
    bots = h.bots
    table.add_row(
        "bot name", *[Text(printable(f"{b.name or '?'} {b.version or ''}".strip())) for b in bots]
    )
    table.add_row("command", *[Text(printable(" ".join(b.command))) for b in bots])
    table.add_row("seed", *[str(b.seed) for b in bots])
    table.add_row("sha256", *[(b.sha256 or "-")[:16] for b in bots])
    footer = data.footer
    if footer is not None:
        seats = footer.result.seats
        table.add_row("placement", *[str(s.placement) for s in seats], end_section=True)
        keys = list(seats[0].scores)
        for key in keys:
            table.add_row(key, *[_fmt(s.scores.get(key, 0.0)) for s in seats])
        stat_keys = [k for k in seats[0].stats if k != "disqualified"]
        table.add_row(
            "stats",
            *[" ".join(f"{k}={s.stats[k]}" for k in stat_keys) for s in seats],
            end_section=True,
        )
        for key, getter in (
            ("verdict", lambda v: v.status + (" (disqualified)" if v.disqualified else "")),
            ("faults", lambda v: str(len(v.faults))),
            ("max move ms", lambda v: f"{v.max_move_ms:g}"),
            ("cpu s / peak MiB", lambda v: f"{v.cpu_s:g} / {v.peak_rss_kib / 1024:.0f}"),
            ("exit", lambda v: v.signal or ("-" if v.exit_code is None else str(v.exit_code))),
        ):
            table.add_row(key, *[getter(v) for v in footer.verdicts])
    lines.append(table)
    if footer is not None:
        r = footer.result
        who = "draw" if r.winner is None else f"seat {r.winner} ({labels[r.winner]}) wins"
        lines.append(
            Text.assemble(
                ("Result: ", "bold"),
                f"{who}; {r.reason}, {r.steps} {word}s, {footer.wall_s:g} s wall",
            )
        )
        shown: list[FaultRecord] = footer.faults[:8]
        for f in shown:
            lines.append(
                Text(
                    f"fault: {where(f.round)} seat {f.seat} {f.kind}: {printable(f.detail)}", "red"
                )
            )
        if len(footer.faults) > len(shown):
            lines.append(Text(f"... {len(footer.faults) - len(shown)} more faults", "red"))
        logs = [
            str(log)
            if replay is not None and (log := stderr_log_path(replay, seat)).exists()
            else None
            for seat in range(len(footer.verdicts))
        ]
        for note in seat_notes(labels, footer.verdicts, logs):
            lines.append(Text(note))
    else:
        lines.append(
            Text(
                f"INCOMPLETE: no footer after {recorded} {word}s (the referee stopped)",
                style="bold yellow",
            )
        )
    for e in data.events:
        lines.append(
            Text(f"event: {where(e.n)} {e.kind} seats {e.seats} {printable(e.detail)}", "yellow")
        )
    if isinstance(data, Walk) and data.stopped is not None:
        lines.append(
            Text(f"the rules could not re-play the replay from here on: {data.stopped}", "yellow")
        )
    return Group(*lines)


def score_chart(data: ViewData, width: int = 70, height: int = 12) -> Group:
    if data.rounds == 0:
        return Group(Text("no rounds played"))
    cum = data.cumulative()
    lines, lo, hi = braille_chart([cum[:, 0], cum[:, 1]], SEAT_STYLES, width, height)
    label_w = max(len(f"{hi:+.0f}"), len(f"{lo:+.0f}"))
    out: list[Text] = [Text("Cumulative points by round", style="bold")]
    for i, line in enumerate(lines):
        label = f"{hi:+.0f}" if i == 0 else f"{lo:+.0f}" if i == len(lines) - 1 else ""
        out.append(Text(label.rjust(label_w) + " ") + line)
    for seat in range(len(data.labels)):
        row = marker_row(data, seat, width)
        out.append(Text(f"s{seat}".rjust(label_w) + " ") + row)
    first, last = int(data.n[0]), int(data.n[-1])
    mid = (first + last) // 2
    axis = f"{first}".ljust(width // 2 - len(str(mid)) // 2) + str(mid)
    axis = axis.ljust(width - len(str(last))) + str(last)
    out.append(Text(" " * (label_w + 1) + axis, style="dim"))
    legend = Text(" " * (label_w + 1))
    for seat, label in enumerate(data.labels):
        legend.append("━━ ", style=SEAT_STYLES[seat])
        legend.append(f"seat {seat} {label}   ")
    legend.append("✗", style="bold red")
    legend.append(" fault  ")
    legend.append("▼", style="bold yellow")
    legend.append(" bucket change  ")
    legend.append("•", style="blue")
    legend.append(" shadow")
    out.append(legend)
    return Group(*out)


def parse_range(text: str) -> tuple[int, int]:
    """``A-B`` or ``A`` (1-based, inclusive)."""
    parts = text.replace("..", "-").split("-")
    try:
        if len(parts) == 1:
            a = b = int(parts[0])
        elif len(parts) == 2:
            a, b = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A-B (e.g. 4000-4100), got {text!r}") from None
    if a < 1 or b < a:
        raise argparse.ArgumentTypeError(f"expected 1 <= A <= B, got {text!r}")
    return a, b


def round_table(data: ViewData, first: int, last: int) -> Table:
    """Every field of each round in [first, last] as each seat saw and played it."""
    moves = data.moves
    rows = np.flatnonzero((data.n >= first) & (data.n <= last))
    cum = data.cumulative()
    tokens_before = data.tokens_before()

    def mv(i: int) -> str:
        return "-" if i < 0 else moves[i]

    t = Table(
        title=f"Rounds {first}-{last}: what each seat was sent (saw), played, and got",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1),
    )
    for col, just in (
        ("round", "right"),
        ("seat", "left"),
        ("saw opp.", "left"),
        ("saw self", "left"),
        ("saw bucket", "left"),
        ("real", "left"),
        ("shadow", "left"),
        ("shown", "left"),
        ("pts", "right"),
        ("total", "right"),
        ("tokens", "right"),
        ("ms", "right"),
        ("fault", "left"),
    ):
        t.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    for r in rows:
        for seat in (0, 1):
            style = SEAT_STYLES[seat].split()[-1]
            bucket_i = int(data.obs_bucket[r, seat])
            spent = bool(data.spent[r, seat])
            if data.request[r, seat]:
                req = mv(int(data.shadow[r, seat]))
                req += "" if spent else " (no token)"
            else:
                req = ""
            shown = mv(int(data.shown[r, seat]))
            us = int(data.us[r, seat])
            code = int(data.fault[r, seat])
            tokens = f"{tokens_before[r, seat]}→{data.tokens[r, seat]}"
            t.add_row(
                str(int(data.n[r])) if seat == 0 else "",
                Text(str(seat), style=style),
                mv(int(data.obs_opp[r, seat])),
                mv(int(data.obs_self[r, seat])),
                "-" if bucket_i < 0 else BUCKETS[bucket_i],
                Text(mv(int(data.real[r, seat])), style=style),
                Text(req, style="bold blue" if spent else "dim"),
                Text(shown, style="bold blue" if spent else ""),
                f"{int(data.points[r, seat]):+d}",
                str(int(cum[r, seat])),
                tokens if spent else str(int(data.tokens[r, seat])),
                "-" if us < 0 else f"{us / 1000:.2f}",
                Text(data.fault_kinds[code], style="bold red") if code else "",
                end_section=seat == 1,
            )
    return t


# -- other games ------------------------------------------------------------------------


def plot_chart(plot: Plot, width: int = 70, height: int = 8) -> Group:
    """A game's plot in braille cells: each series in its colour, over its xs."""
    series = [np.asarray(ys, dtype=np.float64) for _label, _colour, ys in plot.series]
    styles = [colour for _label, colour, _ys in plot.series]
    lines, lo, hi = braille_chart(series, styles, width, height)
    top, bottom = f"{hi:.4g}", f"{lo:.4g}"
    label_w = max(len(top), len(bottom))
    out: list[Text] = [Text(plot.title, style="bold")]
    for i, line in enumerate(lines):
        label = top if i == 0 else bottom if i == len(lines) - 1 else ""
        out.append(Text(label.rjust(label_w) + " ") + line)
    first, last = f"{plot.xs[0]:g}", f"{plot.x_word} {plot.xs[-1]:g}"
    out.append(Text(" " * (label_w + 1) + first + last.rjust(width - len(first)), style="dim"))
    legend = Text(" " * (label_w + 1))
    for label, colour, _ys in plot.series:
        legend.append("━━ ", style=colour)
        legend.append(f"{label}   ")
    out.append(legend)
    return Group(*out)


def step_table(walk: Walk, first: int, last: int) -> Table:
    """Each step of [first, last] in words: one row per step, as the game's report
    describes it (who acted, what they did, what changed)."""
    word = walk.word
    rows = report_for(walk.header.game).rows(walk, first, last)
    t = Table(
        title=f"{word.capitalize()}s {first}-{last}: who acted, what they did, what followed",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_lines=False,
    )
    has_place = any(r.place for r in rows)
    t.add_column(word, justify="right", no_wrap=True)
    if has_place:
        t.add_column("where", no_wrap=True)
    t.add_column("action", ratio=2, overflow="fold")
    t.add_column("what followed", ratio=3, overflow="fold")
    t.add_column("ms", justify="right", no_wrap=True)
    t.add_column("fault", overflow="fold")
    for r in rows:
        style = SEAT_STYLES[r.seats[0] % len(SEAT_STYLES)].split()[-1] if len(r.seats) == 1 else ""
        cells: list[Any] = [str(r.n)]
        if has_place:
            cells.append(r.place)
        cells += [
            Text(r.action, style=style),
            r.change,
            r.ms,
            Text(r.fault, style="bold red") if r.fault else "",
        ]
        t.add_row(*cells)
    return t


# -- the command -----------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a replay (.jsonl or .jsonl.gz)")
    parser.add_argument(
        "--rounds",
        type=parse_range,
        metavar="A-B",
        help="also show a table of every field of rounds A to B",
    )
    parser.add_argument(
        "--html",
        metavar="OUT.html",
        help="write a self-contained interactive HTML page (no network needed to view)",
    )
    parser.add_argument(
        "--width", type=int, default=70, metavar="COLS", help="chart width (default 70)"
    )


def run(args: argparse.Namespace) -> int:
    from .errors import EXIT_BAD_REPLAY, EXIT_OK, CliError

    started = time.perf_counter()
    path = Path(args.file)
    console = Console()
    if not console.is_terminal:
        # Piped into a file or a pager: do not squeeze the table to 80 columns.
        console = Console(width=140)
    try:
        data = load_view(path)
    except OtherGame:
        try:
            walked = walk(path)
        except ReplayError as exc:
            raise CliError(str(exc), EXIT_BAD_REPLAY) from None
        if args.html:
            page = render_walk(walked, verify_summary(path))
            return _write(args.html, page, walked.recorded, walked.word, started)
        console.print(summary(walked, path))
        width = max(20, min(args.width, 400))
        for plot in report_for(walked.header.game).plots(walked):
            if len(plot.xs) > 1:
                console.print()
                console.print(plot_chart(plot, width=width))
        if args.rounds is not None:
            first, last = args.rounds
            numbers = [s.n for s in walked.steps]
            if numbers and first <= numbers[-1] and last >= numbers[0]:
                console.print(step_table(walked, first, last))
            else:
                span = f"{numbers[0]}-{numbers[-1]}" if numbers else "none"
                console.print(f"no {walked.word}s {first}-{last} in this replay (it has {span})")
        return EXIT_OK
    except ReplayError as exc:
        raise CliError(str(exc), EXIT_BAD_REPLAY) from None
    if args.html:
        from .html_report import render_html

        page = render_html(data, verify_summary(path))
        return _write(args.html, page, data.rounds, "round", started)
    width = max(20, min(args.width, 400))
    console.print(summary(data, path))
    console.print()
    console.print(score_chart(data, width=width))
    if args.rounds is not None:
        first, last = args.rounds
        if data.rounds and first <= int(data.n[-1]) and last >= int(data.n[0]):
            console.print(round_table(data, first, last))
        else:
            span = f"1-{int(data.n[-1])}" if data.rounds else "none"
            console.print(f"no rounds {first}-{last} in this replay (it has {span})")
    return EXIT_OK


def _write(out: str, page: str, steps: int, word: str, started: float) -> int:
    from .errors import EXIT_OK, EXIT_USAGE, CliError
    from .html_report import write_page

    try:
        size = write_page(page, Path(out))
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}", EXIT_USAGE) from None
    took = time.perf_counter() - started
    Console(stderr=True).print(
        f"wrote {out} ({size / 1024:.0f} KiB, {steps} {word}s) in {took:.2f} s"
    )
    return EXIT_OK


__all__ = [
    "ViewData",
    "Walk",
    "braille_chart",
    "load_view",
    "step_table",
    "round_table",
    "score_chart",
    "summary",
]
