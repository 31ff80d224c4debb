"""Liar's Dice rules, from the worked cases in the research notes (games.md section 2)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from conftest import ROOT, match_json, needs_node, played_cleanly, replay_steps, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.faults import FaultKind
from referee.games import GAMES
from referee.games.liars_dice import (
    Action,
    LiarsDice,
    LiarsDiceState,
    Notice,
    count_matching,
    weight,
)


def bid(q: int, f: int) -> Action:
    return Action(move="bid", quantity=q, face=f)


def call(move: str) -> Action:
    return Action(move=move)  # type: ignore[arg-type]


def setup(
    dice: list[list[int]], turn: int = 0, max_dice: int = 5
) -> tuple[LiarsDice, LiarsDiceState]:
    """A game whose current round has exactly these dice and ``turn`` to act."""
    game = LiarsDice(len(dice), dice=max_dice)
    state = game.new_state(7)
    state.dice_counts = [len(h) for h in dice]
    state.dice = [sorted(h) for h in dice]
    state.starter = state.turn = turn
    return game, state


def act(game: LiarsDice, state: LiarsDiceState, action: Action) -> object:
    """Check then resolve, as the driver does (an illegal move becomes None)."""
    seat = state.turn
    actions: list[Action | None] = [None] * game.seats
    actions[seat] = action if game.check(state, seat, action) is None else None
    return game.resolve(state, actions)


def test_registered() -> None:
    assert GAMES["liars_dice"] is LiarsDice


def test_counting_sixes_wild() -> None:
    table = [[3, 3, 6], [3, 6, 1]]
    assert count_matching(table, 3) == 5  # three threes + two sixes
    assert count_matching(table, 6) == 2  # sixes count only as sixes
    assert count_matching(table, 1) == 3  # ones are not wild


def test_weights_and_raises() -> None:
    assert weight(3, 5) == 3 and weight(2, 6) == 4
    game, state = setup([[1] * 5, [2] * 5, [3] * 5])
    state.bids = []
    act(game, state, bid(3, 5))
    seat = state.turn
    assert game.check(state, seat, bid(2, 6)) is None
    assert game.check(state, seat, bid(4, 1)) is None
    assert game.check(state, seat, bid(3, 6)) is None
    assert game.check(state, seat, bid(3, 4)) is not None  # the face alone never raises
    assert game.check(state, seat, bid(3, 6)) is None
    assert game.check(state, seat, bid(1, 6)) is not None
    act(game, state, bid(2, 6))
    seat = state.turn
    assert game.check(state, seat, bid(5, 2)) is None  # README/code: five, not seven
    assert game.check(state, seat, bid(3, 6)) is None
    assert game.check(state, seat, bid(4, 5)) is not None


def test_bid_bounds_and_malformed() -> None:
    game, state = setup([[1] * 5, [2] * 5])
    assert game.check(state, 0, bid(0, 3)) is not None
    assert game.check(state, 0, bid(11, 3)) is not None  # our cap: the dice in play
    assert game.check(state, 0, bid(10, 3)) is None
    assert game.check(state, 0, bid(2, 7)) is not None
    assert game.check(state, 0, bid(2, 0)) is not None
    assert game.check(state, 0, Action(move="bid", quantity=2)) is not None
    assert game.check(state, 0, call("liar")) is not None  # nothing to challenge
    assert game.check(state, 0, Action(move="liar", quantity=1, face=2)) is not None
    for why in (
        game.check(state, 0, bid(0, 3)),
        game.check(state, 0, call("liar")),
        game.check(state, 0, bid(2, 7)),
    ):
        assert why is not None and why.kind is FaultKind.ILLEGAL_MOVE
    why = game.check(state, 0, Action(move="bid", quantity=1, face=1, step=99))
    assert why is not None and why.kind is FaultKind.PROTOCOL_ERROR
    dec = msgspec.json.Decoder(Action)
    with pytest.raises(msgspec.ValidationError):
        dec.decode(b'{"move": "Liar"}')
    with pytest.raises(msgspec.ValidationError):
        dec.decode(b'{"move": "liar", "extra": 1}')


def test_liar_on_true_bid_challenger_loses() -> None:
    game, state = setup([[3, 3, 6], [3, 6, 1]], turn=0)
    act(game, state, bid(5, 3))
    out = act(game, state, call("liar"))
    reveal = out.reveal  # type: ignore[attr-defined]
    assert reveal.count == 5 and reveal.change == [0, -1]
    assert state.dice_counts == [3, 2]
    assert reveal.dice == [[3, 3, 6], [1, 3, 6]]
    assert state.starter == 0 and state.turn == 0  # the player after the challenger
    assert state.round == 2 and state.bids == []


def test_spot_on_lose_two_exact() -> None:
    game, state = setup([[3, 3, 6], [3, 6, 1]], turn=0)
    act(game, state, bid(5, 3))
    out = act(game, state, call("spot_on_lose_two"))
    assert out.reveal.change == [-2, 0]  # type: ignore[attr-defined]
    assert state.dice_counts == [1, 3]
    assert state.turn == 1  # the challenger did not lose: it opens


def test_sixes_bid_exact() -> None:
    game, state = setup([[3, 3, 6], [3, 6, 1]], turn=0)
    act(game, state, bid(2, 6))
    out = act(game, state, call("spot_on_lose_two"))
    assert out.reveal.count == 2 and out.reveal.change == [-2, 0]  # type: ignore[attr-defined]


def test_spot_on_wrong_costs_challenger_one() -> None:
    game, state = setup([[3, 3, 6], [3, 6, 1]], turn=0)
    act(game, state, bid(4, 3))
    out = act(game, state, call("spot_on_lose_two"))
    assert out.reveal.change == [0, -1]  # type: ignore[attr-defined]
    assert state.turn == 0


def test_three_players_liar_false_and_true() -> None:
    # Player 1 bids, player 2 calls liar on a false bid: 1 loses, 2 opens.
    game, state = setup([[1, 1], [1, 1], [1, 1]], turn=1)
    act(game, state, bid(3, 5))
    assert state.turn == 2
    out = act(game, state, call("liar"))
    assert out.reveal.change == [0, -1, 0]  # type: ignore[attr-defined]
    assert state.turn == 2
    # On a true bid: 2 loses, 0 opens.
    game, state = setup([[5, 5], [5, 5], [5, 5]], turn=1)
    act(game, state, bid(3, 5))
    out = act(game, state, call("liar"))
    assert out.reveal.change == [0, 0, -1]  # type: ignore[attr-defined]
    assert state.turn == 0


def test_lose_two_eliminates_one_die_bidder() -> None:
    game, state = setup([[2], [2, 2], [4, 4]], turn=0)
    act(game, state, bid(3, 2))
    assert state.turn == 1
    out = act(game, state, call("spot_on_lose_two"))
    reveal = out.reveal  # type: ignore[attr-defined]
    assert reveal.change == [-1, 0, 0] and reveal.eliminated == [0]
    assert state.dice_counts == [0, 2, 2]
    assert state.turn == 1
    assert 0 not in game.to_act(state)


def test_gain_one_only_with_lost_dice_and_challenger_opens() -> None:
    game, state = setup([[2, 2, 2, 2, 2], [2, 2, 2, 2]], turn=1)
    act(game, state, bid(9, 2))
    assert state.turn == 0
    # Five dice: gain one is illegal, and an illegal move puts the player out.
    assert game.check(state, 0, call("spot_on_gain_one")) is not None
    game, state = setup([[2, 2, 2, 2], [2, 2, 2, 2, 2]], turn=1)
    act(game, state, bid(9, 2))
    out = act(game, state, call("spot_on_gain_one"))
    assert out.reveal.change == [1, 0]  # type: ignore[attr-defined]
    assert state.dice_counts == [5, 5]
    assert state.turn == 0  # decision: the challenger opens after a successful gain


def test_gain_one_wrong() -> None:
    game, state = setup([[2, 2, 2, 2], [2, 2, 2, 2, 2]], turn=1)
    act(game, state, bid(8, 2))
    out = act(game, state, call("spot_on_gain_one"))
    assert out.reveal.change == [-1, 0]  # type: ignore[attr-defined]
    assert state.turn == 1


def test_illegal_move_puts_player_out_and_voids_round() -> None:
    game, state = setup([[1, 2, 3, 4, 5], [2, 2, 2, 2, 2], [3, 3, 3, 3, 3]], turn=1)
    act(game, state, bid(4, 2))
    assert state.turn == 2
    act(game, state, bid(3, 2))  # not a raise: player 2 is out
    assert state.dice_counts == [5, 5, 0]
    assert state.faulted[2]
    assert state.bids == [] and state.round == 2
    assert state.turn == 0  # the next player after the faulty one opens
    assert state.last_reveal is not None and state.last_reveal.event == "fault"
    assert sum(len(h) for h in state.dice) == 10  # rolled again, without player 2


def test_two_player_fault_ends_game() -> None:
    game, state = setup([[1] * 5, [1] * 5], turn=0)
    game.resolve(state, [None, None])
    assert game.finished(state)
    res = game.result(state)
    assert res.winner == 1 and res.reason == "disqualification"
    assert [s.placement for s in res.seats] == [2, 1]


def test_disqualify_off_turn() -> None:
    game, state = setup([[1] * 5, [1] * 5, [1] * 5], turn=0)
    act(game, state, bid(2, 3))
    game.disqualify(state, [2])
    assert state.dice_counts == [5, 5, 0] and state.bids == []
    assert state.turn == 1  # the player on turn keeps it and opens the new round
    game.disqualify(state, [2])  # again: nothing changes
    assert state.dice_counts == [5, 5, 0]


def test_placements_follow_elimination_order() -> None:
    game, state = setup([[1], [1], [2, 2, 2]], turn=0)
    act(game, state, bid(1, 2))  # seat 0 bids one two; it is true (three twos)
    act(game, state, call("liar"))  # seat 1 is wrong and goes out
    assert state.dice_counts[1] == 0
    state.dice = [[1], [], [3, 3, 3]]
    state.turn = 0
    act(game, state, bid(2, 1))
    act(game, state, call("liar"))  # seat 2 is right: seat 0 goes out
    assert game.finished(state)
    res = game.result(state)
    assert res.winner == 2 and res.reason == "complete"
    assert [s.placement for s in res.seats] == [2, 3, 1]
    assert [s.scores["outlasted"] for s in res.seats] == [1.0, 0.0, 2.0]


def test_round_limit_ranks_by_dice() -> None:
    game = LiarsDice(2, max_rounds=1)
    state = game.new_state(1)
    state.dice = [[6] * 5, [6] * 5]
    s = state.turn
    game.resolve(state, [bid(1, 6) if i == s else None for i in range(2)])
    o = state.turn
    game.resolve(state, [call("liar") if i == o else None for i in range(2)])
    assert game.finished(state)
    res = game.result(state)
    assert res.reason == "round_limit" and res.winner == s


def test_notice_goes_to_everyone() -> None:
    game, state = setup([[3, 3, 6], [3, 6, 1], [1]], turn=0)
    act(game, state, bid(5, 3))
    out = act(game, state, call("liar"))
    notes = game.notices(state, out)  # type: ignore[arg-type]
    assert [seat for seat, _ in notes] == [0, 1, 2]
    body = msgspec.json.decode(msgspec.json.encode(notes[0][1]))
    assert body["type"] == "notice" and body["event"] == "challenge"
    assert isinstance(notes[0][1], Notice)


def play_random(seats: int, seed: int) -> tuple[list[bytes], object]:
    """A whole game with seeded legal random moves; the encoded outcomes."""
    import random

    game = LiarsDice.create(seats, {})
    state = game.new_state(seed)
    rng = random.Random(seed)
    outs = []
    while not game.finished(state):
        (seat,) = game.to_act(state)
        turn = game.observe(state, seat)
        total = sum(turn.dice_counts)
        if turn.bids and rng.random() < 0.35:
            action = call(rng.choice(["liar", "spot_on_lose_two"]))
        else:
            last = weight(turn.bids[-1].quantity, turn.bids[-1].face) if turn.bids else 0
            options = [(q, f) for q in range(1, total + 1) for f in range(1, 7)]
            options = [o for o in options if weight(*o) > last]
            action = bid(*rng.choice(options[:8])) if options else call("liar")
        assert game.check(state, seat, action) is None
        actions: list[Action | None] = [None] * seats
        actions[seat] = action
        outs.append(msgspec.json.encode(game.resolve(state, actions)))
        assert len(outs) < 10_000
    return outs, game.result(state)


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_full_games_deterministic(seats: int) -> None:
    a, res = play_random(seats, 11)
    b, _ = play_random(seats, 11)
    assert a == b
    assert res.winner is not None  # type: ignore[attr-defined]
    assert sorted(s.placement for s in res.seats) == list(range(1, seats + 1))  # type: ignore[attr-defined]
    c, _ = play_random(seats, 12)
    assert a != c


# -- through the CLI, with the sample bots ---------------------------------------------

SAMPLES = ROOT / "sample_bots" / "games" / "liars_dice"
ODDS = f"python3 {SAMPLES / 'odds.py'}"
EXPECT = f"node {SAMPLES / 'expect.js'}"


@needs_node
@pytest.mark.parametrize("players", [2, 4, 6])
def test_cli_match(players: int, tmp_path: Path) -> None:
    bots = [ODDS if i % 2 == 0 else EXPECT for i in range(players)]
    replay = tmp_path / "ld.jsonl"
    out = match_json("--game", "liars_dice", *bots, "--seed", "1", "--replay", str(replay))
    assert out["reason"] == "complete"
    assert out["winner"] in range(players)
    assert sorted(s["placement"] for s in out["seats"]) == list(range(1, players + 1))
    assert not any(s["stats"]["faulted"] for s in out["seats"])
    steps = replay_steps(replay)
    assert len(steps) == out["steps"]
    # Exactly one seat acts per step.
    assert all(sum(o is not None for o in st["obs"]) == 1 for st in steps)
    verify = run_cli("verify", str(replay))
    assert verify.returncode == 0, verify.stdout + verify.stderr


@needs_node
def test_cli_same_seed_same_game(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        replay = tmp_path / f"{name}.jsonl"
        result = match_json(
            "--game", "liars_dice", ODDS, EXPECT, ODDS, "--seed", "5", "--replay", str(replay)
        )
        runs.append(played_cleanly(result, replay))
    assert runs[0] == runs[1]


def test_cli_faulty_bot_is_put_out(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        print(json.dumps({'name': 'bad'}), flush=True)\n"
        "    elif m['type'] == 'turn':\n"
        "        print(json.dumps({'move': 'Spot on'}), flush=True)\n"
        "    elif m['type'] == 'end':\n"
        "        break\n"
    )
    replay = tmp_path / "bad.jsonl"
    out = match_json(
        "--game", "liars_dice", ODDS, f"python3 {bad}", ODDS, "--seed", "3",
        "--replay", str(replay),
    )  # fmt: skip
    bad_seat = out["seats"][1]
    assert bad_seat["stats"]["faulted"] and bad_seat["placement"] == 3
    assert bad_seat["verdict"]["status"] == "protocol_error"
    verify = run_cli("verify", str(replay))
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_params_round_trip() -> None:
    game = LiarsDice.create(4, {"dice": 3, "rounds": 50})
    assert game.params() == {"players": 4, "dice": 3, "max_rounds": 50}
    again = LiarsDice.from_params(game.params())
    assert again.seats == 4 and again.params() == game.params()
    assert LiarsDice.create(4, game.params()).params() == game.params()
    with pytest.raises(ValueError):
        LiarsDice.create(1, {})
    with pytest.raises(ValueError):
        LiarsDice.create(3, {"players": 4})
    with pytest.raises(ValueError):
        LiarsDice.create(3, {"colour": "red"})


@settings(max_examples=30, deadline=None)
@given(players=st.integers(2, 7), seed=st.integers(0, 2**32), dice=st.integers(1, 5))
def test_property_games_end_with_sane_counts(players: int, seed: int, dice: int) -> None:
    import random

    game = LiarsDice(players, dice=dice)
    state = game.new_state(seed)
    rng = random.Random(seed)
    moves = 0
    while not game.finished(state):
        (seat,) = game.to_act(state)
        assert state.dice_counts[seat] > 0
        turn = game.observe(state, seat)
        assert len(turn.dice) == turn.dice_counts[seat]
        weights = [weight(b.quantity, b.face) for b in turn.bids]
        assert weights == sorted(set(weights))  # strictly increasing within a round
        total = sum(turn.dice_counts)
        choice = rng.random()
        if turn.bids and choice < 0.4:
            action = call(rng.choice(["liar", "spot_on_lose_two", "spot_on_gain_one"]))
        elif choice < 0.45:
            action = bid(total + 1, 1)  # illegal: puts the player out
        else:
            action = bid(rng.randint(1, total), rng.randint(1, 6))
        act(game, state, action)
        assert all(0 <= n <= dice for n in state.dice_counts)
        moves += 1
        assert moves < 5_000
    res = game.result(state)
    assert sorted(s.placement for s in res.seats)[0] == 1
    assert res.winner is not None or res.reason == "round_limit"
