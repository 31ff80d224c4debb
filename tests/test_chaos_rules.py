"""The Chaos League rules engine: payoff, tokens, buckets, visible moves."""

from __future__ import annotations

import itertools

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.faults import FaultKind
from referee.games.chaos import (
    MOVES,
    PAYOFF,
    Action,
    ChaosLeague,
    RoShamBo,
    Turn,
    bucket,
)

# The seed document's table, row = my move, column = opponent's move.
SEED_TABLE = {
    "rock": (0, -1, 1, 1, -1),
    "paper": (1, 0, -1, -1, 1),
    "scissors": (-1, 1, 0, 1, -1),
    "lizard": (-1, 1, -1, 0, 1),
    "spock": (1, -1, 1, -1, 0),
}


def play(game, state, m0, m1, shadow0=None, shadow1=None):
    a0 = Action(real_move=m0, shadow_request=shadow0 is not None, shadow_move=shadow0)
    a1 = Action(real_move=m1, shadow_request=shadow1 is not None, shadow_move=shadow1)
    return game.resolve(state, [a0, a1])


def test_payoff_matrix_matches_the_rules_document_cell_by_cell():
    for i, a in enumerate(MOVES):
        assert PAYOFF[i] == SEED_TABLE[a], a


def test_payoff_is_antisymmetric_and_each_move_beats_exactly_two():
    for i, j in itertools.product(range(5), repeat=2):
        assert PAYOFF[i][j] == -PAYOFF[j][i]
    for i in range(5):
        assert sorted(PAYOFF[i]) == [-1, -1, 0, 1, 1]


@pytest.mark.parametrize(("a", "b"), list(itertools.product(MOVES, repeat=2)))
def test_resolve_scores_every_pair_of_moves(a, b):
    game = ChaosLeague(rounds=3)
    state = game.new_state(0)
    out = play(game, state, a, b)
    expected = SEED_TABLE[a][MOVES.index(b)]
    assert out.points == (expected, -expected)
    assert state.points == [expected, -expected]


@pytest.mark.parametrize(
    ("tokens", "bucket_name"),
    [
        (50, "HIGH"),
        (40, "HIGH"),
        (39, "MEDIUM"),
        (20, "MEDIUM"),
        (19, "LOW"),
        (1, "LOW"),
        (0, "EMPTY"),
    ],
)
def test_bucket_boundaries(tokens, bucket_name):
    assert bucket(tokens) == bucket_name


def test_shadow_costs_one_token_and_shows_the_shadow_move():
    game = ChaosLeague(rounds=5)
    state = game.new_state(0)
    out = play(game, state, "rock", "paper", shadow0="spock")
    assert out.spent == (True, False)
    assert out.tokens == (49, 50)
    assert out.shown == ("spock", "paper")
    # Scoring used the real moves: paper covers rock.
    assert out.points == (-1, 1)
    seen_by_1 = game.observe(state, 1)
    seen_by_0 = game.observe(state, 0)
    assert seen_by_1 == Turn(2, "spock", "paper", "HIGH")
    assert seen_by_0 == Turn(2, "paper", "rock", "HIGH")


def test_last_token_then_requests_are_ignored():
    game = ChaosLeague(rounds=5, tokens=1)
    state = game.new_state(0)
    assert game.observe(state, 1).opponent_deception_bucket == "LOW"
    out = play(game, state, "rock", "rock", shadow0="paper")
    assert out.spent == (True, False) and out.tokens == (0, 1)
    assert game.observe(state, 1).opponent_deception_bucket == "EMPTY"
    out = play(game, state, "lizard", "rock", shadow0="paper")
    assert out.spent == (False, False)
    assert out.tokens == (0, 1)
    assert out.shown == ("lizard", "rock")  # ignored: the real move is visible
    assert state.spent == [1, 0]


def test_tokens_at_fifty_count_down_through_every_bucket():
    game = ChaosLeague(rounds=60)
    state = game.new_state(0)
    seen = []
    for _ in range(55):
        seen.append(game.observe(state, 1).opponent_deception_bucket)
        play(game, state, "rock", "rock", shadow0="paper")
    assert state.tokens == [0, 50]
    assert seen[0] == "HIGH" and seen[10] == "HIGH"  # 40 tokens left
    assert seen[11] == "MEDIUM" and seen[30] == "MEDIUM"  # 39 .. 20
    assert seen[31] == "LOW" and seen[49] == "LOW"  # 19 .. 1
    assert seen[50] == "EMPTY"


def test_first_round_fields_are_null():
    game = ChaosLeague()
    state = game.new_state(0)
    assert game.observe(state, 0) == Turn(1, None, None, "HIGH")


def test_faulted_seat_loses_round_and_shows_null():
    game = ChaosLeague(rounds=5)
    state = game.new_state(0)
    out = game.resolve(state, [None, Action(real_move="rock")])
    assert out.points == (-1, 1)
    assert game.observe(state, 1).opponent_last_visible is None
    assert game.observe(state, 0).self_last_real is None
    out = game.resolve(state, [None, None])
    assert out.points == (-1, -1)


def test_disqualification_forfeits_the_rest_and_ends_the_match():
    game = ChaosLeague(rounds=10)
    state = game.new_state(0)
    play(game, state, "rock", "scissors")  # seat 0 +1
    game.disqualify(state, [0])
    assert game.finished(state)
    assert state.points == [1 - 9, -1 + 9]
    result = game.result(state)
    assert result.winner == 1
    assert result.reason == "disqualification"


def test_check_rejects_bad_moves_and_round_mismatch():
    game = RoShamBo(rounds=5)
    state = game.new_state(0)
    assert game.check(state, 0, Action(real_move="rock")) is None
    illegal = game.check(state, 0, Action(real_move="spock"))
    assert illegal is not None and illegal.kind is FaultKind.ILLEGAL_MOVE
    assert "not a move" in illegal.detail
    late = game.check(state, 0, Action(real_move="rock", round=7))
    assert late is not None and late.kind is FaultKind.PROTOCOL_ERROR and "round" in late.detail
    reason = game.check(state, 0, Action(real_move="rock", shadow_request=True))
    assert reason is not None and reason.kind is FaultKind.ILLEGAL_MOVE
    assert "shadow_move" in reason.detail


def test_classic_variant_has_no_tokens():
    game = RoShamBo()
    state = game.new_state(0)
    assert game.params()["moves"] == ["rock", "paper", "scissors"]
    assert game.observe(state, 0).opponent_deception_bucket == "EMPTY"
    out = play(game, state, "rock", "paper", shadow0="scissors")
    assert out.spent == (False, False) and out.shown == ("rock", "paper")


moves = st.sampled_from(MOVES)
actions = st.one_of(
    st.none(),
    st.builds(
        lambda m, s: Action(real_move=m, shadow_request=s is not None, shadow_move=s),
        moves,
        st.one_of(st.none(), moves),
    ),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(actions, actions), min_size=1, max_size=120), st.integers(0, 5))
def test_random_play_keeps_every_invariant(steps, tokens):
    game = ChaosLeague(rounds=len(steps), tokens=tokens)
    state = game.new_state(0)
    spent = [0, 0]
    for a0, a1 in steps:
        before = list(state.tokens)
        obs = [game.observe(state, seat) for seat in (0, 1)]
        out = game.resolve(state, [a0, a1])
        for seat, act in ((0, a0), (1, a1)):
            other = 1 - seat
            # The bucket each seat saw is its opponent's tokens before the round.
            assert obs[seat].opponent_deception_bucket == bucket(before[other])
            took = act is not None and act.shadow_request and before[seat] > 0
            assert out.spent[seat] == took
            spent[seat] += took
            assert out.tokens[seat] == before[seat] - took >= 0
            if act is None:
                assert out.shown[seat] is None
            elif took:
                assert out.shown[seat] == act.shadow_move
            else:
                assert out.shown[seat] == act.real_move
        if a0 is not None and a1 is not None:
            assert out.points[0] == -out.points[1]
        # What each seat sees next is exactly the other's shown move.
        assert game.observe(state, 0).opponent_last_visible == out.shown[1]
        assert game.observe(state, 1).opponent_last_visible == out.shown[0]
    assert state.spent == spent
    assert game.finished(state)
    assert sum(state.points) == sum(
        0 if (a0 and a1) else (1 if a0 else -1) + (1 if a1 else -1) for a0, a1 in steps
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(actions, actions), min_size=1, max_size=80))
def test_state_and_history_agree_with_a_reference_model(steps):
    """resolve() has a table-driven path for plain rounds and a general one for
    shadows and faults; both must keep the same books as this straightforward model."""
    game = ChaosLeague(rounds=len(steps), tokens=3)
    state = game.new_state(0)
    pts, wdl, tokens = [0, 0], [[0, 0, 0], [0, 0, 0]], [3, 3]
    real_hist, shown_hist, spent_hist = [], [], []
    for a0, a1 in steps:
        # The driver sends encode_turn(s)'s bytes: a table-built copy of observe().
        wire = tuple(msgspec.json.encode(game.observe(state, seat)) for seat in (0, 1))
        assert (game.encode_turn(state, 0), game.encode_turn(state, 1)) == wire
        assert game.encode_turns(state) == wire
        game.resolve(state, [a0, a1])
        acts = (a0, a1)
        if a0 is not None and a1 is not None:
            p0 = PAYOFF[MOVES.index(a0.real_move)][MOVES.index(a1.real_move)]
            p = (p0, -p0)
        else:
            p = tuple(1 if a is not None else -1 for a in acts)
        row_real, row_shown, row_spent = [], [], []
        for seat, a in enumerate(acts):
            pts[seat] += p[seat]
            wdl[seat][0 if p[seat] > 0 else (1 if p[seat] == 0 else 2)] += 1
            spent = a is not None and a.shadow_request and tokens[seat] > 0
            tokens[seat] -= spent
            row_spent.append(bool(spent))
            row_real.append(-1 if a is None else MOVES.index(a.real_move))
            shown = None if a is None else (a.shadow_move if spent else a.real_move)
            row_shown.append(-1 if shown is None else MOVES.index(shown))
        real_hist.append(row_real)
        shown_hist.append(row_shown)
        spent_hist.append(row_spent)
    assert state.points == pts
    assert [[state.wins[s], state.draws[s], state.losses[s]] for s in (0, 1)] == wdl
    assert state.tokens == tokens
    hist = game.history(state)
    assert hist.real.tolist() == real_hist
    assert hist.shown.tolist() == shown_hist
    assert hist.spent.tolist() == spent_hist
    assert state.faulted_rounds == [sum(s[seat] is None for s in steps) for seat in (0, 1)]
    assert hist.points.sum(axis=0).tolist() == pts
