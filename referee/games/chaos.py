"""Chaos League: Rock-Paper-Scissors-Lizard-Spock with deception tokens.

All of the rules live here (scoring components in ``chaos_scoring``). Also the
classic three-move RoShamBo, which is the same game with three moves and no
tokens.

Rules as implemented (see protocol/README.md for the bot's view):

* Each round both seats act at once. +1 win, -1 loss, 0 draw, on real moves only.
* Each seat starts with ``tokens`` deception tokens (50). A shadow request while
  the seat has tokens always succeeds and costs exactly one token: the opponent's
  next ``opponent_last_visible`` is the shadow move. With 0 tokens it is ignored.
* ``opponent_deception_bucket`` is the opponent's tokens at the start of the
  round: HIGH 40-50, MEDIUM 20-39, LOW 1-19, EMPTY 0. (Above 50, when an
  organiser raises the token count, is also HIGH.)
* Rounds are numbered from 1. In round 1 ``opponent_last_visible`` and
  ``self_last_real`` are null.
* A seat that faults in a round (no valid answer in time) scores -1 for it and
  the opponent scores +1 (both -1 if both fault); it made no move, so the next
  round shows null for it on both sides and it spends no token.
* A disqualified seat forfeits every remaining round (-1 each, the opponent +1
  each) and the match ends there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import msgspec

from .base import Game, GameResult, SeatResult

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

Move = Literal["rock", "paper", "scissors", "lizard", "spock"]
Bucket = Literal["HIGH", "MEDIUM", "LOW", "EMPTY"]

# Byte used in history buffers for "no move" (a faulted or forfeited round).
NO_MOVE = 255

# Tables for the common round, indexed by m0 * 5 + m1 (move indices).
_PAIR_POINTS = [PAYOFF[a][b] for a in range(5) for b in range(5)]
_PAIR_BYTES = [bytes((a, b)) for a in range(5) for b in range(5)]
_PAIR_SHOWN: list[tuple[Any, Any]] = [(MOVES[a], MOVES[b]) for a in range(5) for b in range(5)]
_PAIR_HIST_POINTS = {p: bytes((p + 1, 1 - p)) for p in (-1, 0, 1)}


def bucket(tokens: int) -> Bucket:
    """The coarse token level the opponent is shown."""
    if tokens >= 40:
        return "HIGH"
    if tokens >= 20:
        return "MEDIUM"
    if tokens >= 1:
        return "LOW"
    return "EMPTY"


class Turn(msgspec.Struct, tag="turn", tag_field="type", frozen=True):
    """What a seat is shown each round: exactly the rules' four fields."""

    round: int
    opponent_last_visible: Move | None
    self_last_real: Move | None
    opponent_deception_bucket: Bucket


class Action(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A seat's answer. ``round``, if given, must equal the round asked."""

    real_move: Move
    shadow_request: bool = False
    shadow_move: Move | None = None
    round: int | None = None


class Outcome(msgspec.Struct, frozen=True, array_like=True):
    """What one round did, per seat: points, the move the opponent will see,
    whether a token was spent, tokens left after the round."""

    points: tuple[int, int]
    shown: tuple[Move | None, Move | None]
    spent: tuple[bool, bool]
    tokens: tuple[int, int]


class ChaosState:
    """Mutable match state. Histories are compact byte buffers (2 bytes a round)
    so a million-round match stays small; scoring turns them into numpy arrays."""

    __slots__ = (
        "step",
        "tokens",
        "last_real",
        "last_shown",
        "points",
        "wins",
        "draws",
        "losses",
        "spent",
        "faulted_rounds",
        "disqualified",
        "forfeited",
        "hist_real",
        "hist_shown",
        "hist_spent",
        "hist_points",
    )

    def __init__(self, tokens: int) -> None:
        self.step = 1
        self.tokens = [tokens, tokens]
        self.last_real: list[int | None] = [None, None]
        self.last_shown: list[int | None] = [None, None]
        self.points = [0, 0]
        self.wins = [0, 0]
        self.draws = [0, 0]
        self.losses = [0, 0]
        self.spent = [0, 0]
        self.faulted_rounds = [0, 0]
        self.disqualified = [False, False]
        self.forfeited = 0  # rounds never played because of a disqualification
        self.hist_real = bytearray()
        self.hist_shown = bytearray()
        self.hist_spent = bytearray()
        self.hist_points = bytearray()  # points + 1, so 0..2


class ChaosHistory(msgspec.Struct, frozen=True):
    """Per-round arrays, shape (rounds_played, 2): the scoring model's input."""

    real: Any  # int8, -1 for no move
    shown: Any  # int8, -1 for no move
    spent: Any  # bool
    points: Any  # int8
    tokens_start: int
    rounds_total: int  # rounds the match was scheduled for
    disqualified: tuple[bool, bool]
    moves: int  # 5 for Chaos League, 3 for classic
    # Rounds never played because a seat was disqualified; each is -1 for a
    # disqualified seat and +1 for one that was not.
    forfeited: int = 0


class ChaosLeague(Game[ChaosState]):
    name: ClassVar[str] = "chaos"
    title: ClassVar[str] = "Chaos League (RPSLS with deception)"
    action_type: ClassVar[type[msgspec.Struct]] = Action
    observation_type: ClassVar[type[msgspec.Struct]] = Turn
    outcome_type: ClassVar[type[msgspec.Struct]] = Outcome
    default_steps: ClassVar[int] = 10_000
    default_tokens: ClassVar[int] = 50
    moves: tuple[str, ...] = MOVES

    def __init__(self, rounds: int | None = None, tokens: int | None = None) -> None:
        self.seats = 2
        self.rounds = self.default_steps if rounds is None else rounds
        self.tokens = self.default_tokens if tokens is None else tokens
        if self.rounds < 1:
            raise ValueError("rounds must be at least 1")
        if self.tokens < 0:
            raise ValueError("tokens must not be negative")
        self._move_set = frozenset(self.moves)

    @classmethod
    def create(cls, seats: int, params: dict[str, Any]) -> ChaosLeague:
        if seats != 2:
            raise ValueError(f"{cls.title} is played by 2 bots, not {seats}")
        unknown = set(params) - {"rounds", "tokens", "moves"}
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}")
        if "moves" in params and list(params["moves"]) != list(cls.moves):
            raise ValueError(f"moves must be {list(cls.moves)}")
        return cls(rounds=params.get("rounds"), tokens=params.get("tokens"))

    def warm_up(self) -> None:
        from . import chaos_scoring  # noqa: F401 (imports numpy)

    def params(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "tokens": self.tokens, "moves": list(self.moves)}

    def new_state(self, seed: int) -> ChaosState:
        # Chaos League has no randomness of the referee's: the seed is unused.
        return ChaosState(self.tokens)

    def to_act(self, state: ChaosState) -> Sequence[int]:
        return (0, 1)

    def observe(self, state: ChaosState, seat: int) -> Turn:
        other = 1 - seat
        shown = state.last_shown[other]
        real = state.last_real[seat]
        return Turn(
            state.step,
            None if shown is None else MOVES[shown],  # type: ignore[arg-type]
            None if real is None else MOVES[real],  # type: ignore[arg-type]
            bucket(state.tokens[other]),
        )

    def check(self, state: ChaosState, seat: int, action: Any) -> str | None:
        if action.round is not None and action.round != state.step:
            return f"reply is for round {action.round}, round {state.step} was asked"
        if action.real_move not in self._move_set:
            return f"real_move {action.real_move!r} is not a move of this game"
        if action.shadow_request:
            if action.shadow_move is None:
                return "shadow_request is true but shadow_move is null"
            if action.shadow_move not in self._move_set:
                return f"shadow_move {action.shadow_move!r} is not a move of this game"
        return None

    def resolve(self, state: ChaosState, actions: Sequence[Any | None]) -> Outcome:
        a0, a1 = actions
        if a0 is not None and a1 is not None and not (a0.shadow_request or a1.shadow_request):
            return self._resolve_plain(state, MOVE_INDEX[a0.real_move], MOVE_INDEX[a1.real_move])
        m0 = MOVE_INDEX[a0.real_move] if a0 is not None else None
        m1 = MOVE_INDEX[a1.real_move] if a1 is not None else None
        if m0 is not None and m1 is not None:
            p0 = PAYOFF[m0][m1]
            p1 = -p0
        else:  # a faulted seat loses the round; the other wins unless it faulted too
            p0 = 1 if m0 is not None else -1
            p1 = 1 if m1 is not None else -1
        tokens = state.tokens
        spent0 = a0 is not None and a0.shadow_request and tokens[0] > 0
        spent1 = a1 is not None and a1.shadow_request and tokens[1] > 0
        s0 = MOVE_INDEX[a0.shadow_move] if spent0 else m0  # type: ignore[union-attr]
        s1 = MOVE_INDEX[a1.shadow_move] if spent1 else m1  # type: ignore[union-attr]
        if spent0:
            tokens[0] -= 1
            state.spent[0] += 1
        if spent1:
            tokens[1] -= 1
            state.spent[1] += 1
        for seat, p in ((0, p0), (1, p1)):
            state.points[seat] += p
            if p > 0:
                state.wins[seat] += 1
            elif p < 0:
                state.losses[seat] += 1
            else:
                state.draws[seat] += 1
        if a0 is None:
            state.faulted_rounds[0] += 1
        if a1 is None:
            state.faulted_rounds[1] += 1
        state.last_real[0], state.last_real[1] = m0, m1
        state.last_shown[0], state.last_shown[1] = s0, s1
        state.hist_real += bytes((NO_MOVE if m0 is None else m0, NO_MOVE if m1 is None else m1))
        state.hist_shown += bytes((NO_MOVE if s0 is None else s0, NO_MOVE if s1 is None else s1))
        state.hist_spent += bytes((spent0, spent1))
        state.hist_points += bytes((p0 + 1, p1 + 1))
        state.step += 1
        return Outcome(
            (p0, p1),
            (
                None if s0 is None else MOVES[s0],  # type: ignore[arg-type]
                None if s1 is None else MOVES[s1],
            ),
            (spent0, spent1),
            (tokens[0], tokens[1]),
        )

    def _resolve_plain(self, state: ChaosState, m0: int, m1: int) -> Outcome:
        """The common round (both moved, no shadow request) from precomputed tables:
        the same result as the general path, at half the cost per round."""
        k = m0 * 5 + m1
        p0 = _PAIR_POINTS[k]
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
        pair = _PAIR_BYTES[k]
        state.hist_real += pair
        state.hist_shown += pair
        state.hist_spent += b"\0\0"
        state.hist_points += _PAIR_HIST_POINTS[p0]
        state.step += 1
        tokens = state.tokens
        return Outcome((p0, -p0), _PAIR_SHOWN[k], (False, False), (tokens[0], tokens[1]))

    def disqualify(self, state: ChaosState, seats: Sequence[int]) -> None:
        for seat in seats:
            state.disqualified[seat] = True
        remaining = self.rounds - (state.step - 1) - state.forfeited
        if remaining <= 0:
            return
        state.forfeited += remaining
        for seat in (0, 1):
            if state.disqualified[seat]:
                state.points[seat] -= remaining
                state.losses[seat] += remaining
            else:
                state.points[seat] += remaining
                state.wins[seat] += remaining

    def finished(self, state: ChaosState) -> bool:
        return state.step > self.rounds or state.disqualified[0] or state.disqualified[1]

    def history(self, state: ChaosState) -> ChaosHistory:
        # numpy is imported here, not at module level: a match only needs it at the end,
        # and the import is a third of the referee's start-up time.
        import numpy as np

        def arr(buf: bytearray, dtype: Any) -> Any:
            # Viewed as int8, the NO_MOVE byte 255 is already the -1 scoring expects.
            return np.frombuffer(bytes(buf), dtype=dtype).reshape(-1, 2)

        return ChaosHistory(
            real=arr(state.hist_real, np.int8),
            shown=arr(state.hist_shown, np.int8),
            spent=arr(state.hist_spent, np.bool_),
            points=arr(state.hist_points, np.int8) - np.int8(1),
            tokens_start=self.tokens,
            rounds_total=self.rounds,
            disqualified=(state.disqualified[0], state.disqualified[1]),
            moves=len(self.moves),
            forfeited=state.forfeited,
        )

    def result(self, state: ChaosState) -> GameResult:
        from .chaos_scoring import score_match

        scores = score_match(self.history(state))
        finals = [s["final"] for s in scores]
        standards = [s["standard"] for s in scores]
        if finals[0] != finals[1]:
            winner: int | None = 0 if finals[0] > finals[1] else 1
        elif standards[0] != standards[1]:
            winner = 0 if standards[0] > standards[1] else 1
        else:
            winner = None
        seats = []
        for seat in (0, 1):
            placement = 1 if winner is None or winner == seat else 2
            seats.append(
                SeatResult(
                    seat=seat,
                    placement=placement,
                    scores=scores[seat],
                    stats={
                        "points": state.points[seat],
                        "wins": state.wins[seat],
                        "draws": state.draws[seat],
                        "losses": state.losses[seat],
                        "tokens_spent": state.spent[seat],
                        "faulted_rounds": state.faulted_rounds[seat],
                        "disqualified": state.disqualified[seat],
                    },
                )
            )
        reason = "disqualification" if any(state.disqualified) else "complete"
        return GameResult(seats=seats, winner=winner, reason=reason, steps=state.step - 1)


class RoShamBo(ChaosLeague):
    """Classic Rock-Paper-Scissors: three moves, no deception tokens."""

    name: ClassVar[str] = "roshambo"
    title: ClassVar[str] = "Classic RoShamBo (rock, paper, scissors)"
    default_steps: ClassVar[int] = 1_000
    default_tokens: ClassVar[int] = 0
    moves: tuple[str, ...] = CLASSIC_MOVES
