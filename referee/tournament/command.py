"""``referee tournament``: the command line of a league (docs/tournament.md)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, CliError
from ..options import (
    add_limit_arguments,
    add_replay_format_argument,
    limit_overrides,
    nonneg_int,
    parse_params,
    positive_int,
)
from ..replay import DEFAULT_LEAGUE_FORMAT
from .config import (
    ConfigError,
    Resolved,
    ResolvedBot,
    TournamentConfig,
    bots_from_args,
    load_config,
    validate,
)

# Options that change results: refused with --resume, which always finishes the
# tournament exactly as it was configured.
_RESULT_OPTIONS = (
    "config",
    "legs",
    "rounds",
    "table_size",
    "until_settled",
    "settle_confidence",
    "finalists",
    "best_of",
    "finals_rounds",
    "seed",
    "tokens",
    "param",
    "game",
    "name",
    "move_timeout",
    "handshake_timeout",
    "time_bank",
    "max_faults",
    "sandbox",
    "memory_mib",
    "cpu_s",
    "disk_mib",
    "out",
)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="a sample bot's name, an executable or a quoted command line; "
        "replaces the config's [[bot]] list",
    )
    p.add_argument("--config", "-c", metavar="TOML", help="tournament config (see docs)")
    p.add_argument("--name", help="the tournament's title")
    p.add_argument("--game", help="game to play (default chaos)")
    p.add_argument("--tokens", type=nonneg_int, metavar="N", help="deception tokens per bot")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game parameter (repeatable), added to the config's params",
    )
    p.add_argument(
        "--legs",
        type=int,
        choices=[1, 2],
        help="pool: meetings per pair (default 2, seats swapped)",
    )
    p.add_argument(
        "--table-size",
        type=positive_int,
        metavar="N",
        help="games of more than two players: bots per table (default min(bots, 4))",
    )
    p.add_argument(
        "--rounds",
        type=positive_int,
        metavar="N",
        help="rounds per pool match (default: the game's, 10000 for Chaos League)",
    )
    p.add_argument(
        "--until-settled",
        type=nonneg_int,
        metavar="N",
        help="after the pool, play up to N extra paired matches between adjacent bots whose "
        "order is uncertain, until each order is settled (default 0: none)",
    )
    p.add_argument(
        "--settle-confidence",
        type=float,
        metavar="P",
        help="the probability of the right order that settles it (default 0.95)",
    )
    p.add_argument(
        "--finalists",
        type=int,
        choices=[0, 2, 4, 8],
        help="bots in the bracket (default 8; 0: pool only)",
    )
    p.add_argument(
        "--best-of", type=positive_int, metavar="N", help="games per finals tie, odd (default 3)"
    )
    p.add_argument(
        "--finals-rounds",
        type=positive_int,
        metavar="N",
        help="rounds per finals game (default: 20000 for Chaos League, else the game's)",
    )
    p.add_argument(
        "--seed",
        type=nonneg_int,
        metavar="S",
        help="tournament seed; every match seed derives from it (default random)",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        metavar="N",
        help="matches in parallel, one worker process each (default: as many as the CPUs "
        "this process may use)",
    )
    p.add_argument(
        "--no-idle-poll",
        action="store_true",
        help="let idle CPUs sleep during matches (by default they are kept polling while "
        "fewer matches run than there are CPUs, as `referee match` does; speed only)",
    )
    p.add_argument(
        "--no-pin-cpus",
        action="store_true",
        help="let the kernel place every match's processes (by default, while every "
        "worker has a match and there are at least as many CPUs as workers, each match "
        "keeps to its worker's share of the CPUs; speed only)",
    )
    p.add_argument(
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="play the matches on this Dask scheduler's workers (docs/cluster.md)",
    )
    p.add_argument("--out", metavar="DIR", help="output directory (default tournaments/<time>)")
    p.add_argument(
        "--resume",
        metavar="DIR",
        help="finish the interrupted tournament in DIR (finished matches are kept)",
    )
    p.add_argument("--json", action="store_true", help="print the final summary as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no dashboard or tables")
    add_limit_arguments(p)
    add_replay_format_argument(p)


def _overridden(cfg: TournamentConfig, args: argparse.Namespace) -> TournamentConfig:
    """The config with the command line's options applied over it."""
    changes: dict[str, Any] = {}
    for opt in ("name", "game", "tokens", "seed", "out", "replay_format"):
        if getattr(args, opt) is not None:
            changes[opt] = getattr(args, opt)
    if args.jobs is not None:
        changes["jobs"] = args.jobs
    if args.bots:
        changes["bot"] = bots_from_args(args.bots)
    if args.param:
        changes["params"] = {**cfg.params, **parse_params(args.param)}
    pool: dict[str, Any] = {}
    if args.legs is not None:
        pool["legs"] = args.legs
    if args.rounds is not None:
        pool["rounds"] = args.rounds
    if args.table_size is not None:
        pool["table_size"] = args.table_size
    if args.until_settled is not None:
        pool["settle_budget"] = args.until_settled
    if args.settle_confidence is not None:
        pool["settle_confidence"] = args.settle_confidence
    finals: dict[str, Any] = {}
    if args.finalists is not None:
        finals["finalists"] = args.finalists
    if args.best_of is not None:
        finals["best_of"] = args.best_of
    if args.finals_rounds is not None:
        finals["rounds"] = args.finals_rounds
    limits: dict[str, Any] = dict(limit_overrides(args))
    if args.memory_mib is not None:
        limits["memory_mib"] = args.memory_mib
    if args.cpu_s is not None:
        limits["cpu_s"] = math.ceil(args.cpu_s)
    if args.disk_mib is not None:
        limits["disk_mib"] = args.disk_mib
    if pool:
        changes["pool"] = msgspec.structs.replace(cfg.pool, **pool)
    if finals:
        changes["finals"] = msgspec.structs.replace(cfg.finals, **finals)
    if limits:
        changes["limits"] = msgspec.structs.replace(cfg.limits, **limits)
    return msgspec.structs.replace(cfg, **changes)


def _resolve(cfg: TournamentConfig) -> Resolved:
    from ..bot_command import resolve_command
    from ..catalog import refuse_wrong_game
    from ..errors import UsageError
    from ..match import random_seed

    bots = []
    for b in cfg.bot:
        if isinstance(b.command, str):
            wrong = refuse_wrong_game([b.command], cfg.game)
            if wrong is not None:
                raise ConfigError(f"bot {b.name!r}: {wrong}")
        try:
            argv = resolve_command(b.command)
        except UsageError as exc:
            raise ConfigError(f"bot {b.name!r}: {exc}") from None
        bots.append(ResolvedBot(name=b.name, argv=argv))
    return Resolved(
        name=cfg.name,
        game=cfg.game,
        tokens=cfg.tokens,
        params=cfg.params,
        seed=cfg.seed if cfg.seed is not None else random_seed(),
        pool=cfg.pool,
        finals=cfg.finals,
        limits=cfg.limits,
        bots=bots,
    )


# Bots per table of a game of more than two players, unless configured.
DEFAULT_TABLE_SIZE = 4


def _check_game(resolved: Resolved, quiet: bool = False) -> Resolved:
    """Check the game and its parameters. A game of more than two players is played
    at tables: the table size is settled here and the finals dropped."""
    from ..errors import UsageError
    from ..match import MatchConfig, make_game

    mc = MatchConfig(
        game=resolved.game,
        tokens=resolved.tokens,
        params=resolved.params,
        rounds=resolved.pool.rounds,
    )
    try:
        make_game(mc, 3)
    except UsageError:
        multi = False
    else:
        multi = True
    if not multi:
        try:
            game = make_game(mc)
        except UsageError as exc:
            raise ConfigError(str(exc)) from None
        if game.seats != 2:
            raise ConfigError(f"tournaments are for two-player games; {resolved.game} is not")
        if resolved.pool.table_size is not None:  # tables are for more than two
            return msgspec.structs.replace(
                resolved, pool=msgspec.structs.replace(resolved.pool, table_size=None)
            )
        return resolved
    n = len(resolved.bots)
    size = resolved.pool.table_size or min(n, DEFAULT_TABLE_SIZE)
    if not 2 <= size <= n:
        raise ConfigError(f"table size {size} does not fit {n} bots")
    try:
        make_game(mc, size)
    except UsageError as exc:
        raise ConfigError(str(exc)) from None
    if resolved.finals.finalists and not quiet:
        print(
            f"referee tournament: note: {resolved.game} is played at tables of {size}; "
            "no finals (ranked by mean placement)",
            file=sys.stderr,
        )
    return msgspec.structs.replace(
        resolved,
        pool=msgspec.structs.replace(resolved.pool, table_size=size),
        finals=msgspec.structs.replace(resolved.finals, finalists=0),
    )


def _digests(resolved: Resolved) -> list[str | None]:
    from ..bot_command import file_digest

    return [file_digest(b.argv) for b in resolved.bots]


def _warn_changed_bots(stored: str | None, resolved: Resolved) -> None:
    """A bot changed since the first session plays differently from then on:
    the tournament still finishes, but say so."""
    if stored is None:
        return
    before = json.loads(stored)
    for bot, old, new in zip(resolved.bots, before, _digests(resolved), strict=False):
        if old != new:
            print(
                f"referee tournament: warning: bot {bot.name!r} changed since the tournament "
                "started; its remaining matches use the new version",
                file=sys.stderr,
            )


@contextlib.contextmanager
def _exclusive(out_dir: Path) -> Iterator[None]:
    """One coordinator per tournament: two would play the same pending matches.
    The kernel drops the lock when the process dies, however it dies."""
    import fcntl

    with open(out_dir / "tournament.lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CliError(f"another referee is running the tournament in {out_dir}") from None
        yield


def _check_containment(resolved: Resolved, quiet: bool) -> None:
    """Fail before anything is created if the sandbox asked for does not work here
    (each worker checks again; the result is cached per process)."""
    from .. import sandbox

    try:
        layer = sandbox.choose_layer(resolved.limits.sandbox)
    except (sandbox.SandboxError, ValueError) as exc:
        raise CliError(f"containment: {exc}") from None
    if layer.warning and not quiet:
        print(f"referee tournament: warning: {layer.warning}", file=sys.stderr)


def _flatten(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [e for sub in exc.exceptions for e in _flatten(sub)]
    return [exc]


def run(args: argparse.Namespace) -> int:
    from .state import StateError, Store

    if args.resume:
        given = [o for o in _RESULT_OPTIONS if getattr(args, o, None) not in (None, False, [])]
        if args.bots or given:
            opts = ", ".join("--" + o.replace("_", "-") for o in given) or "BOT arguments"
            raise CliError(f"--resume finishes the tournament as configured; drop {opts}")
        out_dir = Path(args.resume)
        try:
            store = Store.open(out_dir)
            resolved = store.resolved()
        except StateError as exc:
            raise CliError(str(exc)) from None
        jobs = args.jobs or usable_cpus()
        replay_format = args.replay_format or store.get("replay_format") or DEFAULT_LEAGUE_FORMAT
        _warn_changed_bots(store.get("digests"), resolved)
        try:
            _check_containment(resolved, args.quiet)
            executor = _cluster_executor(args.cluster, args.jobs)
        except CliError:
            store.close()
            raise
    else:
        try:
            cfg = load_config(Path(args.config)) if args.config else TournamentConfig()
            cfg = _overridden(cfg, args)
            validate(cfg)
            resolved = _check_game(_resolve(cfg), args.quiet or args.json)
        except ConfigError as exc:
            raise CliError(str(exc)) from None
        out_dir = Path(cfg.out or os.path.join("tournaments", time.strftime("%Y%m%d-%H%M%S")))
        jobs = cfg.jobs or usable_cpus()
        _check_containment(resolved, args.quiet)
        # Connect first: a wrong address leaves no output directory behind.
        executor = _cluster_executor(args.cluster or cfg.cluster, args.jobs)
        try:
            store = Store.create(out_dir, resolved)
        except StateError as exc:
            if executor is not None:
                executor.close()
            raise CliError(str(exc)) from None
        store.set("digests", json.dumps(_digests(resolved)))
        replay_format = cfg.replay_format
        store.set("replay_format", replay_format)
    try:
        with _exclusive(out_dir):
            return _play(store, resolved, out_dir, jobs, args, executor, replay_format)
    finally:
        store.close()


def usable_cpus() -> int:
    """The CPUs this process may run on (a cpuset or ``taskset`` can allow fewer than
    the machine has): the default number of parallel matches."""
    return len(os.sched_getaffinity(0)) or 1


def idle_poll_for(jobs: int, cluster: bool) -> bool:
    """Whether a league's matches keep idle CPUs polling (referee/wakeup.py).

    It makes a match alone 1.4-1.9x faster, but costs a machine whose CPUs are all
    busy with matches a few percent (docs/performance.md): so only while fewer
    matches run at once than there are CPUs. A cluster's machines are not ours to
    judge; their matches leave idle CPUs be."""
    return not cluster and jobs < usable_cpus()


def _cluster_executor(address: str | None, jobs: int | None) -> Any:
    """A Dask executor for ``--cluster``/``cluster =`` (None: local workers)."""
    if not address:
        return None
    from .cluster import ClusterError, DaskExecutor

    try:
        return DaskExecutor(address, jobs)
    except ClusterError as exc:
        raise CliError(str(exc)) from None


def _play(
    store: Any,
    resolved: Resolved,
    out_dir: Path,
    jobs: int,
    args: argparse.Namespace,
    executor: Any = None,
    replay_format: str = DEFAULT_LEAGUE_FORMAT,
) -> int:
    import trio

    from ..terminal import output_console
    from .dashboard import (
        Dashboard,
        bracket_table,
        cross_table_view,
        shown,
        standings_table,
    )
    from .executor import MatchFailed, ProcessExecutor
    from .export import write_exports
    from .runner import Runner
    from .standings import rank_pool

    console = output_console(stderr=True)
    show = not args.quiet and not args.json

    idle_poll = not args.no_idle_poll and idle_poll_for(jobs, executor is not None)
    runner = Runner(store, resolved, out_dir, idle_poll=idle_poll, replay_format=replay_format)
    runner.load()
    # Local workers are this process's children: their CPU, and their bots', comes
    # back with them. A cluster's workers run elsewhere.
    local_workers = executor is None
    if executor is None:
        executor = ProcessExecutor(jobs, out_dir / "logs", share_cpus=not args.no_pin_cpus)
    live = show and console.is_terminal
    if show and not live:

        def line(plan: Any, played: Any) -> None:
            done, total, _rd, _rt = runner.work()
            if plan.stage == "table":
                places = ", ".join(
                    f"{shown(runner.names[b])} #{p}"
                    for b, p in zip(played.seats, played.placement, strict=True)
                )
                console.print(f"[{done}/{total}] {plan.id}: {places}", highlight=False)
                return
            a, b = (shown(runner.names[s]) for s in plan.seats)
            console.print(
                f"[{done}/{total}] {plan.id}: {a} {played.final[0]:+.4f}, "
                f"{b} {played.final[1]:+.4f}",
                highlight=False,
            )

        runner.on_finish = line
    if show:
        counts = store.counts()
        console.print(
            f"{resolved.name}: {len(runner.names)} bots, {executor.size} workers, seed {resolved.seed}, "
            f"output {out_dir}"
            + (f" ({counts['done']} matches already done)" if counts["done"] else ""),
            highlight=False,
        )
    started = time.monotonic()

    async def main() -> None:
        try:
            async with trio.open_nursery() as nursery:
                if live:
                    nursery.start_soon(Dashboard(console, runner, executor).run)
                await runner.run(executor)
                nursery.cancel_scope.cancel()
        finally:
            await executor.aclose()

    try:
        trio.run(main)
    except BaseException as exc:
        found = _flatten(exc)
        hint = f"resume with: referee tournament --resume {out_dir}"
        if any(isinstance(e, KeyboardInterrupt) for e in found):
            done = store.counts()["done"]
            print(f"referee tournament: interrupted after {done} matches; {hint}", file=sys.stderr)
            return EXIT_INTERRUPTED
        failed = [e for e in found if isinstance(e, MatchFailed)]
        if failed:
            raise CliError(f"{failed[0]}; {hint}", EXIT_INTERNAL) from None
        raise
    wall = time.monotonic() - started
    cpu = _league_cpu(runner.outcomes_here, local_workers)
    if runner.table_size is not None:
        return _finish_tables(runner, resolved, out_dir, wall, args, show, cpu)

    standings = rank_pool(runner.names, runner.pool_played())
    summary = write_exports(
        out_dir,
        resolved,
        standings,
        runner.bracket,
        store.finished(),
        runner.pool_played(),
        wall,
    )
    if show:
        out = output_console()
        out.print(standings_table(standings, f"{resolved.name}: pool standings"))
        out.print(cross_table_view(standings, runner.pool_played()))
        if runner.bracket is not None and runner.bracket.rounds:
            out.print(bracket_table(runner.bracket, runner.names))
        if summary["champion"] and not (runner.bracket and runner.bracket.rounds):
            out.print(f"[bold]Champion: {shown(summary['champion'])}[/]")
        faulty = [s for s in standings if s.faults]
        for s in faulty:
            out.print(
                f"faults: {shown(s.name)}: {s.faults} in the pool ({s.disqualified} disqualified)"
            )
        out.print(f"{len(summary['matches'])} matches in {wall:.1f} s; results in {out_dir}/")
        out.print(_cpu_line(cpu), highlight=False)
    summary["timing"]["cpu"] = cpu
    return _print_brief(summary, out_dir, args)


def _league_cpu(outcomes: list[Any], local_workers: bool) -> dict[str, Any]:
    """This run's CPU, split (referee/tournament/cpu.py); read once every worker
    has exited and been reaped."""
    import resource

    from .cpu import league_cpu

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return league_cpu(
        outcomes,
        own.ru_utime + own.ru_stime,
        kids.ru_utime + kids.ru_stime if local_workers else None,
    )


def _cpu_line(cpu: dict[str, Any]) -> str:
    total = cpu["total_s"] or 1.0
    parts = [
        ("bots thinking", cpu["bots_thinking_s"]),
        ("bot start-up", cpu["bots_startup_s"]),
        ("referee rounds", cpu["referee_rounds_s"]),
        ("referee set-up", cpu["referee_setup_s"]),
        ("scoring and teardown", cpu["referee_finish_s"]),
        ("workers", cpu["workers_other_s"]),
        ("coordinator", cpu["coordinator_s"]),
    ]
    return f"CPU {cpu['total_s']:.1f} s: " + ", ".join(
        f"{name} {value:.1f} s ({value / total:.0%})" for name, value in parts if value is not None
    )


def _print_brief(summary: dict[str, Any], out_dir: Path, args: argparse.Namespace) -> int:
    """What --json (the summary without its match list) or --quiet prints last."""
    if args.json:
        brief = {k: v for k, v in summary.items() if k != "matches"}
        brief["output"] = str(out_dir)
        sys.stdout.write(msgspec.json.encode(brief).decode() + "\n")
    elif args.quiet:
        print(out_dir)
    return EXIT_OK


def _finish_tables(
    runner: Any,
    resolved: Resolved,
    out_dir: Path,
    wall: float,
    args: argparse.Namespace,
    show: bool,
    cpu: dict[str, Any],
) -> int:
    """Exports and summary of a table league (a game of more than two players)."""
    from ..terminal import output_console
    from .dashboard import shown, table_standings_table
    from .export import write_table_exports

    standings = runner.table_standings()
    summary = write_table_exports(out_dir, resolved, standings, runner.store.finished(), wall)
    if show:
        out = output_console()
        out.print(table_standings_table(standings, f"{resolved.name}: standings"))
        for s in standings:
            if s.faults:
                out.print(f"faults: {shown(s.name)}: {s.faults} ({s.disqualified} disqualified)")
        out.print(f"{len(summary['matches'])} tables in {wall:.1f} s; results in {out_dir}/")
        out.print(_cpu_line(cpu), highlight=False)
    summary["timing"]["cpu"] = cpu
    return _print_brief(summary, out_dir, args)
