"""Liar's Dice outcomes against an independent oracle, written from the rules.

The oracle below follows the research note's rules (Kilgallen v3: bid weights, sixes
wild, the three calls and who opens next) and the decisions of docs/games.md (the cap
on the quantity, faults put the player out and void the round, placements by
elimination order, the round limit). It keeps its own dice counts, bids, turn and
elimination order, and takes from the game only the dice each round rolled (the
random draw is not a rule). Random and adversarial games (illegal bids, calls with
nothing to call, "gain one" at full dice, disqualifications on and off turn) are
played on both, and every step's legality, reveal, dice counts, turn and the final
placements must agree.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from referee.games.liars_dice import Action, LiarsDice, LiarsDiceState

CALLS = ("liar", "spot_on_lose_two", "spot_on_gain_one")


def bid_weight(quantity: int, face: int) -> int:
    return quantity * 2 if face == 6 else quantity


def matching(dice: list[list[int]], face: int) -> int:
    n = 0
    for hand in dice:
        for die in hand:
            if die == face or (die == 6 and face != 6):
                n += 1
    return n


@dataclass
class Oracle:
    seats: int
    max_dice: int
    max_rounds: int
    turn: int
    counts: list[int] = field(default_factory=list)
    bids: list[tuple[int, int, int]] = field(default_factory=list)  # (seat, q, face)
    rounds_ended: int = 0
    events: int = 0
    out_at: dict[int, int] = field(default_factory=dict)  # seat -> elimination event

    def __post_init__(self) -> None:
        self.counts = [self.max_dice] * self.seats

    def alive(self) -> list[int]:
        return [s for s in range(self.seats) if self.counts[s] > 0]

    def finished(self) -> bool:
        return len(self.alive()) <= 1 or self.rounds_ended >= self.max_rounds

    def next_after(self, seat: int) -> int:
        for step in range(1, self.seats + 1):
            candidate = (seat + step) % self.seats
            if self.counts[candidate] > 0:
                return candidate
        raise AssertionError("nobody left")

    def legal(self, action: Action) -> bool:
        if action.move == "bid":
            q, face = action.quantity, action.face
            if type(q) is not int or type(face) is not int:
                return False
            if not 1 <= face <= 6 or not 1 <= q <= sum(self.counts):
                return False
            return not self.bids or bid_weight(q, face) > bid_weight(*self.bids[-1][1:])
        if action.quantity is not None or action.face is not None or not self.bids:
            return False
        return action.move != "spot_on_gain_one" or self.counts[self.turn] < self.max_dice

    def _end_round(self, out_now: list[int]) -> None:
        if out_now:
            self.events += 1
            for seat in out_now:
                self.out_at[seat] = self.events
        self.bids = []
        self.rounds_ended += 1

    def put_out(self, seats: list[int]) -> list[int]:
        """A fault or disqualification: those seats lose every die, the round is void;
        the player on turn opens the next one, or the next after it if it was put out."""
        seats = [s for s in seats if self.counts[s] > 0]
        change = [0] * self.seats
        for seat in seats:
            change[seat] = -self.counts[seat]
            self.counts[seat] = 0
        if self.counts[self.turn] == 0 and self.alive():
            self.turn = self.next_after(self.turn)
        self._end_round(seats)
        return change

    def play(self, action: Action, dice: list[list[int]]) -> dict | None:
        """The player on turn acts; returns the expected reveal of a challenge."""
        seat = self.turn
        if not self.legal(action):
            self.put_out([seat])
            return None
        if action.move == "bid":
            assert action.quantity is not None and action.face is not None
            self.bids.append((seat, action.quantity, action.face))
            self.turn = self.next_after(seat)
            return None
        bidder, q, face = self.bids[-1]
        count = matching([hand for s, hand in enumerate(dice) if self.counts[s] > 0], face)
        change = [0] * self.seats
        if action.move == "liar":
            loser = bidder if count < q else seat
            change[loser] = -1
        elif count != q:  # a wrong "spot on", either kind
            change[seat] = -1
        elif action.move == "spot_on_lose_two":
            change[bidder] = -min(2, self.counts[bidder])
        else:
            change[seat] = min(1, self.max_dice - self.counts[seat])
        before = [n > 0 for n in self.counts]
        self.counts = [n + d for n, d in zip(self.counts, change, strict=True)]
        out_now = [s for s in range(self.seats) if before[s] and self.counts[s] == 0]
        self._end_round(out_now)
        if not self.finished():
            self.turn = self.next_after(seat) if change[seat] < 0 else seat
        return {"count": count, "change": change, "eliminated": out_now}

    def placements(self) -> list[tuple[int, int]]:
        """(placement, outlasted) per seat: players still in rank above those out (by
        dice left when the round limit ended the game), later elimination above
        earlier, equal keys tie."""

        def key(seat: int) -> tuple[int, int]:
            if self.counts[seat] > 0:
                return (1, self.counts[seat])
            return (0, self.out_at[seat])

        keys = [key(s) for s in range(self.seats)]
        return [
            (1 + sum(other > mine for other in keys), sum(other < mine for other in keys))
            for mine in keys
        ]


def random_action(rng: random.Random, oracle: Oracle, style: str) -> Action:
    total = sum(oracle.counts)
    roll = rng.random()
    if style == "wild" and roll < 0.08:
        return rng.choice(
            [
                Action(move="bid", quantity=0, face=3),
                Action(move="bid", quantity=total + 1, face=2),
                Action(move="bid", quantity=1, face=7),
                Action(move="bid", quantity=1, face=0),
                Action(move="bid", quantity=2),
                Action(move="liar", quantity=1, face=1),
                Action(move="spot_on_gain_one"),
            ]
        )
    if oracle.bids and roll < 0.45:
        return Action(move=rng.choice(CALLS))
    if oracle.bids and style == "wild" and roll < 0.55:
        _, q, face = oracle.bids[-1]
        return Action(move="bid", quantity=q, face=rng.randint(1, 6))  # maybe not a raise
    last = bid_weight(*oracle.bids[-1][1:]) if oracle.bids else 0
    options = [(q, f) for q in range(1, total + 1) for f in range(1, 7) if bid_weight(q, f) > last]
    if not options:
        return Action(move="liar")
    q, f = rng.choice(options[:10])
    return Action(move="bid", quantity=q, face=f)


def compare_state(game: LiarsDice, state: LiarsDiceState, oracle: Oracle) -> None:
    assert state.dice_counts == oracle.counts
    assert [(b.seat, b.quantity, b.face) for b in state.bids] == oracle.bids
    assert game.finished(state) == oracle.finished()
    if not oracle.finished():
        assert list(game.to_act(state)) == [oracle.turn]


def play_both(seed: int, seats: int, dice: int, max_rounds: int, style: str) -> None:
    rng = random.Random(seed)
    game = LiarsDice(seats, dice=dice, max_rounds=max_rounds)
    state = game.new_state(seed)
    oracle = Oracle(seats, dice, max_rounds, turn=state.turn)  # the random first opener
    compare_state(game, state, oracle)
    steps = 0
    while not oracle.finished():
        steps += 1
        assert steps < 20_000
        if style == "wild" and rng.random() < 0.03:
            # A crash or fault limit, on turn or not, possibly two seats at once.
            gone = rng.sample(oracle.alive(), min(len(oracle.alive()), rng.choice((1, 1, 2))))
            oracle.put_out(gone)
            game.disqualify(state, gone)
            compare_state(game, state, oracle)
            continue
        seat = oracle.turn
        action = random_action(rng, oracle, style)
        dice = [list(hand) for hand in state.dice]  # this round's roll, as the game drew it
        legal = oracle.legal(action)
        assert (game.check(state, seat, action) is None) == legal, (action, oracle)
        actions: list[Action | None] = [None] * seats
        actions[seat] = action if legal else None
        outcome = game.resolve(state, actions)
        expected = oracle.play(action, dice)
        reveal = outcome.reveal
        if expected is None:
            assert reveal is None or reveal.event == "fault"
        else:
            assert reveal is not None and reveal.event == "challenge"
            assert reveal.count == expected["count"], (action, dice, oracle.bids)
            assert reveal.change == expected["change"]
            assert sorted(reveal.eliminated) == expected["eliminated"]
        compare_state(game, state, oracle)
    result = game.result(state)
    expected_places = oracle.placements()
    assert [s.placement for s in result.seats] == [p for p, _ in expected_places]
    assert [s.scores["outlasted"] for s in result.seats] == [o for _, o in expected_places]
    assert [s.scores["dice_left"] for s in result.seats] == oracle.counts
    winners = [s for s, (p, _) in enumerate(expected_places) if p == 1]
    assert result.winner == (winners[0] if len(winners) == 1 else None)


@pytest.mark.parametrize("style", ["legal", "wild"])
@pytest.mark.parametrize("seats", [2, 3, 6])
def test_games_agree_with_the_oracle(style: str, seats: int) -> None:
    for seed in range(40):
        dice = (1, 2, 5)[seed % 3]
        max_rounds = 1000 if seed % 4 else (3, 8)[seed % 2]
        play_both(seed * 7 + seats, seats, dice, max_rounds, style)


def test_the_oracle_on_the_notes_worked_cases() -> None:
    # Research notes, Liar's Dice section 2.9, by hand.
    table = [[3, 3, 6], [3, 6, 1]]
    assert matching(table, 3) == 5 and matching(table, 6) == 2
    for call, change in (("liar", [0, -1]), ("spot_on_lose_two", [-2, 0])):
        oracle = Oracle(2, 3, 1000, turn=0)
        oracle.play(Action(move="bid", quantity=5, face=3), table)
        assert oracle.play(Action(move=call), table) == {
            "count": 5,
            "change": change,
            "eliminated": [],
        }
    # Three players, player 1 bids, player 2 calls liar: false bid, then a true one.
    for dice, change, opener in (([[1, 1]] * 3, [0, -1, 0], 2), ([[5, 5]] * 3, [0, 0, -1], 0)):
        oracle = Oracle(3, 2, 1000, turn=1)
        oracle.play(Action(move="bid", quantity=3, face=5), dice)
        assert oracle.play(Action(move="liar"), dice)["change"] == change  # type: ignore[index]
        assert oracle.turn == opener
    # A challenger with every die calling "gain one" is out.
    oracle = Oracle(3, 5, 1000, turn=0)
    oracle.play(Action(move="bid", quantity=1, face=2), [[2] * 5] * 3)
    assert not oracle.legal(Action(move="spot_on_gain_one"))
