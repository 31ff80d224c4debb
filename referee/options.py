"""Command-line option types and the options several commands share (match,
tournament, rerun): argument parsing only, no commands."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from .errors import CliError


def _bounded(text: str, kind: type[Any], minimum: float, strict: bool) -> Any:
    """Parse a number for argparse; ``strict``: it must be above ``minimum``."""
    try:
        value = kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
    if value < minimum or (strict and not value > minimum):
        raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} {minimum}: {text!r}")
    return value


def positive_float(text: str) -> float:
    return float(_bounded(text, float, 0, strict=True))


def nonneg_float(text: str) -> float:
    return float(_bounded(text, float, 0, strict=False))


def positive_int(text: str) -> int:
    return int(_bounded(text, int, 1, strict=False))


def nonneg_int(text: str) -> int:
    return int(_bounded(text, int, 0, strict=False))


def _sandbox_choices() -> tuple[str, ...]:
    from .sandbox.registry import SANDBOX_CHOICES

    return SANDBOX_CHOICES


def add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """Time, fault and containment options shared by match and tournament."""
    g = p.add_argument_group("limits")
    g.add_argument(
        "--move-timeout", type=positive_float, metavar="S", help="seconds per move (default 1.0)"
    )
    g.add_argument(
        "--handshake-timeout",
        type=positive_float,
        metavar="S",
        help="seconds for a bot to start and answer hello (default 10)",
    )
    g.add_argument(
        "--time-bank",
        type=nonneg_float,
        metavar="S",
        help="seconds per match that absorb slow moves (default 3)",
    )
    g.add_argument(
        "--max-faults",
        type=positive_int,
        metavar="N",
        help="round faults that disqualify a bot (default 3)",
    )
    g.add_argument(
        "--sandbox",
        choices=_sandbox_choices(),
        help="containment layer (default auto: the strongest that works here)",
    )
    g.add_argument(
        "--cgroups",
        choices=("auto", "off"),
        help="a cgroup per bot where this host allows one, so that the kernel enforces "
        "memory, processes and CPU weight (default auto); off: the referee samples them",
    )
    g.add_argument(
        "--memory-mib",
        type=positive_int,
        metavar="MIB",
        help="memory limit of a bot's whole process tree (default 1024)",
    )
    g.add_argument(
        "--disk-mib",
        type=positive_int,
        metavar="MIB",
        help="total size of a bot's scratch directory, /tmp and /dev/shm (default 256)",
    )
    g.add_argument(
        "--cpu-s",
        type=positive_float,
        metavar="S",
        help="CPU seconds a bot may use per match (default 600)",
    )


def limit_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The MatchConfig fields the limit options set (only those given)."""
    out: dict[str, Any] = {}
    for opt, field in (
        ("move_timeout", "move_timeout"),
        ("handshake_timeout", "handshake_timeout"),
        ("time_bank", "time_bank"),
        ("max_faults", "max_faults"),
        ("sandbox", "sandbox"),
        ("cgroups", "cgroups"),
    ):
        value = getattr(args, opt, None)
        if value is not None:
            out[field] = value
    return out


def sandbox_limits(args: argparse.Namespace, base: Any = None) -> Any:
    from . import sandbox

    limits = base if base is not None else sandbox.Limits()
    changes: dict[str, Any] = {}
    if getattr(args, "memory_mib", None) is not None:
        changes["memory_mib"] = args.memory_mib
    if getattr(args, "disk_mib", None) is not None:
        changes["disk_mib"] = args.disk_mib
    if getattr(args, "cpu_s", None) is not None:
        changes["cpu_s"] = args.cpu_s
    if changes:
        import msgspec

        limits = msgspec.structs.replace(limits, **changes)
    return limits


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; values are read as JSON when they parse (numbers, true)."""
    import json

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--param wants KEY=VALUE, got {item!r}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def add_replay_format_argument(p: argparse.ArgumentParser) -> None:
    """``--replay-format`` of the commands that write many replays."""
    from .replay import DEFAULT_LEAGUE_FORMAT, REPLAY_FORMATS

    p.add_argument(
        "--replay-format",
        choices=REPLAY_FORMATS,
        help=f"how replays are stored: gz (gzip, .jsonl.gz) or jsonl (plain); "
        f"default {DEFAULT_LEAGUE_FORMAT}",
    )
