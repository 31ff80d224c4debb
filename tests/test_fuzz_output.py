"""Fuzzing the referee with adversarial bot output.

A real bot process replays byte strings that hypothesis generates (random bytes,
near-valid JSON, broken UTF-8, partial lines, lines with extra newlines) as its
answers. Whatever it sends, the match must end with a complete result, no
exception may escape the driver, and the replay must re-verify. The other way
round, valid actions in every shape the protocol allows (any key order, spacing,
escapes, optional fields absent or null) must all be accepted as sent.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import trio
from conftest import move_limit_s, replay_steps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.match import BotSpec, MatchConfig, run_match
from referee.verify import verify_replay

# Reads hello, says ready, then answers turn i with the i-th chunk of a data file
# (chunks are separated by a NUL byte, which the strategies never produce), written
# raw: the chunk decides how many lines, if any, the referee receives.
REPLAYER = r"""
import sys
data = open(sys.argv[1], "rb").read().split(b"\0")
sys.stdin.buffer.readline()
out = sys.stdout.buffer
out.write(b'{"name": "fuzz"}\n'); out.flush()
for chunk in data:
    if not sys.stdin.buffer.readline():
        break
    out.write(chunk); out.flush()
"""

VALID = [
    b'{"real_move": "rock"}\n',
    b'{"real_move": "spock", "shadow_request": true, "shadow_move": "paper"}\n',
]
near_json = st.sampled_from(
    [
        b'{"real_move": "Rock"}\n',
        b'{"real_move": "rock", "real_move": "paper"}\n',
        b'{"real_move": "rock", "x": 1}\n',
        b'{"real_move": NaN}\n',
        b'{"real_move": "\\ud800"}\n',
        b'{"real_move": 1' + b"0" * 5000 + b"}\n",
        b"[" * 5000 + b"\n",
        b'{"real_move": "rock", "round": 999}\n',
        b'{"real_move": "rock", "shadow_request": true}\n',
        b"\xff\xfe\xfd\n",
        b'{"real_move": "ro',
        b"\n",
        b"",
        b'{"real_move": "rock"}\n{"real_move": "rock"}\n',
    ]
)
chunks = st.one_of(
    st.sampled_from(VALID),
    near_json,
    st.binary(max_size=200).map(lambda b: b.replace(b"\0", b"")),
    st.binary(max_size=60).map(lambda b: b.replace(b"\0", b"") + b"\n"),
)


# The steady bot must never time out: 0.3 s, or more on a machine slow to reply when
# the test starts (measured once; each fault it provokes waits this long, at most 3).
move_limit = functools.cache(lambda: move_limit_s(0.3, cap=1.0))


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(chunks, min_size=1, max_size=120))
def test_adversarial_output_never_breaks_the_referee(tmp_path: Path, answers: list[bytes]):
    script = tmp_path / "replayer.py"
    script.write_text(REPLAYER)
    data = tmp_path / "answers.bin"
    data.write_bytes(b"\0".join(answers))
    steady = Path(__file__).resolve().parent / "bots" / "steady.py"
    replay = tmp_path / "fuzz.jsonl"
    replay.unlink(missing_ok=True)
    cfg = MatchConfig(
        rounds=len(answers),
        seed=1,
        move_timeout=move_limit(),
        time_bank=0.0,
        replay=str(replay),
    )
    bots = [
        BotSpec([sys.executable, str(script), str(data)]),
        BotSpec([sys.executable, str(steady)]),
    ]
    outcome = trio.run(run_match, bots, cfg)
    result = outcome.result
    assert result.steps <= len(answers)
    assert result.reason in ("complete", "disqualification")
    # Every fault is one of the documented kinds, and only the fuzzing seat faults.
    assert all(f.seat == 0 for f in outcome.faults), outcome.faults
    assert outcome.verdicts[1].status == "ok"
    report = verify_replay(replay.read_bytes().splitlines(keepends=True))  # as stored
    assert report.ok, report


# -- the other side: every shape the protocol allows must be accepted --------------------

MOVE_NAMES = ("rock", "paper", "scissors", "lizard", "spock")


@st.composite
def valid_action(draw: st.DrawFn, round_: int) -> tuple[bytes, str, str | None]:
    """A protocol-valid reply to turn ``round_``, written in any way JSON allows (key
    order, spacing, escapes, optional fields present, absent or null): the bytes, the
    real move and the shadow move asked for (None for no shadow)."""
    real = draw(st.sampled_from(MOVE_NAMES))
    fields: list[tuple[str, object]] = [("real_move", real)]
    shadow = None
    request = draw(st.sampled_from(("absent", "false", "true")))
    if request == "true":
        shadow = draw(st.sampled_from(MOVE_NAMES))
        fields += [("shadow_request", True), ("shadow_move", shadow)]
    else:
        if request == "false":
            fields.append(("shadow_request", False))
        extra = draw(st.sampled_from(("absent", "null", "move")))
        if extra != "absent":
            # Optional when no shadow is asked for: null or a move, either is ignored.
            fields.append(("shadow_move", None if extra == "null" else MOVE_NAMES[round_ % 5]))
    echo = draw(st.sampled_from(("absent", "null", "round")))
    if echo != "absent":
        fields.append(("round", None if echo == "null" else round_))
    fields = draw(st.permutations(fields))
    space = draw(st.sampled_from(("", " ", "  ", "\t", " \t ")))
    escape = draw(st.booleans())

    def value(v: object) -> str:
        if isinstance(v, str) and escape:
            return '"' + "".join(f"\\u{ord(c):04x}" for c in v) + '"'
        return json.dumps(v)

    body = f",{space}".join(f"{json.dumps(k)}{space}:{space}{value(v)}" for k, v in fields)
    ending = draw(st.sampled_from(("\n", "\r\n", " \n")))
    return f"{space}{{{space}{body}{space}}}{ending}".encode(), real, shadow


@st.composite
def valid_answers(draw: st.DrawFn) -> list[tuple[bytes, str, str | None]]:
    n = draw(st.integers(1, 60))
    return [draw(valid_action(r)) for r in range(1, n + 1)]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(valid_answers())
def test_every_valid_action_shape_is_accepted(
    tmp_path: Path, answers: list[tuple[bytes, str, str | None]]
) -> None:
    script = tmp_path / "replayer.py"
    script.write_text(REPLAYER)
    data = tmp_path / "answers.bin"
    data.write_bytes(b"\0".join(line for line, _, _ in answers))
    steady = Path(__file__).resolve().parent / "bots" / "steady.py"
    replay = tmp_path / "valid.jsonl"
    replay.unlink(missing_ok=True)
    tokens = 5
    cfg = MatchConfig(
        rounds=len(answers),
        seed=1,
        move_timeout=5.0,
        time_bank=0.0,
        replay=str(replay),
        tokens=tokens,
    )
    bots = [
        BotSpec([sys.executable, str(script), str(data)]),
        BotSpec([sys.executable, str(steady)]),
    ]
    outcome = trio.run(run_match, bots, cfg)
    assert outcome.faults == [], [line for line, _, _ in answers]
    assert outcome.result.reason == "complete" and outcome.result.steps == len(answers)
    assert outcome.verdicts[0].status == "ok"
    steps = replay_steps(replay)
    left = tokens
    for (line, real, shadow), step in zip(answers, steps, strict=True):
        act = step["act"][0]
        assert act["real_move"] == real, line
        shown, spent = step["out"][1][0], step["out"][2][0]
        expected_spend = shadow is not None and left > 0
        assert spent == expected_spend, line
        assert shown == (shadow if expected_spend else real), line
        left -= expected_spend
