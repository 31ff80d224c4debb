"""Chaos League: Rock-Paper-Scissors-Lizard-Spock with deception tokens.

All of the rules live here (scoring components in ``chaos_scoring``, moves, payoffs
and the match history in ``chaos_history``). Also the
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

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import msgspec

from ..faults import Fault
from .base import Game, GameResult, SeatResult, illegal, wrong_step
from .chaos_history import (
    _CODES,
    CLASSIC_MOVES,
    CODE_POINTS,
    MOVE_INDEX,
    MOVES,
    NONE,
    ChaosHistory,
)
from .chaos_history import DEFEATS as DEFEATS
from .chaos_history import PAYOFF as PAYOFF

Move = Literal["rock", "paper", "scissors", "lizard", "spock"]
Bucket = Literal["HIGH", "MEDIUM", "LOW", "EMPTY"]


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


ClassicMove = Literal["rock", "paper", "scissors"]


class ClassicTurn(msgspec.Struct, tag="turn", tag_field="type", frozen=True):
    """A RoShamBo turn: Chaos League's, with the three classic moves; no tokens, so
    the opponent's bucket is always EMPTY. (For its JSON Schema: the wire uses Turn.)"""

    round: int
    opponent_last_visible: ClassicMove | None
    self_last_real: ClassicMove | None
    opponent_deception_bucket: Literal["EMPTY"]


class ClassicAction(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A RoShamBo answer: one of the three classic moves. ``round``, if given, must
    equal the round asked. (For its JSON Schema: the referee decodes an Action and
    refuses lizard and spock as illegal moves.)"""

    real_move: ClassicMove
    shadow_request: bool = False
    shadow_move: ClassicMove | None = None
    round: int | None = None


_encode = msgspec.json.Encoder().encode
# How every encoded Turn starts; the round number follows.
_TURN_HEAD = b'{"type":"turn","round":'


class Outcome(msgspec.Struct, frozen=True, array_like=True):
    """What one round did, per seat: points, the move the opponent will see,
    whether a token was spent, tokens left after the round."""

    points: tuple[int, int]
    shown: tuple[Move | None, Move | None]
    spent: tuple[bool, bool]
    tokens: tuple[int, int]


class ChaosState:
    """Mutable match state. The history is one byte a round (see ``CODE_POINTS``)
    plus the few rounds where a token was spent, so a million-round match stays
    small; the tallies (points, wins, ...) are counted from it when asked for."""

    __slots__ = (
        "step",
        "tokens",
        "last_real",
        "last_shown",
        "spent",
        "disqualified",
        "forfeited",
        "hist",
        "shadows",
        "_counts",
        "_counted",
    )

    def __init__(self, tokens: int) -> None:
        self.step = 1
        self.tokens = [tokens, tokens]
        self.last_real: list[int | None] = [None, None]
        self.last_shown: list[int | None] = [None, None]
        self.spent = [0, 0]
        self.disqualified = [False, False]
        self.forfeited = 0  # rounds never played because of a disqualification
        self.hist = bytearray()  # one code per round played
        self.shadows: list[tuple[int, int, int]] = []  # (round index, seat, move shown)
        self._counts = [0] * _CODES  # rounds per code, over hist[:_counted]
        self._counted = 0

    def code_counts(self) -> list[int]:
        """Rounds played per history code (counted incrementally)."""
        if self._counted < len(self.hist):
            counts = self._counts
            for code, n in Counter(self.hist[self._counted :]).items():
                counts[code] += n
            self._counted = len(self.hist)
        return self._counts

    def tally(self, seat: int) -> tuple[int, int, int, int]:
        """(points, wins, draws, losses) of a seat, forfeited rounds included."""
        points = wins = draws = losses = 0
        for code, n in enumerate(self.code_counts()):
            if n:
                p = CODE_POINTS[code][seat]
                points += p * n
                if p > 0:
                    wins += n
                elif p < 0:
                    losses += n
                else:
                    draws += n
        if self.forfeited:
            if self.disqualified[seat]:
                points -= self.forfeited
                losses += self.forfeited
            else:
                points += self.forfeited
                wins += self.forfeited
        return points, wins, draws, losses

    def _both(self, column: int) -> list[int]:
        return [self.tally(0)[column], self.tally(1)[column]]

    # Per seat, like the other lists here (the progress bar reads ``points``).
    points = property(lambda self: self._both(0))
    wins = property(lambda self: self._both(1))
    draws = property(lambda self: self._both(2))
    losses = property(lambda self: self._both(3))

    @property
    def faulted_rounds(self) -> list[int]:
        counts = self.code_counts()
        return [
            sum(counts[NONE * 6 : NONE * 6 + 6]),
            sum(counts[c] for c in range(NONE, _CODES, 6)),
        ]


class ChaosLeague(Game[ChaosState]):
    name: ClassVar[str] = "chaos"
    title: ClassVar[str] = "Chaos League (RPSLS with deception)"
    action_type: ClassVar[type[msgspec.Struct]] = Action
    observation_type: ClassVar[type[msgspec.Struct]] = Turn
    outcome_type: ClassVar[type[msgspec.Struct]] = Outcome
    default_steps: ClassVar[int] = 10_000
    step_echo: ClassVar[str | None] = "round"
    default_final_steps: ClassVar[int | None] = 20_000  # the rules: 15,000-20,000
    default_tokens: ClassVar[int] = 50
    moves: tuple[str, ...] = MOVES
    pair_every_step: ClassVar[bool] = True
    rounds_means: ClassVar[str] = "rounds (default 10000)"
    ranking_keys: ClassVar[tuple[str, str] | None] = ("final", "standard")
    score_labels: ClassVar[dict[str, str]] = {
        "final": "Final",
        "standard": "Standard (70%)",
        "anti_exploitation": "Anti-exploit (20%)",
        "deception_efficiency": "Deception (10%)",
    }

    def __init__(self, rounds: int | None = None, tokens: int | None = None) -> None:
        self.seats = 2
        self.rounds = self.default_steps if rounds is None else rounds
        self.tokens = self.default_tokens if tokens is None else tokens
        if type(self.rounds) is not int or self.rounds < 1:
            raise ValueError("rounds must be a whole number >= 1")
        if type(self.tokens) is not int or self.tokens < 0:
            raise ValueError("tokens must be a whole number >= 0")
        self._move_set = frozenset(self.moves)
        self._turn_tails: dict[tuple[int | None, int | None, int], bytes] = {}
        # (real_move, real_move) -> everything the common round needs, precomputed.
        self._plain: dict[tuple[str, str], tuple[int, int, int, tuple[int, int], Any]] = {
            (MOVES[a], MOVES[b]): (a, b, a * 6 + b, CODE_POINTS[a * 6 + b], (MOVES[a], MOVES[b]))
            for a in range(len(self.moves))
            for b in range(len(self.moves))
        }

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

    def length(self) -> int:
        return self.rounds

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

    def encode_turn(self, state: ChaosState, seat: int) -> bytes:
        # The same bytes as encoding observe(), from a table of the fields after
        # "round": which of them a seat sees takes few values.
        other = 1 - seat
        key = (state.last_shown[other], state.last_real[seat], state.tokens[other])
        tail = self._turn_tails.get(key) or self._turn_tail(key)
        return b"%s%d%s" % (_TURN_HEAD, state.step, tail)

    def encode_turns(self, state: ChaosState) -> tuple[bytes, bytes]:
        shown, real, tokens = state.last_shown, state.last_real, state.tokens
        key0 = (shown[1], real[0], tokens[1])
        key1 = (shown[0], real[1], tokens[0])
        tails = self._turn_tails
        tail0 = tails.get(key0) or self._turn_tail(key0)
        tail1 = tails.get(key1) or self._turn_tail(key1)
        step = state.step
        return b"%s%d%s" % (_TURN_HEAD, step, tail0), b"%s%d%s" % (_TURN_HEAD, step, tail1)

    def _turn_tail(self, key: tuple[int | None, int | None, int]) -> bytes:
        """What an encoded Turn holds after its round number, for (opponent's
        shown move, own real move, opponent's tokens); cached."""
        shown, real, tokens = key
        encoded = _encode(
            Turn(
                0,
                None if shown is None else MOVES[shown],  # type: ignore[arg-type]
                None if real is None else MOVES[real],  # type: ignore[arg-type]
                bucket(tokens),
            )
        )
        tail = self._turn_tails[key] = encoded[len(_TURN_HEAD) + 1 :]
        return tail

    def check(self, state: ChaosState, seat: int, action: Any) -> Fault | None:
        if action.round is not None and action.round != state.step:
            return wrong_step(f"reply is for round {action.round}, round {state.step} was asked")
        if action.real_move not in self._move_set:
            return illegal(f"real_move {action.real_move!r} is not a move of this game")
        if action.shadow_request:
            if action.shadow_move is None:
                return illegal("shadow_request is true but shadow_move is null")
            if action.shadow_move not in self._move_set:
                return illegal(f"shadow_move {action.shadow_move!r} is not a move of this game")
        return None

    def random_action(self, state: ChaosState, seat: int, rng: random.Random) -> Action:
        moves: list[Any] = list(self.moves)
        move = rng.choice(moves)
        if state.tokens[seat] and rng.random() < 0.1:
            return Action(real_move=move, shadow_request=True, shadow_move=rng.choice(moves))
        return Action(real_move=move, round=state.step if rng.random() < 0.5 else None)

    def resolve(self, state: ChaosState, actions: Sequence[Any | None]) -> Outcome:
        a0, a1 = actions
        if a0 is not None and a1 is not None and not (a0.shadow_request or a1.shadow_request):
            # The common round: both moved, nobody asked for a shadow.
            i0, i1, plain_code, points, shown = self._plain[a0.real_move, a1.real_move]
            state.hist.append(plain_code)
            state.last_real[0] = state.last_shown[0] = i0
            state.last_real[1] = state.last_shown[1] = i1
            state.step += 1
            tokens = state.tokens
            return Outcome(points, shown, (False, False), (tokens[0], tokens[1]))
        m0 = MOVE_INDEX[a0.real_move] if a0 is not None else None
        m1 = MOVE_INDEX[a1.real_move] if a1 is not None else None
        code = (NONE if m0 is None else m0) * 6 + (NONE if m1 is None else m1)
        index = len(state.hist)
        state.hist.append(code)
        tokens = state.tokens
        spent0 = a0 is not None and a0.shadow_request and tokens[0] > 0
        spent1 = a1 is not None and a1.shadow_request and tokens[1] > 0
        s0 = MOVE_INDEX[a0.shadow_move] if spent0 else m0  # type: ignore[union-attr]
        s1 = MOVE_INDEX[a1.shadow_move] if spent1 else m1  # type: ignore[union-attr]
        for seat, spent, shown in ((0, spent0, s0), (1, spent1, s1)):
            if spent:
                tokens[seat] -= 1
                state.spent[seat] += 1
                state.shadows.append((index, seat, shown))  # type: ignore[arg-type]
        state.last_real[0], state.last_real[1] = m0, m1
        state.last_shown[0], state.last_shown[1] = s0, s1
        state.step += 1
        return Outcome(
            CODE_POINTS[code],
            (
                None if s0 is None else MOVES[s0],  # type: ignore[arg-type]
                None if s1 is None else MOVES[s1],
            ),
            (spent0, spent1),
            (tokens[0], tokens[1]),
        )

    def disqualify(self, state: ChaosState, seats: Sequence[int]) -> None:
        for seat in seats:
            state.disqualified[seat] = True
        # Each remaining round counts -1 for a disqualified seat, +1 for the other
        # (see ChaosState.tally).
        state.forfeited += max(0, self.rounds - (state.step - 1) - state.forfeited)

    def finished(self, state: ChaosState) -> bool:
        return state.step > self.rounds or state.disqualified[0] or state.disqualified[1]

    def history(self, state: ChaosState) -> ChaosHistory:
        # The state's own buffer, not a copy: take it when the match is over.
        return ChaosHistory(
            codes=state.hist,
            shadows=tuple(state.shadows),
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
        tally = [state.tally(0), state.tally(1)]
        faulted = state.faulted_rounds
        seats = []
        for seat in (0, 1):
            placement = 1 if winner is None or winner == seat else 2
            seats.append(
                SeatResult(
                    seat=seat,
                    placement=placement,
                    scores=scores[seat],
                    stats={
                        "points": tally[seat][0],
                        "wins": tally[seat][1],
                        "draws": tally[seat][2],
                        "losses": tally[seat][3],
                        "tokens_spent": state.spent[seat],
                        "faulted_rounds": faulted[seat],
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
    default_final_steps: ClassVar[int | None] = None
    default_tokens: ClassVar[int] = 0
    rounds_means: ClassVar[str] = "rounds (default 1000)"
    moves: tuple[str, ...] = CLASSIC_MOVES
    schema_observation_type: ClassVar[type[msgspec.Struct] | None] = ClassicTurn
    schema_action_type: ClassVar[type[msgspec.Struct] | None] = ClassicAction
