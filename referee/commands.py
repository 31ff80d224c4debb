"""The commands ``referee match``, ``referee bots`` and ``referee schemas``: each has
``configure_*(parser)`` and ``run_*(args) -> int`` for referee.cli to call."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import EXIT_BAD_REPLAY, EXIT_BOT_FAILED, EXIT_INTERNAL, EXIT_OK, CliError
from .options import (
    add_limit_arguments,
    limit_overrides,
    nonneg_int,
    parse_params,
    positive_int,
    sandbox_limits,
)
from .termtext import printable


def configure_match(p: argparse.ArgumentParser) -> None:
    from .games import GAMES

    p.add_argument(
        "bots",
        nargs="+",
        metavar="BOT",
        help="a sample bot's name (see 'referee bots'), an executable, "
        'or a quoted command line such as "node bot.js"',
    )
    p.add_argument(
        "--game",
        default="chaos",
        help="the game (default chaos): "
        + "; ".join(f"{name}: {cls.title}" for name, cls in GAMES.items()),
    )
    p.add_argument(
        "--classic",
        action="store_true",
        help="classic rock-paper-scissors without tokens (same as --game roshambo)",
    )
    p.add_argument(
        "--rounds",
        type=positive_int,
        metavar="N",
        help="how long the game lasts: "
        + "; ".join(f"{name}: {cls.rounds_means}" for name, cls in GAMES.items()),
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


def _label_of(argv: Sequence[str], given: str) -> str:
    if "/" not in given and " " not in given:
        return given
    name = Path(argv[-1]).name
    for suffix in (".py", ".js", ".rs", ".c"):
        name = name.removesuffix(suffix)
    return name


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:40]


def run_match(args: argparse.Namespace) -> int:
    import msgspec
    import trio

    from .bot_command import BotSpec, resolve_command
    from .catalog import refuse_wrong_game
    from .errors import SandboxFailure, UsageError
    from .games import GAMES
    from .match import MatchConfig, random_seed
    from .match import run_match as play_match

    game = "roshambo" if args.classic else args.game
    if game in GAMES:
        wrong = refuse_wrong_game(args.bots, game)
        if wrong is not None:
            raise CliError(wrong)
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
            return await play_match(specs, cfg)
        # rich is imported only when something is drawn: it costs start-up time.
        from .match import make_game
        from .terminal import output_console
        from .ui import LiveProgress

        console = output_console(stderr=True)

        game = make_game(cfg, len(specs))
        with LiveProgress(console, game.length(), labels, game.step_word) as live:
            return await play_match(specs, cfg, progress=live.update)

    try:
        outcome = trio.run(go)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    except SandboxFailure as exc:
        raise CliError(str(exc), EXIT_INTERNAL) from None
    layer = outcome.header.containment.get("layer")
    if show:
        from .explain import seat_notes
        from .terminal import output_console
        from .ui import result_table, winner_line

        out = output_console()
        if layer == "basic":
            output_console(stderr=True).print(
                "[bold red]warning:[/] bots ran with basic containment only "
                "(no network or filesystem isolation)"
            )
        out.print(result_table(outcome))
        out.print(winner_line(outcome), markup=False, highlight=False)
        rate = outcome.result.steps / outcome.play_s if outcome.play_s else 0.0
        word = GAMES[outcome.header.game].step_word
        out.print(
            f"{outcome.result.steps:,} {word}s in {outcome.wall_s:.2f} s ({rate:,.0f} {word}s/s)"
            f", seed {seed}, containment {layer}"
        )
        enforced = outcome.header.containment.get("enforcement") or {}
        if enforced:
            # Which limits the kernel enforces here and which the referee samples.
            out.print(
                "limits: " + "; ".join(f"{k.replace('_', ' ')} {v}" for k, v in enforced.items()),
                highlight=False,
            )
        places: dict[int, str] = {}
        if outcome.faults and replay:
            from .step_report import fault_places

            places = fault_places(Path(replay))
        for f in outcome.faults[:20]:
            where = f" ({places[f.round]})" if f.round in places else ""
            out.print(
                f"fault: {word} {f.round}{where} seat {f.seat} {f.kind}: {printable(f.detail)}",
                markup=False,
                highlight=False,
            )
        if len(outcome.faults) > 20:
            out.print(f"... and {len(outcome.faults) - 20} more faults (see the replay)")
        for line in seat_notes(labels, outcome.verdicts, outcome.stderr_logs):
            out.print(line, markup=False, highlight=False)
        if replay:
            out.print(f"Replay: {replay}")
    if args.json:
        from .outcome import outcome_of

        sys.stdout.write(msgspec.json.encode(outcome_of(outcome)).decode() + "\n")
    elif args.quiet and replay:
        print(replay)
    handshake_failed = any(f.kind == "handshake" for f in outcome.faults)
    return EXIT_BOT_FAILED if handshake_failed else EXIT_OK


def configure_bots(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the catalog as JSON")


def run_bots(args: argparse.Namespace) -> int:
    from .catalog import sample_bots

    bots = sample_bots()
    if args.json:
        import msgspec

        rows = [
            {**msgspec.to_builtins(b), "argv": b.argv(), "available": b.available()} for b in bots
        ]
        print(msgspec.json.encode(rows).decode())
        return EXIT_OK
    from rich.table import Table

    from .terminal import output_console

    table = Table(title="Sample bots (use the name as a BOT argument)")
    for col in ("name", "language", "games", "idea"):
        table.add_column(col)
    for b in bots:
        name = b.name if b.available() else f"{b.name} (run 'make bots')"
        table.add_row(name, b.language, ", ".join(b.games), b.idea)
    output_console().print(table)
    return EXIT_OK


def configure_schemas(p: argparse.ArgumentParser) -> None:
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


def run_schemas(args: argparse.Namespace) -> int:
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
