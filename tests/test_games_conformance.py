"""Every registered game, played with random legal actions and random illegal ones
(malformed, for another step, against the rules, missing), judged as the driver
judges, written as a replay: ``verify`` must accept it. A new game in GAMES is
covered here without touching this file."""

from __future__ import annotations

import functools
import random
from typing import Any

import msgspec
import pytest

from referee.faults import ROUND_FAULTS, FaultKind, Verdict, worst_status
from referee.games import GAMES, Game
from referee.judge import Judge
from referee.replay import (
    FORMAT_NAME,
    FORMAT_VERSION,
    BotInfo,
    Event,
    Footer,
    Header,
    ReplayWriter,
    Step,
)
from referee.verify import verify_replay

# Values an illegal action may carry in one of its fields.
JUNK: tuple[Any, ...] = (None, -1, 0, 7, 99, "", "zzz", "ab" * 32, [0, 0], [1], True, {"x": 1})
SEEDS = range(9)  # fault rate and fault limit: each of three with each of three


def seats_for(name: str) -> list[int]:
    """Seat counts to try: two, and three where the game takes it."""
    out = []
    for seats in (2, 3):
        try:
            GAMES[name].create(seats, {})
        except (ValueError, TypeError):
            continue
        out.append(seats)
    return out


CASES = [(name, seats) for name in sorted(GAMES) for seats in seats_for(name)]


def an_illegal_reply(
    game: Game[Any], state: Any, seat: int, rng: random.Random
) -> tuple[Any | None, FaultKind]:
    """A random wrong reply, as the driver would judge it: (the action if it decodes
    and the rules accept it after all, else None; the fault kind otherwise)."""
    legal = game.random_action(state, seat, rng)
    fields = dict(msgspec.to_builtins(legal))
    names = [f for f in type(legal).__struct_fields__ if f not in ("step", "round")]
    how = rng.random()
    if how < 0.2 and ({"step", "round"} & set(type(legal).__struct_fields__)):
        echo = "step" if "step" in type(legal).__struct_fields__ else "round"
        fields[echo] = game.step_number(state) + rng.randint(1, 9)
    elif how < 0.3:
        fields["unknown_field"] = 1
    else:
        fields[rng.choice(names)] = rng.choice(JUNK)
    try:
        action = msgspec.convert(fields, type(legal))
    except msgspec.ValidationError:
        return None, FaultKind.PROTOCOL_ERROR  # it would not decode
    refused = game.check(state, seat, action)
    if refused is None:
        return action, FaultKind.ILLEGAL_MOVE
    assert refused.kind in (FaultKind.PROTOCOL_ERROR, FaultKind.ILLEGAL_MOVE), refused
    assert refused.detail
    return None, refused.kind


@functools.cache
def play(name: str, seats: int, seed: int) -> tuple[list[bytes], set[str]]:
    """One game with random bots; returns the replay's lines and the fault kinds."""
    rng = random.Random(seed)
    # Every game takes ``rounds`` (``referee match --rounds N``) in its own sense.
    game = GAMES[name].create(seats, {"rounds": rng.choice((2, 30, 120))})
    state = game.new_state(seed)
    judge = Judge(seats, move_s=1.0, bank_s=3.0, max_faults=(2, 3, 50)[seed // 3 % 3])
    writer = ReplayWriter(None)
    encode = msgspec.json.Encoder().encode
    lines = [
        writer.write(
            Header(
                format=FORMAT_NAME,
                format_version=FORMAT_VERSION,
                protocol=1,
                referee_version="test",
                game=game.name,
                params=game.params(),
                seed=seed,
                started="2026-01-01T00:00:00Z",
                bots=[BotInfo(seat=i, command=[f"bot{i}"]) for i in range(seats)],
                time={"handshake_ms": 10000, "move_ms": 1000, "bank_ms": 3000},
                max_faults=judge.max_faults,
            )
        )
    ]
    fault_rate = (0.3, 0.05, 0.0)[seed % 3]
    steps = 0
    while not game.finished(state) and steps < 5000:
        steps += 1
        n = game.step_number(state)
        asked = list(game.to_act(state))
        obs: list[Any] = [None] * seats
        acts: list[Any] = [None] * seats
        us: list[int | None] = [None] * seats
        faults: list[Any] = [None] * seats
        actions: list[Any] = [None] * seats
        fatal: list[int] = []
        for seat in asked:
            obs[seat] = msgspec.Raw(game.encode_turn(state, seat))
            roll = rng.random()
            if roll < fault_rate * 0.2:
                faults[seat] = judge.no_reply(seat, n)
                continue
            us[seat] = rng.randint(5, 900_000)
            judge.clocks[seat].took(us[seat] / 1e6)
            if roll < fault_rate * 0.3:
                faults[seat] = judge.fault(seat, n, FaultKind.CRASH, "the bot exited")
                us[seat] = None
                fatal.append(seat)
                continue
            if roll < fault_rate:
                action, kind = an_illegal_reply(game, state, seat, rng)
                if action is None:
                    faults[seat] = judge.fault(seat, n, kind, "refused")
                    continue
            else:
                action = game.random_action(state, seat, rng)
                assert game.check(state, seat, action) is None, (name, n, seat, action)
            actions[seat] = action
            acts[seat] = msgspec.Raw(encode(action))
        out = game.resolve(state, actions)
        lines.append(writer.write(Step(n, obs, acts, us, faults, out)))
        going = judge.disqualify(judge.must_go(asked, n, fatal))
        if going:
            game.disqualify(state, going)
            lines.append(writer.write(Event(n=n, kind="disqualified", seats=going)))
    assert game.finished(state), f"{name} did not finish in {steps} steps"
    verdicts = [
        Verdict(
            status=worst_status([f.kind for f in judge.seat_faults[seat]]),
            disqualified=judge.out[seat],
            faults=judge.seat_faults[seat],
        )
        for seat in range(seats)
    ]
    footer = Footer(
        result=game.result(state),
        verdicts=verdicts,
        faults=judge.faults,
        ended="2026-01-01T00:00:01Z",
        wall_s=1.0,
    )
    lines.append(writer.write(footer))
    return lines, {f.kind for f in judge.faults}


@pytest.mark.parametrize(("name", "seats"), CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_random_play_verifies(name: str, seats: int) -> None:
    kinds: set[str] = set()
    for seed in SEEDS:
        lines, seen = play(name, seats, seed)
        report = verify_replay(lines)
        assert report.ok, (seed, report.summary())
        kinds |= seen
    assert kinds & ROUND_FAULTS, kinds  # the faulty seeds did fault


def test_every_fault_path_is_exercised_somewhere() -> None:
    kinds: set[str] = set()
    for name, seats in CASES:
        for seed in SEEDS:
            kinds |= play(name, seats, seed)[1]
    assert {"timeout", "protocol_error", "illegal_move", "crash", "too_many_faults"} <= kinds


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_game_describes_itself(name: str) -> None:
    cls = GAMES[name]
    game = cls.create(2, {"rounds": 30})
    result_keys: list[str] = []
    state = game.new_state(1)
    rng = random.Random(1)
    while not game.finished(state):
        game.resolve(
            state,
            [
                game.random_action(state, s, rng) if s in game.to_act(state) else None
                for s in range(2)
            ],
        )
    result_keys = list(game.result(state).seats[0].scores)
    for key in cls.ranking_keys or ():
        assert key in result_keys, (name, key)
    if cls.tiebreak is not None:
        assert cls.tiebreak[0] in result_keys
    assert set(cls.score_labels) <= set(result_keys)
    assert cls.step_word and game.length() >= 0


def test_an_edited_random_replay_fails() -> None:
    """The conformance check is not vacuous: one changed action is caught."""
    lines, _ = play("liars_dice", 2, 3)
    step = next(i for i, line in enumerate(lines) if b'"type":"step"' in line and b'"bid"' in line)
    edited = lines[:step] + [lines[step].replace(b'"bid"', b'"liar"', 1)] + lines[step + 1 :]
    assert not verify_replay(edited).ok
