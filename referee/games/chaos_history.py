"""The record of a Chaos League match as the rules keep it: moves, payoffs, the
one-byte history code of a round, and ``ChaosHistory``, the scoring model's input.

Both the rules (``chaos``) and the scoring (``chaos_scoring``) import this module;
it imports neither.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import msgspec

MOVES: tuple[str, ...] = ("rock", "paper", "scissors", "lizard", "spock")
CLASSIC_MOVES: tuple[str, ...] = MOVES[:3]
MOVE_INDEX = {name: i for i, name in enumerate(MOVES)}

# What each move defeats (standard RPSLS).
DEFEATS: dict[str, tuple[str, ...]] = {
    "rock": ("scissors", "lizard"),  # crushes scissors, crushes lizard
    "paper": ("rock", "spock"),  # covers rock, disproves spock
    "scissors": ("paper", "lizard"),  # cut paper, decapitate lizard
    "lizard": ("paper", "spock"),  # eats paper, poisons spock
    "spock": ("scissors", "rock"),  # smashes scissors, vaporizes rock
}

# PAYOFF[a][b]: points for playing a against b.
PAYOFF: tuple[tuple[int, ...], ...] = tuple(
    tuple(1 if b in DEFEATS[a] else (-1 if a in DEFEATS[b] else 0) for b in MOVES) for a in MOVES
)

# The history keeps one byte a round: ``code = real0 * 6 + real1``, where a move
# index is 0-4 and NONE (5) stands for "no move" (a faulted round). Shown moves
# differ from real ones only where a token was spent, at most ``tokens`` times per
# seat, so those are kept apart as a short list.
NONE = 5
_CODES = 36


def _code_points(code: int) -> tuple[int, int]:
    """Points of a round from its history code (the rule for faulted rounds too)."""
    m0, m1 = divmod(code, 6)
    if m0 < NONE and m1 < NONE:
        return PAYOFF[m0][m1], -PAYOFF[m0][m1]
    return (1 if m0 < NONE else -1), (1 if m1 < NONE else -1)


CODE_POINTS: tuple[tuple[int, int], ...] = tuple(_code_points(c) for c in range(_CODES))
# The real moves of a code, -1 for "no move" (as scoring expects).
_CODE_REAL = tuple(tuple(-1 if m == NONE else m for m in divmod(c, 6)) for c in range(_CODES))


class ChaosHistory(msgspec.Struct, frozen=True):
    """The rounds of a match as the rules keep them: the scoring model's input.

    One code a round (``real0 * 6 + real1``, NONE for no move; see CODE_POINTS)
    and the rounds where a token was spent, so scoring a million-round match
    needs no round-sized arrays: it reads the rounds in blocks (``block``). The
    properties ``real``, ``shown``, ``spent`` and ``points`` build whole arrays of
    shape (rounds, 2), for tests and analysis."""

    codes: Any  # a buffer of uint8 codes, one a round (bytes, bytearray, uint8 array)
    shadows: Sequence[tuple[int, int, int]]  # (round index, seat, shown move), by round
    tokens_start: int
    rounds_total: int  # rounds the match was scheduled for
    disqualified: tuple[bool, bool]
    moves: int  # 5 for Chaos League, 3 for classic
    # Rounds never played because a seat was disqualified; each is -1 for a
    # disqualified seat and +1 for one that was not.
    forfeited: int = 0

    @property
    def rounds(self) -> int:
        """Rounds played."""
        return len(self.codes)

    def block(self, start: int, stop: int) -> tuple[Any, Any, Any, Any]:
        """Rounds ``start`` to ``stop - 1`` as four arrays of shape (rounds, 2):
        real moves (int8, -1 for no move), shown moves (likewise), whether a token
        was spent (bool) and points (int8)."""
        import numpy as np

        real_of, points_of = code_arrays()
        codes = np.frombuffer(self.codes, dtype=np.uint8)[start:stop]
        if len(codes) and int(codes.max()) >= _CODES:
            raise ValueError(f"history code {int(codes.max())} is not a code of this game")
        real = real_of[codes]
        spent = np.zeros(real.shape, dtype=np.bool_)
        shown = real
        first = bisect_left(self.shadows, start, key=_round_of)
        last = bisect_left(self.shadows, stop, key=_round_of)
        if first < last:
            shown = real.copy()
            for index, seat, move in self.shadows[first:last]:
                shown[index - start, seat] = move
                spent[index - start, seat] = True
        return real, shown, spent, points_of[codes]

    @property
    def real(self) -> Any:
        return self.block(0, self.rounds)[0]

    @property
    def shown(self) -> Any:
        return self.block(0, self.rounds)[1]

    @property
    def spent(self) -> Any:
        return self.block(0, self.rounds)[2]

    @property
    def points(self) -> Any:
        return self.block(0, self.rounds)[3]


def _round_of(shadow: tuple[int, int, int]) -> int:
    return shadow[0]


@functools.cache
def code_arrays() -> tuple[Any, Any]:
    """Per history code: the real moves and the points, as int8 arrays of shape (36, 2)."""
    import numpy as np

    return np.array(_CODE_REAL, dtype=np.int8), np.array(CODE_POINTS, dtype=np.int8)
