"""``referee verify``: a replay re-checks against the rules and its hash chain, and
any single edit of a move, shown move, token count or score is detected."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import skip_or_fail
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.faults import FaultKind, Verdict, worst_status
from referee.games import GAMES
from referee.games.base import Fault
from referee.games.chaos import MOVE_INDEX, MOVES, PAYOFF, Action
from referee.judge import Judge
from referee.replay import (
    FORMAT_MINOR,
    FORMAT_NAME,
    FORMAT_VERSION,
    BotInfo,
    Event,
    Footer,
    Header,
    ReplayWriter,
    Step,
    chain_line,
    expand_lines,
    unseal,
)
from referee.verify import verify_replay

ROOT = Path(__file__).resolve().parent.parent
Strategy = Callable[[int, int], Action | None]  # (seat, round) -> action, None = fault


def default_strategy(seat: int, n: int) -> Action | None:
    """Deterministic, uses shadows now and then, so every Outcome field varies."""
    move = MOVES[(n * (seat + 2) + n // 7) % 5]
    if (n + seat) % 9 == 0:
        return Action(real_move=move, shadow_request=True, shadow_move=MOVES[(n + 3) % 5])
    return Action(real_move=move)


def build_replay(
    path: Path | None,
    rounds: int = 60,
    tokens: int = 5,
    strategy: Strategy = default_strategy,
    dq: tuple[int, list[int]] | None = None,
    game_name: str = "chaos",
) -> list[bytes]:
    """Drive the pure game the way the match driver does and write a replay.

    ``dq=(n, seats)`` disqualifies seats after step n. Returns the sealed lines."""
    game = GAMES[game_name](rounds=rounds, tokens=tokens)  # type: ignore[call-arg]
    state = game.new_state(7)
    writer = ReplayWriter(path)
    enc = msgspec.json.Encoder().encode
    lines = [
        writer.write(
            Header(
                format=FORMAT_NAME,
                format_version=FORMAT_VERSION,
                protocol=1,
                referee_version="test",
                game=game.name,
                params=game.params(),
                seed=7,
                started="2026-01-01T00:00:00Z",
                bots=[BotInfo(seat=i, command=[f"bot{i}"], label=f"bot{i}") for i in (0, 1)],
                time={"handshake_ms": 10000, "move_ms": 1000, "bank_ms": 3000},
                max_faults=1000,
            )
        )
    ]
    # Faults and disqualifications as the driver's judge records them.
    judge = Judge(2, move_s=1.0, bank_s=3.0, max_faults=1000)
    while not game.finished(state):
        n = game.step_number(state)
        obs: list[msgspec.Raw | None] = [None, None]
        acts: list[msgspec.Raw | None] = [None, None]
        faults: list[Fault | None] = [None, None]
        actions: list[Any] = [None, None]
        for seat in game.to_act(state):
            obs[seat] = msgspec.Raw(enc(game.observe(state, seat)))
            action = strategy(seat, n)
            if action is None:
                faults[seat] = judge.fault(seat, n, FaultKind.TIMEOUT, "no reply")
            else:
                assert game.check(state, seat, action) is None
                actions[seat] = action
                acts[seat] = msgspec.Raw(enc(action))
        out = game.resolve(state, actions)
        step = Step(
            n=n, obs=obs, act=acts, us=[100 + n, 200 + n], fault=faults, out=msgspec.Raw(enc(out))
        )
        lines.append(writer.write(step))
        if dq is not None and dq[0] == n:
            game.disqualify(state, dq[1])
            for seat in dq[1]:
                judge.fault(seat, n, FaultKind.CRASH, "the bot exited (exit code 1)")
            judge.disqualify(dq[1])
            lines.append(writer.write(Event(n=n, kind="disqualified", seats=dq[1])))
    footer = Footer(
        result=game.result(state),
        verdicts=[
            Verdict(
                status=worst_status([f.kind for f in judge.seat_faults[seat]]),
                disqualified=judge.out[seat],
                faults=judge.seat_faults[seat],
            )
            for seat in (0, 1)
        ],
        faults=judge.faults,
        ended="2026-01-01T00:00:01Z",
        wall_s=0.5,
    )
    lines.append(writer.write(footer))
    writer.close()
    return lines


def reseal(lines: Sequence[bytes]) -> list[bytes]:
    """Re-hash every line: what a forger without the published final hash can do."""
    prev = b""
    out = []
    for line in lines:
        sealed = unseal(line)
        new, prev = chain_line(prev, line.rstrip(b"\n") if sealed is None else sealed[0])
        out.append(new)
    return out


def body(line: bytes) -> dict[str, Any]:
    """A line's record as a dict, without its h field."""
    sealed = unseal(line)
    return json.loads(line if sealed is None else sealed[0])  # type: ignore[no-any-return]


def with_body(line: bytes, obj: dict[str, Any]) -> bytes:
    """Replace a line's content, keeping its original (now wrong) hash."""
    sealed = unseal(line)
    assert sealed is not None
    new, _ = chain_line(b"", msgspec.json.encode(obj))
    return new[: -len(b'"}\n') - 32] + sealed[1] + b'"}\n'


# -- the happy path -------------------------------------------------------------------


def test_synthetic_replay_verifies() -> None:
    lines = build_replay(None)
    report = verify_replay(lines)
    assert report.ok, report.problems
    assert report.rounds == 60 and report.chain_intact and report.result_matches
    assert report.summary().startswith("OK: 60 rounds, chain intact, result matches")


def test_faults_and_disqualification_verify() -> None:
    def flaky(seat: int, n: int) -> Action | None:
        return None if seat == 1 and n in (3, 10) else default_strategy(seat, n)

    lines = build_replay(None, rounds=40, strategy=flaky, dq=(20, [1]))
    report = verify_replay(lines)
    assert report.ok, report.problems
    assert report.rounds == 20
    # Without the event the footer's forfeits do not add up.
    no_event = reseal([line for line in lines if b'"type":"event"' not in line])
    report = verify_replay(no_event)
    assert not report.ok and report.first is not None
    assert report.first.message.startswith("footer: result.")


def test_event_before_the_late_step_record_applies_after_it() -> None:
    # The driver writes step n-1's record after an event decided before step n.
    lines = build_replay(None, rounds=30, dq=(12, [0]))
    step12 = next(i for i, line in enumerate(lines) if b'"n":12,' in line and b'"step"' in line)
    event = lines[step12 + 1]
    ev = body(event)
    ev["n"] = 13
    reordered = lines[:step12] + [msgspec.json.encode(ev) + b"\n", lines[step12]]
    reordered += lines[step12 + 2 :]
    report = verify_replay(reseal(reordered))
    assert report.ok, report.problems


def test_roshambo_verifies() -> None:
    lines = build_replay(
        None,
        rounds=30,
        tokens=0,
        game_name="roshambo",
        strategy=lambda seat, n: Action(real_move=MOVES[(n + seat) % 3]),
    )
    assert verify_replay(lines).ok
    assert_tampering_is_caught(lines)
    # A move of the full game, which classic RoShamBo does not have, re-hashed.
    i = next(i for i, line in enumerate(lines) if b'"n":12,' in line)
    rec = body(lines[i])
    rec["act"][0]["real_move"] = "lizard"
    report = verify_replay(reseal(lines[:i] + [msgspec.json.encode(rec) + b"\n"] + lines[i + 1 :]))
    assert not report.ok and report.first is not None
    assert report.first.kind == "rules" and report.first.seat == 0


def assert_tampering_is_caught(lines: list[bytes], sample: int = 12) -> None:
    """The tampering cases of Chaos League, for any game's replay: every edit of a
    bot's action (each field of each seat's action in ``sample`` steps spread over the
    match, first and last included, to another value the same field took in this match) and of a recorded outcome,
    re-hashed, breaks the rules; the same edit not re-hashed breaks the chain at its
    line; a changed result in the footer is caught; and a re-hashed forgery never
    ends in the published final hash."""
    clean = verify_replay(lines)
    assert clean.ok, clean.problems
    steps = [i for i, line in enumerate(lines) if body(line)["type"] == "step"]
    seen: dict[str, list[Any]] = {}
    for i in steps:
        for act in body(lines[i])["act"]:
            for key, value in (act or {}).items():
                if value not in seen.setdefault(key, []):
                    seen[key].append(value)

    def caught_by_rules(i: int, rec: dict[str, Any], what: str) -> None:
        edited = msgspec.json.encode(rec) + b"\n"
        report = verify_replay(reseal(lines[:i] + [edited] + lines[i + 1 :]))
        assert not report.ok and report.first is not None, what
        assert report.first.kind == "rules", (what, report.summary())
        assert report.final_hash != clean.final_hash, what
        report = verify_replay(lines[:i] + [with_body(lines[i], rec)] + lines[i + 1 :])
        assert not report.ok and not report.chain_intact, what
        assert f"hash chain broken at line {i + 1}" in report.summary(), (what, report.summary())

    edits = 0
    picked = sorted({steps[k * (len(steps) - 1) // max(1, sample - 1)] for k in range(sample)})
    for i in picked:
        original = body(lines[i])
        for seat, act in enumerate(original["act"]):
            for key, old in (act or {}).items():
                if key in ("round", "step"):  # the step echo: checked, but not a move
                    continue
                for new in [v for v in seen[key] if v != old][:1]:
                    rec = json.loads(json.dumps(original))
                    rec["act"][seat][key] = new
                    caught_by_rules(i, rec, f"step {original['n']} act[{seat}].{key}={new!r}")
                    edits += 1
    assert edits >= 10, f"only {edits} action edits to try"
    # An outcome number changed: the first integer of the first step's outcome.
    i = steps[0]
    rec = body(lines[i])
    path = _first_int(rec["out"])
    assert path is not None, rec["out"]
    target = rec["out"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] += 1
    caught_by_rules(i, rec, f"out{path} + 1")
    # A footer whose result names another winner or placement, re-hashed.
    footer = body(lines[-1])
    seats = footer["result"]["seats"]
    seats[0]["placement"], seats[-1]["placement"] = (
        seats[-1]["placement"],
        seats[0]["placement"] + (seats[0]["placement"] == seats[-1]["placement"]),
    )
    report = verify_replay(reseal(lines[:-1] + [msgspec.json.encode(footer) + b"\n"]))
    assert not report.ok and not report.result_matches


def _first_int(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """The path to the first int (not bool) inside a JSON value."""
    if isinstance(value, int) and not isinstance(value, bool):
        return path
    items = value.items() if isinstance(value, dict) else enumerate(value or ())
    if isinstance(value, dict | list):
        for key, item in items:
            found = _first_int(item, (*path, key))
            if found is not None:
                return found
    return None


# -- detection -------------------------------------------------------------------------


def test_edit_with_intact_chain_names_round_seat_and_field() -> None:
    lines = build_replay(None)
    i = next(i for i, line in enumerate(lines) if b'"n":17,' in line)
    rec = body(lines[i])
    rec["out"][0] = [-rec["out"][0][0], -rec["out"][0][1]]
    report = verify_replay(reseal(lines[:i] + [msgspec.json.encode(rec) + b"\n"] + lines[i + 1 :]))
    assert not report.ok and report.chain_intact
    p0, p1 = rec["out"][0]
    seat = 0 if p0 else 1
    assert report.summary() == (
        f"FAIL: round 17, seat {seat}: out.points recorded [{p0},{p1}], rules give [{-p0},{-p1}]"
    )


def test_edit_without_rehash_breaks_the_chain_at_that_line() -> None:
    lines = build_replay(None)
    i = next(i for i, line in enumerate(lines) if b'"n":5,' in line)
    rec = body(lines[i])
    rec["us"] = [1, 1]  # latency is not re-derivable by the rules: only the chain sees it
    report = verify_replay(lines[:i] + [with_body(lines[i], rec)] + lines[i + 1 :])
    assert not report.ok and not report.chain_intact
    assert report.summary().startswith(f"FAIL: round 5: hash chain broken at line {i + 1}")


def test_published_hash_anchors_a_rehashed_file(tmp_path: Path) -> None:
    lines = build_replay(None)
    final = verify_replay(lines).final_hash
    rec = body(lines[3])
    rec["us"] = [9, 9]
    forged = reseal(lines[:3] + [msgspec.json.encode(rec) + b"\n"] + lines[4:])
    assert verify_replay(forged).ok  # consistent by itself ...
    path = tmp_path / "forged.jsonl"
    path.write_bytes(b"".join(forged))
    proc = run_cli("verify", str(path), "--expect-hash", final)
    assert proc.returncode == 4 and "not the published" in proc.stdout  # ... but not the one


EDIT_FIELDS = ("act.real_move", "obs.move", "obs.bucket", "out.points", "out.shown", "out.tokens")


def apply_edit(rec: dict[str, Any], field: str, seat: int, pick: int) -> bool:
    """Change one field of a step record to a different valid-looking value; False
    when there is nothing to change (a faulted seat has no act)."""
    if field == "act.real_move":
        if rec["act"][seat] is None:
            return False
        old = rec["act"][seat]["real_move"]
        rec["act"][seat]["real_move"] = [m for m in MOVES if m != old][pick % 4]
    elif field == "obs.move":
        key = ("opponent_last_visible", "self_last_real")[pick % 2]
        old = rec["obs"][seat][key]
        rec["obs"][seat][key] = [m for m in (*MOVES, None) if m != old][pick % 5]
    elif field == "obs.bucket":
        old = rec["obs"][seat]["opponent_deception_bucket"]
        new = [b for b in ("HIGH", "MEDIUM", "LOW", "EMPTY") if b != old][pick % 3]
        rec["obs"][seat]["opponent_deception_bucket"] = new
    elif field == "out.points":
        rec["out"][0][seat] = [p for p in (-1, 0, 1) if p != rec["out"][0][seat]][pick % 2]
    elif field == "out.shown":
        old = rec["out"][1][seat]
        rec["out"][1][seat] = [m for m in (*MOVES, None) if m != old][pick % 5]
    else:
        rec["out"][3][seat] += 1 + pick % 3
    return True


def forge_footer(lines: list[bytes], field: str, seat: int, before: dict[str, Any]) -> list[bytes]:
    """The footer a careful forger writes: the result the rules give for the edited
    moves, and the edited points carried into the totals."""
    acts = {}
    for line in lines[1:-1]:
        rec = body(line)
        if rec["type"] == "step":
            acts[rec["n"]] = rec["act"]
    game = GAMES["chaos"].from_params(body(lines[0])["params"])
    state = game.new_state(0)
    dec = msgspec.json.Decoder(Action)
    for n in sorted(acts):
        actions = [None if a is None else dec.decode(json.dumps(a)) for a in acts[n]]
        game.resolve(state, actions)
    result = msgspec.to_builtins(game.result(state))
    if field == "out.points":
        after = next(body(x) for x in lines if body(x).get("n") == before["n"])
        delta = after["out"][0][seat] - before["out"][0][seat]
        result["seats"][seat]["stats"]["points"] += delta
    footer = body(lines[-1])
    footer["result"] = result
    return lines[:-1] + [msgspec.json.encode(footer) + b"\n"]


@pytest.fixture(scope="module")
def clean_lines() -> list[bytes]:
    def flaky(seat: int, n: int) -> Action | None:
        return None if (seat, n) in ((0, 11), (1, 30)) else default_strategy(seat, n)

    return build_replay(None, rounds=50, tokens=4, strategy=flaky)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    step=st.integers(1, 50),
    field=st.sampled_from(EDIT_FIELDS),
    seat=st.integers(0, 1),
    pick=st.integers(0, 59),
    footer=st.booleans(),
    rehash=st.booleans(),
)
def test_any_single_edit_is_detected(
    clean_lines: list[bytes],
    step: int,
    field: str,
    seat: int,
    pick: int,
    footer: bool,
    rehash: bool,
) -> None:
    lines = list(clean_lines)
    assert verify_replay(lines).ok
    final = verify_replay(lines).final_hash
    i = step  # line 0 is the header, line n is step n (no events here)
    before = body(lines[i])
    assert before["n"] == step
    rec = json.loads(json.dumps(before))
    if not apply_edit(rec, field, seat, pick):
        return
    lines[i] = with_body(lines[i], rec)
    if footer:
        lines = forge_footer(lines, field, seat, before)
        lines[-1] = with_body(clean_lines[-1], body(lines[-1]))
    if rehash:
        lines = reseal(lines)
    report = verify_replay(lines)
    if not rehash:
        # The edited line still carries the hash of the original.
        assert not report.ok and not report.chain_intact
        return
    # A forger who re-hashes everything is caught by the rules, except in one case
    # the rules cannot see: the last round's real move behind a shadow with the same
    # result (nothing later shows it). The published final hash still catches it.
    assert report.final_hash != final
    invisible = False
    if field == "act.real_move" and step == 50 and before["out"][2][seat]:
        old = MOVE_INDEX[before["act"][seat]["real_move"]]
        new = MOVE_INDEX[rec["act"][seat]["real_move"]]
        other = before["act"][1 - seat]
        invisible = other is None or (
            PAYOFF[old][MOVE_INDEX[other["real_move"]]]
            == PAYOFF[new][MOVE_INDEX[other["real_move"]]]
        )
    if not invisible:
        assert not report.ok, (field, step, seat, rec)
        assert report.first is not None and report.first.kind == "rules"


# -- incomplete and corrupt files ---------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def test_truncated_replay_is_incomplete(tmp_path: Path) -> None:
    lines = build_replay(None, rounds=40)
    data = b"".join(lines[:21]) + lines[21][:30]  # killed mid-line in round 21
    report = verify_replay(data.splitlines(keepends=True))
    assert not report.ok and not report.complete and not report.problems
    assert report.valid_rounds == 20
    assert report.summary().startswith("INCOMPLETE: 20 rounds valid, the last line is cut off")
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data)
    proc = run_cli("verify", str(path))
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout.startswith("INCOMPLETE: 20 rounds valid")
    assert run_cli("verify", "--allow-incomplete", str(path)).returncode == 0
    # No footer at all (killed between lines).
    report = verify_replay(lines[:-1])
    assert report.summary().startswith("INCOMPLETE: 40 rounds valid, no footer")


def test_gzip_replay_and_truncated_gzip(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl.gz"
    lines = build_replay(path, rounds=300)
    proc = run_cli("verify", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("OK: 300 rounds")
    data = gzip.compress(b"".join(lines))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    proc = run_cli("verify", str(cut))
    assert proc.returncode == 4 and proc.stdout.startswith("INCOMPLETE:"), proc.stdout


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "not a replay: the file is empty"),
        (b'{"type":"header","format":"referee-re', "the file ends inside its first line"),
        (b"\x00\x01garbage\xff\n" * 3, "not a replay"),
        (b'{"hello": 1}\n', "not a replay"),
        (b"[1,2,3]\n", "not a replay"),
    ],
)
def test_corrupt_files_give_one_line_and_exit_4(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    proc = run_cli("verify", str(path))
    assert proc.returncode == 4
    assert message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert len((proc.stdout + proc.stderr).strip().splitlines()) == 1


def test_missing_file_and_unknown_game(tmp_path: Path) -> None:
    proc = run_cli("verify", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 4 and "Traceback" not in proc.stderr
    assert "cannot read" in proc.stderr
    lines = build_replay(None, rounds=3)
    header = body(lines[0])
    header["game"] = "tiddlywinks"
    report = verify_replay(reseal([msgspec.json.encode(header) + b"\n"] + lines[1:]))
    assert report.summary() == "FAIL: line 1: unknown game 'tiddlywinks'"


def test_garbage_line_in_the_middle(tmp_path: Path) -> None:
    lines = build_replay(None, rounds=10)
    bad = lines[:4] + [b"{not json}\n"] + lines[4:]
    report = verify_replay(bad)
    assert not report.ok
    assert any("line 5 is not a replay record" in p.message for p in report.problems)


# -- other games: the verifier is generic -------------------------------------------------


@pytest.mark.parametrize("game", ["liars_dice", "rps_stuff", "ctm"])
def test_other_games_verify_and_edits_are_caught(game: str, tmp_path: Path) -> None:
    if game not in GAMES:
        skip_or_fail(f"no game {game!r} in this build")
    bots = sorted((ROOT / "sample_bots" / "games" / game).glob("*.py"))
    if not bots:
        skip_or_fail(f"no Python sample bot for {game}")
    replay = tmp_path / f"{game}.jsonl"
    for seats in (3, 2):  # some games are for two players only
        proc = run_cli(
            "match",
            *[f"python3 {bots[0]}"] * seats,
            "--game",
            game,
            "--seed",
            "5",
            "--replay",
            str(replay),
            "--quiet",
        )
        if proc.returncode == 0:
            break
    assert proc.returncode == 0, proc.stderr
    assert verify_replay(replay.read_bytes().splitlines(keepends=True)).ok  # as stored
    # As read back, made a format 1.0 replay (each line's hash over itself, every turn
    # message in the lines), so edits can be made to them.
    lines = list(expand_lines(replay.read_bytes().splitlines(keepends=True)))
    header = body(lines[0])
    assert header.pop("format_minor") == FORMAT_MINOR
    lines = reseal([msgspec.json.encode(header) + b"\n"] + lines[1:])
    report = verify_replay(lines)
    assert report.ok, report.problems
    steps = [i for i, line in enumerate(lines) if body(line)["type"] == "step"]
    assert steps
    # A step left out, re-hashed: the rules expect another step number.
    cut = reseal(lines[: steps[0]] + lines[steps[0] + 1 :])
    report = verify_replay(cut)
    assert not report.ok and report.first is not None and report.first.kind == "rules"
    # A turn message changed, re-hashed: it is not what the rules show.
    i = steps[-1]
    rec = body(lines[i])
    seat = next(s for s, o in enumerate(rec["obs"]) if o is not None)
    obs = rec["obs"][seat]
    key = next(k for k in obs if k != "type")
    obs[key] = [obs[key]] if not isinstance(obs[key], list) else obs[key] + [0]
    forged = reseal(lines[:i] + [msgspec.json.encode(rec) + b"\n"] + lines[i + 1 :])
    report = verify_replay(forged)
    assert not report.ok and report.first is not None
    assert report.first.seat == seat and report.first.message.startswith(f"obs.{key} recorded")
    # The tampering cases of Chaos League, for this game too.
    assert_tampering_is_caught(lines)
