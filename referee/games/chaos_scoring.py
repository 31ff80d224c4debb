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

Only the ``ChaosHistory`` is used, read in blocks of rounds (``_count_rounds``)
so that no array is as long as the match. Everything is vectorised numpy with
no randomness; counts are exact integers and sums of floats use ``math.fsum``,
so the six-decimal scores are the same on every run and platform.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .chaos_history import PAYOFF, ChaosHistory, code_arrays

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
    # (flatnonzero would copy a strided column)
    return _pressure_block(np.nonzero(spent_opp)[0], 0, len(spent_opp), window)


def _pressure_block(spends_opp: IntArray, start: int, stop: int, window: int) -> BoolArray:
    """``pressure_mask`` for rounds ``start`` to ``stop - 1`` only, from the sorted
    rounds where the opponent spent a token."""
    mask = np.zeros(stop - start, dtype=np.bool_)
    # Spends are few (at most the token count), so marking the window after each
    # one is cheap and needs no round-sized temporaries (memory matters at 10^6 rounds).
    lo, hi = np.searchsorted(spends_opp, (start - window, stop - 1))
    for i in spends_opp[lo:hi].tolist():
        mask[max(0, i + 1 - start) : i + 1 + window - start] = True
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


class _SeatCounts:
    """Everything one seat's bonuses count over the rounds, filled block by block."""

    def __init__(self, m: int, spends: tuple[IntArray, IntArray]) -> None:
        # The rounds where the seat spent a token, in order, and the moves it showed.
        self.spends, self.shadows = spends
        self.net = 0  # points over the rounds played
        self.pressure_rounds = 0
        self.pressure_points = 0
        # Move counts per context for each of EXPLOITERS (see _count_contexts).
        self.contexts = [np.zeros((k, m), dtype=np.int64) for k in (1, m + 1, m + 1, 4)]
        # response[x, y]: the opponent's move y right after an honest x (response_model).
        self.response = np.zeros((m, m), dtype=np.int64)


def _count_contexts(
    counts: list[NDArray[np.int64]],
    mv: IntArray,
    before_shown: IntArray,
    before_opp: IntArray,
    before_points: IntArray,
    m: int,
) -> None:
    """Add one block's moves ``mv`` to the counts per context: no context; the
    seat's previous move as shown; the opponent's previous move as shown; the
    seat's previous result. ``before_*`` are the rounds before those of ``mv``,
    one shorter when the block starts at round 1 (which has no previous round).

    Value m stands for "no previous move" (round 1, or after a fault); result
    context 3 is round 1 only (a fault is a loss). Contexts are the moves as
    displayed: what the opponent saw of the seat, and what the seat saw of the
    opponent (and reacted to); the opponent knows both, so it could condition on
    either."""
    k = len(mv)
    first = k - len(before_shown)
    prev_own = np.full(k, m, dtype=np.int8)
    prev_opp = np.full(k, m, dtype=np.int8)
    prev_result = np.full(k, 3, dtype=np.int8)
    prev_own[first:] = np.where(before_shown >= 0, before_shown, m)
    prev_opp[first:] = np.where(before_opp >= 0, before_opp, m)
    prev_result[first:] = before_points + 1  # loss 0, draw 1, win 2
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
    for table, ctx in zip(counts[1:], (prev_own, prev_opp, prev_result), strict=True):
        codes = ctx.astype(np.intp) * m
        codes += mv_codes
        table += np.bincount(codes, minlength=table.size).reshape(table.shape)
    counts[0] += np.bincount(mv_codes, minlength=m).reshape(1, m)


def _count_rounds(history: ChaosHistory, m: int) -> list[_SeatCounts]:
    """One pass over the rounds in blocks of _CHUNK, for both seats. Each block
    is read with the round before it, which the contexts and the response model
    look back to; so a million-round match needs no round-sized arrays."""
    n = history.rounds
    seats = [_SeatCounts(m, _spends(history, seat)) for seat in (0, 1)]
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        # From the round before the block (if any) to its last round.
        real, shown, spent, points = history.block(max(0, start - 1), stop)
        if int(real.max()) >= m or int(shown.max()) >= m:
            raise ValueError("a move index is out of range for this game")
        own = slice(1, None) if start else slice(None)  # the block's own rounds
        for seat, c in enumerate(seats):
            opp = 1 - seat
            pts = points[own, seat]
            c.net += int(pts.sum(dtype=np.int64))
            pressure = _pressure_block(seats[opp].spends, start, stop, PRESSURE_WINDOW)
            c.pressure_rounds += int(pressure.sum())
            c.pressure_points += int(pts[pressure].sum(dtype=np.int64))
            _count_contexts(
                c.contexts,
                real[own, seat],
                shown[:-1, seat],
                shown[:-1, opp],
                points[:-1, seat],
                m,
            )
            # Round t's honest real move x and the opponent's move y in round t+1.
            x, y = real[:-1, seat], real[1:, opp]
            honest = ~spent[:-1, seat] & (x >= 0) & (y >= 0)
            c.response += _pair_counts(x, y, m, m, where=honest)
    return seats


def _spends(history: ChaosHistory, seat: int) -> tuple[IntArray, IntArray]:
    """The rounds where ``seat`` spent a token, in order, and the moves it showed."""
    mine = [(index, move) for index, s, move in history.shadows if s == seat]
    rounds = np.array([index for index, _ in mine], dtype=np.int64)
    shown = np.array([move for _, move in mine], dtype=np.int64)
    return rounds, shown


def _anti_exploitation(n: int, c: _SeatCounts, table: NDArray[np.int64]) -> dict[str, float]:
    # Resilience: results in rounds under deception pressure vs all others.
    n_p = c.pressure_rounds
    n_c = n - n_p
    if n_p and n_c:
        mean_p = c.pressure_points / n_p
        mean_c = (c.net - c.pressure_points) / n_c
        gap = mean_p - mean_c  # in [-2, 2]
        # The gap's variance scales with 1/n_p + 1/n_c = 1/n_eff.
        n_eff = n_p * n_c / (n_p + n_c)
        weight = n_eff / (n_eff + PRESSURE_PRIOR)
    else:
        mean_p = mean_c = gap = n_eff = weight = 0.0
    resilience = 0.5 * gap * weight

    # Exploitability: how much a hindsight exploiter conditioning on what an
    # opponent can observe would have won (see _count_contexts).
    rates: dict[str, float] = {}
    excess = 0.0
    for name, counts in zip(EXPLOITERS, c.contexts, strict=True):
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


def response_model(counts: NDArray[np.int64]) -> NDArray[np.float64]:
    """f[x, y]: how often the opponent plays y right after being shown the
    seat's real move x, from ``counts[x, y]`` over honest rounds only (the seat
    did not spend, so what the opponent saw was true). Each row is smoothed toward
    the opponent's overall mix over the same rounds with ``RESPONSE_PRIOR``
    pseudo-rounds."""
    moves = counts.shape[0]
    total = int(counts.sum())
    marginal = counts.sum(axis=0) / total if total else np.full(moves, 1.0 / moves)
    rows = counts.sum(axis=1, keepdims=True) + RESPONSE_PRIOR
    return (counts + RESPONSE_PRIOR * marginal) / rows


def _deception(
    seat: int, history: ChaosHistory, c: _SeatCounts, table: NDArray[np.int64]
) -> dict[str, float]:
    n = history.rounds
    opp = 1 - seat
    f = response_model(c.response)

    spends, shadows = c.spends, c.shadows
    tokens = len(spends)
    keep = spends + 1 < n  # a spend in the last round misleads nobody
    j, v = spends[keep], shadows[keep]  # v: what the opponent saw
    real_of, _ = code_arrays()
    codes = np.frombuffer(history.codes, dtype=np.uint8)
    then, after = real_of[codes[j]].astype(np.intp), real_of[codes[j + 1]].astype(np.intp)
    r = then[:, seat]  # what the seat really played
    b = after[:, seat]  # the seat's next move
    o = after[:, opp]  # the opponent's reply to the shown move
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
    n = history.rounds
    moves = int(history.moves)
    if moves not in (3, 5):
        raise ValueError(f"unsupported number of moves: {moves}")
    table = _payoff(moves)
    counts = _count_rounds(history, moves)
    forfeited = int(history.forfeited)
    # Normally rounds_total == n + forfeited; the max keeps Standard in [-1, 1]
    # even for a hand-built history that disagrees.
    scheduled = max(int(history.rounds_total), n + forfeited)

    out = []
    for seat in (0, 1):
        dq = bool(history.disqualified[seat])
        net = counts[seat].net + (-forfeited if dq else forfeited)
        standard = net / scheduled if scheduled else 0.0
        anti = _anti_exploitation(n, counts[seat], table)
        dec = _deception(seat, history, counts[seat], table)
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
