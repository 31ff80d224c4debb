"""Replays recorded by an earlier referee (tests/fixtures/replays, made with
tools/replay_compare.py) must keep verifying: the format, the rules and the fault
judgement they record are a contract with everyone who kept a replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from referee.verify import verify_replay

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "replays"
REPLAYS = sorted(FIXTURES.glob("*.jsonl"))


def test_the_fixture_set_covers_games_and_faults() -> None:
    games: set[str] = set()
    kinds: set[str] = set()
    for path in REPLAYS:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["type"] == "header":
                games.add(record["game"])
            if record["type"] == "footer":
                kinds.update(f["kind"] for f in record["faults"])
    assert {"chaos", "ctm", "liars_dice"} <= games
    assert {"timeout", "illegal_move", "too_many_faults", "crash", "handshake"} <= kinds


@pytest.mark.parametrize("path", REPLAYS, ids=[p.stem for p in REPLAYS])
def test_an_old_replay_still_verifies(path: Path) -> None:
    report = verify_replay(path.read_bytes().splitlines(keepends=True))
    assert report.ok, report.summary()


def test_the_verify_command_accepts_an_old_replay() -> None:
    proc = run_cli("verify", str(FIXTURES / "timeout-dq.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OK: 5 rounds")


def test_an_edited_old_replay_fails() -> None:
    lines = (FIXTURES / "illegal-move.jsonl").read_bytes().splitlines(keepends=True)
    lines[8] = lines[8].replace(b'"rock"', b'"paper"', 1)
    assert not verify_replay(lines).ok
