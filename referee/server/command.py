"""``referee serve``: the competition server (ladder, submissions, web site)."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import CliError
from ..options import add_replay_format_argument, positive_int
from ..tournament.config import ConfigError

if TYPE_CHECKING:
    from hypercorn.config import Config

# Connections the kernel holds for the server before it accepts them (it caps this
# at net.core.somaxconn).
LISTEN_BACKLOG = 1024
# How long an idle keep-alive connection stays open. It must outlast the client's own
# expiry (5 s in httpx and most libraries): with equal timers the server could close
# a connection just as the client sends its next request on it, a request then lost
# without a response ("server disconnected").
KEEP_ALIVE_SECONDS = 30.0
GRACEFUL_SECONDS = 10.0
# How many times Python's default allocations between young collections the server
# allows (see quiet_garbage_collector).
GC_YOUNG_FACTOR = 10


def http_config(host: str, port: int) -> Config:
    """The web server's settings."""
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = "-"
    # On SIGTERM, how long the requests in flight have to finish: an upload whose
    # validation match is cancelled gets its 503 once the match's worker has stopped
    # its bots, which took 3 s on a loaded two-CPU machine.
    config.graceful_timeout = GRACEFUL_SECONDS
    config.keep_alive_timeout = KEEP_ALIVE_SECONDS
    # Readers that connect at once while the loop is busy wait in the kernel's accept
    # queue; with hypercorn's default of 100 a burst overflows it and the kernel drops
    # their SYNs, which clients resend only after a second or more.
    config.backlog = LISTEN_BACKLOG
    return config


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", required=True, type=Path, help="the competition's TOML file")
    p.add_argument(
        "--data",
        type=Path,
        default=Path("competition-data"),
        help="where the database, bots, replays and logs live (default competition-data)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080)")
    p.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=None,
        help="ladder matches at once (default: ladder.parallel, 0 there: one per CPU)",
    )
    p.add_argument("--cluster", help="play ladder matches on a Dask scheduler (tcp://HOST:PORT)")
    p.add_argument(
        "--finals",
        action="store_true",
        help="freeze the ladder and play the finals on the current versions (the ladder "
        "stays frozen; a restart carries on with unfinished finals)",
    )
    p.add_argument(
        "--trust-proxy",
        metavar="ADDR",
        action="append",
        default=[],
        help="a reverse proxy's IP address: requests from it are taken to come from the "
        "last address in their X-Forwarded-For, by the scheme in X-Forwarded-Proto "
        "(repeatable; from anyone else those headers are ignored)",
    )
    add_replay_format_argument(p)
    p.add_argument(
        "--add-competitor",
        metavar="NAME",
        help="register a competitor, print its token (shown once) and exit",
    )


@contextlib.contextmanager
def exclusive(data_dir: Path) -> Iterator[None]:
    """One server per data directory; the kernel drops the lock however we die."""
    import fcntl

    with open(data_dir / "server.lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CliError(f"another referee serve is using {data_dir}") from None
        yield


def quiet_garbage_collector() -> None:
    """Keep the cyclic garbage collector from pausing the pages.

    Every request makes and drops hundreds of small objects (trio's tasks and cancel
    scopes, hypercorn's events), so with Python's default threshold a young
    collection runs every dozen or so requests, and now and then a full one walks every
    object the server holds, most of them made at start (modules, templates) and
    alive for good: one pause of tens of milliseconds for every reader in flight
    (docs/performance.md). What exists now is moved out of the collector's sight,
    and young collections run ten times less often; almost every object a request
    makes is freed by its reference count long before then."""
    import gc

    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young * GC_YOUNG_FACTOR, middle, old)


def seed_samples(store: Any, cfg: Any) -> None:
    """The config's sample bots as versions of bots without an owner; a sample whose
    files changed since the last start gets a new version."""
    from ..bot_command import file_digest, resolve_command
    from ..errors import UsageError

    for entry in cfg.bot:
        try:
            argv = resolve_command(entry.command)
        except UsageError as exc:
            raise CliError(f"sample bot {entry.name!r}: {exc}") from None
        digest = file_digest(argv) or hashlib.sha256(json.dumps(argv).encode()).hexdigest()
        sha = f"sample:{digest}"
        found = store.bot_id(entry.name)
        if found is not None:
            if found[1] is not None:
                raise CliError(f"sample bot {entry.name!r}: a competitor's bot has that name")
            versions = store.versions_of(found[0])
            if versions and versions[-1].sha256 == sha and versions[-1].command == argv:
                continue
        store.add_version(entry.name, None, sha, argv, "active")


def use_scratch(data_dir: Path) -> None:
    """Sweep what a killed server of ``data_dir`` left, then make this data
    directory's scratch directory the temporary directory of every match worker
    (they inherit the environment) and of this process (see housekeeping)."""
    import tempfile

    from .housekeeping import sweep

    try:
        killed, removed = sweep(data_dir)
    except OSError as exc:
        raise CliError(f"cannot clean {data_dir}: {exc.strerror or exc}") from None
    if killed or removed:
        print(
            f"referee serve: removed what a stopped server left: {killed} bot processes, "
            f"{removed} scratch directories",
            flush=True,
        )
    from .housekeeping import scratch_root

    os.environ["TMPDIR"] = str(scratch_root(data_dir))
    tempfile.tempdir = None  # read TMPDIR again


def run(args: argparse.Namespace) -> int:
    from .config import load_competition
    from .db import NameTaken, Store
    from .names import name_problem

    try:
        cfg = load_competition(args.config)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if args.replay_format:
        cfg = msgspec.structs.replace(cfg, replay_format=args.replay_format)
    data_dir: Path = args.data
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot create {data_dir}: {exc.strerror or exc}") from None
    store = Store(data_dir)
    try:
        if args.add_competitor is not None:
            name = args.add_competitor.strip()
            problem = name_problem(name, "a competitor's name")
            if problem is not None:
                raise CliError(problem)
            try:
                token = store.add_competitor(name)
            except NameTaken as exc:
                raise CliError(str(exc)) from None
            print(token)
            print(
                f"(the token of {name}; it is not stored and cannot be shown again)",
                file=sys.stderr,
            )
            return 0
        if not 0 <= args.port < 65536:
            raise CliError(f"bad port {args.port}")
        with exclusive(data_dir):
            return _serve(store, cfg, data_dir, args)
    finally:
        store.close()


def _serve(store: Any, cfg: Any, data_dir: Path, args: argparse.Namespace) -> int:
    import trio

    from .. import sandbox
    from ..match import random_seed
    from ..tournament.command import _cluster_executor, usable_cpus
    from ..tournament.executor import ProcessExecutor
    from . import moderation
    from .app import Site, build_app, warm_up
    from .housekeeping import scratch_root
    from .proxy import forwarded, parse_addresses

    try:
        trusted = parse_addresses(args.trust_proxy)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    from .finals import load_finished, run_finals
    from .ladder import Ladder

    try:
        sandbox.choose_layer(cfg.limits.sandbox)
    except (sandbox.SandboxError, ValueError) as exc:
        raise CliError(f"containment: {exc}") from None
    use_scratch(data_dir)
    seed_text = store.get("seed")
    if seed_text is None:
        seed = cfg.seed if cfg.seed is not None else random_seed()
        store.set("seed", str(seed))
    else:
        seed = int(seed_text)
    seed_samples(store, cfg)
    # What uploads being received or unpacked left when the server was killed.
    from .intake import sweep_scratch

    for scratch in ("versions", "uploads"):
        sweep_scratch(data_dir / scratch)
    jobs = args.jobs or cfg.ladder.parallel or usable_cpus()
    cluster = _cluster_executor(args.cluster or cfg.cluster, args.jobs)

    async def main() -> None:
        from hypercorn.trio import serve

        # Every match the server plays runs at ladder.nice below the server itself,
        # so the web pages do not wait for the CPU behind the bots. Where the kernel
        # groups processes by session (autogroup), the worker's and each bot's
        # session group take that nice value too (docs/server.md).
        nice = cfg.ladder.nice
        # Each worker keeps its bots' scratch directories under DIR/scratch, where a
        # worker's death is cleaned up at once and a killed server's at the next start.
        scratch = scratch_root(data_dir)
        executor = cluster or ProcessExecutor(
            jobs, data_dir / "workers", nice=nice, scratch=scratch / "ladder"
        )
        validator = ProcessExecutor(
            1,
            data_dir / "workers" / "validation",
            share_cpus=False,
            nice=nice,
            scratch=scratch / "validation",
        )
        ladder = Ladder(store, cfg, data_dir, executor, validator, seed)
        ladder.frozen = store.get("frozen") == "1"
        site = Site(store, ladder, cfg, data_dir)
        finals_state = store.get("finals")
        if finals_state == "complete":
            load_finished(site, data_dir)
        app = forwarded(build_app(site), trusted)
        hconfig = http_config(args.host, args.port)
        try:
            async with trio.open_nursery() as nursery:
                # SIGTERM or SIGINT: the web server stops taking connections and gives
                # the requests in flight graceful_timeout to finish, while the matches
                # are cancelled (each worker stops its bots; a validation in progress
                # answers its upload with a 503 and runs again at the next start).
                stopping = trio.Event()

                async def stop_on_signal() -> None:
                    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                        async for _ in signals:
                            stopping.set()
                            return

                nursery.start_soon(stop_on_signal)
                await ladder.refresh()
                # Listen only once the first readers' pages can be made at once.
                await warm_up(site, app)
                quiet_garbage_collector()
                binds = await nursery.start(
                    partial(serve, app, hconfig, shutdown_trigger=stopping.wait)
                )
                for bind in binds:
                    print(f"referee serve: {cfg.name} on {bind}", flush=True)
                async with trio.open_nursery() as work:
                    work.start_soon(ladder.run)
                    work.start_soon(moderation.watch, site)
                    if args.finals or finals_state == "started":
                        if finals_state == "complete":
                            print("referee serve: the finals are already complete", flush=True)
                        else:
                            work.start_soon(run_finals, site, store, cfg, data_dir, executor, seed)
                    await stopping.wait()
                    work.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await executor.aclose()
                await validator.aclose()
                if cluster is not None:
                    cluster.close()

    from ..tournament.command import _flatten

    try:
        trio.run(main)
    except BaseException as exc:
        found = _flatten(exc)
        errors = [e for e in found if isinstance(e, OSError)]
        if errors and len(errors) == len(found):
            why = errors[0].strerror or errors[0]
            raise CliError(f"cannot serve on {args.host}:{args.port}: {why}") from None
        if any(isinstance(e, KeyboardInterrupt) for e in found):
            print("referee serve: stopped", flush=True)
            return 0
        raise
    print("referee serve: stopped", flush=True)
    return 0
