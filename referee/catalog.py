"""The sample bots shipped with the referee, by name (``referee bots``).

The catalog is ``sample_bots/catalog.toml`` (plus ``sample_bots/*/catalog.toml``
for other games): one ``[[bot]]`` table per bot with
``name``, ``language``, ``command`` (a list; ``{python}`` and ``{node}`` stand
for the interpreters, other relative paths are relative to ``sample_bots/``),
``games`` and a one-line ``idea``.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from functools import lru_cache
from pathlib import Path

import msgspec

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_bots"
CATALOG = SAMPLE_DIR / "catalog.toml"


class SampleBot(msgspec.Struct, frozen=True):
    name: str
    language: str
    command: list[str]
    idea: str
    games: list[str] = msgspec.field(default_factory=lambda: ["chaos", "roshambo"])

    def argv(self) -> list[str]:
        """The command with interpreters and paths made concrete for this machine."""
        out: list[str] = []
        for i, part in enumerate(self.command):
            if part == "{python}":
                out.append(sys.executable)
            elif part == "{node}":
                out.append(shutil.which("node") or "node")
            elif i == 0 or "/" in part:
                out.append(str(SAMPLE_DIR / part))
            else:
                out.append(part)
        return out

    def available(self) -> bool:
        """False when a compiled bot has not been built (``make bots``)."""
        argv = self.argv()
        return Path(argv[0]).exists() or shutil.which(argv[0]) is not None


@lru_cache(maxsize=1)
def sample_bots() -> tuple[SampleBot, ...]:
    """Every sample bot: the main catalog, then those of sub-folders (other games)."""
    bots: list[SampleBot] = []
    for path in [CATALOG, *sorted(SAMPLE_DIR.glob("*/catalog.toml"))]:
        if path.exists():
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            bots.extend(msgspec.convert(entry, SampleBot) for entry in data.get("bot", []))
    return tuple(bots)


def refuse_wrong_game(texts: list[str], game: str) -> str | None:
    """A one-line reason why a match of ``game`` cannot be played with these bots,
    when one of them is a sample bot (named, not a file) that does not play it."""
    import os

    for text in texts:
        name = text.strip()
        if os.path.exists(name):
            continue
        for bot in sample_bots():
            if bot.name == name and game not in bot.games:
                return (
                    f"sample bot {name!r} does not play {game}; it plays "
                    f"{', '.join(bot.games)} (see 'referee bots')"
                )
    return None


def lookup_sample_bot(name: str) -> list[str] | None:
    """The argv of the sample bot called ``name``, or None."""
    for bot in sample_bots():
        if bot.name == name:
            return bot.argv()
    return None
