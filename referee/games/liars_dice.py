"""Liar's Dice as specified by J. A. Kilgallen (2021, final version "v3").

Rules as implemented (sources and decisions: docs/games.md; the bot's view:
protocol/games/liars_dice.md):

* 2 or more players, each starting with ``dice`` (5) six-sided dice. A random
  player (from the match seed) opens the first round. Every round, everyone
  still in rolls all their dice again.
* Sixes are wild: a bid on face 1..5 counts that face and sixes, a bid on six
  counts sixes only. A bid's weight is its quantity, doubled for sixes; each bid
  in a round must weigh strictly more than the previous one (the face alone never
  raises). Quantities run from 1 to the number of dice in play (our cap).
* Instead of bidding, the player on turn may challenge the previous bid:
  ``liar`` (the bidder loses a die if fewer dice match, else the challenger),
  ``spot_on_lose_two`` (exactly right: the bidder loses two, else the challenger
  loses one), ``spot_on_gain_one`` (only with fewer than ``dice`` dice; exactly
  right: the challenger gets a die back, else it loses one).
* If the challenger lost a die, the next player after it opens the next round,
  otherwise the challenger does. Players at 0 dice are out; the last one in wins.
* Any fault on a player's turn (timeout, malformed reply, illegal move) puts that
  player out at once, as the source disqualifies on an invalid move. The round
  under way is void: nobody else loses a die, the dice are rolled again and the
  next player after the faulty one opens.
* ``max_rounds`` (1000) caps a game that bots keep alive with "gain one": when it
  is reached, the players still in are ranked by dice left.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import msgspec

from ..faults import Fault
from .base import Game, GameResult, SeatResult, illegal, wrong_step

FACES = 6
WILD = 6

Move = Literal["bid", "liar", "spot_on_lose_two", "spot_on_gain_one"]
Call = Literal["liar", "spot_on_lose_two", "spot_on_gain_one"]
CALLS: frozenset[str] = frozenset(("liar", "spot_on_lose_two", "spot_on_gain_one"))


def weight(quantity: int, face: int) -> int:
    """How high a bid is: sixes are rarer (wild only for themselves), so they count double."""
    return quantity * 2 if face == WILD else quantity


def count_matching(dice: Sequence[Sequence[int]], face: int) -> int:
    """Dice on the table that count for ``face``: the face itself, plus sixes unless the
    bid is on sixes."""
    n = 0
    for hand in dice:
        for d in hand:
            if d == face or (face != WILD and d == WILD):
                n += 1
    return n


class Bid(msgspec.Struct, frozen=True):
    seat: int
    quantity: int
    face: int


class Reveal(msgspec.Struct, frozen=True):
    """How a round ended: a challenge, or a fault that put a player out."""

    event: Literal["challenge", "fault"]
    round: int
    seat: int  # the challenger, or the player that faulted
    call: Call | None  # None for a fault
    bidder: int | None  # whose bid was challenged
    quantity: int | None
    face: int | None
    count: int | None  # dice that matched the challenged bid
    dice: list[list[int]]  # everyone's dice this round, by seat ([] for players out)
    change: list[int]  # dice won (+) or lost (-) by seat
    dice_counts: list[int]  # dice per seat afterwards
    eliminated: list[int]  # seats that went out now
    next_starter: int | None  # who opens the next round; None when the game is over


class Notice(Reveal, tag="notice", tag_field="type", frozen=True):
    """Sent to every seat when a round ends."""


class Turn(msgspec.Struct, tag="turn", tag_field="type", frozen=True):
    """What the player on turn is shown."""

    step: int
    round: int
    seat: int
    dice: list[int]  # your own dice, sorted
    dice_counts: list[int]  # every seat's dice count (0 = out)
    starter: int  # who opened this round
    bids: list[Bid]  # this round's bids, oldest first
    last_reveal: Reveal | None  # how the previous round ended (None in round 1)


class Action(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """``{"move": "bid", "quantity": 3, "face": 5}`` or ``{"move": "liar"}`` etc."""

    move: Move
    quantity: int | None = None
    face: int | None = None
    step: int | None = None  # optional echo of the step asked


class Outcome(msgspec.Struct, frozen=True, omit_defaults=True):
    """What one step did: the move of the player on turn and how the round ended, if it did."""

    seat: int
    move: Move | None  # None: the player faulted
    quantity: int | None = None
    face: int | None = None
    reveal: Reveal | None = None


class LiarsDiceState:
    """Everything a game depends on, the random generator included, so that the seed and
    the recorded actions re-run it exactly."""

    def __init__(self, seats: int, dice: int, seed: int) -> None:
        import numpy as np  # here, not at module level: it costs the referee's start-up

        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.step = 1
        self.round = 1
        self.dice_counts = [dice] * seats
        self.dice: list[list[int]] = [[] for _ in range(seats)]
        self.bids: list[Bid] = []
        self.starter = int(self.rng.integers(seats))
        self.turn = self.starter
        self.last_reveal: Reveal | None = None
        # Elimination order: seats out in the same event share a number; later is better.
        self.out_order: list[int | None] = [None] * seats
        self.out_events = 0
        self.faulted = [False] * seats
        self.disqualified = [False] * seats
        self.ended_by_fault = False
        self.bids_made = [0] * seats
        self.challenges = [0] * seats
        self.challenges_won = [0] * seats
        self.dice_lost = [0] * seats
        self.dice_gained = [0] * seats
        self.roll()

    def alive(self) -> list[int]:
        return [s for s, n in enumerate(self.dice_counts) if n > 0]

    def roll(self) -> None:
        for seat, n in enumerate(self.dice_counts):
            self.dice[seat] = sorted(int(d) for d in self.rng.integers(1, FACES + 1, size=n))

    def next_alive(self, seat: int) -> int:
        n = len(self.dice_counts)
        for k in range(1, n + 1):
            s = (seat + k) % n
            if self.dice_counts[s] > 0:
                return s
        return seat


class LiarsDice(Game[LiarsDiceState]):
    name: ClassVar[str] = "liars_dice"
    title: ClassVar[str] = "Liar's Dice (Kilgallen 2021: sixes wild, spot on)"
    action_type: ClassVar[type[msgspec.Struct]] = Action
    observation_type: ClassVar[type[msgspec.Struct]] = Turn
    outcome_type: ClassVar[type[msgspec.Struct]] = Outcome
    step_echo: ClassVar[str | None] = "step"
    default_steps: ClassVar[int] = 0  # unknown in advance
    default_dice: ClassVar[int] = 5
    default_max_rounds: ClassVar[int] = 1000
    # A step is one player's turn (a bid or a challenge); a round ends at a challenge.
    step_word: ClassVar[str] = "turn"
    rounds_means: ClassVar[str] = "the most rounds (default 1000)"

    def __init__(
        self, players: int, dice: int | None = None, max_rounds: int | None = None
    ) -> None:
        if type(players) is not int or players < 2:
            raise ValueError("Liar's Dice needs at least 2 players")
        self.seats = players
        self.dice = self.default_dice if dice is None else dice
        self.max_rounds = self.default_max_rounds if max_rounds is None else max_rounds
        if type(self.dice) is not int or self.dice < 1:
            raise ValueError("dice must be a whole number >= 1")
        if type(self.max_rounds) is not int or self.max_rounds < 1:
            raise ValueError("max_rounds must be a whole number >= 1")

    @classmethod
    def create(cls, seats: int, params: dict[str, Any]) -> LiarsDice:
        params = dict(params)
        if "rounds" in params:  # ``referee match --rounds N``
            params.setdefault("max_rounds", params.pop("rounds"))
        # Replays record the player count among the parameters (see params()).
        if params.pop("players", seats) != seats:
            raise ValueError(f"players must be the number of bots ({seats})")
        unknown = set(params) - {"dice", "max_rounds"}
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}")
        return cls(seats, dice=params.get("dice"), max_rounds=params.get("max_rounds"))

    def params(self) -> dict[str, Any]:
        # The player count is included so that a replay's parameters rebuild the game.
        return {"players": self.seats, "dice": self.dice, "max_rounds": self.max_rounds}

    def new_state(self, seed: int) -> LiarsDiceState:
        return LiarsDiceState(self.seats, self.dice, seed)

    def place(self, state: LiarsDiceState) -> str:
        return f"round {state.round}"

    def to_act(self, state: LiarsDiceState) -> Sequence[int]:
        return (state.turn,)

    def observe(self, state: LiarsDiceState, seat: int) -> Turn:
        return Turn(
            step=state.step,
            round=state.round,
            seat=seat,
            dice=list(state.dice[seat]),
            dice_counts=list(state.dice_counts),
            starter=state.starter,
            bids=list(state.bids),
            last_reveal=state.last_reveal,
        )

    def check(self, state: LiarsDiceState, seat: int, action: Any) -> Fault | None:
        if action.step is not None and action.step != state.step:
            return wrong_step(
                f"reply is for step {action.step}, step {state.step} was asked (wrong round)"
            )
        if action.move == "bid":
            q, f = action.quantity, action.face
            if q is None or f is None:
                return illegal("a bid needs quantity and face")
            if not 1 <= f <= FACES:
                return illegal(f"face {f} is not 1 to 6")
            total = sum(state.dice_counts)
            if not 1 <= q <= total:
                return illegal(f"quantity {q} is not 1 to {total} (the dice in play)")
            if state.bids:
                last = state.bids[-1]
                if weight(q, f) <= weight(last.quantity, last.face):
                    return illegal(
                        f"bid {q}x{f} (weight {weight(q, f)}) does not beat "
                        f"{last.quantity}x{last.face} (weight {weight(last.quantity, last.face)})"
                    )
            return None
        if action.quantity is not None or action.face is not None:
            return illegal(f"{action.move} takes no quantity or face")
        if not state.bids:
            return illegal(f"{action.move} needs a bid to challenge; the opener must bid")
        if action.move == "spot_on_gain_one" and state.dice_counts[seat] >= self.dice:
            return illegal(f"spot_on_gain_one needs fewer than {self.dice} dice")
        return None

    def random_action(self, state: LiarsDiceState, seat: int, rng: random.Random) -> Action:
        total = sum(state.dice_counts)
        last = weight(state.bids[-1].quantity, state.bids[-1].face) if state.bids else 0
        raises = [
            (q, f) for q in range(1, total + 1) for f in range(1, FACES + 1) if weight(q, f) > last
        ]
        if raises and (not state.bids or rng.random() < 0.7):
            q, f = rng.choice(raises)
            return Action(move="bid", quantity=q, face=f)
        calls: list[Move] = ["liar", "spot_on_lose_two"]
        if state.dice_counts[seat] < self.dice:
            calls.append("spot_on_gain_one")
        return Action(move=rng.choice(calls))

    def resolve(self, state: LiarsDiceState, actions: Sequence[Any | None]) -> Outcome:
        seat = state.turn
        action = actions[seat]
        state.step += 1
        if action is None:
            state.faulted[seat] = True
            reveal = self._put_out(state, [seat], seat)
            return Outcome(seat=seat, move=None, reveal=reveal)
        if action.move == "bid":
            state.bids.append(Bid(seat, action.quantity, action.face))
            state.bids_made[seat] += 1
            state.turn = state.next_alive(seat)
            return Outcome(seat=seat, move="bid", quantity=action.quantity, face=action.face)
        reveal = self._challenge(state, seat, action.move)
        return Outcome(seat=seat, move=action.move, reveal=reveal)

    def _challenge(self, state: LiarsDiceState, seat: int, call: str) -> Reveal:
        last = state.bids[-1]
        bidder = last.seat
        count = count_matching(state.dice, last.face)
        diff = count - last.quantity
        change = [0] * self.seats
        state.challenges[seat] += 1
        if call == "liar":
            won = diff < 0
            if won:
                change[bidder] = -1
        elif call == "spot_on_lose_two":
            won = diff == 0
            if won:
                change[bidder] = -min(2, state.dice_counts[bidder])
        else:  # spot_on_gain_one
            won = diff == 0
            if won:
                change[seat] = min(1, self.dice - state.dice_counts[seat])
        if won:
            state.challenges_won[seat] += 1
        else:
            change[seat] = -1
        revealed = [list(hand) for hand in state.dice]
        eliminated = []
        for s, c in enumerate(change):
            if c < 0:
                state.dice_lost[s] -= c
            elif c > 0:
                state.dice_gained[s] += c
            before = state.dice_counts[s]
            state.dice_counts[s] = before + c
            if before > 0 and state.dice_counts[s] == 0:
                eliminated.append(s)
        if eliminated:
            state.out_events += 1
            for s in eliminated:
                state.out_order[s] = state.out_events
        # The challenger opens unless it lost a die; then the next player after it does.
        starter = seat if change[seat] >= 0 else state.next_alive(seat)
        return self._new_round(
            state, "challenge", seat, call, last, count, revealed, change, eliminated, starter
        )

    def _put_out(self, state: LiarsDiceState, seats: Sequence[int], on_turn: int) -> Reveal:
        """Put ``seats`` out for a fault; the round under way is void."""
        change = [0] * self.seats
        for s in seats:
            change[s] = -state.dice_counts[s]
            state.dice_counts[s] = 0
        state.out_events += 1
        for s in seats:
            state.out_order[s] = state.out_events
        revealed = [list(hand) for hand in state.dice]
        starter = on_turn if state.dice_counts[on_turn] > 0 else state.next_alive(on_turn)
        if len(state.alive()) <= 1:
            state.ended_by_fault = True
        return self._new_round(
            state, "fault", seats[0], None, None, None, revealed, change, list(seats), starter
        )

    def _new_round(
        self,
        state: LiarsDiceState,
        event: Literal["challenge", "fault"],
        seat: int,
        call: Any,
        bid: Bid | None,
        count: int | None,
        revealed: list[list[int]],
        change: list[int],
        eliminated: list[int],
        starter: int,
    ) -> Reveal:
        over = len(state.alive()) <= 1 or state.round >= self.max_rounds
        reveal = Reveal(
            event=event,
            round=state.round,
            seat=seat,
            call=call,
            bidder=None if bid is None else bid.seat,
            quantity=None if bid is None else bid.quantity,
            face=None if bid is None else bid.face,
            count=count,
            dice=revealed,
            change=change,
            dice_counts=list(state.dice_counts),
            eliminated=eliminated,
            next_starter=None if over else starter,
        )
        state.last_reveal = reveal
        state.round += 1
        state.bids = []
        if not over:
            state.starter = state.turn = starter
            state.roll()
        return reveal

    def notices(self, state: LiarsDiceState, outcome: msgspec.Struct) -> Sequence[tuple[int, Any]]:
        reveal = getattr(outcome, "reveal", None)
        if reveal is None:
            return ()
        notice = Notice(**msgspec.structs.asdict(reveal))
        return [(seat, notice) for seat in range(self.seats)]

    def disqualify(self, state: LiarsDiceState, seats: Sequence[int]) -> None:
        for s in seats:
            state.disqualified[s] = True
        live = [s for s in seats if state.dice_counts[s] > 0]
        if live and not self.finished(state):
            self._put_out(state, live, state.turn)

    def finished(self, state: LiarsDiceState) -> bool:
        return len(state.alive()) <= 1 or state.round > self.max_rounds

    def _key(self, state: LiarsDiceState, seat: int) -> tuple[int, int, int]:
        order = state.out_order[seat]
        if order is None:
            return (1, state.dice_counts[seat], 0)
        return (0, 0, order)

    def result(self, state: LiarsDiceState) -> GameResult:
        keys = [self._key(state, s) for s in range(self.seats)]
        placements = [1 + sum(k > keys[s] for k in keys) for s in range(self.seats)]
        firsts = [s for s in range(self.seats) if placements[s] == 1]
        winner = firsts[0] if len(firsts) == 1 else None
        seats = []
        for s in range(self.seats):
            outlasted = sum(keys[s] > k for k in keys)
            seats.append(
                SeatResult(
                    seat=s,
                    placement=placements[s],
                    scores={
                        "outlasted": float(outlasted),
                        "dice_left": float(state.dice_counts[s]),
                    },
                    stats={
                        "dice_left": state.dice_counts[s],
                        "bids": state.bids_made[s],
                        "challenges": state.challenges[s],
                        "challenges_won": state.challenges_won[s],
                        "dice_lost": state.dice_lost[s],
                        "dice_gained": state.dice_gained[s],
                        "faulted": state.faulted[s],
                        "disqualified": state.disqualified[s],
                    },
                )
            )
        if len(state.alive()) > 1:
            reason = "round_limit"
        elif state.ended_by_fault:
            reason = "disqualification"
        else:
            reason = "complete"
        return GameResult(seats=seats, winner=winner, reason=reason, steps=state.step - 1)
