"""CTM in its report: each game's commitments and what was revealed against them
(hands, choice, the hand kept), who won it and why, and the wins over the match."""

from __future__ import annotations

from typing import Any

from ..games.ctm import HANDS
from ..report_page import Plot, e, seat_colour
from ..step_report import StepReport, Walk, WalkedStep

REASON_WORDS = {
    "beats": "kept hand beats the other",
    "tie_player1": "equal hands: player 1 wins",
    "fault": "a fault loses the game",
    "disqualification": "disqualification",
}


def hand(index: int | None) -> str:
    return "-" if index is None else HANDS[index]


def short(digest: str | None) -> str:
    return "-" if digest is None else f"{digest[:10]}…"


class GameRow:
    def __init__(self, number: int) -> None:
        self.number = number
        self.hands_commit: list[str | None] = [None, None]
        self.choice_commit: list[str | None] = [None, None]
        self.hand_salts: list[str | None] = [None, None]
        self.choice_salts: list[str | None] = [None, None]
        self.result: Any = None


def games_of(walk: Walk) -> list[GameRow]:
    games: dict[int, GameRow] = {}
    for step in walk.steps:
        out = step.outcome
        row = games.setdefault(out.game, GameRow(out.game))
        if out.commitments is not None:
            target = row.hands_commit if out.phase == "commit_hands" else row.choice_commit
            target[:] = out.commitments
        if out.salts is not None:
            target = row.hand_salts if out.phase == "reveal_hands" else row.choice_salts
            target[:] = out.salts
        if out.result is not None:
            row.result = out.result
    # Games a disqualification forfeited end without a step: the final state has them.
    records = getattr(walk.state, "records", [])
    for record in records:
        games.setdefault(record.game, GameRow(record.game)).result = record
    return [games[n] for n in sorted(games)]


class CtmReport(StepReport):
    steps_hint = (
        "Each step is one phase of a game, both players at once: commit to two hands, "
        "reveal them, commit to a choice, reveal it (a reveal must match its commitment)."
    )

    def action_words(self, walk: Walk, step: WalkedStep, seat: int, action: Any) -> str:
        if action.commitment is not None:
            return f"commits {short(action.commitment)}"
        if action.hands is not None:
            return f"reveals {hand(action.hands[0])} + {hand(action.hands[1])}"
        if action.choice is not None:
            return f"keeps {'left' if action.choice == 0 else 'right'}"
        return "-"

    def change_words(self, walk: Walk, step: WalkedStep) -> str:
        out = step.outcome
        record = out.result
        if record is None:
            return "both accepted" if not any(out.faulted) else ""
        kept = ", ".join(f"s{s} kept {hand(k)}" for s, k in enumerate(record.kept))
        winner = "drawn" if record.winner is None else f"seat {record.winner} wins"
        return f"game {record.game}: {kept}; {winner} ({REASON_WORDS.get(record.reason, record.reason)})"

    def plots(self, walk: Walk) -> list[Plot]:
        wins = [0, 0]
        xs = [0.0]
        series: list[list[float]] = [[0.0], [0.0]]
        for g in games_of(walk):
            r = g.result
            if r is None:
                continue
            if r.winner is not None:
                wins[r.winner] += 1
            xs.append(float(g.number))
            for s in (0, 1):
                series[s].append(float(wins[s]))
        return [
            Plot(
                "plot-wins",
                "Games won",
                xs,
                [(walk.labels[s], seat_colour(s), series[s]) for s in (0, 1)],
                "game",
                steps=True,
            )
        ]

    def sections(self, walk: Walk) -> str:
        games = games_of(walk)
        head = (
            '<tr><th class="n">game</th><th>player 1</th>'
            + "".join(
                f'<th style="color:{seat_colour(s)}">{e(walk.labels[s])}: hands commitment</th>'
                f'<th style="color:{seat_colour(s)}">revealed hands</th>'
                f'<th style="color:{seat_colour(s)}">choice commitment</th>'
                f'<th style="color:{seat_colour(s)}">kept</th>'
                for s in (0, 1)
            )
            + "<th>winner</th><th>why</th></tr>"
        )
        body = []
        for g in games:
            r = g.result
            cells = []
            for s in (0, 1):
                hands = r.hands[s] if r is not None else None
                revealed = "-" if hands is None else f"{hand(hands[0])} + {hand(hands[1])}"
                salt = g.hand_salts[s]
                if salt is not None:
                    revealed += f' <span class="hint">salt {e(short(salt))}</span>'
                choice = r.choices[s] if r is not None else None
                kept = hand(r.kept[s]) if r is not None else "-"
                if choice is not None:
                    kept += f" ({'left' if choice == 0 else 'right'})"
                cells.append(
                    f"<td><code>{e(short(g.hands_commit[s]))}</code></td><td>{revealed}</td>"
                    f"<td><code>{e(short(g.choice_commit[s]))}</code></td><td>{e(kept)}</td>"
                )
            if r is None:
                winner, why, p1 = "(under way)", "", ""
            else:
                winner = "draw" if r.winner is None else e(walk.labels[r.winner])
                why = e(REASON_WORDS.get(r.reason, r.reason))
                p1 = e(walk.labels[r.player1])
            body.append(
                f'<tr data-game="{g.number}"><td class="n">{g.number}</td><td>{p1}</td>'
                f"{''.join(cells)}<td>{winner}</td><td>{why}</td></tr>"
            )
        return (
            '<h2 id="games">Games: commitments and reveals</h2><div class="hint">Each game: '
            "the Keccak-256 commitments each player sent and what it revealed against them. "
            "Player 1 wins equal hands.</div>"
            '<div class="scroll"><table class="steps" id="games-table">'
            f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div>"
            + self.plot_html(walk)
        )


REPORT = CtmReport()
