"""Terminal output: the live progress bar and the result tables (rich)."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .games import GAMES
from .match import PlayedMatch
from .termtext import printable


class LiveProgress:
    """A progress bar with the live rate and the running score."""

    def __init__(
        self, console: Console, total: int, labels: list[str], step_word: str = "round"
    ) -> None:
        self.step_word = step_word
        self.console = console
        self.labels = labels
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[score]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            refresh_per_second=8,
        )
        self.task = self.progress.add_task(f"{step_word}s", total=total, rate="", score="")
        self.started = time.monotonic()

    def __enter__(self) -> LiveProgress:
        # Only a terminal gets the live bar: elsewhere rich would leave an empty line
        # behind (before the result, or before a one-line error).
        if self.console.is_terminal:
            self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.console.is_terminal:
            self.progress.__exit__(None, None, None)

    def update(self, step: int, total: int, state: Any) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        points = getattr(state, "points", None)
        score = ""
        if points is not None and len(points) == len(self.labels):
            score = "  ".join(f"{lab} {p:+d}" for lab, p in zip(self.labels, points, strict=True))
        self.progress.update(
            self.task,
            completed=step,
            rate=f"{step / elapsed:,.0f} {self.step_word}s/s",
            score=score,
        )


def result_table(outcome: PlayedMatch) -> Table:
    header = outcome.header
    result = outcome.result
    # A bot's name is its own choice: shown escaped, and never read as rich markup.
    names = [printable(b.label or b.name or f"seat {b.seat}") for b in header.bots]
    game = GAMES.get(header.game)
    labels = game.score_labels if game is not None else {}
    word = game.step_word if game is not None else "round"
    title = f"{header.game}: {result.steps:,} {word}s, {result.reason}"
    table = Table(title=title, show_lines=False)
    table.add_column("")
    for name in names:
        table.add_column(Text(name), justify="right")
    first = result.seats[0]
    for key in first.scores:
        table.add_row(labels.get(key, key), *[f"{s.scores[key]:+.4f}" for s in result.seats])
    stat_rows = [
        ("net points", "points", "{:+d}"),
        ("wins", "wins", "{:d}"),
        ("draws", "draws", "{:d}"),
        ("losses", "losses", "{:d}"),
        ("tokens spent", "tokens_spent", "{:d}"),
    ]
    for label, key, fmt in stat_rows:
        if key in first.stats:
            table.add_row(label, *[fmt.format(s.stats[key]) for s in result.seats])
    table.add_row("faults", *[str(len(v.faults)) for v in outcome.verdicts])
    table.add_row(
        "verdict",
        *[
            v.status + (", killed after end" if "after_end" in v.extra else "")
            for v in outcome.verdicts
        ],
    )
    table.add_row("max move ms", *[f"{v.max_move_ms:.2f}" for v in outcome.verdicts])
    return table


def winner_line(outcome: PlayedMatch) -> str:
    result = outcome.result
    if result.winner is None:
        return "Result: draw"
    bot = outcome.header.bots[result.winner]
    return f"Winner: {printable(bot.label or bot.name or '?')} (seat {result.winner})"
