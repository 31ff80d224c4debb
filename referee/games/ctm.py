"""CTM (Commit-Turn-Move): double rock-paper-scissors with commit-reveal, after the
Soroban contract of ``hallzyx/ctm-game``.

Rules as implemented (sources and decisions: docs/games.md; the bot's view:
protocol/games/ctm.md):

* Two players. A game has four steps, both players acting in each:
  commit hands (a Keccak-256 hash of ``left || right || salt``), reveal hands
  (two different hands, 0 rock, 1 paper, 2 scissors, and the 32-byte salt),
  commit choice (a hash of ``index || salt``), reveal choice (index 0 keeps the
  left hand, 1 the right).
* The kept hands are compared: player 1 wins if its hand beats player 2's *or the
  two are equal*; otherwise player 2 wins. There are no draws in a played game.
* A match is ``games`` games (2) with the player-1 role alternating, seat 0
  first, so that both seat orders are played.
* Any fault in a step (timeout, malformed reply, a reveal that does not match its
  commitment, equal or out-of-range hands) loses the game under way for that
  player; if both fault in the same step the game is drawn. A disqualified
  player loses the game under way and all remaining games.

Both players of a step are asked at once and see nothing of the other's reply
until the step resolves, so neither can copy a commitment or wait for the other's
reveal.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import msgspec

from ..faults import Fault
from .base import Game, GameResult, SeatResult, illegal, wrong_step


@functools.cache
def _keccak() -> Any:
    """pycryptodome's Keccak (hashlib's sha3_256 is NIST SHA3, which pads
    differently), imported on first use: only CTM needs it. None if missing."""
    try:
        from Crypto.Hash import keccak
    except ImportError:  # pragma: no cover - reported when the game is created
        return None
    return keccak


HANDS: tuple[str, ...] = ("rock", "paper", "scissors")
Phase = Literal["commit_hands", "reveal_hands", "commit_choice", "reveal_choice"]
PHASES: tuple[Phase, ...] = ("commit_hands", "reveal_hands", "commit_choice", "reveal_choice")
Reason = Literal["beats", "tie_player1", "fault", "disqualification"]
SALT_BYTES = 32


def keccak256(data: bytes) -> bytes:
    """Ethereum-style Keccak-256 (padding 0x01), as Soroban's ``keccak256``."""
    keccak = _keccak()
    if keccak is None:
        raise RuntimeError("CTM needs pycryptodome (pip install pycryptodome)")
    h = keccak.new(digest_bits=256)
    h.update(data)
    return h.digest()


def hands_commitment(left: int, right: int, salt: bytes) -> str:
    """Hex Keccak-256 of the 34-byte preimage: left, right (one byte each), salt."""
    return keccak256(bytes((left, right)) + salt).hex()


def choice_commitment(index: int, salt: bytes) -> str:
    """Hex Keccak-256 of the 33-byte preimage: index (one byte), salt."""
    return keccak256(bytes((index,)) + salt).hex()


def beats(a: int, b: int) -> bool:
    """Rock (0) beats scissors (2), paper (1) beats rock, scissors beats paper."""
    return (a - b) % 3 == 1


def parse_hex32(text: str | None) -> bytes | None:
    """32 bytes from 64 hex digits (either case, optional 0x), else None."""
    if text is None:
        return None
    t = text[2:] if text[:2] in ("0x", "0X") else text
    if len(t) != 64:
        return None
    try:
        return bytes.fromhex(t)
    except ValueError:
        return None


class Side(msgspec.Struct, frozen=True):
    """What is known of one player's game so far."""

    hands_commitment: str | None
    hands: list[int] | None  # [left, right], once revealed
    choice_commitment: str | None


class GameRecord(msgspec.Struct, frozen=True):
    """One finished game. Lists are by seat."""

    game: int
    player1: int  # the seat that won ties in this game
    hands: list[list[int] | None]
    choices: list[int | None]
    kept: list[int | None]
    winner: int | None  # None: drawn (both faulted or both disqualified)
    reason: Reason


class Notice(GameRecord, tag="notice", tag_field="type", frozen=True):
    """Sent to both players when a game ends."""


class Turn(msgspec.Struct, tag="turn", tag_field="type", frozen=True):
    step: int
    game: int  # 1-based
    games: int
    phase: Phase
    player1: bool  # you are player 1 in this game: equal kept hands win for you
    you: Side
    opponent: Side
    wins: int  # games you won so far in this match
    opponent_wins: int
    last_game: GameRecord | None  # the previous game of the match


class Action(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One Struct for all four phases; each phase uses its own fields only."""

    commitment: str | None = None  # commit phases: 64 hex digits
    hands: list[int] | None = None  # reveal_hands: [left, right]
    choice: int | None = None  # reveal_choice: 0 (left) or 1 (right)
    salt: str | None = None  # reveal phases: 64 hex digits (32 bytes)
    step: int | None = None  # optional echo of the step asked


_FIELDS: dict[str, frozenset[str]] = {
    "commit_hands": frozenset({"commitment"}),
    "reveal_hands": frozenset({"hands", "salt"}),
    "commit_choice": frozenset({"commitment"}),
    "reveal_choice": frozenset({"choice", "salt"}),
}


class Outcome(msgspec.Struct, frozen=True, omit_defaults=True):
    """What one step did. Lists are by seat; ``faulted`` seats gave no valid reply."""

    game: int
    phase: Phase
    faulted: list[bool]
    commitments: list[str | None] | None = None
    hands: list[list[int] | None] | None = None
    choices: list[int | None] | None = None
    salts: list[str | None] | None = None
    result: GameRecord | None = None


class CtmState:
    def __init__(self) -> None:
        self.step = 1
        self.game = 1
        self.phase = 0
        self.wins = [0, 0]
        self.draws = 0
        self.faulted_games = [0, 0]
        self.ties_won = [0, 0]
        self.disqualified = [False, False]
        self.forfeited = 0
        self.records: list[GameRecord] = []
        self.reset()

    def reset(self) -> None:
        self.hands_commit: list[str | None] = [None, None]
        self.hands: list[list[int] | None] = [None, None]
        self.choice_commit: list[str | None] = [None, None]
        self.choice: list[int | None] = [None, None]


class Ctm(Game[CtmState]):
    name: ClassVar[str] = "ctm"
    title: ClassVar[str] = "CTM (Commit-Turn-Move: double rock-paper-scissors, commit-reveal)"
    action_type: ClassVar[type[msgspec.Struct]] = Action
    observation_type: ClassVar[type[msgspec.Struct]] = Turn
    outcome_type: ClassVar[type[msgspec.Struct]] = Outcome
    step_echo: ClassVar[str | None] = "step"
    default_steps: ClassVar[int] = 8
    default_games: ClassVar[int] = 2
    # Four steps (commit, reveal, commit, reveal) make one game of the match.
    step_word: ClassVar[str] = "step"
    rounds_means: ClassVar[str] = "games of four steps (default 2)"

    def __init__(self, games: int | None = None) -> None:
        if _keccak() is None:
            raise ValueError("CTM needs pycryptodome for Keccak-256 (pip install pycryptodome)")
        self.seats = 2
        self.games = self.default_games if games is None else games
        if type(self.games) is not int or self.games < 1:
            raise ValueError("games must be a whole number >= 1")

    def length(self) -> int:
        return 4 * self.games

    @classmethod
    def create(cls, seats: int, params: dict[str, Any]) -> Ctm:
        if seats != 2:
            raise ValueError(f"CTM is played by 2 bots, not {seats}")
        params = dict(params)
        if "rounds" in params:  # ``referee match --rounds N``: N games
            params.setdefault("games", params.pop("rounds"))
        unknown = set(params) - {"games"}
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}")
        return cls(games=params.get("games"))

    def params(self) -> dict[str, Any]:
        return {"games": self.games}

    def new_state(self, seed: int) -> CtmState:
        # CTM has no randomness of the referee's: the seed is unused.
        return CtmState()

    def player1(self, state: CtmState) -> int:
        """Player 1 (who wins ties) alternates: seat 0 in odd games, seat 1 in even ones."""
        return (state.game - 1) % 2

    def place(self, state: CtmState) -> str:
        return f"game {state.game}, {PHASES[state.phase].replace('_', ' ')}"

    def to_act(self, state: CtmState) -> Sequence[int]:
        return (0, 1)

    def _side(self, state: CtmState, seat: int) -> Side:
        return Side(state.hands_commit[seat], state.hands[seat], state.choice_commit[seat])

    def observe(self, state: CtmState, seat: int) -> Turn:
        other = 1 - seat
        return Turn(
            step=state.step,
            game=state.game,
            games=self.games,
            phase=PHASES[state.phase],
            player1=self.player1(state) == seat,
            you=self._side(state, seat),
            opponent=self._side(state, other),
            wins=state.wins[seat],
            opponent_wins=state.wins[other],
            last_game=state.records[-1] if state.records else None,
        )

    def check(self, state: CtmState, seat: int, action: Any) -> Fault | None:
        if action.step is not None and action.step != state.step:
            return wrong_step(
                f"reply is for step {action.step}, step {state.step} was asked (wrong round)"
            )
        phase = PHASES[state.phase]
        given = {
            f for f in ("commitment", "hands", "choice", "salt") if getattr(action, f) is not None
        }
        wanted = _FIELDS[phase]
        if given != wanted:
            return illegal(f"{phase} takes {sorted(wanted)}, got {sorted(given)}")
        if phase in ("commit_hands", "commit_choice"):
            if parse_hex32(action.commitment) is None:
                return illegal("commitment must be 64 hex digits (a Keccak-256 hash)")
            return None
        salt = parse_hex32(action.salt)
        if salt is None:
            return illegal("salt must be 64 hex digits (32 bytes)")
        committed = (
            state.hands_commit[seat] if phase == "reveal_hands" else state.choice_commit[seat]
        )
        if phase == "reveal_hands":
            hands = action.hands
            if len(hands) != 2 or not all(0 <= h <= 2 for h in hands):
                return illegal("hands must be two of 0 (rock), 1 (paper), 2 (scissors)")
            if hands[0] == hands[1]:
                return illegal("the two hands must differ")
            if hands_commitment(hands[0], hands[1], salt) != committed:
                return illegal("hands and salt do not match the hands commitment")
            return None
        if action.choice not in (0, 1):
            return illegal("choice must be 0 (keep left) or 1 (keep right)")
        if choice_commitment(action.choice, salt) != committed:
            return illegal("choice and salt do not match the choice commitment")
        return None

    def random_action(self, state: CtmState, seat: int, rng: random.Random) -> Action:
        # A reveal must match its commitment: both come from a secret derived from
        # the seat and the game under way, so nothing needs remembering in between.
        secret = hashlib.sha256(f"random-action:{seat}:{state.game}".encode()).digest()
        left = secret[0] % 3
        right = (left + 1 + secret[1] % 2) % 3
        choice = secret[2] % 2
        salt = secret  # 32 bytes
        phase = PHASES[state.phase]
        if phase == "commit_hands":
            return Action(commitment=hands_commitment(left, right, salt))
        if phase == "reveal_hands":
            return Action(hands=[left, right], salt=salt.hex())
        if phase == "commit_choice":
            return Action(commitment=choice_commitment(choice, salt))
        return Action(
            choice=choice, salt=salt.hex(), step=state.step if rng.random() < 0.5 else None
        )

    def resolve(self, state: CtmState, actions: Sequence[Any | None]) -> Outcome:
        phase = PHASES[state.phase]
        faulted = [a is None for a in actions]
        game = state.game
        state.step += 1
        if any(faulted):
            for seat in (0, 1):
                if faulted[seat]:
                    state.faulted_games[seat] += 1
            winner = None if all(faulted) else faulted.index(False)
            record = self._end_game(state, winner, "fault")
            return Outcome(game=game, phase=phase, faulted=faulted, result=record)
        a0, a1 = actions
        assert a0 is not None and a1 is not None
        if phase in ("commit_hands", "commit_choice"):
            commits: list[str | None] = [
                parse_hex32(a.commitment).hex()  # type: ignore[union-attr]
                for a in (a0, a1)
            ]
            if phase == "commit_hands":
                state.hands_commit = commits
            else:
                state.choice_commit = commits
            state.phase += 1
            return Outcome(game=game, phase=phase, faulted=faulted, commitments=commits)
        salts: list[str | None] = [parse_hex32(a.salt).hex() for a in (a0, a1)]  # type: ignore[union-attr]
        if phase == "reveal_hands":
            state.hands = [list(a0.hands), list(a1.hands)]
            state.phase += 1
            return Outcome(game=game, phase=phase, faulted=faulted, hands=state.hands, salts=salts)
        state.choice = [a0.choice, a1.choice]
        p1 = self.player1(state)
        p2 = 1 - p1
        kept = [state.hands[s][state.choice[s]] for s in (0, 1)]  # type: ignore[index]
        reason: Reason
        if kept[p1] == kept[p2]:
            winner, reason = p1, "tie_player1"
            state.ties_won[p1] += 1
        elif beats(kept[p1], kept[p2]):
            winner, reason = p1, "beats"
        else:
            winner, reason = p2, "beats"
        record = self._end_game(state, winner, reason, kept)
        return Outcome(
            game=game,
            phase=phase,
            faulted=faulted,
            choices=[a0.choice, a1.choice],
            salts=salts,
            result=record,
        )

    def _end_game(
        self,
        state: CtmState,
        winner: int | None,
        reason: Reason,
        kept: list[int | None] | None = None,
    ) -> GameRecord:
        record = GameRecord(
            game=state.game,
            player1=self.player1(state),
            hands=list(state.hands),
            choices=list(state.choice),
            kept=kept or [None, None],
            winner=winner,
            reason=reason,
        )
        state.records.append(record)
        if winner is None:
            state.draws += 1
        else:
            state.wins[winner] += 1
        state.game += 1
        state.phase = 0
        state.reset()
        return record

    def notices(self, state: CtmState, outcome: msgspec.Struct) -> Sequence[tuple[int, Any]]:
        record = getattr(outcome, "result", None)
        if record is None:
            return ()
        notice = Notice(**msgspec.structs.asdict(record))
        return [(0, notice), (1, notice)]

    def disqualify(self, state: CtmState, seats: Sequence[int]) -> None:
        for seat in seats:
            state.disqualified[seat] = True
        winner = None if all(state.disqualified) else state.disqualified.index(False)
        # The game under way and every later one are lost by the disqualified.
        while state.game <= self.games:
            state.forfeited += 1
            self._end_game(state, winner, "disqualification")

    def finished(self, state: CtmState) -> bool:
        return state.game > self.games

    def result(self, state: CtmState) -> GameResult:
        w = state.wins
        if w[0] == w[1]:
            winner: int | None = None
            placements = [1, 1]
        else:
            winner = 0 if w[0] > w[1] else 1
            placements = [1 if s == winner else 2 for s in (0, 1)]
        played = len(state.records)
        seats = [
            SeatResult(
                seat=s,
                placement=placements[s],
                scores={"wins": float(w[s]), "losses": float(w[1 - s])},
                stats={
                    "wins": w[s],
                    "losses": w[1 - s],
                    "draws": state.draws,
                    "games_as_player1": sum(r.player1 == s for r in state.records),
                    "ties_won_as_player1": state.ties_won[s],
                    "faulted_games": state.faulted_games[s],
                    "forfeited_games": state.forfeited if state.disqualified[s] else 0,
                    "disqualified": state.disqualified[s],
                    "games": played,
                },
            )
            for s in (0, 1)
        ]
        reason = "disqualification" if any(state.disqualified) else "complete"
        return GameResult(seats=seats, winner=winner, reason=reason, steps=state.step - 1)
