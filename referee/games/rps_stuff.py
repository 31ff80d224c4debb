"""Rock Paper Stuff (Lee Spector, 2017, master = branch "balance").

Rules as implemented (sources and decisions: docs/games.md; the bot's view:
protocol/games/rps_stuff.md):

* n >= 2 players, each starting with 5n of each of rock, paper, scissors, fire and
  water. The game lasts ``trades`` trades (default 100 n(n-1)/2, from the starting
  number of players) or until fewer than two players are alive.
* Each trade pairs two living players uniformly at random (an ordered pair A, B,
  drawn from the match seed). Both play one kind at once. A play of a kind the
  player does not hold, or no valid play at all (a fault), is replaced by a kind
  drawn uniformly among the kinds it holds.
* Each gives up the item it played and receives what the trade table says
  (``RECEIVE``); equal kinds stick together and go both to A or both to B, by a
  fair coin from the seed.
* A player left with nothing is dead: it trades no more and cannot win.
* Balance is the standard deviation of the five counts (lower is better). The
  living rank by it, then the dead, then the disqualified. The winner is the
  first unless the first two are exactly level ("Nobody" in the source).
* A bot may publish a "skin", a JSON object that its future trading partners see
  (shallowly merged, as in the source), of at most ``skin_bytes`` bytes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import sqrt
from typing import Any, ClassVar, Literal

import msgspec

from ..faults import Fault
from .base import Game, GameResult, SeatResult, illegal, wrong_step

KINDS: tuple[str, ...] = ("rock", "paper", "scissors", "fire", "water")
KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
Kind = Literal["rock", "paper", "scissors", "fire", "water"]

R, P, S, F, W = range(5)

# What A and B receive when A plays the first kind and B the second; the reverse
# order swaps the two receipts. Equal kinds are handled apart (a coin flip).
_TABLE: dict[tuple[int, int], tuple[tuple[int, ...], tuple[int, ...]]] = {
    (R, P): ((P,), (R,)),  # simple exchange
    (R, S): ((F,), (R,)),  # rock sparks fire from scissors
    (R, F): ((R,), (S,)),  # fire forges rock into scissors
    (R, W): ((), (W, W)),  # rock sinks and splashes back water
    (P, S): ((P, P), (S,)),  # scissors cuts paper into two
    (P, F): ((), (F, F)),  # fire lights paper
    (P, W): ((P,), ()),  # paper absorbs water
    (S, F): ((S, S), (F,)),  # the rule the README leaves out; from the code and diagram
    (S, W): ((W,), (R,)),  # water rusts scissors into rock
    (F, W): ((), (W,)),  # water extinguishes fire
}
RECEIVE: dict[tuple[int, int], tuple[tuple[int, ...], tuple[int, ...]]] = {}
for (_a, _b), (_ra, _rb) in _TABLE.items():
    RECEIVE[(_a, _b)] = (_ra, _rb)
    RECEIVE[(_b, _a)] = (_rb, _ra)


def imbalance(counts: Sequence[int]) -> int:
    """25 times the population variance of the counts: an exact integer, so equal
    balances compare equal (the source compared floats)."""
    total = sum(counts)
    return len(counts) * sum(c * c for c in counts) - total * total


def deviance(counts: Sequence[int], sample: bool = False) -> float:
    """Standard deviation of the counts: the README's (divide by 5) or, with
    ``sample``, the source code's (divide by 4)."""
    n = len(counts)
    return sqrt(imbalance(counts) / (n * (n - 1 if sample else n)))


class Stuff(msgspec.Struct, frozen=True):
    rock: int
    paper: int
    scissors: int
    fire: int
    water: int


def stuff(counts: Sequence[int]) -> Stuff:
    return Stuff(*counts)


class Opponent(msgspec.Struct, frozen=True):
    seat: int
    inventory: Stuff
    skin: dict[str, Any]


class Turn(msgspec.Struct, tag="turn", tag_field="type", frozen=True):
    """What each of the two traders is shown before a trade."""

    step: int  # the trade number, 1-based
    trades: int  # trades in the game
    alive: int  # living players
    seat: int
    inventory: Stuff
    opponent: Opponent


class Action(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    play: Kind
    skin: dict[str, Any] | None = None  # keys to add to or change in your public skin
    step: int | None = None  # optional echo of the step asked


class Trade(msgspec.Struct, frozen=True):
    """One trade. Lists are [A, B]."""

    step: int
    seats: list[int]
    asked: list[Kind | None]  # the plays the bots sent (None: a fault)
    played: list[Kind]  # the plays made, after replacing what a player did not hold
    received: list[list[Kind]]
    inventories: list[Stuff]  # after the trade
    died: list[int]  # seats that died in this trade


class Notice(Trade, tag="notice", tag_field="type", frozen=True):
    """Sent to both traders after a trade."""


class RpsState:
    def __init__(self, players: int, seed: int) -> None:
        import numpy as np  # here, not at module level: it costs the referee's start-up

        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.step = 1
        self.inv = [[5 * players] * 5 for _ in range(players)]
        self.alive = [True] * players
        self.disqualified = [False] * players
        self.skins: list[dict[str, Any]] = [{} for _ in range(players)]
        self.pair: tuple[int, int] | None = None
        self.trades = [0] * players
        self.replaced = [0] * players
        self.faulted = [0] * players
        self.died_at: list[int | None] = [None] * players

    def living(self) -> list[int]:
        return [s for s, a in enumerate(self.alive) if a]

    def draw_pair(self) -> None:
        living = self.living()
        if len(living) < 2:
            self.pair = None
            return
        # Shuffling the living and taking the first two, as the source does, is a
        # uniform ordered pair.
        i, j = self.rng.choice(len(living), size=2, replace=False)
        self.pair = (living[int(i)], living[int(j)])

    def legitimise(self, seat: int, kind: int | None) -> int:
        inv = self.inv[seat]
        if kind is not None and inv[kind] > 0:
            return kind
        held = [k for k in range(5) if inv[k] > 0]
        return held[int(self.rng.integers(len(held)))]


class RockPaperStuff(Game[RpsState]):
    name: ClassVar[str] = "rps_stuff"
    tiebreak: ClassVar[tuple[str, bool] | None] = ("deviance", True)
    title: ClassVar[str] = "Rock Paper Stuff (Spector: balance five kinds by trading)"
    action_type: ClassVar[type[msgspec.Struct]] = Action
    observation_type: ClassVar[type[msgspec.Struct]] = Turn
    outcome_type: ClassVar[type[msgspec.Struct]] = Trade
    step_echo: ClassVar[str | None] = "step"
    default_steps: ClassVar[int] = 100
    default_skin_bytes: ClassVar[int] = 1024
    step_word: ClassVar[str] = "trade"
    rounds_means: ClassVar[str] = "trades (default 100 per pair of bots)"

    def __init__(
        self, players: int, trades: int | None = None, skin_bytes: int | None = None
    ) -> None:
        if type(players) is not int or players < 2:
            raise ValueError("Rock Paper Stuff needs at least 2 players")
        self.seats = players
        self.trades = 100 * players * (players - 1) // 2 if trades is None else trades
        self.skin_bytes = self.default_skin_bytes if skin_bytes is None else skin_bytes
        if type(self.trades) is not int or self.trades < 0:
            raise ValueError("trades must be a whole number >= 0")
        if type(self.skin_bytes) is not int or self.skin_bytes < 2:
            raise ValueError("skin_bytes must be a whole number >= 2")

    def length(self) -> int:
        return self.trades

    @classmethod
    def create(cls, seats: int, params: dict[str, Any]) -> RockPaperStuff:
        params = dict(params)
        if "rounds" in params:  # ``referee match --rounds N``
            params.setdefault("trades", params.pop("rounds"))
        if params.pop("players", seats) != seats:
            raise ValueError(f"players must be the number of bots ({seats})")
        if list(params.pop("kinds", KINDS)) != list(KINDS):
            raise ValueError(f"kinds must be {list(KINDS)}")
        unknown = set(params) - {"trades", "skin_bytes"}
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}")
        return cls(seats, trades=params.get("trades"), skin_bytes=params.get("skin_bytes"))

    def params(self) -> dict[str, Any]:
        # The player count is included so that a replay's parameters rebuild the game.
        return {
            "players": self.seats,
            "trades": self.trades,
            "skin_bytes": self.skin_bytes,
            "kinds": list(KINDS),
        }

    def new_state(self, seed: int) -> RpsState:
        state = RpsState(self.seats, seed)
        if self.trades > 0:
            state.draw_pair()
        return state

    def to_act(self, state: RpsState) -> Sequence[int]:
        return state.pair or ()

    def observe(self, state: RpsState, seat: int) -> Turn:
        assert state.pair is not None
        a, b = state.pair
        other = b if seat == a else a
        return Turn(
            step=state.step,
            trades=self.trades,
            alive=sum(state.alive),
            seat=seat,
            inventory=stuff(state.inv[seat]),
            opponent=Opponent(other, stuff(state.inv[other]), dict(state.skins[other])),
        )

    def check(self, state: RpsState, seat: int, action: Any) -> Fault | None:
        if action.step is not None and action.step != state.step:
            return wrong_step(
                f"reply is for step {action.step}, step {state.step} was asked (wrong round)"
            )
        if action.skin:
            size = len(msgspec.json.encode({**state.skins[seat], **action.skin}))
            if size > self.skin_bytes:
                return illegal(
                    f"the skin would be {size} bytes of JSON, the limit is {self.skin_bytes}"
                )
        return None

    def random_action(self, state: RpsState, seat: int, rng: random.Random) -> Action:
        skin = {"mood": rng.choice(("calm", "bold"))} if rng.random() < 0.2 else None
        return Action(play=rng.choice(KINDS), skin=skin)  # type: ignore[arg-type]

    def resolve(self, state: RpsState, actions: Sequence[Any | None]) -> Trade:
        assert state.pair is not None
        a, b = state.pair
        act_a, act_b = actions[a], actions[b]
        asked = [None if x is None else KIND_INDEX[x.play] for x in (act_a, act_b)]
        pa = state.legitimise(a, asked[0])
        pb = state.legitimise(b, asked[1])
        ra: tuple[int, ...]
        rb: tuple[int, ...]
        if pa == pb:
            # Equal kinds stick together and go one way or the other.
            both = (pa, pa)
            ra, rb = (both, ()) if state.rng.random() < 0.5 else ((), both)
        else:
            ra, rb = RECEIVE[(pa, pb)]
        died = []
        for seat, act, ask, play, got in (
            (a, act_a, asked[0], pa, ra),
            (b, act_b, asked[1], pb, rb),
        ):
            inv = state.inv[seat]
            inv[play] -= 1
            for k in got:
                inv[k] += 1
            state.trades[seat] += 1
            if act is None:
                state.faulted[seat] += 1
            elif ask != play:
                state.replaced[seat] += 1
            if act is not None and act.skin:
                state.skins[seat].update(act.skin)
            if not any(inv):
                state.alive[seat] = False
                state.died_at[seat] = state.step
                died.append(seat)
        trade = Trade(
            step=state.step,
            seats=[a, b],
            asked=[None if k is None else KINDS[k] for k in asked],  # type: ignore[misc]
            played=[KINDS[pa], KINDS[pb]],  # type: ignore[list-item]
            received=[[KINDS[k] for k in ra], [KINDS[k] for k in rb]],  # type: ignore[misc]
            inventories=[stuff(state.inv[a]), stuff(state.inv[b])],
            died=died,
        )
        state.step += 1
        if state.step <= self.trades:
            state.draw_pair()
        else:
            state.pair = None
        return trade

    def notices(self, state: RpsState, outcome: msgspec.Struct) -> Sequence[tuple[int, Any]]:
        assert isinstance(outcome, Trade)
        notice = Notice(**msgspec.structs.asdict(outcome))
        return [(seat, notice) for seat in outcome.seats]

    def disqualify(self, state: RpsState, seats: Sequence[int]) -> None:
        for seat in seats:
            state.disqualified[seat] = True
            state.alive[seat] = False
        if state.pair is not None and any(s in seats for s in state.pair):
            state.draw_pair()

    def finished(self, state: RpsState) -> bool:
        return state.step > self.trades or sum(state.alive) < 2

    def _key(self, state: RpsState, seat: int) -> tuple[int, int]:
        if state.disqualified[seat]:
            return (2, 0)
        if not state.alive[seat]:
            return (1, 0)
        return (0, imbalance(state.inv[seat]))

    def result(self, state: RpsState) -> GameResult:
        keys = [self._key(state, s) for s in range(self.seats)]
        placements = [1 + sum(k < keys[s] for k in keys) for s in range(self.seats)]
        firsts = [s for s in range(self.seats) if placements[s] == 1]
        winner = firsts[0] if len(firsts) == 1 else None
        seats = []
        for s in range(self.seats):
            inv = state.inv[s]
            seats.append(
                SeatResult(
                    seat=s,
                    placement=placements[s],
                    scores={
                        "deviance": deviance(inv),
                        "deviance_sample": deviance(inv, sample=True),
                    },
                    stats={
                        "inventory": dict(zip(KINDS, inv, strict=True)),
                        "total": sum(inv),
                        "alive": state.alive[s],
                        "died_at": state.died_at[s],
                        "trades": state.trades[s],
                        "replaced": state.replaced[s],
                        "faulted": state.faulted[s],
                        "disqualified": state.disqualified[s],
                    },
                )
            )
        if any(state.disqualified) and sum(state.alive) < 2:
            reason = "disqualification"
        elif sum(state.alive) < 2:
            reason = "extinction"
        else:
            reason = "complete"
        return GameResult(seats=seats, winner=winner, reason=reason, steps=state.step - 1)
