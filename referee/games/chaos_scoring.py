"""Chaos League scoring model.

``docs/scoring.md`` is the specification: it defines every constant and formula
used here and works an example by hand. In short, for each seat::

    Final = 0.70 * Standard + 0.20 * AntiExploitation + 0.10 * DeceptionEfficiency

with every component in [-1, 1]:

* Standard: net points per scheduled round, forfeited rounds included.
* AntiExploitation = 0.5 * Resilience + 0.5 * Exploitability.
  Resilience is half the gap between the seat's mean points in the rounds just
  after an opponent token spend and its mean points in all other rounds, shrunk
  toward 0 when those rounds are few. Exploitability is a penalty only: how much
  a hindsight frequency/Markov exploiter would win per round, beyond the amount
  a random player concedes by chance.
* DeceptionEfficiency: per token spent, the seat's result in the next round
  times how much more typical the opponent's move there was of its reaction to
  the shown move than of its reaction to the real one; minus a fixed cost per
  token; summed and divided by (tokens spent + K_D).

Only the ``ChaosHistory`` arrays are used. Everything is vectorised numpy with
no randomness; counts are exact integers and sums of floats use ``math.fsum``,
so the six-decimal scores are the same on every run and platform.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .chaos import PAYOFF, ChaosHistory

# Component weights (rules, section 7).
W_STANDARD = 0.70
W_ANTI = 0.20
W_DECEPTION = 0.10

# Anti-exploitation.
PRESSURE_WINDOW = 5  # W: rounds after an opponent spend that are "under pressure"
PRESSURE_PRIOR = 20.0  # K_R: effective rounds at which Resilience gets half weight
RESILIENCE_SHARE = 0.5  # Resilience's share of AntiExploitation; the rest is Exploitability
EXPLOIT_Z = 2.0  # z: exploitation within z * sqrt(cells / rounds) counts as chance

# Deception efficiency.
RESPONSE_PRIOR = 5.0  # alpha: pseudo-observations pulling a response row to the marginal
TOKEN_COST = 0.1  # kappa: charged per token spent, so burning tokens at random is negative
DECEPTION_PRIOR = 10.0  # K_D: tokens at which DeceptionEfficiency gets half weight

DIGITS = 6
SCORE_KEYS = ("final", "standard", "anti_exploitation", "deception_efficiency")
EXPLOITERS = (
    "exploit_frequency",
    "exploit_after_own_move",
    "exploit_after_opponent_move",
    "exploit_after_result",
)

IntArray = NDArray[np.integer[Any]]
_CHUNK = 1 << 14  # rounds per step of the chunked counts (no round-sized temporaries)
BoolArray = NDArray[np.bool_]


def _payoff(moves: int) -> NDArray[np.int64]:
    # Rock, paper, scissors are the first three moves, so the classic game's
    # table is the top-left 3x3 block of the RPSLS table.
    return np.asarray(PAYOFF, dtype=np.int64)[:moves, :moves]


def pressure_mask(spent_opp: BoolArray, window: int = PRESSURE_WINDOW) -> BoolArray:
    """Rounds under deception pressure for the seat facing ``spent_opp``.

    Round t (0-based) is under pressure when the opponent spent a token in one
    of the rounds t-window .. t-1, i.e. the seat's view of the opponent's last
    move was a lie at most ``window`` rounds ago."""
    n = len(spent_opp)
    mask = np.zeros(n, dtype=np.bool_)
    # Spends are few (at most the token count), so marking the window after each
    # one is cheap and needs no round-sized temporaries (memory matters at 10^6 rounds).
    for i in np.nonzero(spent_opp)[0]:  # (flatnonzero would copy a strided column)
        mask[i + 1 : i + 1 + window] = True
    return mask


def _pair_counts(
    a: IntArray, b: IntArray, rows: int, cols: int, where: BoolArray | None = None
) -> NDArray[np.int64]:
    """counts[i, j]: rounds with a == i and b == j (only where ``where``, if given).

    Counted in chunks: bincount works on intp, and a whole million-round match
    converted at once would set the referee's peak memory."""
    flat = np.zeros(rows * cols, dtype=np.int64)
    for start in range(0, len(a), _CHUNK):
        part = slice(start, start + _CHUNK)
        ca, cb = a[part], b[part]
        if where is not None:
            ca, cb = ca[where[part]], cb[where[part]]
        codes = ca.astype(np.intp) * cols
        codes += cb
        flat += np.bincount(codes, minlength=rows * cols)
    return flat.reshape(rows, cols)


def _hindsight_exploit(counts: NDArray[np.int64], table: NDArray[np.int64]) -> tuple[int, int]:
    """Net points (summed) that the best fixed reply per context would have won,
    and the number of contexts that occur, from ``counts[c, m]``: how often the
    seat played m in context c.

    The reply a wins ``counts[c] . table[a]`` in context c, and the exploiter
    picks the best a in every context. The result is never negative: against any
    mix of moves some reply breaks even or better."""
    won = counts @ table.T  # won[c, a]
    return int(won.max(axis=1).sum()), int((counts.sum(axis=1) > 0).sum())


def _context_counts(
    seat: int, real: IntArray, shown: IntArray, pts: IntArray, m: int
) -> list[NDArray[np.int64]]:
    """Move counts per context for each of EXPLOITERS, over the rounds the seat
    moved: no context; the seat's previous move as shown; the opponent's
    previous move as shown; the seat's previous result.

    Value m stands for "no previous move" (round 1, or after a fault); result
    context 3 is round 1 only (a fault is a loss). Contexts are the moves as
    displayed: what the opponent saw of the seat, and what the seat saw of the
    opponent (and reacted to); the opponent knows both, so it could condition on
    either. Counted in chunks of rounds, so a million-round match needs no
    round-sized temporaries."""
    opp = 1 - seat
    n = len(real)
    sizes = (1, m + 1, m + 1, 4)
    counts = [np.zeros(k * m, dtype=np.int64) for k in sizes]
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        mv = real[start:stop, seat]
        prev_own = np.full(stop - start, m, dtype=np.int8)
        prev_opp = np.full(stop - start, m, dtype=np.int8)
        prev_result = np.full(stop - start, 3, dtype=np.int8)
        first = 1 if start == 0 else 0  # round 1 has no previous round
        lo = start - 1 + first
        if stop - 1 > lo:
            own, other = shown[lo : stop - 1, seat], shown[lo : stop - 1, opp]
            prev_own[first:] = np.where(own >= 0, own, m)
            prev_opp[first:] = np.where(other >= 0, other, m)
            prev_result[first:] = pts[lo : stop - 1] + 1  # loss 0, draw 1, win 2
        moved = mv >= 0
        # Usually every round has a move; then nothing needs copying.
        if not bool(moved.all()):
            mv, prev_own, prev_opp, prev_result = (
                mv[moved],
                prev_own[moved],
                prev_opp[moved],
                prev_result[moved],
            )
        mv_codes = mv.astype(np.intp)
        for flat, ctx in zip(counts[1:], (prev_own, prev_opp, prev_result), strict=True):
            codes = ctx.astype(np.intp) * m
            codes += mv_codes
            flat += np.bincount(codes, minlength=len(flat))
        counts[0] += np.bincount(mv_codes, minlength=m)
    return [flat.reshape(k, m) for flat, k in zip(counts, sizes, strict=True)]


def _anti_exploitation(
    seat: int,
    real: IntArray,
    shown: IntArray,
    spent: BoolArray,
    points: IntArray,
    table: NDArray[np.int64],
) -> dict[str, float]:
    n = len(points)
    opp = 1 - seat
    m = table.shape[0]
    pts = points[:, seat]

    # Resilience: results in rounds under deception pressure vs all others.
    pressure = pressure_mask(spent[:, opp])
    n_p = int(pressure.sum())
    n_c = n - n_p
    if n_p and n_c:
        sum_all = int(pts.sum(dtype=np.int64))
        sum_p = int(pts[pressure].sum(dtype=np.int64))
        mean_p = sum_p / n_p
        mean_c = (sum_all - sum_p) / n_c
        gap = mean_p - mean_c  # in [-2, 2]
        # The gap's variance scales with 1/n_p + 1/n_c = 1/n_eff.
        n_eff = n_p * n_c / (n_p + n_c)
        weight = n_eff / (n_eff + PRESSURE_PRIOR)
    else:
        mean_p = mean_c = gap = n_eff = weight = 0.0
    resilience = 0.5 * gap * weight

    # Exploitability: how much a hindsight exploiter conditioning on what an
    # opponent can observe would have won (see _context_counts).
    rates: dict[str, float] = {}
    excess = 0.0
    for name, counts in zip(EXPLOITERS, _context_counts(seat, real, shown, pts, m), strict=True):
        n_moved = int(counts.sum())
        if n_moved == 0:
            rates[name] = 0.0
            continue
        won, cells = _hindsight_exploit(counts, table)
        rates[name] = won / n_moved
        # A random player concedes about sqrt(cells / n) per round to a
        # hindsight exploiter by chance alone; only the part beyond z times
        # that is penalised (a one-sided significance margin).
        excess = max(excess, rates[name] - EXPLOIT_Z * math.sqrt(cells / n_moved))
    exploitability = 0.0 - excess  # not -excess: keeps 0.0 from printing as -0.0

    anti = RESILIENCE_SHARE * resilience + (1.0 - RESILIENCE_SHARE) * exploitability
    return {
        "anti_exploitation": anti,
        "pressure_rounds": float(n_p),
        "calm_rounds": float(n_c),
        "pressure_mean": mean_p,
        "calm_mean": mean_c,
        "pressure_gap": gap,
        "pressure_n_eff": n_eff,
        "pressure_weight": weight,
        "resilience": resilience,
        **rates,
        "exploitability": exploitability,
    }


def response_model(seat: int, real: IntArray, spent: BoolArray, moves: int) -> NDArray[np.float64]:
    """f[x, y]: how often the opponent plays y right after being shown the
    seat's real move x, from honest rounds only (the seat did not spend, so what
    the opponent saw was true). Each row is smoothed toward the opponent's
    overall mix over the same rounds with ``RESPONSE_PRIOR`` pseudo-rounds."""
    opp = 1 - seat
    counts = np.zeros((moves, moves), dtype=np.int64)
    # In chunks of rounds, like _pair_counts, so the masks stay small.
    for start in range(0, len(real) - 1, _CHUNK):
        stop = min(len(real) - 1, start + _CHUNK)
        x = real[start:stop, seat]
        y = real[start + 1 : stop + 1, opp]
        honest = ~spent[start:stop, seat] & (x >= 0) & (y >= 0)
        counts += _pair_counts(x, y, moves, moves, where=honest)
    total = int(counts.sum())
    marginal = counts.sum(axis=0) / total if total else np.full(moves, 1.0 / moves)
    rows = counts.sum(axis=1, keepdims=True) + RESPONSE_PRIOR
    return (counts + RESPONSE_PRIOR * marginal) / rows


def _deception(
    seat: int,
    real: IntArray,
    shown: IntArray,
    spent: BoolArray,
    table: NDArray[np.int64],
) -> dict[str, float]:
    n = len(real)
    opp = 1 - seat
    m = table.shape[0]
    f = response_model(seat, real, spent, m)

    spends = np.nonzero(spent[:, seat])[0]
    tokens = len(spends)
    j = spends[spends + 1 < n]  # a spend in the last round misleads nobody
    v = shown[j, seat].astype(np.intp)  # what the opponent saw
    r = real[j, seat].astype(np.intp)  # what the seat really played
    b = real[j + 1, seat].astype(np.intp)  # the seat's next move
    o = real[j + 1, opp].astype(np.intp)  # the opponent's reply to the shown move
    # A shadow equal to the real move hides nothing and earns nothing.
    ok = (v != r) & (v >= 0) & (r >= 0) & (b >= 0) & (o >= 0)
    v, r, b, o = v[ok], r[ok], b[ok], o[ok]
    misread = np.maximum(0.0, f[v, o] - f[r, o])
    result = table[b, o]
    credit = math.fsum((misread * result).tolist())
    raw = (credit - TOKEN_COST * tokens) / (tokens + DECEPTION_PRIOR)
    # Only reachable with far more than 50 tokens, all wasted.
    efficiency = min(1.0, max(-1.0, raw))
    return {
        "deception_efficiency": efficiency,
        "tokens_spent": float(tokens),
        "effective_spends": float(len(v)),
        "misreads": float(int((misread > 0).sum())),
        "misreads_won": float(int(((misread > 0) & (result > 0)).sum())),
        "deception_credit": credit,
        "token_cost": TOKEN_COST * tokens,
    }


def _clean(x: float) -> float:
    # Six decimals so replays re-check bit-exactly; "+ 0.0" turns -0.0 into 0.0.
    return round(x, DIGITS) + 0.0


def explain(history: ChaosHistory) -> list[dict[str, float]]:
    """Every intermediate number of the model, one dict per seat.

    The first four keys are the scores exactly as ``score_match`` returns them;
    the others are unrounded diagnostics named as in docs/scoring.md."""
    # Narrow dtypes: scoring a long match is bound by memory traffic.
    real = np.asarray(history.real, dtype=np.int8).reshape(-1, 2)
    shown = np.asarray(history.shown, dtype=np.int8).reshape(-1, 2)
    spent = np.asarray(history.spent, dtype=np.bool_).reshape(-1, 2)
    points = np.asarray(history.points, dtype=np.int8).reshape(-1, 2)
    n = len(points)
    if not (len(real) == len(shown) == len(spent) == n):
        raise ValueError("history arrays must all have the same number of rounds")
    moves = int(history.moves)
    if moves not in (3, 5):
        raise ValueError(f"unsupported number of moves: {moves}")
    if n and (int(real.max()) >= moves or int(shown.max()) >= moves):
        raise ValueError("a move index is out of range for this game")
    table = _payoff(moves)
    forfeited = int(history.forfeited)
    # Normally rounds_total == n + forfeited; the max keeps Standard in [-1, 1]
    # even for a hand-built history that disagrees.
    scheduled = max(int(history.rounds_total), n + forfeited)
    net_played = points.sum(axis=0, dtype=np.int64)

    out = []
    for seat in (0, 1):
        dq = bool(history.disqualified[seat])
        net = int(net_played[seat]) + (-forfeited if dq else forfeited)
        standard = net / scheduled if scheduled else 0.0
        anti = _anti_exploitation(seat, real, shown, spent, points, table)
        dec = _deception(seat, real, shown, spent, table)
        if dq:
            # A disqualified seat gets the minimum of both bonuses, so a
            # disqualification can never improve a score.
            anti["anti_exploitation"] = -1.0
            dec["deception_efficiency"] = -1.0
        s = _clean(standard)
        a = _clean(anti.pop("anti_exploitation"))
        d = _clean(dec.pop("deception_efficiency"))
        # Final is built from the rounded components, so anyone can re-check
        # it from the published numbers.
        final = _clean(W_STANDARD * s + W_ANTI * a + W_DECEPTION * d)
        row: dict[str, float] = {
            "final": final,
            "standard": s,
            "anti_exploitation": a,
            "deception_efficiency": d,
            "net_points": float(net),
            "scheduled_rounds": float(scheduled),
            "played_rounds": float(n),
            "forfeited_rounds": float(forfeited),
            "disqualified": float(dq),
        }
        row.update(anti)
        row.update(dec)
        out.append(row)
    return out


def score_match(history: ChaosHistory) -> list[dict[str, float]]:
    """One dict per seat with the keys ``final``, ``standard``,
    ``anti_exploitation``, ``deception_efficiency`` (in that order), each
    rounded to 6 decimals. Seat 0 first."""
    return [{key: row[key] for key in SCORE_KEYS} for row in explain(history)]
