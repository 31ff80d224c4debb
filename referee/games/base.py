"""The interface between a game's rules and the match driver.

A game is a pure state machine: no I/O, no clocks, no trio. The driver asks it
which seats must act, what each of them is shown, whether an action is legal,
and what happens when a step resolves. The same calls re-check a replay.

The shape fits simultaneous games (Chaos League: every seat acts each step),
turn-based games (Liar's Dice: one seat acts, the others wait) and multi-phase
hidden moves (CTM: commit, reveal, commit, reveal are separate steps) without
changing the driver: ``to_act`` may name any subset of the seats.
"""

from __future__ import annotations

import abc
import inspect
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import msgspec

from ..faults import Fault, FaultKind

StateT = TypeVar("StateT")

_encode = msgspec.json.Encoder().encode


def illegal(detail: str) -> Fault:
    """``check``'s answer for a well-formed action the rules do not allow now."""
    return Fault(FaultKind.ILLEGAL_MOVE, detail)


def wrong_step(detail: str) -> Fault:
    """``check``'s answer for a reply that names another step than the one asked:
    a protocol error, not a move."""
    return Fault(FaultKind.PROTOCOL_ERROR, detail)


class SeatResult(msgspec.Struct, frozen=True):
    """One seat's share of a finished game."""

    seat: int
    placement: int  # 1 is best; equal placements are a tie
    scores: dict[str, float]  # the game's score components, the ranking one first
    stats: dict[str, Any]  # counts for tables (wins, tokens spent, ...)


class GameResult(msgspec.Struct, frozen=True):
    seats: list[SeatResult]
    winner: int | None  # the seat that won, or None for a draw / no single winner
    reason: str  # "complete", "disqualification", ...
    steps: int  # steps actually played


class Game(abc.ABC, Generic[StateT]):
    """Rules of one game with fixed parameters."""

    name: ClassVar[str]
    title: ClassVar[str]
    # Struct a bot's reply decodes into; unknown fields are a protocol error.
    action_type: ClassVar[type[msgspec.Struct]]
    # Struct sent to a seat when it must act (tag "turn").
    observation_type: ClassVar[type[msgspec.Struct]]
    # Struct describing what a resolved step did (stored in the replay).
    outcome_type: ClassVar[type[msgspec.Struct]]

    seats: int
    default_steps: ClassVar[int]
    # Steps of a tournament's finals games when the organiser names none (None: the
    # game's default_steps). Chaos League's rules ask for longer finals.
    default_final_steps: ClassVar[int | None] = None
    # True when exactly two seats act at every step for as long as both are in
    # (Chaos League, RoShamBo): the driver then uses its two-seat round loop.
    pair_every_step: ClassVar[bool] = False

    # How the game describes itself to generic code (tables, tournaments), so that
    # adding a game touches only referee/games/ and its docs:
    # - a pair game's ranking in a tournament: the score key whose mean ranks the
    #   bots, then the one that breaks ties (each falls back to the first score);
    ranking_keys: ClassVar[tuple[str, str] | None] = None
    # - a table game's tie-break between bots level on mean placement: (score key,
    #   whether lower is better); None: the first score, higher better;
    tiebreak: ClassVar[tuple[str, bool] | None] = None
    # - labels of score keys in result tables (keys without one show as they are);
    score_labels: ClassVar[dict[str, str]] = {}
    # - the word for one step in progress, result and fault lines ("round" in a game
    #   where everyone acts at once; a turn-based game names its own step: "turn");
    step_word: ClassVar[str] = "round"
    # - what ``referee match --rounds N`` sets in this game, for its help.
    rounds_means: ClassVar[str] = "rounds"
    # - the Structs its JSON Schemas are generated from (protocol/schemas), when the
    #   game accepts fewer values than the Structs it decodes with (None: those).
    schema_observation_type: ClassVar[type[msgspec.Struct] | None] = None
    schema_action_type: ClassVar[type[msgspec.Struct] | None] = None

    # What a lean replay (protocol/replay-format.md) may leave out:
    # - whether every turn message follows from the rules, the header's seed and
    #   the earlier steps (then a replay need not hold it: readers derive it); a game
    #   whose turns carry randomness the replay does not otherwise hold says False;
    observations_derivable: ClassVar[bool] = True
    # - the action field in which a bot may echo the step number it answers (left
    #   out of the record when it does).
    step_echo: ClassVar[str | None] = None

    def length(self) -> int:
        """The number of steps the game is planned to last; 0 when it is not known in
        advance (e.g. Liar's Dice). For progress bars only."""
        return 0

    @classmethod
    def create(cls, seats: int, params: dict[str, Any]) -> Game[Any]:
        """The game for ``seats`` bots with ``params`` (as given by the organiser, or as
        recorded in a replay header). Raises ValueError with a readable message."""
        raise NotImplementedError

    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """Parameters as told to bots in ``hello`` and stored in replays."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Game[Any]:
        """The game ``params()`` came from, as a replay stores them (for re-checking).

        The default passes the keys the constructor accepts (derived keys such as
        Chaos League's ``moves`` are dropped) and raises ValueError unless the
        rebuilt game reports exactly the same parameters."""
        accepted = inspect.signature(cls).parameters
        kwargs = {k: v for k, v in params.items() if k in accepted}
        try:
            game = cls(**kwargs)
        except TypeError as exc:
            raise ValueError(str(exc)) from None
        if game.params() != dict(params):
            raise ValueError(f"parameters {dict(params)} do not rebuild as {game.params()}")
        return game

    def warm_up(self) -> None:
        """Load what ``result`` needs (e.g. numpy) ahead of time; the driver calls it
        while the bots start, so the cost is hidden behind their start-up."""

    @abc.abstractmethod
    def new_state(self, seed: int) -> StateT:
        """The state before the first step; any randomness the referee owns comes from seed."""

    @abc.abstractmethod
    def to_act(self, state: StateT) -> Sequence[int]:
        """Seats that must send an action for the next step."""

    @abc.abstractmethod
    def observe(self, state: StateT, seat: int) -> msgspec.Struct:
        """What ``seat`` is shown before it acts."""

    def encode_turn(self, state: StateT, seat: int) -> bytes:
        """``observe`` as the JSON sent on the wire (no newline). A game may override
        it with a faster encoder; it must return exactly these bytes."""
        return _encode(self.observe(state, seat))

    def encode_turns(self, state: StateT) -> tuple[bytes, bytes]:
        """``encode_turn`` for seats 0 and 1 at once (the two-seat loop's call)."""
        return self.encode_turn(state, 0), self.encode_turn(state, 1)

    @abc.abstractmethod
    def check(self, state: StateT, seat: int, action: Any) -> Fault | None:
        """None when the decoded action is legal now, else the fault: its kind
        (``wrong_step``: a reply for another step; ``illegal``: a move the rules do
        not allow now) and why."""

    @abc.abstractmethod
    def random_action(self, state: StateT, seat: int, rng: random.Random) -> Any:
        """A legal action for ``seat`` now, chosen with ``rng``: what a random bot
        would play. For conformance tests and fuzzing, never for judging."""

    @abc.abstractmethod
    def resolve(self, state: StateT, actions: Sequence[Any | None]) -> msgspec.Struct:
        """Apply one step. ``actions[seat]`` is None for a seat that was asked and faulted
        (the rules decide the penalty) and for seats not asked. Returns the step's outcome."""

    def notices(
        self, state: StateT, outcome: msgspec.Struct
    ) -> Sequence[tuple[int, msgspec.Struct]]:
        """Messages (seat, Struct with tag "notice") to send after a step resolves, for
        which no reply is expected: e.g. revealed dice after a challenge. Default none."""
        return ()

    @abc.abstractmethod
    def disqualify(self, state: StateT, seats: Sequence[int]) -> None:
        """Remove seats for good (crash, too many faults), all at once when several go in
        the same step; the rules decide what it costs them."""

    @abc.abstractmethod
    def finished(self, state: StateT) -> bool: ...

    @abc.abstractmethod
    def result(self, state: StateT) -> GameResult: ...

    def place(self, state: StateT) -> str:
        """Where the next step falls in the game's own units, for readers of a replay
        (e.g. Liar's Dice: "round 3"); "" when the step number says it all."""
        return ""

    def step_number(self, state: StateT) -> int:
        """The number the next step carries in replays (1-based)."""
        return int(state.step)  # type: ignore[attr-defined]
