"""A second, deliberately plain implementation of docs/scoring.md, as a test oracle.

Written from the document alone: plain loops over the rounds, exact fractions where
the formulas are rational, floats only for the square roots of the exploitability
margin; no numpy and nothing imported from referee's scoring or rules code. It is
slow and simple on purpose, so that a mistake in the fast vectorised scorer cannot be
repeated here. The input is a list of rounds, the shown moves of the rounds where a
token was spent, and the match facts section 1 of the document names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

# Moves: rock 0, paper 1, scissors 2, lizard 3, spock 4. What each one beats (RPSLS):
# rock crushes scissors and lizard, paper covers rock and disproves spock, scissors
# cut paper and decapitate lizard, lizard eats paper and poisons spock, spock smashes
# scissors and vaporises rock.
BEATS = {0: (2, 3), 1: (0, 4), 2: (1, 3), 3: (1, 4), 4: (0, 2)}

# Section 9 of the document.
W = 5
K_R = 20
Z = 2
ALPHA = 5
KAPPA = Fraction(1, 10)
K_D = 10

NO_CONTEXT = "none"


def payoff(a: int, b: int) -> int:
    """+1 if move a beats move b, -1 if b beats a, else 0."""
    if b in BEATS[a]:
        return 1
    if a in BEATS[b]:
        return -1
    return 0


@dataclass
class Match:
    """``real[t] = (move of seat 0, move of seat 1)``, None for a faulted seat;
    ``shown[(t, seat)]`` the move shown where the seat spent a token in round t
    (0-based rounds here, 1-based in the document)."""

    real: list[tuple[int | None, int | None]]
    moves: int = 5
    rounds_total: int = 0
    forfeited: int = 0
    disqualified: tuple[bool, bool] = (False, False)
    shown: dict[tuple[int, int], int] = field(default_factory=dict)


def points(match: Match, t: int, seat: int) -> int:
    mine, theirs = match.real[t][seat], match.real[t][1 - seat]
    if mine is None:
        return -1
    if theirs is None:
        return 1
    return payoff(mine, theirs)


def spent(match: Match, t: int, seat: int) -> bool:
    return (t, seat) in match.shown


def shown_move(match: Match, t: int, seat: int) -> int | None:
    return match.shown.get((t, seat), match.real[t][seat])


def standard(match: Match, seat: int) -> Fraction:
    n = len(match.real)
    total = max(match.rounds_total, n + match.forfeited)
    if total == 0:
        return Fraction(0)
    net = sum(points(match, t, seat) for t in range(n))
    sigma = -1 if match.disqualified[seat] else 1
    return Fraction(net + sigma * match.forfeited, total)


def resilience(match: Match, seat: int) -> Fraction:
    n = len(match.real)
    pressure, calm = [], []
    for t in range(n):
        lied_to = any(spent(match, j, 1 - seat) for j in range(max(0, t - W), t))
        (pressure if lied_to else calm).append(points(match, t, seat))
    if not pressure or not calm:
        return Fraction(0)
    gap = Fraction(sum(pressure), len(pressure)) - Fraction(sum(calm), len(calm))
    n_eff = Fraction(len(pressure) * len(calm), len(pressure) + len(calm))
    weight = n_eff / (n_eff + K_R)
    return gap * weight / 2


def _context(match: Match, t: int, seat: int, kind: str) -> object:
    if kind == "frequency":
        return "all"
    if t == 0:
        return NO_CONTEXT
    if kind == "own":
        move = shown_move(match, t - 1, seat)
        return NO_CONTEXT if match.real[t - 1][seat] is None else move
    if kind == "opponent":
        move = shown_move(match, t - 1, 1 - seat)
        return NO_CONTEXT if match.real[t - 1][1 - seat] is None else move
    result = points(match, t - 1, seat)  # a fault is a loss: -1 already
    return ("loss", "draw", "win")[result + 1]


def exploit_rates(match: Match, seat: int) -> dict[str, Fraction]:
    """X_phi per exploiter (docs section 3.2), and their context counts K_phi."""
    rates: dict[str, Fraction] = {}
    moved = [t for t in range(len(match.real)) if match.real[t][seat] is not None]
    for kind in ("frequency", "own", "opponent", "result"):
        counts: dict[object, list[int]] = {}
        for t in moved:
            row = counts.setdefault(_context(match, t, seat, kind), [0] * match.moves)
            row[match.real[t][seat]] += 1  # type: ignore[index]
        won = 0
        for row in counts.values():
            best = None
            for reply in range(match.moves):
                value = sum(row[m] * payoff(reply, m) for m in range(match.moves))
                best = value if best is None else max(best, value)
            won += best or 0
        rates[kind] = Fraction(won, len(moved)) if moved else Fraction(0)
        rates[f"K_{kind}"] = Fraction(len(counts))
    return rates


def exploitability(match: Match, seat: int) -> float:
    rates = exploit_rates(match, seat)
    n = sum(1 for t in range(len(match.real)) if match.real[t][seat] is not None)
    if n == 0:
        return 0.0
    excess = 0.0
    for kind in ("frequency", "own", "opponent", "result"):
        margin = Z * math.sqrt(float(rates[f"K_{kind}"]) / n)
        excess = max(excess, float(rates[kind]) - margin)
    return -excess


def deception(match: Match, seat: int) -> Fraction:
    n = len(match.real)
    other = 1 - seat
    m = match.moves
    # The opponent's response model from the seat's honest rounds (section 4.1).
    counts = [[0] * m for _ in range(m)]
    honest = 0
    for t in range(n - 1):
        mine, reply = match.real[t][seat], match.real[t + 1][other]
        if not spent(match, t, seat) and mine is not None and reply is not None:
            counts[mine][reply] += 1
            honest += 1
    if honest:
        q = [Fraction(sum(counts[x][y] for x in range(m)), honest) for y in range(m)]
    else:
        q = [Fraction(1, m)] * m

    def f(x: int, y: int) -> Fraction:
        return (counts[x][y] + ALPHA * q[y]) / (sum(counts[x]) + ALPHA)

    tokens = 0
    credit = Fraction(0)
    for j in range(n):
        if not spent(match, j, seat):
            continue
        tokens += 1
        real, fake = match.real[j][seat], match.shown[(j, seat)]
        if fake == real or j == n - 1:
            continue
        nxt_mine, reply = match.real[j + 1][seat], match.real[j + 1][other]
        if real is None or nxt_mine is None or reply is None:
            continue
        misread = max(Fraction(0), f(fake, reply) - f(real, reply))
        credit += misread * payoff(nxt_mine, reply)
    value = (credit - KAPPA * tokens) / (tokens + K_D)
    return min(Fraction(1), max(Fraction(-1), value))


def _six(x: float | Fraction) -> float:
    value = float(round(Fraction(x), 6))
    return 0.0 if value == 0 else value


def score(match: Match) -> list[dict[str, float]]:
    """Per seat: final, standard, anti_exploitation, deception_efficiency, rounded as
    section 5 says."""
    rows = []
    for seat in (0, 1):
        std = _six(standard(match, seat))
        if match.disqualified[seat]:
            anti, dec = -1.0, -1.0
        else:
            res = resilience(match, seat)
            anti = _six(Fraction(res) / 2 + Fraction(exploitability(match, seat)) / 2)
            dec = _six(deception(match, seat))
        final = _six(
            Fraction(7, 10) * Fraction(std)
            + Fraction(2, 10) * Fraction(anti)
            + Fraction(1, 10) * Fraction(dec)
        )
        rows.append(
            {
                "final": final,
                "standard": std,
                "anti_exploitation": anti,
                "deception_efficiency": dec,
            }
        )
    return rows


def match_of(history: object) -> Match:
    """A Match from a rules-engine history, read through its documented fields only:
    one code a round (move of seat 0 times 6 plus move of seat 1, 5 for no move) and
    the (round, seat, shown move) of every token spent."""
    real: list[tuple[int | None, int | None]] = []
    for code in bytes(history.codes):  # type: ignore[attr-defined]
        a, b = divmod(code, 6)
        real.append((None if a == 5 else a, None if b == 5 else b))
    return Match(
        real,
        history.moves,  # type: ignore[attr-defined]
        history.rounds_total,  # type: ignore[attr-defined]
        history.forfeited,  # type: ignore[attr-defined]
        tuple(history.disqualified),  # type: ignore[attr-defined]
        {(t, seat): move for t, seat, move in history.shadows},  # type: ignore[attr-defined]
    )
