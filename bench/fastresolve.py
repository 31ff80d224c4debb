"""A prototype of a cheaper ``ChaosLeague.resolve`` (measurement only).

The common round -- both seats moved, neither asked for a shadow -- is resolved
with precomputed tables: the points of every move pair, the two-byte history
chunks, the Outcome's shown moves. Every other round goes to the real method.
``python bench/fastresolve.py`` checks that both give identical outcomes and
states over random rounds (shadows, faults and running out of tokens included);
bench/ablate.py runs it as the ``fast-resolve`` and ``fast-both`` variants.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from referee.games.chaos import MOVE_INDEX, MOVES, PAYOFF, ChaosLeague, ChaosState, Outcome

_slow = ChaosLeague.resolve

# Indexed by m0 * 5 + m1 (move indices): what the common round needs, computed once.
_POINTS = [PAYOFF[a][b] for a in range(5) for b in range(5)]
_PAIR = [bytes((a, b)) for a in range(5) for b in range(5)]
_SHOWN = [(MOVES[a], MOVES[b]) for a in range(5) for b in range(5)]
_HIST_POINTS = {p: bytes((p + 1, 1 - p)) for p in (-1, 0, 1)}  # points + 1, both seats


def fast_resolve(self: ChaosLeague, state: ChaosState, actions: Sequence[Any | None]) -> Outcome:
    a0, a1 = actions
    if a0 is None or a1 is None or a0.shadow_request or a1.shadow_request:
        return _slow(self, state, actions)
    m0 = MOVE_INDEX[a0.real_move]
    m1 = MOVE_INDEX[a1.real_move]
    k = m0 * 5 + m1
    p0 = _POINTS[k]
    points = state.points
    points[0] += p0
    points[1] -= p0
    if p0 > 0:
        state.wins[0] += 1
        state.losses[1] += 1
    elif p0 < 0:
        state.losses[0] += 1
        state.wins[1] += 1
    else:
        state.draws[0] += 1
        state.draws[1] += 1
    state.last_real[0] = state.last_shown[0] = m0
    state.last_real[1] = state.last_shown[1] = m1
    pair = _PAIR[k]
    state.hist_real += pair
    state.hist_shown += pair
    state.hist_spent += b"\0\0"
    state.hist_points += _HIST_POINTS[p0]
    state.step += 1
    tokens = state.tokens
    return Outcome((p0, -p0), _SHOWN[k], (False, False), (tokens[0], tokens[1]))


def _check(rounds: int = 20_000, seed: int = 7) -> None:
    """Both resolves, fed the same random rounds, leave identical states."""
    game = ChaosLeague.create(2, {"tokens": 30})
    rng = random.Random(seed)
    action_type = game.action_type
    slow_state, fast_state = game.new_state(1), game.new_state(1)
    for _ in range(rounds):
        acts: list[Any] = []
        for _seat in range(2):
            r = rng.random()
            if r < 0.05:
                acts.append(None)  # a faulted seat
            elif r < 0.15:
                acts.append(
                    action_type(
                        real_move=rng.choice(MOVES),
                        shadow_request=True,
                        shadow_move=rng.choice(MOVES),
                    )  # fmt: skip
                )
            else:
                acts.append(action_type(real_move=rng.choice(MOVES)))
        want = _slow(game, slow_state, acts)
        got = fast_resolve(game, fast_state, acts)
        assert want == got, (want, got)
    for name in ChaosState.__slots__:
        assert getattr(slow_state, name) == getattr(fast_state, name), name
    print(f"fast_resolve matches ChaosLeague.resolve over {rounds:,} random rounds")


if __name__ == "__main__":
    _check()
