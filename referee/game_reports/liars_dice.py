"""Liar's Dice in its report: every round's dice and bids, how it ended (who called
what, how many dice matched, who lost a die), and each player's dice over the
rounds."""

from __future__ import annotations

from typing import Any

from ..games.liars_dice import WILD
from ..report_page import Plot, e, seat_colour
from ..step_report import StepReport, Walk, WalkedStep

DIE_FACES = "⚀⚁⚂⚃⚄⚅"
CALL_WORDS = {
    "liar": "calls liar",
    "spot_on_lose_two": "calls spot on (bidder loses two)",
    "spot_on_gain_one": "calls spot on (to gain a die)",
}


def bid_words(quantity: int, face: int) -> str:
    return f"{quantity}×{face}" + ("s" if quantity != 1 else "")


class Round:
    """One round of the game as the report shows it."""

    def __init__(self, number: int, starter: int) -> None:
        self.number = number
        self.starter = starter
        self.bids: list[tuple[int, int, int]] = []  # (seat, quantity, face)
        self.reveal: Any = None  # the game's Reveal, once the round ended


def rounds_of(walk: Walk) -> list[Round]:
    rounds: list[Round] = []
    for step in walk.steps:
        out = step.outcome
        if not rounds or rounds[-1].reveal is not None:
            rounds.append(Round(len(rounds) + 1, out.seat))
        current = rounds[-1]
        if out.move == "bid":
            current.bids.append((out.seat, out.quantity, out.face))
        if out.reveal is not None:
            current.reveal = out.reveal
    return rounds


def _who(walk: Walk, seat: int) -> str:
    return f"seat {seat} ({walk.labels[seat]})"


def ending_words(walk: Walk, reveal: Any) -> str:
    losers = [
        f"{_who(walk, s)} {'loses' if c < 0 else 'gains'} {abs(c)} {'die' if abs(c) == 1 else 'dice'}"
        for s, c in enumerate(reveal.change)
        if c
    ]
    if reveal.event == "fault":
        text = f"{_who(walk, reveal.seat)} is out for a fault; the round is void"
    else:
        text = (
            f"{_who(walk, reveal.seat)} {CALL_WORDS.get(reveal.call, reveal.call)} on "
            f"seat {reveal.bidder}'s {bid_words(reveal.quantity, reveal.face)}: "
            f"{reveal.count} matched; " + ", ".join(losers)
        )
    if reveal.eliminated:
        text += "; out: " + ", ".join(_who(walk, s) for s in reveal.eliminated)
    return text


class LiarsDiceReport(StepReport):
    steps_hint = (
        "Each turn: the player on turn bids (quantity × face; sixes are wild and a bid "
        "on sixes weighs double) or challenges the last bid, which ends the round."
    )

    def action_words(self, walk: Walk, step: WalkedStep, seat: int, action: Any) -> str:
        if action.move == "bid":
            return f"bids {bid_words(action.quantity, action.face)}"
        return CALL_WORDS.get(action.move, action.move)

    def change_words(self, walk: Walk, step: WalkedStep) -> str:
        reveal = step.outcome.reveal
        if reveal is None:
            return ""
        dice = " | ".join(
            f"s{s}: {''.join(str(d) for d in hand) or '-'}" for s, hand in enumerate(reveal.dice)
        )
        counts = "-".join(str(c) for c in reveal.dice_counts)
        return f"{ending_words(walk, reveal)}. Dice were {dice}; dice left {counts}"

    def plots(self, walk: Walk) -> list[Plot]:
        ended = [r for r in rounds_of(walk) if r.reveal is not None]
        start = float(walk.header.params.get("dice", 5))
        series = [
            (
                walk.labels[seat],
                seat_colour(seat),
                [start] + [float(r.reveal.dice_counts[seat]) for r in ended],
            )
            for seat in range(walk.game.seats)
        ]
        xs = [0.0] + [float(r.number) for r in ended]
        return [Plot("plot-dice", "Dice left after each round", xs, series, "round", steps=True)]

    def sections(self, walk: Walk) -> str:
        rounds = rounds_of(walk)
        seats = walk.game.seats
        head = (
            '<tr><th class="n">round</th><th>opens</th>'
            + "".join(
                f'<th style="color:{seat_colour(s)}">dice of {e(walk.labels[s])}</th>'
                for s in range(seats)
            )
            + "<th>bids</th><th>how it ended</th><th>dice left</th></tr>"
        )
        body = []
        for r in rounds:
            reveal = r.reveal
            cells = []
            for seat in range(seats):
                hand = reveal.dice[seat] if reveal is not None else []
                face = reveal.face if reveal is not None else None
                cells.append(
                    '<td class="dice">'
                    + "".join(
                        f'<b title="{d}">{DIE_FACES[d - 1]}</b>'
                        if face is not None and (d == face or (face != WILD and d == WILD))
                        else f'<span title="{d}">{DIE_FACES[d - 1]}</span>'
                        for d in hand
                    )
                    + "</td>"
                )
            bids = ", ".join(
                f'<span style="color:{seat_colour(s)}">{e(bid_words(q, f))}</span>'
                for s, q, f in r.bids
            )
            ending = "(under way)" if reveal is None else e(ending_words(walk, reveal))
            left = "" if reveal is None else "-".join(str(c) for c in reveal.dice_counts)
            body.append(
                f'<tr data-round="{r.number}"><td class="n">{r.number}</td>'
                f'<td style="color:{seat_colour(r.starter)}">{e(walk.labels[r.starter])}</td>'
                f"{''.join(cells)}<td>{bids}</td><td>{ending}</td><td>{left}</td></tr>"
            )
        return (
            self.plot_html(walk)
            + '<h2 id="rounds">Rounds: dice and bids</h2><div class="hint">Everyone\'s dice '
            "as revealed when the round ended (the dice that counted for the challenged bid "
            "in bold), the bids in order, and the challenge.</div>"
            '<div class="scroll"><table class="steps" id="rounds-table">'
            f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div>"
        )


REPORT = LiarsDiceReport()
