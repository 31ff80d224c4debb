"""CTM rules, commitments and test vectors, from the research notes (games.md section 3)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import ROOT, match_json, needs_node, played_cleanly, run_cli

from referee.faults import FaultKind
from referee.games import GAMES
from referee.games.ctm import (
    Action,
    Ctm,
    CtmState,
    Notice,
    beats,
    choice_commitment,
    hands_commitment,
    keccak256,
)

ROCK, PAPER, SCISSORS = 0, 1, 2

VECTORS = [
    (
        bytes((0, 1)) + b"\x2a" * 32,
        "df23d003462a4f8278e8b2ac6ac30fa574d6aef99147c2f60dbb25c493c2fe53",
    ),
    (
        bytes((0, 2)) + b"\x2a" * 32,
        "3e9db064f0d367421cd723712be935d0a25ada67683555fe4afd1036847898e9",
    ),
    (
        bytes((1, 2)) + b"\x2a" * 32,
        "cde3c58649fffff5b03e886485426b682a2ba7f926c55926eee34eb64c84ad74",
    ),
    (
        bytes((2, 0)) + b"\x2a" * 32,
        "434d4f924bad86700ff34484a6ae83b12025e4df173bf87f6c759bce8e9500f7",
    ),
    (
        bytes((0, 1)) + bytes(range(32)),
        "653bd3533242a62b5dc4741fd92a66761de90318e8fbb4569d36f81da53bca8d",
    ),
    (
        bytes((0,)) + b"\x63" * 32,
        "ebb068f31bc69ca63b0be4083357a4187383a4477fff86e74659928a3f6f9826",
    ),
    (
        bytes((1,)) + b"\x63" * 32,
        "e06196586e77a72483eb76cb51a4ab7199164bb54189da6a520871f463711183",
    ),
]


@pytest.mark.parametrize(("preimage", "digest"), VECTORS)
def test_keccak_vectors(preimage: bytes, digest: str) -> None:
    assert keccak256(preimage).hex() == digest


def test_keccak_is_not_sha3() -> None:
    assert keccak256(b"").hex().startswith("c5d2460186f7233c")
    first = VECTORS[0][0]
    assert hashlib.sha3_256(first).hexdigest().startswith("de692e9e")
    assert hands_commitment(0, 1, b"\x2a" * 32) == VECTORS[0][1]
    assert choice_commitment(1, b"\x63" * 32) == VECTORS[6][1]


def test_registered_and_beats() -> None:
    assert GAMES["ctm"] is Ctm
    assert beats(ROCK, SCISSORS) and beats(PAPER, ROCK) and beats(SCISSORS, PAPER)
    assert not beats(ROCK, PAPER) and not beats(ROCK, ROCK)


SALT_A = bytes(range(32))
SALT_B = b"\x07" * 32


def step(game: Ctm, state: CtmState, a0: Action | None, a1: Action | None) -> Any:
    """Check then resolve, as the driver does (an illegal action becomes None)."""
    actions: list[Action | None] = []
    for seat, a in enumerate((a0, a1)):
        actions.append(a if a is not None and game.check(state, seat, a) is None else None)
    return game.resolve(state, actions)


def play_game(
    game: Ctm,
    state: CtmState,
    hands: tuple[tuple[int, int], tuple[int, int]],
    choices: tuple[int, int],
) -> Any:
    step(
        game,
        state,
        Action(commitment=hands_commitment(*hands[0], SALT_A)),
        Action(commitment=hands_commitment(*hands[1], SALT_B)),
    )
    step(
        game,
        state,
        Action(hands=list(hands[0]), salt=SALT_A.hex()),
        Action(hands=list(hands[1]), salt=SALT_B.hex()),
    )
    step(
        game,
        state,
        Action(commitment=choice_commitment(choices[0], SALT_B)),
        Action(commitment=choice_commitment(choices[1], SALT_A)),
    )
    return step(
        game,
        state,
        Action(choice=choices[0], salt=SALT_B.hex()),
        Action(choice=choices[1], salt=SALT_A.hex()),
    )


@pytest.mark.parametrize(
    ("p1", "p2", "choices", "winner", "reason"),
    [
        ((ROCK, PAPER), (SCISSORS, PAPER), (0, 0), 0, "beats"),  # rock beats scissors
        ((ROCK, SCISSORS), (PAPER, SCISSORS), (0, 0), 1, "beats"),  # paper beats rock
        ((ROCK, PAPER), (ROCK, SCISSORS), (0, 0), 0, "tie_player1"),  # equal: player 1
        ((ROCK, SCISSORS), (PAPER, ROCK), (1, 1), 1, "beats"),  # rock beats scissors
    ],
)
def test_worked_examples(
    p1: tuple[int, int], p2: tuple[int, int], choices: tuple[int, int], winner: int, reason: str
) -> None:
    game = Ctm(games=1)
    state = game.new_state(0)
    assert game.observe(state, 0).player1 and not game.observe(state, 1).player1
    out = play_game(game, state, (p1, p2), choices)
    assert out.result.winner == winner and out.result.reason == reason
    assert game.finished(state)
    res = game.result(state)
    assert res.winner == winner and res.steps == 4


def test_player1_alternates_and_ties() -> None:
    game = Ctm()  # two games by default
    state = game.new_state(0)
    out = play_game(game, state, ((ROCK, PAPER), (ROCK, SCISSORS)), (0, 0))
    assert out.result.winner == 0 and out.result.player1 == 0
    assert game.observe(state, 1).player1
    out = play_game(game, state, ((ROCK, PAPER), (ROCK, SCISSORS)), (0, 0))
    assert out.result.winner == 1 and out.result.reason == "tie_player1"
    res = game.result(state)
    assert res.winner is None and [s.placement for s in res.seats] == [1, 1]
    assert res.seats[1].stats["ties_won_as_player1"] == 1


def test_visibility_by_phase() -> None:
    game = Ctm(games=1)
    state = game.new_state(0)
    turn = game.observe(state, 0)
    assert turn.phase == "commit_hands" and turn.opponent.hands_commitment is None
    c0 = hands_commitment(ROCK, PAPER, SALT_A)
    step(game, state, Action(commitment=c0), Action(commitment="0X" + "AB" * 32))
    turn = game.observe(state, 1)
    assert turn.phase == "reveal_hands"
    assert turn.opponent.hands_commitment == c0 and turn.you.hands_commitment == "ab" * 32
    assert turn.opponent.hands is None


def test_reveal_mismatch_loses_by_fault() -> None:
    game = Ctm(games=1)
    state = game.new_state(0)
    c0 = hands_commitment(ROCK, PAPER, SALT_A)
    c1 = hands_commitment(PAPER, SCISSORS, SALT_B)
    step(game, state, Action(commitment=c0), Action(commitment=c1))
    lie = Action(hands=[SCISSORS, PAPER], salt=SALT_B.hex())
    why = game.check(state, 1, lie)
    assert why is not None and why.kind is FaultKind.ILLEGAL_MOVE
    out = step(game, state, Action(hands=[ROCK, PAPER], salt=SALT_A.hex()), lie)
    assert out.faulted == [False, True]
    assert out.result.winner == 0 and out.result.reason == "fault"
    assert game.finished(state) and game.result(state).winner == 0


@pytest.mark.parametrize(
    "bad",
    [
        Action(hands=[ROCK, ROCK], salt=SALT_A.hex()),  # must differ
        Action(hands=[ROCK, 3], salt=SALT_A.hex()),  # out of range
        Action(hands=[ROCK], salt=SALT_A.hex()),
        Action(hands=[ROCK, PAPER], salt="12"),  # salt too short
        Action(hands=[ROCK, PAPER]),  # no salt
        Action(commitment="00" * 32),  # wrong phase's field
        Action(hands=[ROCK, PAPER], salt=SALT_A.hex(), choice=0),  # extra field
    ],
)
def test_invalid_reveals(bad: Action) -> None:
    game = Ctm(games=1)
    state = game.new_state(0)
    committed = hands_commitment(ROCK, ROCK, SALT_A) if bad.hands == [ROCK, ROCK] else "00" * 32
    step(game, state, Action(commitment=committed), Action(commitment="11" * 32))
    why = game.check(state, 0, bad)
    assert why is not None and why.kind is FaultKind.ILLEGAL_MOVE


def test_commit_format_and_step_echo() -> None:
    game = Ctm()
    state = game.new_state(0)
    for bad in ("ab" * 31, "zz" * 32, "0x" + "ab" * 33):
        assert game.check(state, 0, Action(commitment=bad)) is not None
    assert game.check(state, 0, Action(commitment="ab" * 32)) is None
    why = game.check(state, 0, Action(commitment="ab" * 32, step=2))
    assert why is not None and why.kind is FaultKind.PROTOCOL_ERROR
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"commitment": "ab", "hash": 1}', type=Action)


def test_choice_checks() -> None:
    game = Ctm(games=1)
    state = game.new_state(0)
    step(
        game,
        state,
        Action(commitment=hands_commitment(ROCK, PAPER, SALT_A)),
        Action(commitment=hands_commitment(PAPER, SCISSORS, SALT_B)),
    )
    step(
        game,
        state,
        Action(hands=[ROCK, PAPER], salt=SALT_A.hex()),
        Action(hands=[PAPER, SCISSORS], salt=SALT_B.hex()),
    )
    step(
        game,
        state,
        Action(commitment=choice_commitment(1, SALT_A)),
        Action(commitment=choice_commitment(2, SALT_B)),  # commits to an invalid index
    )
    assert game.check(state, 0, Action(choice=0, salt=SALT_A.hex())) is not None  # mismatch
    assert game.check(state, 0, Action(choice=1, salt=SALT_A.hex())) is None
    assert game.check(state, 1, Action(choice=2, salt=SALT_B.hex())) is not None  # range
    out = step(game, state, None, None)  # both fault: a drawn game
    assert out.result.winner is None and out.result.reason == "fault"
    res = game.result(state)
    assert res.winner is None and res.seats[0].stats["draws"] == 1


def test_disqualification_forfeits_the_rest() -> None:
    game = Ctm(games=4)
    state = game.new_state(0)
    play_game(game, state, ((ROCK, PAPER), (ROCK, SCISSORS)), (0, 0))  # seat 0 wins
    game.disqualify(state, [0])
    assert game.finished(state)
    res = game.result(state)
    assert res.winner == 1 and res.reason == "disqualification"
    assert res.seats[1].stats["wins"] == 3 and res.seats[0].stats["forfeited_games"] == 3


def test_notice_after_each_game() -> None:
    game = Ctm()
    state = game.new_state(0)
    out = play_game(game, state, ((ROCK, PAPER), (SCISSORS, PAPER)), (0, 0))
    notes = game.notices(state, out)
    assert [s for s, _ in notes] == [0, 1] and isinstance(notes[0][1], Notice)
    body = json.loads(msgspec.json.encode(notes[0][1]))
    assert body["type"] == "notice" and body["kept"] == [ROCK, SCISSORS]
    assert body["hands"] == [[ROCK, PAPER], [SCISSORS, PAPER]]
    assert game.observe(state, 0).last_game == out.result


def test_params_round_trip() -> None:
    game = Ctm.create(2, {"rounds": 6})
    assert game.params() == {"games": 6}
    assert Ctm.from_params(game.params()).params() == game.params()
    with pytest.raises(ValueError):
        Ctm.create(3, {})
    with pytest.raises(ValueError):
        Ctm.create(2, {"games": 0})


# -- through the CLI, with the sample bots ---------------------------------------------

SAMPLES = ROOT / "sample_bots" / "games" / "ctm"
MINIMAX = f"python3 {SAMPLES / 'minimax.py'}"
COUNTER = f"node {SAMPLES / 'counter.js'}"


@needs_node
def test_cli_match(tmp_path: Path) -> None:
    replay = tmp_path / "ctm.jsonl"
    out = match_json(
        "--game", "ctm", MINIMAX, COUNTER, "--seed", "1", "--param", "games=4",
        "--replay", str(replay),
    )  # fmt: skip
    assert out["reason"] == "complete" and out["steps"] == 16
    assert sum(s["stats"]["wins"] for s in out["seats"]) == 4
    assert not any(s["stats"]["faulted_games"] for s in out["seats"])
    verify = run_cli("verify", str(replay))
    assert verify.returncode == 0, verify.stdout + verify.stderr


@needs_node
def test_cli_same_seed_same_game(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        replay = tmp_path / f"{name}.jsonl"
        result = match_json(
            "--game", "ctm", COUNTER, MINIMAX, "--seed", "3", "--replay", str(replay)
        )
        runs.append(played_cleanly(result, replay))
    assert runs[0] == runs[1]


def test_cli_lying_bot_loses(tmp_path: Path) -> None:
    liar = tmp_path / "liar.py"
    # The sandbox shows a bot only its own directory: bring the Keccak along.
    shutil.copy(SAMPLES / "minimax.py", tmp_path / "minimax.py")
    # Commits to rock+paper, then reveals paper+scissors with the same salt.
    liar.write_text(
        "import json, sys\n"
        "from minimax import keccak256\n"
        "salt = bytes(32)\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello':\n"
        "        r = {'name': 'liar'}\n"
        "    elif m['type'] == 'turn':\n"
        "        p = m['phase']\n"
        "        if p == 'commit_hands':\n"
        "            r = {'commitment': keccak256(bytes((0, 1)) + salt).hex()}\n"
        "        elif p == 'reveal_hands':\n"
        "            r = {'hands': [1, 2], 'salt': salt.hex()}\n"
        "        else:\n"
        "            r = {'commitment': keccak256(bytes((0,)) + salt).hex()}\n"
        "    elif m['type'] == 'end':\n"
        "        break\n"
        "    else:\n"
        "        continue\n"
        "    print(json.dumps(r), flush=True)\n"
    )
    replay = tmp_path / "liar.jsonl"
    out = match_json(
        "--game", "ctm", f"python3 {liar}", MINIMAX, "--seed", "2", "--replay", str(replay)
    )
    assert out["winner"] == 1
    assert out["seats"][0]["stats"]["faulted_games"] == 2
    assert out["seats"][0]["verdict"]["status"] == "illegal_move"
    verify = run_cli("verify", str(replay))
    assert verify.returncode == 0, verify.stdout + verify.stderr
