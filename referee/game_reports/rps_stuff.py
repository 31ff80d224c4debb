"""Rock Paper Stuff in its report: each player's stock of the five kinds over the
trades, how balanced it is (the standard deviation the game ranks by), and every
trade in words."""

from __future__ import annotations

from typing import Any

from ..games.rps_stuff import KINDS, deviance
from ..report_page import Plot, e, seat_colour
from ..step_report import StepReport, Walk, WalkedStep

KIND_COLOURS = {
    "rock": "#6b7385",
    "paper": "#c9a227",
    "scissors": "#1c8fc9",
    "fire": "#d62d2d",
    "water": "#2f9e44",
}


def stock_words(inventory: Any) -> str:
    return " ".join(f"{k[:2]} {getattr(inventory, k)}" for k in KINDS)


def stocks_over_time(walk: Walk) -> tuple[list[int], list[list[list[int]]]]:
    """The trade numbers (0 = the start) and, by seat, each kind's count after each."""
    seats = walk.game.seats
    current = [[5 * seats] * len(KINDS) for _ in range(seats)]
    xs = [0]
    history = [[list(current[s])] for s in range(seats)]
    for step in walk.steps:
        trade = step.outcome
        for seat, inventory in zip(trade.seats, trade.inventories, strict=True):
            current[seat] = [getattr(inventory, k) for k in KINDS]
        xs.append(step.n)
        for s in range(seats):
            history[s].append(list(current[s]))
    return xs, history


class RpsStuffReport(StepReport):
    steps_hint = (
        "Each trade: the two traders, what each played (a kind it did not hold is "
        "replaced by one it holds), what each received, and their stocks afterwards "
        "(ro pa sc fi wa)."
    )

    def action_words(self, walk: Walk, step: WalkedStep, seat: int, action: Any) -> str:
        words = f"plays {action.play}"
        if action.skin:
            words += f", skin {', '.join(f'{k}={v}' for k, v in action.skin.items())}"
        return words

    def change_words(self, walk: Walk, step: WalkedStep) -> str:
        trade = step.outcome
        parts = []
        for k, seat in enumerate(trade.seats):
            asked, played = trade.asked[k], trade.played[k]
            gave = played if asked in (None, played) else f"{played} (asked {asked}, held none)"
            got = ", ".join(trade.received[k]) or "nothing"
            parts.append(f"s{seat} gave {gave}, got {got}; now {stock_words(trade.inventories[k])}")
        if trade.died:
            parts.append("died: " + ", ".join(f"s{s}" for s in trade.died))
        return "; ".join(parts)

    def plots(self, walk: Walk) -> list[Plot]:
        xs, history = stocks_over_time(walk)
        xf = [float(x) for x in xs]
        plots = [
            Plot(
                f"plot-stock-{seat}",
                f"Stock of seat {seat} ({walk.labels[seat]})",
                xf,
                [
                    (kind, KIND_COLOURS[kind], [float(c[i]) for c in counts])
                    for i, kind in enumerate(KINDS)
                ],
                "trade",
                steps=True,
                height=180,
            )
            for seat, counts in enumerate(history)
        ]
        balance = [
            (walk.labels[s], seat_colour(s), [deviance(c) for c in counts])
            for s, counts in enumerate(history)
        ]
        plots.append(
            Plot(
                "plot-balance",
                "Imbalance (standard deviation of the five counts; lower ranks higher)",
                xf,
                balance,
                "trade",
                steps=True,
            )
        )
        return plots

    def sections(self, walk: Walk) -> str:
        _xs, history = stocks_over_time(walk)
        rows = []
        for seat, counts in enumerate(history):
            last = counts[-1]
            rows.append(
                f'<tr><td style="color:{seat_colour(seat)}">{e(walk.labels[seat])}</td>'
                + "".join(f'<td class="n">{c}</td>' for c in last)
                + f'<td class="n">{sum(last)}</td><td class="n">{deviance(last):.4f}</td></tr>'
            )
        head = (
            "<tr><th>seat</th>"
            + "".join(f'<th class="n">{k}</th>' for k in KINDS)
            + '<th class="n">total</th><th class="n">deviation</th></tr>'
        )
        return (
            "<h2>Stocks</h2>"
            f'<table class="steps narrow" id="stocks-table"><thead>{head}</thead>'
            f"<tbody>{''.join(rows)}</tbody></table>" + self.plot_html(walk)
        )


REPORT = RpsStuffReport()
