"""score_match against an independent oracle (tests/reference_scoring.py).

The oracle is a plain reading of docs/scoring.md; the scorer is vectorised numpy. They
share no code, so agreeing on a few hundred random and adversarial histories (tokens,
faults, disqualifications, forfeits, both move sets) means both say what the
document says. Components are compared to one unit of the sixth decimal: exact
fractions and the scorer's floats may round a value that sits on a half differently.
"""

from __future__ import annotations

import random

import pytest
from reference_scoring import Match, payoff, score

from referee.games.chaos import ChaosHistory
from referee.games.chaos_scoring import score_match

NO_MOVE_CODE = 5  # ChaosHistory's code for "no move" (a faulted seat)
ULP = 1.000001e-6


def history_of(match: Match) -> ChaosHistory:
    codes = bytes(
        (NO_MOVE_CODE if a is None else a) * 6 + (NO_MOVE_CODE if b is None else b)
        for a, b in match.real
    )
    spends = [sum(1 for (_, s) in match.shown if s == seat) for seat in (0, 1)]
    return ChaosHistory(
        codes=codes,
        shadows=sorted((t, seat, move) for (t, seat), move in match.shown.items()),
        tokens_start=max(spends),
        rounds_total=match.rounds_total,
        disqualified=match.disqualified,
        moves=match.moves,
        forfeited=match.forfeited,
    )


def assert_agree(match: Match) -> None:
    got = score_match(history_of(match))
    want = score(match)
    for seat in (0, 1):
        for key, value in want[seat].items():
            assert got[seat][key] == pytest.approx(value, abs=ULP, rel=0), (seat, key, got, want)


def random_match(rng: random.Random) -> Match:
    moves = rng.choice((3, 5, 5))
    n = rng.choice((0, 1, 2, 3, 7, 12, 40, 150, 400))
    fault_rate = rng.choice((0.0, 0.0, 0.02, 0.2, 0.6))
    real = []
    style = [rng.choice(("random", "constant", "cycle", "biased")) for _ in (0, 1)]
    for t in range(n):
        pair = []
        for seat in (0, 1):
            if rng.random() < fault_rate:
                pair.append(None)
            elif style[seat] == "constant":
                pair.append(seat % moves)
            elif style[seat] == "cycle":
                pair.append(t % moves)
            elif style[seat] == "biased":
                pair.append(0 if rng.random() < 0.6 else rng.randrange(moves))
            else:
                pair.append(rng.randrange(moves))
        real.append((pair[0], pair[1]))
    shown = {}
    for seat in (0, 1):
        budget = rng.choice((0, 1, 5, 50, n))
        rounds = [t for t in range(n) if real[t][seat] is not None]
        for t in rng.sample(rounds, min(budget, len(rounds))):
            shown[(t, seat)] = real[t][seat] if rng.random() < 0.2 else rng.randrange(moves)
    disqualified = rng.choice(((False, False),) * 6 + ((True, False), (False, True), (True, True)))
    forfeited = rng.choice((0, 0, 1, 17)) if any(disqualified) else 0
    total = n + forfeited + rng.choice((0, 0, 5))
    return Match(real, moves, total, forfeited, disqualified, shown)


@pytest.mark.parametrize("block", range(6))
def test_random_histories_agree_with_the_oracle(block: int) -> None:
    rng = random.Random(20261125 + block)
    for _ in range(50):
        assert_agree(random_match(rng))


def _lie_then_punish(n: int) -> Match:
    """Seat 0 lies every round (shows rock, plays lizard); seat 1 answers what it saw
    with paper, which lizard eats."""
    real: list[tuple[int | None, int | None]] = [(3, 1)] * n
    return Match(real, 5, n, shown={(t, 0): 0 for t in range(n)})


ADVERSARIAL = {
    "empty": Match([], 5, 0),
    "empty, scheduled": Match([], 5, 100),
    "one round": Match([(0, 2)], 5, 1),
    "one round, spent": Match([(0, 2)], 5, 1, shown={(0, 0): 4}),
    "all faults for one seat": Match([(None, t % 5) for t in range(30)], 5, 30),
    "all faults for both": Match([(None, None)] * 20, 5, 20),
    "spend then fault": Match(
        [(1, 2), (None, 3), (4, 4), (0, None), (2, 2)], 5, 5, shown={(0, 0): 3, (2, 1): 0}
    ),
    "every round under pressure": Match(
        [(t % 5, (t * 2) % 5) for t in range(60)], 5, 60, shown={(t, 1): 0 for t in range(60)}
    ),
    "spends in the last round only": Match(
        [(t % 3, (t + 1) % 3) for t in range(30)], 3, 30, shown={(29, 0): 1, (29, 1): 2}
    ),
    "shadows equal to the moves": Match(
        [(t % 5, 2) for t in range(40)], 5, 40, shown={(t, 0): t % 5 for t in range(0, 40, 3)}
    ),
    "constant rock, long": Match([(0, t % 5) for t in range(1000)], 5, 1000),
    "lie every round": _lie_then_punish(120),
    "disqualified before round 1": Match([], 5, 10, 10, (True, False)),
    "both disqualified late": Match(
        [(t % 5, (t + 2) % 5) for t in range(15)], 5, 25, 10, (True, True), {(3, 0): 1}
    ),
    "more forfeits than scheduled": Match([(0, 1)] * 4, 5, 6, 9, (False, True)),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_histories_agree_with_the_oracle(name: str) -> None:
    assert_agree(ADVERSARIAL[name])


def test_the_oracle_reproduces_the_worked_example_of_the_docs() -> None:
    # docs/scoring.md section 8, derived there by hand: the oracle itself is checked
    # against numbers nobody's code produced.
    a_real = [0, 1, 0, 0, 2, 1, 2, 3, 4, 0, 1, 2]
    b_real = [0, 1, 2, 1, 1, 0, 1, 0, 0, 1, 1, 2]
    match = Match(list(zip(a_real, b_real, strict=True)), 5, 12, shown={(5, 0): 0, (8, 0): 4})
    assert [payoff(a, b) for a, b in zip(a_real, b_real, strict=True)] == [
        0, 0, 1, -1, 1, 1, 1, -1, 1, -1, 0, 0,
    ]  # fmt: skip
    a, b = score(match)
    assert a == {
        "final": 0.118116,
        "standard": 0.166667,
        "anti_exploitation": 0.0,
        "deception_efficiency": 0.014491,
    }
    assert b == {
        "final": -0.114493,
        "standard": -0.166667,
        "anti_exploitation": 0.01087,
        "deception_efficiency": 0.0,
    }
    assert_agree(match)
    # Second example: always rock for 12 rounds, nobody spends.
    rock = Match([(0, t % 5) for t in range(12)], 5, 12)
    assert score(rock)[0]["anti_exploitation"] == -0.211325
