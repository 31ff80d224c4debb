"""The seed games' sample bot catalog: well-formed, and every bot it names exists."""

from __future__ import annotations

import tomllib

import msgspec
from conftest import ROOT

from referee.catalog import SampleBot
from referee.games import GAMES

CATALOG = ROOT / "sample_bots" / "games" / "catalog.toml"


def test_catalog_bots_exist_and_cover_every_game() -> None:
    entries = tomllib.loads(CATALOG.read_text(encoding="utf-8"))["bot"]
    bots = [msgspec.convert(e, SampleBot) for e in entries]
    assert len({b.name for b in bots}) == len(bots)
    for bot in bots:
        script = ROOT / "sample_bots" / bot.command[-1]
        assert script.is_file(), bot.name
        assert all(g in GAMES for g in bot.games), bot.name
    for game in ("liars_dice", "rps_stuff", "ctm"):
        mine = [b for b in bots if game in b.games]
        assert len(mine) >= 2, game
        assert {"python", "javascript"} <= {b.language for b in mine}, game
