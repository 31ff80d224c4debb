"""The wire contract: schemas match the Structs, and the documented examples decode."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from referee.games.chaos import Action, Turn
from referee.protocol import Hello, Ready
from referee.schemas import all_schemas, check_schemas

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "protocol" / "schemas"


def test_committed_schemas_match_the_structs():
    stale = check_schemas(SCHEMAS)
    assert stale == [], f"run 'make schemas': {stale} differ from the message Structs"


def test_check_notices_a_drifted_schema(tmp_path):
    from referee.schemas import write_schemas

    write_schemas(tmp_path)
    assert check_schemas(tmp_path) == []
    path = tmp_path / "chaos.action.json"
    data = json.loads(path.read_text())
    data["$defs"]["Action"]["properties"].pop("shadow_move")
    path.write_text(json.dumps(data))
    assert check_schemas(tmp_path) == ["chaos.action.json"]


def test_every_game_has_turn_and_action_schemas():
    names = set(all_schemas())
    assert {"hello.json", "ready.json", "end.json", "chaos.turn.json", "chaos.action.json"} <= names


def _examples(doc: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", doc, flags=re.S)


def test_protocol_readme_examples_decode_as_documented():
    doc = (ROOT / "protocol" / "README.md").read_text()
    blocks = _examples(doc)
    hello, ready, turn, action = blocks[0], blocks[1], blocks[2], blocks[3]
    assert msgspec.json.decode(hello.encode(), type=Hello).seat == 0
    assert msgspec.json.decode(ready.encode(), type=Ready).name == "my-bot"
    assert msgspec.json.decode(turn.encode(), type=Turn).round == 1
    assert msgspec.json.decode(action.encode(), type=Action).shadow_move == "rock"


@pytest.mark.parametrize(
    "line",
    [
        b'{"real_move": "Rock"}',  # moves are lowercase, exactly
        b'{"real_move": "rock", "extra": 1}',  # unknown fields are refused
        b'{"real_move": "rock", "shadow_request": "yes"}',
        b'{"real_move": NaN}',
        b'{"real_move": "rock"',
        b"[" * 100_000,
        b'{"real_move": "\\ud800"}',
    ],
)
def test_malformed_actions_are_rejected(line):
    with pytest.raises((ValueError, RecursionError)):
        msgspec.json.decode(line, type=Action)
