"""Replays recorded by an earlier referee (tests/fixtures/replays, made with
tools/replay_compare.py) must keep verifying: the format, the rules and the fault
judgement they record are a contract with everyone who kept a replay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from referee.replay import chain_line
from referee.verify import VerifyReport, verify_replay

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


def edited(name: str, edit: Callable[[dict[str, Any]], None]) -> VerifyReport:
    """The replay with each record passed through ``edit``, and the hash chain made
    whole again: only the rules and the judge can catch the edit now."""
    lines, prev = [], b""
    for line in (FIXTURES / name).read_bytes().splitlines(keepends=True):
        record = json.loads(line)
        del record["h"]
        edit(record)
        body = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        sealed, prev = chain_line(prev, body)
        lines.append(sealed)
    report = verify_replay(lines)
    assert report.chain_intact
    return report


def test_an_unchanged_round_trip_still_verifies() -> None:
    assert edited("timeout-dq.jsonl", lambda record: None).ok


def test_a_disqualification_without_cause_fails() -> None:
    def raise_the_limit(record: dict[str, Any]) -> None:
        if record["type"] == "header":
            record["max_faults"] = 4  # three timeouts no longer disqualify

    report = edited("timeout-dq.jsonl", raise_the_limit)
    assert not report.ok
    assert "without a too_many_faults" not in report.summary()
    assert "too_many_faults fault of seat 0 in round 5 with 3 round faults" in report.summary()


def test_a_missing_disqualification_fails() -> None:
    def lower_the_limit(record: dict[str, Any]) -> None:
        if record["type"] == "header":
            record["max_faults"] = 2  # the second timeout should have disqualified

    report = edited("timeout-dq.jsonl", lower_the_limit)
    assert not report.ok
    assert "reached 2 round faults in round 4 (limit 2)" in report.summary()


def test_a_reply_taken_after_its_deadline_fails() -> None:
    def slow(record: dict[str, Any]) -> None:
        if record["type"] == "step" and record["n"] == 2:
            record["us"][1] = 1_100_000  # the limit: 0.5 s and a 0.5 s bank

    report = edited("timeout-dq.jsonl", slow)
    assert not report.ok
    assert "round 2, seat 1: a reply after 1.100 s was taken" in report.summary()


def test_the_bank_is_spent_as_live() -> None:
    def slow_but_banked(record: dict[str, Any]) -> None:
        if record["type"] == "step" and record["n"] in (1, 2):
            record["us"][1] = 900_000  # 0.4 s from the bank, twice: the second is late

    report = edited("timeout-dq.jsonl", slow_but_banked)
    assert "round 2, seat 1: a reply after 0.900 s was taken" in report.summary()


def test_a_verdict_that_hides_a_fault_fails() -> None:
    def acquit(record: dict[str, Any]) -> None:
        if record["type"] == "footer":
            record["verdicts"][0]["status"] = "ok"

    assert "has status ok; its faults give timeout" in edited("timeout-dq.jsonl", acquit).summary()
