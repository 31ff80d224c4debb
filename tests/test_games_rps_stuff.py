"""Rock Paper Stuff rules, from the research notes (games.md section 1)."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import ROOT, match_json, needs_node, played_cleanly, replay_steps, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.faults import FaultKind
from referee.games import GAMES
from referee.games.rps_stuff import (
    KINDS,
    RECEIVE,
    Action,
    Notice,
    RockPaperStuff,
    RpsState,
    deviance,
    imbalance,
)

# The notes' table: row = A's play, column = B's play, "A gets / B gets".
NOTES_TABLE = """
Rock     | same    | P / R   | F / R   | R / S   | - / WW
Paper    | R / P   | same    | PP / S  | - / FF  | P / -
Scissors | R / F   | S / PP  | same    | SS / F  | W / R
Fire     | S / R   | FF / -  | F / SS  | same    | - / W
Water    | WW / -  | - / P   | R / W   | W / -   | same
"""
LETTER = {"R": 0, "P": 1, "S": 2, "F": 3, "W": 4}


def parse(cell: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    a, b = (part.strip() for part in cell.split("/"))
    return tuple(sorted(LETTER[c] for c in a if c != "-")), tuple(
        sorted(LETTER[c] for c in b if c != "-")
    )


def cell_of(a_play: str, b_play: str) -> str:
    """The notes' table cell for A playing ``a_play`` against B playing ``b_play``."""
    rows = NOTES_TABLE.strip().splitlines()
    row = next(r for r in rows if r.split("|")[0].strip().lower() == a_play)
    return row.split("|")[1 + KINDS.index(b_play)].strip()


def test_registered() -> None:
    assert GAMES["rps_stuff"] is RockPaperStuff


def test_trade_table_matches_notes() -> None:
    rows = [line for line in NOTES_TABLE.strip().splitlines()]
    for i, row in enumerate(rows):
        cells = [c.strip() for c in row.split("|")][1:]
        for j, cell in enumerate(cells):
            if i == j:
                assert (i, j) not in RECEIVE
                continue
            ra, rb = RECEIVE[(i, j)]
            assert (tuple(sorted(ra)), tuple(sorted(rb))) == parse(cell), (KINDS[i], KINDS[j])


def test_net_change_per_pair() -> None:
    # From the diagram: R-P 0; R-S -S+F; R-F -F+S; R-W -R+W; P-S +P; P-F -P+F; P-W -W;
    # S-F +S; S-W -S+R; F-W -F.
    expected = {
        "RP": {},
        "RS": {"S": -1, "F": 1},
        "RF": {"F": -1, "S": 1},
        "RW": {"R": -1, "W": 1},
        "PS": {"P": 1},
        "PF": {"P": -1, "F": 1},
        "PW": {"W": -1},
        "SF": {"S": 1},
        "SW": {"S": -1, "R": 1},
        "FW": {"F": -1},
    }
    for pair, change in expected.items():
        a, b = LETTER[pair[0]], LETTER[pair[1]]
        ra, rb = RECEIVE[(a, b)]
        net = Counter(ra) + Counter(rb)
        net.subtract([a, b])
        got = {k: v for k, v in net.items() if v}
        assert got == {LETTER[k]: v for k, v in change.items()}, pair
    # At least one side always receives something: at most one death per trade.
    assert all(ra or rb for ra, rb in RECEIVE.values())


def test_setup_and_length() -> None:
    for n, trades in ((2, 100), (3, 300), (4, 600), (8, 2800)):
        game = RockPaperStuff.create(n, {})
        assert game.trades == trades
        state = game.new_state(0)
        assert state.inv == [[5 * n] * 5 for _ in range(n)]


def test_worked_deviance() -> None:
    counts = [10, 10, 11, 10, 10]
    assert round(deviance(counts, sample=True), 4) == 0.4472
    assert round(deviance(counts), 4) == 0.4
    assert imbalance([4, 4, 4, 4, 4]) == 0


def trade(game: RockPaperStuff, state: RpsState, plays: Mapping[int, Action | None]) -> Any:
    actions: list[Action | None] = [None] * game.seats
    for seat, action in plays.items():
        if action is not None and game.check(state, seat, action) is None:
            actions[seat] = action
    return game.resolve(state, actions)


def test_scissors_against_fire() -> None:
    game = RockPaperStuff(2)
    state = game.new_state(1)
    state.inv = [[10] * 5, [10] * 5]
    state.pair = (0, 1)
    out = trade(game, state, {0: Action(play="scissors"), 1: Action(play="fire")})
    assert state.inv[0] == [10, 10, 11, 10, 10]  # gave one S, got two
    assert state.inv[1] == [10, 10, 10, 10, 10]  # gave F, got F
    assert out.received == [["scissors", "scissors"], ["fire"]]
    state.pair = (1, 0)  # reversed roles: same result for the same plays
    trade(game, state, {0: Action(play="scissors"), 1: Action(play="fire")})
    assert state.inv[0] == [10, 10, 12, 10, 10]


def test_same_kind_goes_one_way() -> None:
    winners: Counter[str] = Counter()
    for seed in range(200):
        game = RockPaperStuff(2)
        state = game.new_state(seed)
        out = trade(game, state, {0: Action(play="water"), 1: Action(play="water")})
        a, b = out.seats
        got = [len(r) for r in out.received]
        assert sorted(got) == [0, 2]
        winners["A" if got[0] == 2 else "B"] += 1
        assert sum(map(sum, state.inv)) == 100  # nothing created or lost
    assert 70 < winners["A"] < 130


def test_play_not_held_is_replaced_among_held_kinds() -> None:
    game = RockPaperStuff(2)
    state = game.new_state(3)
    state.inv = [[0, 0, 5, 0, 5], [10] * 5]
    seen = set()
    for _ in range(40):
        state.inv[0] = [0, 0, 5, 0, 5]
        state.pair = (0, 1)
        out = trade(game, state, {0: Action(play="rock"), 1: Action(play="paper")})
        assert out.asked[0] == "rock"
        seen.add(out.played[0])
    assert seen == {"scissors", "water"}
    assert state.replaced[0] == 40


def test_fault_is_a_random_play() -> None:
    # Seat 0 faults while holding only scissors and water: the trade is made for it
    # with a kind it holds, drawn at random, and the trade goes through as played.
    seen: Counter[str] = Counter()
    for seed in range(60):
        game = RockPaperStuff(2)
        state = game.new_state(seed)
        state.inv = [[0, 0, 5, 0, 5], [10] * 5]
        state.pair = (seed % 2, 1 - seed % 2)  # either role
        out = trade(game, state, {0: None, 1: Action(play="rock")})
        me, other = out.seats.index(0), out.seats.index(1)
        assert out.asked[me] is None and out.asked[other] == "rock"
        assert out.played[other] == "rock"
        played = out.played[me]
        assert played in ("scissors", "water"), played
        seen[played] += 1
        assert state.faulted[0] == 1 and state.faulted[1] == 0
        assert state.replaced == [0, 0]  # a fault is not a replaced play
        # What each got is what the notes' table gives for the plays actually made.
        a_play, b_play = (played, "rock") if me == 0 else ("rock", played)
        a_gets, b_gets = parse(cell_of(a_play, b_play))
        assert [sorted(r) for r in out.received] == [
            sorted(KINDS[k] for k in a_gets),
            sorted(KINDS[k] for k in b_gets),
        ]
    # Both held kinds turn up, about evenly (binomial, 60 draws: 18..42 is > 99.9%).
    assert 18 <= seen["scissors"] <= 42 and seen["scissors"] + seen["water"] == 60


def test_death_and_end() -> None:
    game = RockPaperStuff(3)
    state = game.new_state(5)
    state.inv = [[1, 0, 0, 0, 0], [10] * 5, [10] * 5]
    state.pair = (0, 1)
    out = trade(game, state, {0: Action(play="rock"), 1: Action(play="water")})
    assert out.died == [0]  # rock sinks: nothing back
    assert not state.alive[0]
    for _ in range(50):
        if game.finished(state):
            break
        assert 0 not in game.to_act(state)
        a, b = game.to_act(state)
        trade(game, state, {a: Action(play="paper"), b: Action(play="fire")})
    res = game.result(state)
    assert res.seats[0].placement == 3 and res.seats[0].scores["deviance"] == 0.0


def test_game_ends_when_one_is_left() -> None:
    game = RockPaperStuff(2)
    state = game.new_state(6)
    state.inv = [[0, 1, 0, 0, 0], [10] * 5]
    state.pair = (1, 0)
    trade(game, state, {0: Action(play="paper"), 1: Action(play="fire")})
    assert game.finished(state)
    res = game.result(state)
    assert res.winner == 1 and res.reason == "extinction" and res.steps == 1


def test_ranking_and_nobody() -> None:
    game = RockPaperStuff(4, trades=0)
    state = game.new_state(0)
    assert game.finished(state)
    res = game.result(state)
    assert res.winner is None and {s.placement for s in res.seats} == {1}
    state.inv = [[20, 20, 21, 20, 20], [20, 20, 20, 20, 20], [20, 20, 20, 20, 20], [0] * 5]
    state.alive[3] = False
    game.disqualify(state, [2])
    res = game.result(state)
    assert [s.placement for s in res.seats] == [2, 1, 4, 3]
    assert res.winner == 1
    state.inv[0] = [20] * 5
    assert game.result(state).winner is None  # the first two level: "Nobody"


def test_skins_merge_limit_and_visibility() -> None:
    game = RockPaperStuff(2, skin_bytes=60)
    state = game.new_state(7)
    state.pair = (0, 1)
    trade(game, state, {0: Action(play="rock", skin={"motto": "fair"}), 1: Action(play="rock")})
    state.pair = (0, 1)
    # This trade's partner sees the skin as it was before the call.
    assert game.observe(state, 1).opponent.skin == {"motto": "fair"}
    trade(game, state, {0: Action(play="rock", skin={"n": 1}), 1: Action(play="rock")})
    assert state.skins[0] == {"motto": "fair", "n": 1}
    big = Action(play="rock", skin={"x": "y" * 80})
    why = game.check(state, 0, big)
    assert why is not None and why.kind is FaultKind.ILLEGAL_MOVE and "skin" in why.detail
    late = game.check(state, 0, Action(play="rock", step=99))
    assert late is not None and late.kind is FaultKind.PROTOCOL_ERROR
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"play": "Rock"}', type=Action)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"play": "rock", "memory": {}}', type=Action)


def test_notice_to_both_traders() -> None:
    game = RockPaperStuff(4)
    state = game.new_state(8)
    a, b = game.to_act(state)
    out = trade(game, state, {a: Action(play="fire"), b: Action(play="water")})
    notes = game.notices(state, out)
    assert [s for s, _ in notes] == [a, b]
    assert isinstance(notes[0][1], Notice)
    body = json.loads(msgspec.json.encode(notes[0][1]))
    assert body["type"] == "notice" and body["played"] == ["fire", "water"]


def play_random(players: int, seed: int, trades: int) -> tuple[list[bytes], Any]:
    game = RockPaperStuff.create(players, {"trades": trades})
    state = game.new_state(seed)
    rng = random.Random(seed)
    outs = []
    pairs: Counter[tuple[int, ...]] = Counter()
    while not game.finished(state):
        asked = game.to_act(state)
        pairs[tuple(asked)] += 1
        plays = {s: Action(play=rng.choice(KINDS)) for s in asked}  # type: ignore[arg-type]
        outs.append(msgspec.json.encode(trade(game, state, plays)))
    return outs, (game.result(state), pairs)


@pytest.mark.parametrize("players", [2, 4, 8])
def test_full_games_deterministic(players: int) -> None:
    a, (res, pairs) = play_random(players, 21, 40 * players * (players - 1))
    b, _ = play_random(players, 21, 40 * players * (players - 1))
    assert a == b
    assert a != play_random(players, 22, 40 * players * (players - 1))[0]
    # Every ordered pair of players gets drawn.
    assert len(pairs) == players * (players - 1)
    assert sorted(s.placement for s in res.seats)[0] == 1


def test_params_round_trip() -> None:
    game = RockPaperStuff.create(5, {"rounds": 7})
    assert game.params()["trades"] == 7 and game.params()["players"] == 5
    assert RockPaperStuff.from_params(game.params()).params() == game.params()
    assert RockPaperStuff.create(5, game.params()).params() == game.params()
    with pytest.raises(ValueError):
        RockPaperStuff.create(1, {})
    with pytest.raises(ValueError):
        RockPaperStuff.create(2, {"memory": 3})


# -- through the CLI, with the sample bots ---------------------------------------------

SAMPLES = ROOT / "sample_bots" / "games" / "rps_stuff"
BALANCE = f"python3 {SAMPLES / 'balance.py'}"
ABUNDANT = f"node {SAMPLES / 'abundant.js'}"


@needs_node
@pytest.mark.parametrize("players", [2, 4, 8])
def test_cli_match(players: int, tmp_path: Path) -> None:
    bots = [BALANCE if i % 2 == 0 else ABUNDANT for i in range(players)]
    replay = tmp_path / "rps.jsonl"
    out = match_json(
        "--game", "rps_stuff", *bots, "--seed", "1", "--param", "trades=60", "--replay", str(replay)
    )
    assert out["steps"] == 60
    assert not any(s["stats"]["faulted"] for s in out["seats"])
    assert sum(s["stats"]["trades"] for s in out["seats"]) == 120
    steps = replay_steps(replay)
    assert len(steps) == 60
    assert all(sum(o is not None for o in st["obs"]) == 2 for st in steps)
    verify = run_cli("verify", str(replay))
    assert verify.returncode == 0, verify.stdout + verify.stderr


@needs_node
def test_cli_same_seed_same_game(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        replay = tmp_path / f"{name}.jsonl"
        result = match_json(
            "--game", "rps_stuff", BALANCE, ABUNDANT, BALANCE, "--seed", "9",
            "--param", "trades=50", "--replay", str(replay),
        )  # fmt: skip
        runs.append(played_cleanly(result, replay))
    assert len(runs[0]) == 50  # trades=50
    assert runs[0] == runs[1]


def test_cli_crash_is_disqualified_and_verifies(tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text(
        "import json, sys\n"
        "n = 0\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        print(json.dumps({'name': 'crash'}), flush=True)\n"
        "    elif m['type'] == 'turn':\n"
        "        n += 1\n"
        "        if n == 3:\n"
        "            sys.exit(3)\n"
        "        print(json.dumps({'play': 'rock'}), flush=True)\n"
        "    elif m['type'] == 'end':\n"
        "        break\n"
    )
    replay = tmp_path / "crash.jsonl"
    out = match_json(
        "--game", "rps_stuff", BALANCE, f"python3 {crash}", BALANCE, "--seed", "4",
        "--param", "trades=40", "--replay", str(replay),
    )  # fmt: skip
    assert out["steps"] == 40
    crashed = out["seats"][1]
    assert crashed["stats"]["disqualified"] and crashed["placement"] == 3
    # The crashed seat is never paired again: the other two share every later trade.
    assert crashed["stats"]["trades"] == 3
    verify = run_cli("verify", str(replay))
    assert verify.returncode == 0, verify.stdout + verify.stderr


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(2, 6),
    seed=st.integers(0, 2**32),
    plays=st.lists(st.sampled_from([*KINDS, None]), min_size=1, max_size=120),
)
def test_property_counts_stay_sane(players: int, seed: int, plays: list[str | None]) -> None:
    game = RockPaperStuff(players, trades=len(plays))
    state = game.new_state(seed)
    for i, kind in enumerate(plays):
        if game.finished(state):
            break
        a, b = game.to_act(state)
        assert a != b and state.alive[a] and state.alive[b]
        before = [list(inv) for inv in state.inv]
        act = None if kind is None else Action(play=kind)  # type: ignore[arg-type]
        out = trade(game, state, {a: act, b: Action(play=KINDS[i % 5])})  # type: ignore[arg-type]
        # The played kinds were held; each side gave exactly one item up.
        for side, seat in enumerate((a, b)):
            played = KINDS.index(out.played[side])
            assert before[seat][played] > 0
            diff = [x - y for x, y in zip(state.inv[seat], before[seat], strict=True)]
            expect = [0] * 5
            expect[played] -= 1
            for k in out.received[side]:
                expect[KINDS.index(k)] += 1
            assert diff == expect
        assert all(c >= 0 for inv in state.inv for c in inv)
        assert len(out.died) <= 1
