"""The wire contract: schemas match the Structs, and the documented examples decode."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from referee.games.chaos import Action, Turn
from referee.protocol import End, Hello, Ready
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


def test_the_end_example_decodes_and_carries_a_result():
    doc = (ROOT / "protocol" / "README.md").read_text()
    ends = [b for b in _examples(doc) if b.lstrip().startswith('{"type": "end"')]
    assert len(ends) == 1
    end = msgspec.json.decode(ends[0].encode(), type=End)
    assert end.result is not None and end.result["winner"] == 0


def _enums(schema: dict) -> list[list[str]]:
    found: list[list[str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "enum" in node:
                found.append(node["enum"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found


def test_each_game_schema_lists_only_its_own_moves():
    schemas = all_schemas()
    classic = {"rock", "paper", "scissors"}
    moves = [set(e) for e in _enums(schemas["roshambo.action.json"])]
    assert moves and all(m == classic for m in moves)
    seen = [set(e) for e in _enums(schemas["roshambo.turn.json"])]
    assert classic in seen and all("lizard" not in m for m in seen)
    assert {"rock", "paper", "scissors", "lizard", "spock"} in [
        set(e) for e in _enums(schemas["chaos.action.json"])
    ]


def test_a_bot_is_sent_the_result_with_end(tmp_path):
    from conftest import run_cli

    bot = tmp_path / "tell.py"
    bot.write_text(
        "import json, sys\n"
        "sys.stdin.readline()\n"
        'print(\'{"name": "tell"}\', flush=True)\n'
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'end':\n"
        "        print(line.strip(), file=sys.stderr)\n"
        "        break\n"
        "    print(json.dumps({'round': msg['round'], 'real_move': sys.argv[1]}), flush=True)\n"
    )
    replay = tmp_path / "m.jsonl"
    proc = run_cli(
        "match",
        f"python3 {bot} rock",
        f"python3 {bot} scissors",
        "--rounds",
        "3",
        "--seed",
        "1",
        "--replay",
        str(replay),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    end = json.loads((tmp_path / "m.seat0.stderr.log").read_text())
    assert end["type"] == "end" and end["reason"] == "complete" and end["rounds"] == 3
    assert end["result"]["winner"] == result["winner"] == 0
    assert [s["stats"]["wins"] for s in end["result"]["seats"]] == [3, 0]
