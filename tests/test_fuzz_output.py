"""Fuzzing the referee with adversarial bot output.

A real bot process replays byte strings that hypothesis generates (random bytes,
near-valid JSON, broken UTF-8, partial lines, lines with extra newlines) as its
answers. Whatever it sends, the match must end with a complete result, no
exception may escape the driver, and the replay must re-verify.
"""

from __future__ import annotations

import sys
from pathlib import Path

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.match import BotSpec, MatchConfig, run_match
from referee.replay import iter_lines
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
        move_timeout=0.3,
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
    report = verify_replay(iter_lines(replay))
    assert report.ok, report
