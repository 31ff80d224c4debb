"""The terminal view: a live dashboard while the tournament runs, then the final
standings, cross-table and bracket."""

from __future__ import annotations

import time
from typing import Any

import trio
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ..termtext import printable
from .executor import Executor
from .runner import Runner
from .schedule import Bracket, round_name
from .standings import Standing, TableStanding, cross_table

TOP_N = 10
REFRESH_S = 0.25


def shown(name: str) -> str:
    """A bot's name as rich markup: escaped for the terminal (a name may be a file
    name its author chose) and never read as markup itself."""
    return escape(printable(name))


class Dashboard:
    def __init__(self, console: Console, runner: Runner, executor: Executor) -> None:
        self.console = console
        self.runner = runner
        self.executor = executor
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[matches]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task = self.progress.add_task("matches", total=1, matches="")

    def _render(self) -> RenderableType:
        r = self.runner
        done, total, rounds_done, rounds_total = r.work()
        self.progress.update(
            self.task,
            completed=rounds_done,
            total=max(rounds_total, 1),
            matches=f"{done}/{total} matches",
        )
        now = time.monotonic()
        busy = {w.job: w for w in self.executor.workers() if w.job}
        queued = len(r.in_flight) - len(busy)
        flight = Table(
            title=f"Playing {len(busy)} on {self.executor.size} workers, {queued} queued"
        )
        if r.table_size is not None:
            for col in ("table", "seats", "rounds", "running"):
                flight.add_column(col)
        else:
            for col in ("match", "seat 0", "seat 1", "rounds", "running"):
                flight.add_column(col)
        for mid, (plan, _queued) in sorted(r.in_flight.items()):
            w = busy.get(mid)
            if w is None or w.since is None:
                continue
            if r.table_size is not None:
                seats = [", ".join(shown(r.names[b]) for b in plan.seats)]
            else:
                seats = [shown(r.names[plan.seats[0]]), shown(r.names[plan.seats[1]])]
            length = f"{plan.rounds:,}" if plan.rounds else "default"
            flight.add_row(mid, *seats, length, f"{now - w.since:.1f} s")
        parts: list[RenderableType] = [self.progress, flight]
        if r.table_size is not None:
            parts.append(table_standings_table(r.live_tables[:TOP_N], "Standings (tables)"))
            return Group(*parts)
        stage = "pool" if not r.pool_complete() else "settling" if not r.settled else "finals"
        parts.append(standings_table(r.live_standings[:TOP_N], f"Pool standings ({stage})", False))
        if r.bracket is not None and r.bracket.rounds:
            parts.append(bracket_table(r.bracket, r.names))
        return Group(*parts)

    async def run(self) -> None:
        """Redraw until cancelled."""
        with Live(
            self._render(), console=self.console, refresh_per_second=4, transient=True
        ) as live:
            while True:
                await trio.sleep(REFRESH_S)
                live.update(self._render())


# Where the standings' figures come from (results.json has the same, "figures").
STANDINGS_CAPTION = (
    "# by bal. Final: mean over opponents of the mean Final against each. "
    "rank 95% and P(above next): draws of a model of the Final scores per pair, "
    "schedule fixed. rating: Bradley-Terry on wins, does not rank; its 95% CI from "
    "the fit's posterior, schedule fixed."
)


def rating_interval(s: Standing) -> str:
    """The rating's 95% interval as [low, high] (it is often far from symmetric:
    a bot that won everything has a long upper side), empty if not computed."""
    if s.rating_low is None or s.rating_high is None:
        return ""
    return f"[{s.rating_low:+.0f}, {s.rating_high:+.0f}]"


def standings_table(rows: list[Standing], title: str, full: bool = True) -> Table:
    t = Table(title=title, caption=STANDINGS_CAPTION if full else None)
    t.add_column("#", justify="right")
    t.add_column("bot")
    t.add_column("P", justify="right")
    t.add_column("W-D-L", justify="right")
    t.add_column("bal. Final", justify="right")
    t.add_column("mean Final", justify="right")
    t.add_column("mean Std", justify="right")
    t.add_column("rating", justify="right")
    if full:
        t.add_column("95% CI", justify="right", no_wrap=True)
    t.add_column("rank 95%", justify="right", no_wrap=True)
    t.add_column("P(above next)", justify="right", no_wrap=True)
    t.add_column("faults", justify="right", no_wrap=True)
    for s in rows:
        rating = [f"{s.rating:+.0f}"]
        if full:
            rating.append(rating_interval(s))
        rating.append(
            str(s.rank_low) if s.rank_low == s.rank_high else f"{s.rank_low}-{s.rank_high}"
        )
        rating.append("" if s.order_prob is None else f"{s.order_prob:.3f}")
        t.add_row(
            str(s.rank),
            shown(s.name),
            str(s.played),
            f"{s.wins}-{s.draws}-{s.losses}",
            f"{s.balanced_final:.4f}",
            f"{s.mean_final:.4f}",
            f"{s.mean_standard:.4f}",
            *rating,
            f"{s.faults}" + (f" ({s.disqualified} DQ)" if s.disqualified else ""),
        )
    return t


def table_standings_table(rows: list[TableStanding], title: str) -> Table:
    t = Table(title=title)
    t.add_column("#", justify="right")
    t.add_column("bot")
    t.add_column("P", justify="right")
    t.add_column("1st", justify="right")
    t.add_column("mean place", justify="right")
    key = rows[0].tiebreak if rows else ""
    if key:
        t.add_column(f"mean {key}", justify="right")
    t.add_column("seats", justify="right", no_wrap=True)
    t.add_column("faults", justify="right", no_wrap=True)
    for s in rows:
        t.add_row(
            str(s.rank),
            shown(s.name),
            str(s.played),
            str(s.wins),
            f"{s.mean_placement:.3f}",
            *([f"{s.mean_tiebreak:.4f}"] if key else []),
            "/".join(map(str, s.seat_counts)),
            f"{s.faults}" + (f" ({s.disqualified} DQ)" if s.disqualified else ""),
        )
    return t


def cross_table_view(rows: list[Standing], games: list[Any]) -> Table:
    """Mean Final difference of the row bot against the column bot."""
    n = max((s.bot for s in rows), default=-1) + 1
    cells = cross_table(n, games)
    t = Table(title="Cross-table: mean Final difference (row minus column)")
    t.add_column("", no_wrap=True)
    for k, _s in enumerate(rows, start=1):
        t.add_column(str(k), justify="right")
    for k, a in enumerate(rows, start=1):
        line = []
        for b in rows:
            c = cells[a.bot][b.bot]
            if a.bot == b.bot:
                line.append(Text("-", style="dim"))
            elif not c.played:
                line.append(Text(""))
            else:
                style = "green" if c.final_diff > 0 else "red" if c.final_diff < 0 else ""
                line.append(Text(f"{c.final_diff:+.2f}", style=style))
        t.add_row(f"{k} {shown(a.name)}", *line)
    return t


def bracket_table(bracket: Bracket, names: list[str]) -> Table:
    total = bracket.total_rounds
    t = Table(title="Finals")
    for k in range(1, total + 1):
        t.add_column(round_name(k, total))
    cols: list[list[str]] = []
    for rnd in bracket.rounds:
        cells = []
        for tie in rnd:
            a = f"({tie.seed_a}) {shown(names[tie.a])}"
            if tie.b is None:
                cells.append(f"{a}\n  bye")
                continue
            b = f"({tie.seed_b}) {shown(names[tie.b])}"
            mark_a = "[bold green]" if tie.winner == tie.a else ""
            mark_b = "[bold green]" if tie.winner == tie.b else ""
            end_a = "[/]" if mark_a else ""
            end_b = "[/]" if mark_b else ""
            note = f" ({tie.decided_by})" if tie.decided_by not in ("", "wins") else ""
            cells.append(f"{mark_a}{a}{end_a} {tie.wins_a}\n{mark_b}{b}{end_b} {tie.wins_b}{note}")
        cols.append(cells)
    while len(cols) < total:
        cols.append([])
    t.add_row(*["\n\n".join(c) for c in cols])
    if bracket.champion is not None:
        t.caption = f"Champion: {shown(names[bracket.champion])}"
    return t
