"""The tournament config: a TOML file read into typed Structs, then overridden by
command-line flags. Every key and its default is documented in docs/tournament.md."""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any, TypeVar

import msgspec

T = TypeVar("T", bound=msgspec.Struct)

# Finalists allowed: 0 plays the pool only; 2 is just a final.
FINALISTS_CHOICES = (0, 2, 4, 8)


class ConfigError(Exception):
    """A bad config file or option: printed as one line."""


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class BotEntry(_Strict):
    name: str
    # A sample bot's name, a path, a command line (string) or an argv (list).
    command: str | list[str]


class PoolConfig(_Strict):
    legs: int = 2  # 1: each pair meets once; 2: twice, seats swapped
    rounds: int | None = None  # None: the game's own default (Chaos League 10,000)
    # Games of more than two players: bots per table (None: min(bots, the game's
    # default table size)). Two-player games ignore it.
    table_size: int | None = None
    # After the pool, up to this many extra paired matches between adjacent bots
    # whose order is uncertain (``--until-settled N``; docs/statistics.md).
    settle_budget: int = 0
    settle_confidence: float = 0.95  # an adjacent order counts as settled at this


class FinalsConfig(_Strict):
    finalists: int = 8  # 0, 2, 4 or 8
    best_of: int = 3  # games per tie (odd)
    # None: the game's default for finals (Chaos League 20,000, see
    # Game.default_final_steps), else its own default.
    rounds: int | None = None


class LimitsConfig(_Strict):
    move_timeout: float = 1.0
    handshake_timeout: float = 10.0
    time_bank: float = 3.0
    max_faults: int = 3
    sandbox: str = "auto"
    cgroups: str = "auto"  # "auto": a cgroup per bot where the host allows one; "off"
    memory_mib: int = 1024
    cpu_s: int = 600
    disk_mib: int = 256


class TournamentConfig(_Strict):
    name: str = "tournament"
    game: str = "chaos"
    tokens: int | None = None  # None: the game's default
    params: dict[str, Any] = msgspec.field(default_factory=dict)  # other game parameters
    seed: int | None = None  # None: random, recorded in the database
    jobs: int = 0  # parallel matches; 0: one per CPU
    cluster: str | None = None  # a Dask scheduler (tcp://HOST:PORT); None: local workers
    out: str | None = None  # output directory; None: tournaments/<time>
    replay_format: str = "gz"  # "gz" (.jsonl.gz) or "jsonl" (plain)
    pool: PoolConfig = msgspec.field(default_factory=PoolConfig)
    finals: FinalsConfig = msgspec.field(default_factory=FinalsConfig)
    limits: LimitsConfig = msgspec.field(default_factory=LimitsConfig)
    bot: list[BotEntry] = msgspec.field(default_factory=list)


class ResolvedBot(msgspec.Struct, frozen=True):
    name: str
    argv: list[str]


class Resolved(msgspec.Struct, frozen=True, kw_only=True):
    """Everything that decides the results, as stored in the database. Bots are
    concrete argvs so a resume runs exactly what the first run ran."""

    name: str
    game: str
    tokens: int | None
    params: dict[str, Any]
    seed: int
    pool: PoolConfig
    finals: FinalsConfig
    limits: LimitsConfig
    bots: list[ResolvedBot]


def _where(msg: str) -> str:
    """msgspec says '... - at `$.pool.legs`'; turn the JSON path into TOML terms."""
    m = re.search(r" - at `\$(.*)`$", msg)
    if not m:
        return msg
    path = m.group(1).lstrip(".")
    return f"{msg[: m.start()]} (at {path or 'top level'})"


def read_config(path: Path, kind: type[T]) -> T:
    """Read a TOML config file into ``kind``, its relative bot paths resolved next to
    the file; ConfigError with one line on any problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    try:
        cfg = msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{path}: {_where(str(exc))}") from None
    # Relative bot paths mean "next to the config file", wherever it is run from.
    base = path.resolve().parent
    bots = [BotEntry(name=b.name, command=_rebase_command(b.command, base)) for b in cfg.bot]  # type: ignore[attr-defined]
    return msgspec.structs.replace(cfg, bot=bots)


def load_config(path: Path) -> TournamentConfig:
    """Read and type-check a league's config file."""
    return read_config(path, TournamentConfig)


def match_settings(
    game: str, tokens: int | None, params: dict[str, Any], lim: LimitsConfig, **extra: Any
) -> dict[str, Any]:
    """The match settings (a ``MatchConfig`` as builtins) every match of a league or a
    ladder shares: the game and the limits of its config; ``extra`` sets the rest."""
    from .. import sandbox
    from ..match import MatchConfig

    limits = msgspec.structs.replace(
        sandbox.Limits(), memory_mib=lim.memory_mib, cpu_s=lim.cpu_s, disk_mib=lim.disk_mib
    )
    cfg = MatchConfig(
        game=game,
        tokens=tokens,
        params=dict(params),
        move_timeout=lim.move_timeout,
        handshake_timeout=lim.handshake_timeout,
        time_bank=lim.time_bank,
        max_faults=lim.max_faults,
        sandbox=lim.sandbox,
        cgroups=lim.cgroups,
        limits=limits,
        **extra,
    )
    out: dict[str, Any] = msgspec.to_builtins(cfg)
    return out


def _rebase_command(command: str | list[str], base: Path) -> str | list[str]:
    from ..catalog import lookup_sample_bot

    if isinstance(command, str):
        if lookup_sample_bot(command.strip()) is not None and not (base / command).exists():
            return command
        try:
            parts = shlex.split(command)
        except ValueError:
            return command  # resolve_command reports it
    else:
        parts = list(command)
    out = []
    for part in parts:
        candidate = base / part
        if not os.path.isabs(part) and ("/" in part or candidate.is_file()) and candidate.exists():
            out.append(str(candidate))
        else:
            out.append(part)
    return out


def validate(cfg: TournamentConfig) -> None:
    """The checks the types cannot express."""
    if cfg.pool.legs not in (1, 2):
        raise ConfigError(f"pool.legs must be 1 or 2, not {cfg.pool.legs}")
    for rounds in (cfg.pool.rounds, cfg.finals.rounds):
        if rounds is not None and rounds < 1:
            raise ConfigError("pool.rounds and finals.rounds must be at least 1")
    if cfg.pool.table_size is not None and cfg.pool.table_size < 2:
        raise ConfigError(f"pool.table_size must be at least 2, not {cfg.pool.table_size}")
    if cfg.pool.settle_budget < 0:
        raise ConfigError(f"pool.settle_budget must be at least 0, not {cfg.pool.settle_budget}")
    if not 0.5 < cfg.pool.settle_confidence < 1.0:
        raise ConfigError(
            f"pool.settle_confidence must be between 0.5 and 1, not {cfg.pool.settle_confidence}"
        )
    if cfg.finals.finalists not in FINALISTS_CHOICES:
        raise ConfigError(
            f"finals.finalists must be one of {', '.join(map(str, FINALISTS_CHOICES))}, "
            f"not {cfg.finals.finalists}"
        )
    if cfg.finals.best_of < 1 or cfg.finals.best_of % 2 == 0:
        raise ConfigError(f"finals.best_of must be odd (1, 3, 5...), not {cfg.finals.best_of}")
    if cfg.jobs < 0:
        raise ConfigError("jobs must be >= 0 (0: one per CPU)")
    check_replay_format(cfg.replay_format)
    if cfg.seed is not None and not 0 <= cfg.seed < 2**63:
        raise ConfigError("seed must be between 0 and 2^63-1")
    lim = cfg.limits
    if lim.move_timeout <= 0 or lim.handshake_timeout <= 0 or lim.time_bank < 0:
        raise ConfigError("limits: timeouts must be > 0 and time_bank >= 0")
    if lim.max_faults < 1 or lim.memory_mib < 1 or lim.cpu_s < 1 or lim.disk_mib < 1:
        raise ConfigError("limits: max_faults, memory_mib, cpu_s and disk_mib must be >= 1")
    names = [b.name for b in cfg.bot]
    if len(names) < 2:
        raise ConfigError(f"a tournament needs at least 2 bots, {len(names)} given")
    for n in names:
        if not n or len(n) > 64:
            raise ConfigError(f"bot names must be 1-64 characters: {n!r}")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"duplicate bot name(s): {', '.join(dupes)}")


def check_replay_format(value: str) -> None:
    """``replay_format`` of a league's or a ladder's config."""
    from ..replay import REPLAY_FORMATS

    if value not in REPLAY_FORMATS:
        raise ConfigError(
            f"replay_format must be one of {', '.join(REPLAY_FORMATS)}, not {value!r}"
        )


def label_of(text: str) -> str:
    """A bot's display name from what the user typed: a sample name stays as is,
    a path or command line becomes its last file's stem."""
    if "/" not in text and " " not in text:
        return text
    try:
        last = shlex.split(text)[-1]
    except (ValueError, IndexError):
        last = text
    name = Path(last).name
    for suffix in (".py", ".js", ".rs", ".c", ".exe"):
        name = name.removesuffix(suffix)
    return name or text


def bots_from_args(texts: list[str]) -> list[BotEntry]:
    """BOT arguments as config entries, with #2, #3... on repeated names."""
    labels = [label_of(t) for t in texts]
    out = []
    for i, (text, lab) in enumerate(zip(texts, labels, strict=True)):
        if labels.count(lab) > 1:
            lab = f"{lab}#{labels[: i + 1].count(lab)}"
        out.append(BotEntry(name=lab, command=text))
    return out
