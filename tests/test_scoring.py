"""Tests of the Chaos League scoring model (docs/scoring.md)."""

from __future__ import annotations

import math
import random
import time
import tracemalloc
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import cast

import numpy as np
import pytest
import reference_scoring
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games import chaos_scoring
from referee.games.chaos import (
    DEFEATS,
    MOVES,
    NONE,
    Action,
    ChaosHistory,
    ChaosLeague,
    Move,
    RoShamBo,
    Turn,
)
from referee.games.chaos_scoring import (
    DECEPTION_PRIOR,
    EXPLOITERS,
    SCORE_KEYS,
    TOKEN_COST,
    explain,
    pressure_mask,
    score_match,
)

Bot = Callable[[Turn], Action | None]  # None: the seat faults this round


def act(real: str, shadow: str | None = None, round_: int | None = None) -> Action:
    """An Action from plain move names (a shadow name means a shadow request)."""
    return Action(
        real_move=cast(Move, real),
        shadow_request=shadow is not None,
        shadow_move=cast(Move | None, shadow),
        round=round_,
    )


# The first move, in index order, that beats each move (what "beat the last
# move" bots play).
COUNTER = {m: next(a for a in MOVES if m in DEFEATS[a]) for m in MOVES}


def play(
    game: ChaosLeague, bot0: Bot, bot1: Bot, disqualify: tuple[int, Sequence[int]] | None = None
) -> ChaosHistory:
    """Drive the rules engine directly. ``disqualify=(round, seats)`` disqualifies
    those seats just before that round is played."""
    state = game.new_state(0)
    while not game.finished(state):
        if disqualify is not None and state.step == disqualify[0]:
            game.disqualify(state, disqualify[1])
            break
        turns = [game.observe(state, seat) for seat in (0, 1)]
        game.resolve(state, [bot0(turns[0]), bot1(turns[1])])
    return game.history(state)


def scores_of(history: ChaosHistory) -> list[dict[str, float]]:
    scores = score_match(history)
    for row in scores:
        assert list(row) == list(SCORE_KEYS)
    return scores


# --- in-process strategies ---------------------------------------------------


def beat_last(turn: Turn) -> Action:
    """Plays the counter of the opponent's last visible move (rock at first)."""
    seen = turn.opponent_last_visible
    return act("rock" if seen is None else COUNTER[seen], round_=turn.round)


class Scripted:
    """Plays a fixed list of (real move, shadow move or None)."""

    def __init__(self, script: Sequence[tuple[str, str | None]]) -> None:
        self.script = script

    def __call__(self, turn: Turn) -> Action:
        real, shadow = self.script[turn.round - 1]
        return act(real, shadow, turn.round)


class FrequencyPredictor:
    """Predicts the opponent's next move as its most frequent visible move over
    the last ``window`` rounds (ties: the most recent), and plays its counter."""

    def __init__(self, window: int = 5) -> None:
        self.window = window
        self.seen: list[str] = []

    def __call__(self, turn: Turn) -> Action:
        if turn.opponent_last_visible is not None:
            self.seen.append(turn.opponent_last_visible)
        recent = self.seen[-self.window :]
        if not recent:
            return act("rock", round_=turn.round)
        rank = {m: (recent.count(m), i) for i, m in enumerate(recent)}
        guess = max(rank, key=lambda m: rank[m])
        return act(COUNTER[guess], round_=turn.round)


class TrapSetter:
    """Random moves, except that every ``period`` rounds it shows a fake streak
    of three rocks (three tokens) while really playing lizard, then plays lizard
    once more: lizard beats paper and spock, the two counters of rock."""

    def __init__(self, seed: int, shadow: str | None = "rock", period: int = 125) -> None:
        self.rng = random.Random(seed)
        self.shadow = shadow  # None: shadow with the real move itself
        self.period = period

    def __call__(self, turn: Turn) -> Action:
        move = self.rng.choice(MOVES)  # drawn every round, so runs stay aligned
        phase = (turn.round - 50) % self.period
        if turn.round >= 50 and phase < 3:
            return act("lizard", self.shadow or "lizard", turn.round)
        if turn.round >= 50 and phase == 3:
            return act("lizard", round_=turn.round)
        return act(move, round_=turn.round)


class RandomBurner:
    """Random moves; spends ``tokens`` tokens at random rounds on random shadows."""

    def __init__(self, seed: int, rounds: int, tokens: int = 50) -> None:
        self.rng = random.Random(seed)
        self.spend_at = set(self.rng.sample(range(1, rounds + 1), tokens))

    def __call__(self, turn: Turn) -> Action:
        move = self.rng.choice(MOVES)
        shadow = self.rng.choice(MOVES)
        return act(move, shadow if turn.round in self.spend_at else None, turn.round)


# --- worked examples from docs/scoring.md ------------------------------------

DOC_SCRIPT: list[tuple[str, str | None]] = [
    ("rock", None),
    ("paper", None),
    ("rock", None),
    ("rock", None),
    ("scissors", None),
    ("paper", "rock"),  # the lie: B will answer rock with paper
    ("scissors", None),
    ("lizard", None),
    ("spock", "spock"),  # a shadow equal to the real move
    ("rock", None),
    ("paper", None),
    ("scissors", None),
]


def test_worked_example_from_docs() -> None:
    history = play(ChaosLeague(rounds=12, tokens=2), Scripted(DOC_SCRIPT), beat_last)
    a, b = scores_of(history)
    assert a == {
        "final": 0.118116,
        "standard": 0.166667,
        "anti_exploitation": 0.0,
        "deception_efficiency": 0.014491,
    }
    assert b == {
        "final": -0.114493,
        "standard": -0.166667,
        "anti_exploitation": 0.01087,
        "deception_efficiency": 0.0,
    }

    ea, eb = explain(history)
    # Deception: one misread worth 212/567, the spock-for-spock token worth 0.
    assert ea["tokens_spent"] == 2 and ea["effective_spends"] == 1
    assert ea["deception_credit"] == pytest.approx(float(Fraction(212, 567)), abs=1e-15)
    assert ea["deception_credit"] - TOKEN_COST * 2 == pytest.approx(
        float(Fraction(493, 34020) * 12), abs=1e-15
    )
    # Resilience of B: pressure rounds 7..12, gap 1/3, weight 3/23.
    assert eb["pressure_rounds"] == 6 and eb["calm_rounds"] == 6
    assert eb["pressure_gap"] == pytest.approx(1 / 3)
    assert eb["pressure_weight"] == pytest.approx(3 / 23)
    assert eb["resilience"] == pytest.approx(1 / 46)
    assert ea["resilience"] == 0.0
    # Exploiters: all below their significance margins in 12 rounds.
    assert ea["exploit_frequency"] == 0.25
    assert eb["exploit_after_opponent_move"] == 1.0
    assert ea["exploitability"] == eb["exploitability"] == 0.0

    result = ChaosLeague(rounds=12, tokens=2)
    state = result.new_state(0)
    bots = (Scripted(DOC_SCRIPT), beat_last)
    while not result.finished(state):
        result.resolve(state, [bots[s](result.observe(state, s)) for s in (0, 1)])
    outcome = result.result(state)
    assert outcome.winner == 0
    assert outcome.seats[0].scores == a


def test_constant_bot_exploitability_example_from_docs() -> None:
    rock = Scripted([("rock", None)] * 12)
    history = play(ChaosLeague(rounds=12, tokens=0), rock, FrequencyPredictor())
    row = explain(history)[0]
    assert row["exploit_frequency"] == 1.0
    assert row["exploitability"] == pytest.approx(-(1 - 2 / math.sqrt(12)), abs=1e-12)
    assert row["anti_exploitation"] == -0.211325


# --- deception efficiency -----------------------------------------------------


def test_never_shadowing_is_neutral() -> None:
    history = play(ChaosLeague(rounds=300, tokens=50), FrequencyPredictor(), RandomBurner(3, 300))
    predictor, burner = scores_of(history)
    assert predictor["deception_efficiency"] == 0.0
    assert burner["deception_efficiency"] != 0.0
    # Shadow requests with no tokens are ignored: still neutral.
    history = play(ChaosLeague(rounds=300, tokens=0), RandomBurner(3, 300), FrequencyPredictor())
    assert scores_of(history)[0]["deception_efficiency"] == 0.0


TRAP_ROUNDS = 2000


def test_trap_setter_beats_random_burner_on_deception() -> None:
    trap_history = play(ChaosLeague(rounds=TRAP_ROUNDS), TrapSetter(1), FrequencyPredictor())
    burner_history = play(
        ChaosLeague(rounds=TRAP_ROUNDS), RandomBurner(1, TRAP_ROUNDS), FrequencyPredictor()
    )
    trap, burner = explain(trap_history)[0], explain(burner_history)[0]
    assert trap["tokens_spent"] == 48 and burner["tokens_spent"] == 50
    # The values themselves from the plain reference implementation of the docs.
    for row, history in ((trap, trap_history), (burner, burner_history)):
        expected = reference_scoring.score(reference_scoring.match_of(history))[0]
        assert row["deception_efficiency"] == pytest.approx(
            expected["deception_efficiency"], abs=1.000001e-6
        )
    # Random burning: credit about 0, so about the token cost -kappa * m / (m + K_D).
    assert burner["deception_efficiency"] == pytest.approx(-TOKEN_COST * 50 / 60, abs=0.05)
    assert trap["deception_efficiency"] > 0.2
    assert burner["deception_efficiency"] < 0
    assert trap["misreads_won"] >= 40


def test_trap_setter_gains_standard_from_tokens() -> None:
    with_tokens = scores_of(
        play(ChaosLeague(rounds=TRAP_ROUNDS), TrapSetter(1), FrequencyPredictor())
    )[0]
    without = scores_of(
        play(ChaosLeague(rounds=TRAP_ROUNDS, tokens=0), TrapSetter(1), FrequencyPredictor())
    )[0]
    # Standard by hand: the net points of the played rounds per scheduled round.
    for row, tokens in ((with_tokens, 50), (without, 0)):
        history = play(
            ChaosLeague(rounds=TRAP_ROUNDS, tokens=tokens), TrapSetter(1), FrequencyPredictor()
        )
        match = reference_scoring.match_of(history)
        net = sum(reference_scoring.points(match, t, 0) for t in range(len(match.real)))
        assert row["standard"] == round(net / TRAP_ROUNDS, 6)
    assert with_tokens["standard"] > without["standard"] + 0.03
    assert without["deception_efficiency"] == 0.0


def test_shadow_equal_to_real_move_earns_nothing() -> None:
    honest = explain(
        play(ChaosLeague(rounds=TRAP_ROUNDS), TrapSetter(1, shadow=None), FrequencyPredictor())
    )[0]
    m = honest["tokens_spent"]
    assert m == 48
    assert honest["effective_spends"] == 0 and honest["deception_credit"] == 0.0
    # Only the token cost remains.
    expected = round(-TOKEN_COST * m / (m + DECEPTION_PRIOR), 6)
    assert honest["deception_efficiency"] == expected
    trap = score_match(play(ChaosLeague(rounds=TRAP_ROUNDS), TrapSetter(1), FrequencyPredictor()))
    assert honest["deception_efficiency"] < 0 < trap[0]["deception_efficiency"]


def test_fakes_shown_to_an_opponent_that_ignores_them_earn_nothing() -> None:
    # The opponent always plays paper; the seat shows rock (which paper beats)
    # and plays scissors. It wins every round, but nobody was misled.
    always_paper = Scripted([("paper", None)] * 200)
    faker = Scripted([("scissors", "rock")] * 200)
    row = explain(play(ChaosLeague(rounds=200), faker, always_paper))[0]
    assert row["standard"] == 1.0
    assert row["effective_spends"] == 50 and row["misreads"] == 0
    assert row["deception_efficiency"] < 0


# --- anti-exploitation ----------------------------------------------------------


class Spender:
    """Plays a fixed random sequence and spends a token (random shadow) every
    40 rounds."""

    def __init__(self, seed: int, rounds: int) -> None:
        rng = random.Random(seed)
        self.moves = [rng.choice(MOVES) for _ in range(rounds)]
        self.shadows = [rng.choice(MOVES) for _ in range(rounds)]

    def spends(self, round_: int) -> bool:
        return round_ % 40 == 0

    def __call__(self, turn: Turn) -> Action:
        shadow = self.shadows[turn.round - 1] if self.spends(turn.round) else None
        return act(self.moves[turn.round - 1], shadow, turn.round)


class Victim:
    """Random, except (if ``collapses``) in the 5 rounds after each opponent
    spend, where it plays a move that loses to the opponent's move."""

    def __init__(self, seed: int, opponent: Spender, collapses: bool) -> None:
        self.rng = random.Random(seed)
        self.opponent = opponent
        self.collapses = collapses

    def __call__(self, turn: Turn) -> Action:
        move = self.rng.choice(MOVES)
        pressured = any(self.opponent.spends(turn.round - k) for k in range(1, 6))
        if self.collapses and pressured:
            theirs = self.opponent.moves[turn.round - 1]
            move = next(m for m in MOVES if m in DEFEATS[theirs])
        return act(move, round_=turn.round)


def test_collapsing_under_deception_lowers_anti_exploitation() -> None:
    rounds = 2000
    results = {}
    for collapses in (False, True):
        spender = Spender(7, rounds)
        history = play(ChaosLeague(rounds=rounds), Victim(8, spender, collapses), spender)
        results[collapses] = explain(history)[0]
    steady, collapsed = results[False], results[True]
    # 50 spends; the last, in round 2000, has no rounds after it.
    assert collapsed["pressure_rounds"] == steady["pressure_rounds"] == 245
    assert collapsed["pressure_mean"] == -1.0
    assert abs(steady["pressure_gap"]) < 0.15
    assert collapsed["resilience"] < -0.4
    assert collapsed["anti_exploitation"] < steady["anti_exploitation"] - 0.15
    # Neither is pattern-exploitable, so the difference is Resilience alone.
    assert collapsed["exploitability"] == steady["exploitability"] == 0.0


def test_pressure_window_follows_opponent_spends() -> None:
    spent = np.zeros(12, dtype=bool)
    spent[[5, 8]] = True  # rounds 6 and 9, 1-based
    assert np.flatnonzero(pressure_mask(spent)).tolist() == [6, 7, 8, 9, 10, 11]
    assert not pressure_mask(np.zeros(3, dtype=bool)).any()
    assert pressure_mask(np.ones(1, dtype=bool)).tolist() == [False]


def test_predictable_bot_is_penalised_random_bot_is_not() -> None:
    rounds = 1000
    predictable = explain(
        play(ChaosLeague(rounds=rounds, tokens=0), beat_last, RandomBurner(2, rounds, 0))
    )
    beat, rnd = predictable
    # beat_last is a function of what it saw: the "after opponent move"
    # exploiter wins every round against it.
    assert beat["exploit_after_opponent_move"] == 1.0
    assert beat["exploitability"] < -0.8
    assert rnd["exploitability"] == 0.0
    assert all(0.0 <= beat[name] <= 1.0 for name in EXPLOITERS)


# --- degenerate cases -----------------------------------------------------------


def test_no_tokens_spent_by_anyone() -> None:
    history = play(ChaosLeague(rounds=200), RandomBurner(4, 200, 0), RandomBurner(5, 200, 0))
    for row in explain(history):
        assert row["pressure_rounds"] == 0 and row["resilience"] == 0.0
        assert row["deception_efficiency"] == 0.0
        assert row["anti_exploitation"] == round(0.5 * row["exploitability"], 6)


def test_classic_variant_has_neutral_deception() -> None:
    rng = random.Random(6)

    def rps(turn: Turn) -> Action:
        return act(rng.choice(("rock", "paper", "scissors")), round_=turn.round)

    history = play(RoShamBo(rounds=300), rps, beat_last)
    assert history.moves == 3
    for row in explain(history):
        assert row["deception_efficiency"] == 0.0 and row["resilience"] == 0.0
    # beat_last is again fully predictable from what it saw (4 context values:
    # none, rock, paper, scissors).
    beat = explain(history)[1]
    assert beat["exploit_after_opponent_move"] == 1.0
    assert beat["exploitability"] == pytest.approx(-(1 - 2 * math.sqrt(4 / 300)), abs=1e-12)


def test_zero_rounds() -> None:
    game = ChaosLeague(rounds=10)
    empty = game.history(game.new_state(0))
    assert score_match(empty) == [dict.fromkeys(SCORE_KEYS, 0.0)] * 2
    # Disqualified before round 1: every round forfeited.
    history = play(game, beat_last, beat_last, disqualify=(1, [0]))
    assert history.forfeited == 10
    dq, other = score_match(history)
    assert dq == {
        "final": -1.0,
        "standard": -1.0,
        "anti_exploitation": -1.0,
        "deception_efficiency": -1.0,
    }
    assert other == {
        "final": 0.7,
        "standard": 1.0,
        "anti_exploitation": 0.0,
        "deception_efficiency": 0.0,
    }


def test_disqualification_mid_match() -> None:
    rounds = 100
    history = play(
        ChaosLeague(rounds=rounds), TrapSetter(9), FrequencyPredictor(), disqualify=(61, [0])
    )
    assert len(history.points) == 60 and history.forfeited == 40
    played = history.points.sum(axis=0)
    dq, other = score_match(history)
    assert dq["standard"] == round((int(played[0]) - 40) / rounds, 6)
    assert other["standard"] == round((int(played[1]) + 40) / rounds, 6)
    assert dq["anti_exploitation"] == dq["deception_efficiency"] == -1.0
    # The trap setter spent tokens profitably before it was disqualified, yet
    # its bonuses are the minimum.
    assert explain(history)[0]["deception_credit"] > 0
    assert dq["final"] == round(0.7 * dq["standard"] - 0.3, 6)
    # Both disqualified: both lose every forfeited round.
    both = score_match(
        play(ChaosLeague(rounds=rounds), beat_last, beat_last, disqualify=(11, [0, 1]))
    )
    assert both[0]["standard"] == both[1]["standard"] == -0.9


def test_faults_are_losses_and_not_moves() -> None:
    def faulty(turn: Turn) -> Action | None:
        return None if turn.round % 3 == 0 else act("rock", round_=turn.round)

    history = play(ChaosLeague(rounds=30), faulty, RandomBurner(1, 30, 5))
    f, _ = explain(history)
    assert (history.real[:, 0] == -1).sum() == 10
    assert f["net_points"] == int(history.points[:, 0].sum())
    # 20 rock moves: the frequency exploiter wins each of them.
    assert f["exploit_frequency"] == 1.0


# --- properties -------------------------------------------------------------------

action_st = st.one_of(
    st.none(),
    st.tuples(st.integers(0, 4), st.booleans(), st.integers(0, 4)),
)


@settings(max_examples=150, deadline=None)
@given(
    classic=st.booleans(),
    tokens=st.integers(0, 6),
    plan=st.lists(st.tuples(action_st, action_st), min_size=0, max_size=40),
    dq=st.one_of(st.none(), st.tuples(st.integers(1, 41), st.sampled_from([[0], [1], [0, 1]]))),
)
def test_components_bounded_on_random_matches(
    classic: bool,
    tokens: int,
    plan: list[tuple[tuple[int, bool, int] | None, tuple[int, bool, int] | None]],
    dq: tuple[int, list[int]] | None,
) -> None:
    rounds = max(1, len(plan))
    game: ChaosLeague = (
        RoShamBo(rounds=rounds, tokens=tokens)
        if classic
        else ChaosLeague(rounds=rounds, tokens=tokens)
    )
    names = game.moves

    def bot(seat: int) -> Bot:
        def choose(turn: Turn) -> Action | None:
            if turn.round > len(plan):
                return act("rock")
            choice = plan[turn.round - 1][seat]
            if choice is None:
                return None
            real, shadow, shown = choice
            return act(names[real % len(names)], names[shown % len(names)] if shadow else None)

        return choose

    history = play(game, bot(0), bot(1), disqualify=dq)
    first = score_match(history)
    assert first == score_match(history)  # deterministic
    for seat, row in enumerate(first):
        for key, value in row.items():
            assert -1.0 <= value <= 1.0, (key, value)
            assert value == round(value, 6)
        expected = round(
            0.7 * row["standard"]
            + 0.2 * row["anti_exploitation"]
            + 0.1 * row["deception_efficiency"],
            6,
        )
        assert row["final"] == expected
        if history.disqualified[seat]:
            assert row["anti_exploitation"] == row["deception_efficiency"] == -1.0
        if not history.spent[:, seat].any() and not history.disqualified[seat]:
            assert row["deception_efficiency"] == 0.0


def random_history(seed: int, n: int, moves: int, spends: int) -> ChaosHistory:
    """Random moves (1% faults) and up to ``spends`` random shadows per seat."""
    rng = np.random.default_rng(seed)
    real = rng.integers(0, moves, (n, 2))
    real[rng.random((n, 2)) < 0.01] = NONE
    shadows = []
    for seat in (0, 1):
        for index in rng.choice(n, min(spends, n), replace=False).tolist():
            if real[index, seat] != NONE:
                shadows.append((index, seat, int(rng.integers(0, moves))))
    return ChaosHistory(
        codes=(real[:, 0] * 6 + real[:, 1]).astype(np.uint8).tobytes(),
        shadows=sorted(shadows),
        tokens_start=spends,
        rounds_total=n,
        disqualified=(False, False),
        moves=moves,
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 5000),
    moves=st.sampled_from([3, 5]),
    spends=st.integers(0, 300),
)
def test_components_bounded_on_long_random_histories(
    seed: int, n: int, moves: int, spends: int
) -> None:
    for row in score_match(random_history(seed, n, moves, spends)):
        assert all(-1.0 <= v <= 1.0 for v in row.values())


def test_million_round_match_scores_fast() -> None:
    history = random_history(0, 1_000_000, 5, 50)
    score_match(history)  # warm-up
    # CPU time, not wall time: on a loaded machine the wall clock also counts the
    # time other processes had the CPU.
    start = time.process_time()
    first = score_match(history)
    elapsed = time.process_time() - start
    assert first == score_match(history)
    # The bound is loose so a slow machine does not fail it, but a per-round
    # Python loop would.
    assert elapsed < 3.0


def test_million_round_match_scores_in_blocks() -> None:
    # A whole-match array of one byte per round and seat would be 2 MB; the
    # model reads the rounds in blocks of 16,384.
    history = random_history(1, 1_000_000, 5, 50)
    score_match(history)  # warm-up: imports and cached tables
    tracemalloc.start()
    try:
        score_match(history)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 400),
    moves=st.sampled_from([3, 5]),
    spends=st.integers(0, 60),
    chunk=st.integers(1, 50),
)
def test_scores_do_not_depend_on_the_block_size(
    seed: int, n: int, moves: int, spends: int, chunk: int
) -> None:
    # Contexts look one round back, the response model one round ahead and
    # pressure up to five rounds ahead of a spend: all of them cross blocks.
    history = random_history(seed, n, moves, spends)
    whole = explain(history)
    default = chaos_scoring._CHUNK
    chaos_scoring._CHUNK = chunk
    try:
        assert explain(history) == whole
    finally:
        chaos_scoring._CHUNK = default


def test_history_blocks_match_the_rounds_played() -> None:
    history = random_history(7, 300, 5, 40)
    codes = np.frombuffer(history.codes, dtype=np.uint8)
    real = np.stack([codes // 6, codes % 6], axis=1).astype(np.int8)
    real[real == NONE] = -1
    shown, spent = real.copy(), np.zeros(real.shape, dtype=bool)
    for index, seat, move in history.shadows:
        shown[index, seat], spent[index, seat] = move, True
    for start, stop in [(0, 300), (0, 1), (5, 6), (17, 200), (299, 300), (120, 120)]:
        block = history.block(start, stop)
        assert (block[0] == real[start:stop]).all()
        assert (block[1] == shown[start:stop]).all()
        assert (block[2] == spent[start:stop]).all()
    assert len(history.shadows) > 40 and spent.sum() == len(history.shadows)
