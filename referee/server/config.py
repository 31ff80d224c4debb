"""The competition config (``referee serve --config``): TOML read into strict Structs,
like the tournament config. Every key and its default is in docs/server.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ..tournament.config import (
    BotEntry,
    ConfigError,
    FinalsConfig,
    LimitsConfig,
    PoolConfig,
    read_config,
)


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class LadderConfig(_Strict):
    rounds: int = 1000  # rounds per ladder match
    parallel: int = 0  # ladder matches at once; 0: one per CPU
    random_share: float = 0.1  # share of pairings drawn at random, not by uncertainty
    # A version is "new" (played more often) until its interval is narrower than this.
    settled_width: float = 200.0
    validation_rounds: int = 200  # rounds of the validation match of a new version
    validation_opponent: str = ""  # a sample bot's name; "": the first sample bot
    # Steps of CPU priority (nice) below the server at which every match it plays
    # runs, referee loop and bots alike: the site answers first. 0: the same.
    nice: int = 10


class RegistrationConfig(_Strict):
    mode: str = "invite"  # "open": anyone signs up on /signup; "invite": tokens by the organiser
    signups_per_hour: int = 10  # sign-ups from one client address per hour
    failed_signins_per_hour: int = 20  # sign-ins with an unknown token, per address per hour
    session_days: float = 30.0  # a browser's sign-in lasts this long (or until signed out)


class SubmissionConfig(_Strict):
    max_upload_kib: int = 4096  # the upload as sent
    max_files: int = 200  # files in an archive
    max_unpacked_mib: int = 64  # bytes of every file unpacked, together
    per_hour: int = 12  # uploads per competitor per hour
    challenges_per_hour: int = 6  # challenge matches per competitor per hour


class CompetitionConfig(_Strict):
    name: str = "competition"
    game: str = "chaos"
    tokens: int | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    seed: int | None = None  # None: random, recorded in the database
    cluster: str | None = None  # a Dask scheduler; None: local worker processes
    replay_format: str = "gz"  # "gz" (.jsonl.gz) or "jsonl" (plain)
    limits: LimitsConfig = msgspec.field(default_factory=LimitsConfig)
    ladder: LadderConfig = msgspec.field(default_factory=LadderConfig)
    registration: RegistrationConfig = msgspec.field(default_factory=RegistrationConfig)
    submissions: SubmissionConfig = msgspec.field(default_factory=SubmissionConfig)
    # The finals: their pool (legs, rounds) and bracket, as in referee tournament.
    pool: PoolConfig = msgspec.field(default_factory=PoolConfig)
    finals: FinalsConfig = msgspec.field(default_factory=FinalsConfig)
    bot: list[BotEntry] = msgspec.field(default_factory=list)


def load_competition(path: Path) -> CompetitionConfig:
    """Read, type-check and validate a competition config (ConfigError: one line)."""
    cfg = read_config(path, CompetitionConfig)
    validate_competition(cfg)
    return cfg


def validate_competition(cfg: CompetitionConfig) -> None:
    lad = cfg.ladder
    if lad.rounds < 1 or lad.validation_rounds < 1:
        raise ConfigError("ladder.rounds and ladder.validation_rounds must be at least 1")
    if lad.parallel < 0:
        raise ConfigError("ladder.parallel must be >= 0 (0: one per CPU)")
    if not 0 <= lad.nice <= 19:
        raise ConfigError(f"ladder.nice must be from 0 to 19, not {lad.nice}")
    if not 0.0 <= lad.random_share <= 1.0:
        raise ConfigError("ladder.random_share must be between 0 and 1")
    if cfg.registration.mode not in ("open", "invite"):
        raise ConfigError(
            f"registration.mode must be 'open' or 'invite', not {cfg.registration.mode!r}"
        )
    sub = cfg.submissions
    if min(sub.max_upload_kib, sub.max_files, sub.max_unpacked_mib, sub.per_hour) < 1:
        raise ConfigError("submissions: every limit must be at least 1")
    from ..tournament.config import FINALISTS_CHOICES, check_replay_format

    check_replay_format(cfg.replay_format)

    if cfg.pool.legs not in (1, 2):
        raise ConfigError(f"pool.legs must be 1 or 2, not {cfg.pool.legs}")
    if cfg.finals.finalists not in FINALISTS_CHOICES:
        raise ConfigError(
            f"finals.finalists must be one of {', '.join(map(str, FINALISTS_CHOICES))}"
        )
    if cfg.finals.best_of < 1 or cfg.finals.best_of % 2 == 0:
        raise ConfigError(f"finals.best_of must be odd, not {cfg.finals.best_of}")
    lim = cfg.limits
    if lim.move_timeout <= 0 or lim.handshake_timeout <= 0 or lim.time_bank < 0:
        raise ConfigError("limits: timeouts must be > 0 and time_bank >= 0")
    if lim.max_faults < 1 or lim.memory_mib < 1 or lim.cpu_s < 1:
        raise ConfigError("limits: max_faults, memory_mib and cpu_s must be >= 1")
    names = [b.name for b in cfg.bot]
    if len(names) < 2:
        raise ConfigError(f"a competition needs at least 2 sample bots, {len(names)} given")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"duplicate bot name(s): {', '.join(dupes)}")
    if lad.validation_opponent and lad.validation_opponent not in names:
        raise ConfigError(
            f"ladder.validation_opponent {lad.validation_opponent!r} is not a sample bot"
        )
