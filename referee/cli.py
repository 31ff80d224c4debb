"""Command line: ``referee match``, ``referee bots``, ``referee schemas`` and the
subcommands other modules provide (replay, verify, rerun, tournament).

Exit codes (all subcommands):
  0  done (for ``match``: the match completed, whoever won)
  1  the referee itself failed (a bug: please report it)
  2  bad command line, missing or non-executable bot, bad config
  3  ``match``: a bot failed to start or failed the handshake (result recorded)
  4  ``verify``/``rerun``: the replay does not check out, or is corrupt
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_BOT_FAILED = 3
EXIT_BAD_REPLAY = 4

# Subcommands implemented in their own modules: module, one-line help. Each module
# has ``configure(parser)`` and ``run(args) -> int``; it is imported only when used.
EXTERNAL_COMMANDS: dict[str, tuple[str, str]] = {
    "tournament": ("referee.tournament.command", "run a league: round robin pool and finals"),
    "replay": ("referee.viewer", "show a replay in the terminal or export it to HTML"),
    "verify": ("referee.verify", "re-check a replay against the rules and its hash chain"),
    "rerun": ("referee.rerun", "play a replay's match again and compare round by round"),
    "serve": ("referee.server.command", "run a competition server: ladder, submissions, web site"),
    "submit": ("referee.server.submit", "upload a bot to a competition server"),
    "site": ("referee.server.site", "render a finished tournament as static web pages"),
}


class CliError(Exception):
    """A user error: printed as one line, exit code attached."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


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
        choices=["auto", "bwrap", "unshare", "landlock", "basic"],
        help="containment layer (default auto: the strongest that works here)",
    )
    g.add_argument(
        "--memory-mib",
        type=positive_int,
        metavar="MIB",
        help="RSS limit of a bot's whole process tree (default 1024)",
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
    if getattr(args, "cpu_s", None) is not None:
        changes["cpu_s"] = args.cpu_s
    if changes:
        import msgspec

        limits = msgspec.structs.replace(limits, **changes)
    return limits


def _configure_match(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "bots",
        nargs="+",
        metavar="BOT",
        help="a sample bot's name (see 'referee bots'), an executable, "
        'or a quoted command line such as "node bot.js"',
    )
    p.add_argument("--game", default="chaos", help="chaos (default) or roshambo")
    p.add_argument(
        "--classic",
        action="store_true",
        help="classic rock-paper-scissors without tokens (same as --game roshambo)",
    )
    p.add_argument(
        "--rounds",
        type=positive_int,
        metavar="N",
        help="rounds to play (default 10000; 1000 for roshambo)",
    )
    p.add_argument(
        "--tokens", type=nonneg_int, metavar="N", help="deception tokens per bot (default 50)"
    )
    p.add_argument(
        "--seed",
        type=nonneg_int,
        metavar="S",
        help="match seed (default: random, printed and recorded)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game parameter (repeatable), e.g. --param dice=5",
    )
    p.add_argument(
        "--replay",
        metavar="PATH",
        help="replay file (.jsonl, or .jsonl.gz to compress); "
        "default replays/<time>-<bot1>-vs-<bot2>.jsonl",
    )
    p.add_argument("--no-replay", action="store_true", help="write no replay file")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or table")
    p.add_argument(
        "--spin-us",
        type=nonneg_int,
        metavar="US",
        help="busy-poll up to US microseconds for a reply before sleeping; faster with "
        "quick bots, 0 never spins (default 100; the budget shrinks while bots are slow; "
        "no spinning on a single CPU)",
    )
    p.add_argument(
        "--pin-cpus",
        action="store_true",
        help="pin the referee and each bot to a CPU (on two CPUs the second bot shares the "
        "referee's): faster for a match that has the machine to itself, slower when other "
        "matches or work share the CPUs; it changes speed only, never a result",
    )
    p.add_argument(
        "--no-idle-poll",
        action="store_true",
        help="let idle CPUs sleep during the match (by default the referee asks the kernel, "
        "through /dev/cpu_dma_latency where it may open it, to keep them polling: each round "
        "wakes both bots, and waking a halted CPU is slow; speed only, never a result)",
    )
    add_limit_arguments(p)


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


def _label_of(argv: Sequence[str], given: str) -> str:
    if "/" not in given and " " not in given:
        return given
    name = Path(argv[-1]).name
    for suffix in (".py", ".js", ".rs", ".c"):
        name = name.removesuffix(suffix)
    return name


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:40]


def _run_match(args: argparse.Namespace) -> int:
    import msgspec
    import trio

    from .match import (
        BotSpec,
        MatchConfig,
        SandboxFailure,
        UsageError,
        random_seed,
        resolve_command,
        run_match,
    )

    game = "roshambo" if args.classic else args.game
    try:
        argvs = [resolve_command(text) for text in args.bots]
    except UsageError as exc:
        raise CliError(str(exc)) from None
    labels = [_label_of(argv, text) for argv, text in zip(argvs, args.bots, strict=True)]
    if len(set(labels)) < len(labels):
        labels = [f"{lab}#{i + 1}" for i, lab in enumerate(labels)]
    seed = args.seed if args.seed is not None else random_seed()
    replay: str | None = None
    if not args.no_replay:
        if args.replay:
            replay = args.replay
        else:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            replay = os.path.join(
                "replays", f"{stamp}-{'-vs-'.join(_safe(lab) for lab in labels)}-s{seed}.jsonl"
            )
    cfg = MatchConfig(
        game=game,
        params=parse_params(args.param),
        rounds=args.rounds,
        tokens=args.tokens,
        seed=seed,
        replay=replay,
        limits=sandbox_limits(args),
        **limit_overrides(args),
        **({} if args.spin_us is None else {"spin_us": args.spin_us}),
        pin_cpus=args.pin_cpus,
        idle_poll=not args.no_idle_poll,
    )
    specs = [BotSpec(command=argv, label=lab) for argv, lab in zip(argvs, labels, strict=True)]
    show = not args.quiet and not args.json

    async def go() -> Any:
        if not show:
            return await run_match(specs, cfg)
        # rich is imported only when something is drawn: it costs start-up time.
        from rich.console import Console

        from .match import make_game
        from .ui import LiveProgress

        console = Console(stderr=True)

        total = getattr(make_game(cfg, len(specs)), "rounds", 0)
        with LiveProgress(console, total, labels) as live:
            return await run_match(specs, cfg, progress=live.update)

    try:
        outcome = trio.run(go)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    except SandboxFailure as exc:
        raise CliError(str(exc), EXIT_INTERNAL) from None
    layer = outcome.header.containment.get("layer")
    if show:
        from rich.console import Console

        from .ui import result_table, winner_line

        out = Console()
        if layer == "basic":
            Console(stderr=True).print(
                "[bold red]warning:[/] bots ran with basic containment only "
                "(no network or filesystem isolation)"
            )
        out.print(result_table(outcome))
        out.print(winner_line(outcome))
        rate = outcome.result.steps / outcome.play_s if outcome.play_s else 0.0
        out.print(
            f"{outcome.result.steps:,} rounds in {outcome.wall_s:.2f} s ({rate:,.0f} rounds/s)"
            f", seed {seed}, containment {layer}"
        )
        for f in outcome.faults[:20]:
            out.print(f"fault: round {f.round} seat {f.seat} {f.kind}: {f.detail}")
        if len(outcome.faults) > 20:
            out.print(f"... and {len(outcome.faults) - 20} more faults (see the replay)")
        if replay:
            out.print(f"Replay: {replay}")
    if args.json:
        sys.stdout.write(msgspec.json.encode(outcome_json(outcome)).decode() + "\n")
    elif args.quiet and replay:
        print(replay)
    handshake_failed = any(f.kind == "handshake" for f in outcome.faults)
    return EXIT_BOT_FAILED if handshake_failed else EXIT_OK


def outcome_json(outcome: Any) -> dict[str, Any]:
    """The machine-readable result of a match (``referee match --json``)."""
    import msgspec

    header = outcome.header
    result = outcome.result
    seats = []
    for bot, seat, verdict in zip(header.bots, result.seats, outcome.verdicts, strict=True):
        seats.append(
            {
                "seat": bot.seat,
                "label": bot.label,
                "name": bot.name,
                "version": bot.version,
                "command": bot.command,
                "sha256": bot.sha256,
                "placement": seat.placement,
                "scores": seat.scores,
                "stats": seat.stats,
                "verdict": msgspec.to_builtins(verdict),
            }
        )
    return {
        "game": header.game,
        "params": header.params,
        "seed": header.seed,
        "winner": result.winner,
        "reason": result.reason,
        "steps": result.steps,
        "wall_s": round(outcome.wall_s, 3),
        "play_s": round(outcome.play_s, 6),
        "replay": outcome.replay,
        "replay_hash": outcome.replay_hash,
        "containment": header.containment,
        "seats": seats,
        # The referee's own peak memory and CPU (not its children's): hostile output
        # must never make it grow, and organisers size machines by it.
        "referee": {
            "peak_rss_kib": _own_peak_rss_kib(),
            **_own_cpu_s(),
            "idle_poll": outcome.idle_poll,
        },
    }


def _own_cpu_s() -> dict[str, float]:
    """User and system CPU seconds of this process alone (bots excluded)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_s": round(ru.ru_utime, 3), "system_s": round(ru.ru_stime, 3)}


def _own_peak_rss_kib() -> int:
    """VmHWM of this process. Not ru_maxrss: that one starts at the parent's RSS at
    fork and survives exec, so it would report the launcher's memory, not ours."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _configure_bots(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the catalog as JSON")


def _run_bots(args: argparse.Namespace) -> int:
    from .catalog import sample_bots

    bots = sample_bots()
    if args.json:
        import msgspec

        rows = [
            {**msgspec.to_builtins(b), "argv": b.argv(), "available": b.available()} for b in bots
        ]
        print(msgspec.json.encode(rows).decode())
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Sample bots (use the name as a BOT argument)")
    for col in ("name", "language", "games", "idea"):
        table.add_column(col)
    for b in bots:
        name = b.name if b.available() else f"{b.name} (run 'make bots')"
        table.add_row(name, b.language, ", ".join(b.games), b.idea)
    Console().print(table)
    return EXIT_OK


def _configure_schemas(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "directory",
        nargs="?",
        default="protocol/schemas",
        help="where to write the JSON Schemas (default protocol/schemas)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 4 if the files differ from the Structs",
    )


def _run_schemas(args: argparse.Namespace) -> int:
    from .schemas import check_schemas, write_schemas

    directory = Path(args.directory)
    if args.check:
        stale = check_schemas(directory)
        if stale:
            print(
                f"schemas out of date: {', '.join(stale)} (run 'referee schemas')", file=sys.stderr
            )
            return EXIT_BAD_REPLAY
        print("schemas up to date")
        return EXIT_OK
    try:
        written = write_schemas(directory)
    except OSError as exc:
        raise CliError(f"cannot write the schemas to {directory}: {exc.strerror or exc}") from None
    for path in written:
        print(path)
    return EXIT_OK


BUILTIN_COMMANDS: dict[str, tuple[Callable[..., None], Callable[..., int], str]] = {
    "match": (_configure_match, _run_match, "play one match between bots"),
    "bots": (_configure_bots, _run_bots, "list the sample bots"),
    "schemas": (_configure_schemas, _run_schemas, "write the protocol's JSON Schemas"),
}


def _available_external() -> dict[str, tuple[str, str]]:
    import importlib.util

    out = {}
    for name, (module, help_text) in EXTERNAL_COMMANDS.items():
        try:
            if importlib.util.find_spec(module) is not None:
                out[name] = (module, help_text)
        except ModuleNotFoundError:
            continue
    return out


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="referee",
        description="A strict, fast, language-agnostic referee for bot competitions.",
        epilog="Exit codes: 0 ok, 1 internal error, 2 usage, 3 bot failed to start, "
        "4 replay does not verify.",
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (configure, _run, help_text) in BUILTIN_COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only in (None, name):
            configure(p)
    for name, (module, help_text) in _available_external().items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only in (None, name):
            importlib.import_module(module).configure(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Configure only the subcommand being run: importing every module costs start-up time.
    only = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(only if only in BUILTIN_COMMANDS or only in EXTERNAL_COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command in BUILTIN_COMMANDS:
            return BUILTIN_COMMANDS[args.command][1](args)
        module = EXTERNAL_COMMANDS[args.command][0]
        return int(importlib.import_module(module).run(args))
    except CliError as exc:
        print(f"referee {args.command}: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(f"referee {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into something that stopped reading (``| head``): not an error.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (silence the flush at exit)
        except OSError:
            pass
        return EXIT_OK
