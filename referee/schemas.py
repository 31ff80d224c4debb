"""JSON Schemas of every wire message, generated from the msgspec Structs.

``protocol/schemas/*.json`` are these files, committed for bot authors; a test
(``referee schemas --check``) fails when a Struct changes without them.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import msgspec

from .games import GAMES
from .protocol import PROTOCOL_VERSION, End, Hello, Ready


def all_schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema, for the envelope and each game's turn and action."""
    schemas: dict[str, dict[str, Any]] = {
        "hello.json": _schema(Hello, "referee -> bot: the first message"),
        "ready.json": _schema(Ready, "bot -> referee: the answer to hello"),
        "end.json": _schema(End, "referee -> bot: the last message; the bot must exit"),
    }
    for name, game in sorted(GAMES.items()):
        schemas[f"{name}.turn.json"] = _schema(
            game.schema_observation_type or game.observation_type,
            f"referee -> bot: a {name} turn",
        )
        schemas[f"{name}.action.json"] = _schema(
            game.schema_action_type or game.action_type, f"bot -> referee: a {name} action"
        )
    return schemas


def _schema(tp: Any, description: str) -> dict[str, Any]:
    schema = _clean_descriptions(msgspec.json.schema(tp))
    schema["$comment"] = f"referee protocol v{PROTOCOL_VERSION}; generated, do not edit"
    schema["description"] = description
    return schema


def _clean_descriptions(node: Any) -> Any:
    """Docstring descriptions dedented (``inspect.cleandoc``) wherever they are: msgspec
    0.23 dedents them itself and earlier releases do not, and the committed files
    must not depend on which one is installed."""
    if isinstance(node, dict):
        return {
            k: inspect.cleandoc(v)
            if k == "description" and isinstance(v, str)
            else _clean_descriptions(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_clean_descriptions(v) for v in node]
    return node


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in all_schemas().items():
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


def check_schemas(directory: Path) -> list[str]:
    """Names of the schema files that are missing or differ from the Structs."""
    stale = []
    for name, schema in all_schemas().items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != render(schema):
            stale.append(name)
    return stale
