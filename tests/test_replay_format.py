"""Replay files: gzip, hash chain, truncation, typed reading."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
from pathlib import Path

import msgspec
import pytest
from conftest import match_json, run_cli

from referee.games.chaos import MOVES, Action, ChaosLeague
from referee.replay import (
    FORMAT_MINOR,
    BotInfo,
    Event,
    Footer,
    Header,
    LeanActions,
    LeanStep,
    LeanSteps,
    ReplayWriter,
    Step,
    chain_line,
    expand_lines,
    iter_lines,
    read_replay,
    sealed_lines,
    turn_lines,
    unseal,
)
from referee.verify import verify_replay


def test_gzip_replay_reads_back_and_matches_plain(tmp_path, bot_copy):
    steady = bot_copy("steady.py")
    plain, packed = tmp_path / "a.jsonl", tmp_path / "a.jsonl.gz"
    cmd = f"python3 {steady}"
    for path in (plain, packed):
        match_json(cmd, cmd, "--rounds", "300", "--seed", "3", "--replay", str(path))
    assert gzip.open(packed).read(2) == b'{"'  # a real gzip stream
    a, b = read_replay(plain), read_replay(packed)
    assert isinstance(a.header, Header) and isinstance(a.footer, Footer)
    assert [s.out for s in a.steps] == [s.out for s in b.steps]
    assert len(a.steps) == 300


def test_every_line_is_sealed_and_chained(tmp_path, bot_copy):
    steady = bot_copy("steady.py")
    path = tmp_path / "c.jsonl"
    match_json(f"python3 {steady}", f"python3 {steady}", "--rounds", "50", "--replay", str(path))
    prev = b""
    stored = path.read_bytes().splitlines(keepends=True)
    assert len(stored) == 52  # header, 50 steps, footer
    for line, (_whole, seals) in zip(stored, sealed_lines(stored), strict=True):
        sealed = unseal(line)
        assert sealed is not None
        body, h = sealed
        # A step's hash seals its line and the turn lines sent after it (format 1.2).
        is_step = line.startswith(b'{"type":"step"')
        assert (seals is not None) == is_step
        again, h2 = chain_line(prev, body if seals is None else seals)
        assert h2 == h
        if not is_step:
            assert again == line
        prev = h
    assert len(list(iter_lines(path))) == 52


def test_truncated_files_read_as_a_prefix(tmp_path, bot_copy):
    steady = bot_copy("steady.py")
    cmd = f"python3 {steady}"
    for name in ("t.jsonl", "t.jsonl.gz"):
        path = tmp_path / name
        match_json(cmd, cmd, "--rounds", "2000", "--replay", str(path))
        data = path.read_bytes()
        cut = tmp_path / f"cut-{name}"
        cut.write_bytes(data[: len(data) // 2])
        prefix = read_replay(cut)
        assert prefix.footer is None
        assert 0 < len(prefix.steps) < 2000
        assert [s.n for s in prefix.steps] == list(range(1, len(prefix.steps) + 1))


# -- lean steps (format 1.2) --------------------------------------------------------


def _lean_match(tmp_path, bot_copy, rounds: int = 120) -> list[bytes]:
    """A short Chaos League match's replay lines as stored (lean)."""
    cmd = f"python3 {bot_copy('steady.py')}"
    path = tmp_path / "lean.jsonl"
    match_json(cmd, "trickster", "--rounds", str(rounds), "--seed", "8", "--replay", str(path))
    return path.read_bytes().splitlines(keepends=True)


def _reseal(stored: list[bytes]) -> list[bytes]:
    """Lean lines with the chain made whole again as a forger would: each step's hash
    over its line and the turns the rules give. Only the rules can catch an edit then."""
    out, prev = [], b""
    for line, (whole, seals) in zip(stored, sealed_lines(stored), strict=True):
        body, full = unseal(line), unseal(whole)
        assert body is not None and full is not None
        # Format 1.1 seals a step in full (the line as read back).
        _, prev = chain_line(prev, full[0] if seals is None else seals)
        out.append(body[0][:-1] + b',"h":"' + prev + b'"}\n')
    return out


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "replays"
# Where lean replays to tamper with come from: a match played now (format 1.2), and
# the fixtures of Chaos League in formats 1.1 and 1.2 (trickster v sceptic, 100 rounds).
LEAN_SOURCES = ["match", "lean-chaos-tricks", "lean-1.2-chaos-tricks"]


def _lean_replay(source: str, tmp_path, bot_copy) -> list[bytes]:
    if source == "match":
        return _lean_match(tmp_path, bot_copy)
    return (FIXTURES / f"{source}.jsonl").read_bytes().splitlines(keepends=True)


def _step_index(lines: list[bytes], n: int) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(b'{"type":"step","n":%d,' % n))


def test_a_lean_replay_leaves_out_what_the_rules_give_back(tmp_path, bot_copy):
    stored = _lean_match(tmp_path, bot_copy)
    header = json.loads(stored[0])
    assert header["format_minor"] == FORMAT_MINOR
    steps = [json.loads(line) for line in stored if line.startswith(b'{"type":"step"')]
    assert len(steps) == 120 and all("obs" not in s for s in steps)
    # Defaults and the echoed round are left out (the sample bot echoes the round).
    trick = [s["act"][1] for s in steps]
    assert {"real_move"} in [set(a) for a in trick]
    assert all(a.get("round", s["n"]) == s["n"] for a, s in zip(trick, steps, strict=True))
    # Read back: the full steps, as sent and canonical, and the chain and rules agree.
    full = [json.loads(line) for line in expand_lines(stored)]
    game = ChaosLeague(rounds=120)
    state = game.new_state(header["seed"])
    for rec in full[1:121]:
        assert rec["obs"] == [json.loads(game.encode_turn(state, s)) for s in (0, 1)]
        assert all(
            set(a) == {"real_move", "shadow_request", "shadow_move", "round"} for a in rec["act"]
        )
        actions = [msgspec.convert(a, Action) for a in rec["act"]]
        game.resolve(state, actions)
    assert verify_replay(stored).ok


@pytest.mark.parametrize("source", LEAN_SOURCES)
@pytest.mark.parametrize("rehash", [False, True], ids=["as-edited", "re-hashed"])
def test_tampering_with_a_lean_replay_is_caught(tmp_path, bot_copy, rehash, source):
    stored = _lean_replay(source, tmp_path, bot_copy)
    assert verify_replay(stored).ok
    seal = _reseal if rehash else list

    def fails(lines: list[bytes], round_: int) -> None:
        report = verify_replay(seal(lines))
        assert not report.ok and report.first is not None, report.summary()
        if rehash:  # the chain is whole: the rules find it, at the edited round
            assert report.chain_intact and report.first.kind == "rules"
            assert report.first.round == round_, report.summary()
        else:
            assert not report.chain_intact
            assert report.first.round == round_, report.summary()
            assert report.summary().startswith(f"FAIL: round {round_}: hash chain broken")
        assert "\n" not in report.summary()

    # An action changed: the recorded outcome no longer follows.
    lines = list(stored)
    i = _step_index(lines, 40)
    rec = json.loads(unseal(lines[i])[0])
    old = rec["act"][0]["real_move"]
    new = next(m for m in MOVES if m != old)
    lines[i] = lines[i].replace(
        b'"real_move":"%s"' % old.encode(), b'"real_move":"%s"' % new.encode(), 1
    )
    fails(lines, 40)
    # An outcome changed.
    lines = list(stored)
    i = _step_index(lines, 41)
    rec = json.loads(unseal(lines[i])[0])
    points = rec["out"][0]
    forged = json.dumps([[-p for p in points], *rec["out"][1:]], separators=(",", ":")).encode()
    start = lines[i].index(b'"out":') + len(b'"out":')
    end = lines[i].index(b',"h":')
    if points == [0, 0]:
        forged = forged.replace(b"[0,0]", b"[1,-1]", 1)
    lines[i] = lines[i][:start] + forged + lines[i][end:]
    fails(lines, 41)
    # A step dropped.
    lines = list(stored)
    del lines[_step_index(lines, 42)]
    fails(lines, 43)


def _chain(stored: list[bytes], seals: list[bytes | None]) -> list[bytes]:
    """The lines sealed over ``seals`` (None: the line itself without its h)."""
    out, prev = [], b""
    for line, sealed in zip(stored, seals, strict=True):
        body = unseal(line)
        assert body is not None
        _, prev = chain_line(prev, body[0] if sealed is None else sealed)
        out.append(body[0][:-1] + b',"h":"' + prev + b'"}\n')
    return out


@pytest.mark.parametrize("source", ["match", "lean-1.2-chaos-tricks"])
def test_a_turn_the_rules_do_not_give_is_caught(tmp_path, bot_copy, source):
    """A referee that sent a bot another turn than the rules give seals that turn
    (format 1.2): the verifier recomputes the turns, so the chain breaks at that
    step; the file re-hashed over the rules' turns verifies, but not to the
    published final hash."""
    stored = _lean_replay(source, tmp_path, bot_copy)
    assert b'"format_minor":2' in stored[0]
    seals = [sealed for _whole, sealed in sealed_lines(stored)]
    i = _step_index(stored, 40)
    body = unseal(stored[i])[0]
    turns = seals[i][len(body) :]
    assert turns.count(b"\n") == 2 and b'"round":40' in turns
    seals[i] = body + turns.replace(b'"round":40', b'"round":39', 1)
    sent = _chain(stored, seals)  # what that referee wrote, and its published hash
    published = unseal(sent[-1])[1].decode()
    report = verify_replay(sent)
    assert not report.ok and not report.chain_intact, report.summary()
    assert report.summary() == (
        "FAIL: round 40: hash chain broken at line 41: "
        "the line, the turns it seals, or one before it was changed"
    )
    rehashed = verify_replay(_reseal(sent))
    assert rehashed.ok and rehashed.final_hash != published


def test_turn_lines_are_the_lines_sent():
    raw = [msgspec.Raw(b'{"type":"turn","round":1}'), None, b'{"type":"turn","round":1}']
    assert turn_lines(raw) == b'{"type":"turn","round":1}\nnull\n{"type":"turn","round":1}\n'


def test_the_verify_command_catches_an_edited_lean_replay(tmp_path, bot_copy):
    stored = _lean_match(tmp_path, bot_copy, rounds=60)
    i = _step_index(stored, 30)
    stored[i] = stored[i].replace(b'"us":[', b'"us":[1', 1)  # any byte of a step
    path = tmp_path / "edited.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(stored)))
    proc = run_cli("verify", str(path))
    assert proc.returncode == 4
    assert proc.stdout.startswith("FAIL: round 30: hash chain broken"), proc.stdout


def test_the_format_doc_names_every_record_field():
    """protocol/replay-format.md documents every field of the records as written."""
    doc = (Path(__file__).resolve().parent.parent / "protocol" / "replay-format.md").read_text()
    for struct in (Header, Step, Event, Footer, BotInfo, LeanStep):
        for name in struct.__struct_fields__:
            assert f"`{name}" in doc or f'"{name}"' in doc, f"{struct.__name__}.{name}"


def test_a_step_hash_seals_what_the_format_doc_says():
    """The chain of a format 1.2 replay, checked as protocol/replay-format.md tells a
    reader in another language to: each step's stored line, then each seat's turn
    (the rules' observation, JSON-encoded) and a newline; other lines alone."""
    stored = (FIXTURES / "lean-1.2-chaos-tricks.jsonl").read_bytes().splitlines()
    header = json.loads(stored[0])
    assert header["format_minor"] == 2
    game = ChaosLeague(rounds=header["params"]["rounds"], tokens=header["params"]["tokens"])
    assert game.params() == header["params"]
    state = game.new_state(header["seed"])
    prev = b""
    steps = 0
    for line, whole in zip(stored, expand_lines([s + b"\n" for s in stored]), strict=True):
        body, h = line[:-40] + b"}", line[-34:-2]
        data = prev + body
        if line.startswith(b'{"type":"step"'):
            turns = [msgspec.json.encode(game.observe(state, seat)) for seat in (0, 1)]
            data += b"".join(t + b"\n" for t in turns)
            rec = json.loads(whole)
            game.resolve(state, [msgspec.convert(a, Action) for a in rec["act"]])
            steps += 1
        assert hashlib.sha256(data).hexdigest()[:32].encode() == h
        prev = h
    assert steps == 100


def test_a_lean_action_drops_the_echo_only_when_it_is_the_step_number():
    lean = LeanActions(Action, "round").lean
    assert bytes(lean(Action("rock", round=5), 5)) == b'{"real_move":"rock"}'
    assert bytes(lean(Action("rock", round=5), 6)) == b'{"real_move":"rock","round":5}'
    assert bytes(lean(Action("rock"), 6)) == b'{"real_move":"rock","round":null}'
    # Remembered actions never stand for one another across steps.
    assert bytes(lean(Action("rock", round=6), 6)) == b'{"real_move":"rock"}'
    shadow = Action("rock", True, "spock", 7)
    assert (
        bytes(lean(shadow, 7))
        == b'{"real_move":"rock","shadow_request":true,"shadow_move":"spock"}'
    )


# Actions of step n with move m, one for every kind of round echo.
ECHO_KINDS = [
    lambda n, m: Action(m, round=n),
    lambda n, m: Action(m),
    lambda n, m: Action(m, round=n + 1),
    lambda n, m: Action(m, True, "spock", n),
    lambda n, m: Action(m, round=True),  # equal to 1, but not the step number
]


def test_a_remembered_pair_of_actions_encodes_as_the_actions_one_by_one():
    # LeanSteps encodes the usual two-seat step through a memo of action pairs; the
    # bytes must be those of encoding each action on its own, for every kind of echo.
    game = ChaosLeague()
    steps = LeanSteps(game)
    one_by_one = LeanActions(Action, "round").lean
    state = game.new_state(3)
    kinds = ECHO_KINDS
    for n in (1, 2, 1, 7):  # each pair twice: once encoded, once remembered
        for k0, k1 in itertools.product(kinds, kinds):
            a0, a1 = k0(n, MOVES[n % 5]), k1(n, MOVES[(n * 3) % 5])
            out = game.resolve(state, [a0, a1])
            step = Step(n, [None, None], [a0, a1], [n, None], [None, None], out)
            want = msgspec.json.encode(
                {
                    "type": "step",
                    "n": n,
                    "act": [msgspec.Raw(one_by_one(a0, n)), msgspec.Raw(one_by_one(a1, n))],
                    "us": [n, None],
                    "fault": [None, None],
                    "out": out,
                }
            )
            assert steps.encode(step) == want, n


def test_the_writers_two_seat_path_writes_the_bytes_of_the_general_one():
    # ReplayWriter.write encodes the usual two-seat step on a flat path of its own;
    # each line must be the general encoding (LeanSteps.encode without the pair memo,
    # the turns hashed after it), for every kind of echo, turns as Raw or as bytes.
    game = ChaosLeague()
    writer = ReplayWriter(None, game=game)
    one_by_one = LeanActions(Action, "round").lean
    state = game.new_state(5)
    kinds = [*ECHO_KINDS, lambda n, m: None]  # and a faulted seat
    prev = b""
    for n in (1, 2, 1, 7):  # each pair twice: once encoded, once remembered
        for k0, k1 in itertools.product(kinds, kinds):
            a0, a1 = k0(n, MOVES[n % 5]), k1(n, MOVES[(n * 3) % 5])
            out = game.resolve(state, [a0, a1])
            turns = [b'{"type":"turn","round":%d}' % n, b'{"type":"turn","round":%d,"x":1}' % n]
            acts = [a if a is None else msgspec.Raw(one_by_one(a, n)) for a in (a0, a1)]
            body = msgspec.json.encode(
                {
                    "type": "step",
                    "n": n,
                    "act": acts,
                    "us": [n, 3],
                    "fault": [None, None],
                    "out": out,
                }
            )
            for obs in (turns, [msgspec.Raw(t) for t in turns]):
                line, prev = _sealed_step(prev, body, turns[0] + b"\n" + turns[1] + b"\n")
                step = Step(n, list(obs), [a0, a1], [n, 3], [None, None], out)
                assert writer.write(step) == line, (n, a0, a1)
    # A seat not asked: its turn is hashed as null.
    step = Step(9, [turns[0], None], [Action("rock", round=9), None], [1, None], [None, None], out)
    body = msgspec.json.encode(
        {
            "type": "step",
            "n": 9,
            "act": [msgspec.Raw(b'{"real_move":"rock"}'), None],
            "us": [1, None],
            "fault": [None, None],
            "out": out,
        }
    )
    line, prev = _sealed_step(prev, body, turns[0] + b"\nnull\n")
    assert writer.write(step) == line


def _sealed_step(prev: bytes, body: bytes, turns: bytes) -> tuple[bytes, bytes]:
    """A format 1.2 step line as protocol/replay-format.md defines it, and its h."""
    h = hashlib.sha256(prev + body + turns).hexdigest()[:32].encode()
    return body[:-1] + b',"h":"' + h + b'"}\n', h
