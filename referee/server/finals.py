"""Finals: the ladder is frozen and the current version of every bot plays the
pool-and-bracket tournament of ``referee tournament`` (its runner, schedule,
standings and exports), in ``DATA/finals/``. The tournament's own database makes
the finals resumable: a server restarted mid-finals carries on where it stopped.
When they end, ``DATA/finals`` is a complete tournament output (``referee site``
publishes it)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import msgspec

from ..tournament.config import Resolved, ResolvedBot
from ..tournament.executor import Executor
from ..tournament.export import bracket_record, finish_of, match_record, write_exports
from ..tournament.runner import LIVE_RANK_SAMPLES, Runner
from ..tournament.standings import FIGURES, cross_table, rank_pool, rank_uncertainty
from ..tournament.state import DB_NAME
from ..tournament.state import Store as TournamentStore
from .config import CompetitionConfig
from .db import Store
from .ladder import runnable_argv


def finals_dir(data_dir: Path) -> Path:
    return data_dir / "finals"


def _resolved(store: Store, cfg: CompetitionConfig, data_dir: Path, seed: int) -> Resolved:
    from ..match import derive_seed
    from ..tournament.command import _check_game

    bots = [
        ResolvedBot(name=v.bot_name, argv=runnable_argv(data_dir, v))
        for v in store.current_versions()
    ]
    resolved = Resolved(
        name=f"{cfg.name}: finals",
        game=cfg.game,
        tokens=cfg.tokens,
        params=dict(cfg.params),
        seed=derive_seed(seed, "finals"),
        pool=cfg.pool,
        finals=cfg.finals,
        limits=cfg.limits,
        bots=bots,
    )
    return _check_game(resolved, quiet=True)


def live_summary(runner: Runner, resolved: Resolved) -> dict[str, Any]:
    """What the finals page shows while they play (results.json's shape, ratings
    without intervals until the end)."""
    names = runner.names
    played = runner.pool_played()
    standings = rank_pool(names, played, samples=0)
    if played:  # rank ranges only: the live view has no rating intervals
        rank_uncertainty(standings, played, LIVE_RANK_SAMPLES)
    rows = []
    for s in standings:
        row = msgspec.to_builtins(s)
        row["finish"] = finish_of(runner.bracket, s.bot)
        rows.append(row)
    cross = cross_table(len(names), runner.pool_played())
    bracket = bracket_record(runner.bracket, names)
    return {
        "tournament": resolved.name,
        "config": msgspec.to_builtins(resolved),
        "complete": False,
        "champion": None,
        "standings": rows,
        "figures": dict(FIGURES),
        "cross_table": {
            "bots": [s.name for s in standings],
            "wdl": [
                [
                    f"{cross[a.bot][b.bot].wins}-{cross[a.bot][b.bot].draws}-"
                    f"{cross[a.bot][b.bot].losses}"
                    for b in standings
                ]
                for a in standings
            ],
        },
        "bracket": bracket,
        "matches": [match_record(p, o, names) for p, o in runner.finished.values()],
    }


async def run_finals(
    site: Any,
    store: Store,
    cfg: CompetitionConfig,
    data_dir: Path,
    executor: Executor,
    seed: int,
) -> None:
    """Freeze the ladder and play the finals (or finish them after a restart)."""
    site.ladder.frozen = True
    store.set("frozen", "1")
    site.ladder.touch()
    out = finals_dir(data_dir)
    if (out / DB_NAME).is_file():
        tstore = TournamentStore.open(out)
        resolved = tstore.resolved()
    else:
        resolved = _resolved(store, cfg, data_dir, seed)
        tstore = TournamentStore.create(out, resolved)
        tstore.set("status", "running")
    store.set("finals", "started")
    runner = Runner(tstore, resolved, out, replay_format=cfg.replay_format)
    runner.load()

    def show(*_: Any) -> None:
        site.finals = {"status": "playing", "summary": live_summary(runner, resolved)}
        site.ladder.touch()

    runner.on_finish = show
    show()
    started = time.monotonic()
    await runner.run(executor)
    standings = rank_pool(runner.names, runner.pool_played())
    summary = write_exports(
        out,
        resolved,
        standings,
        runner.bracket,
        tstore.finished(),
        runner.pool_played(),
        time.monotonic() - started,
    )
    store.set("finals", "complete")
    site.finals = {"status": "complete", "summary": summary}
    site.ladder.touch()


def load_finished(site: Any, data_dir: Path) -> None:
    """The finals' results after a restart, from their results.json."""
    import json

    results = finals_dir(data_dir) / "results.json"
    if results.is_file():
        site.finals = {"status": "complete", "summary": json.loads(results.read_text())}
