"""The coordinator: schedules matches, hands them to the executor, records results.

Planning is a pure function of the finished results (``schedule.py``): the
whole pool is scheduled at the start, the bracket's first round once the pool
is complete, each later round once the previous one is decided, and within a
tie only the games that are certain to be needed. So whatever order matches
finish in, and however often the run is interrupted, the same matches are
played with the same seeds.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from ..games import GAMES
from ..outcome import MatchOutcome
from ..replay import DEFAULT_LEAGUE_FORMAT, replay_suffix
from .config import Resolved, match_settings
from .executor import Executor
from .schedule import Bracket, MatchPlan, Played, TablePlayed, build_bracket, pool_plan, table_plan
from .standings import (
    Standing,
    TableStanding,
    rank_pool,
    rank_tables,
    rank_uncertainty,
    settle_batch,
)
from .state import Store, played_of, table_played_of, tiebreak_of
from .worker import Job

LIVE_RANK_SAMPLES = 1000  # model draws of the dashboard's rank ranges


class Runner:
    def __init__(
        self,
        store: Store,
        resolved: Resolved,
        out_dir: Path,
        idle_poll: bool = False,
        replay_format: str = DEFAULT_LEAGUE_FORMAT,
    ) -> None:
        from ..match import derive_seed

        # .jsonl.gz or .jsonl: how this run stores the replays it writes.
        self.replay_suffix = replay_suffix(replay_format)
        self.store = store
        # The matches this run played (not those a resumed league loaded): their
        # CPU is what this run's processes spent.
        self.outcomes_here: list[MatchOutcome] = []
        # Whether matches keep idle CPUs polling (referee/wakeup.py): speed only.
        self.idle_poll = idle_poll
        self.cfg = resolved
        self.out_dir = out_dir
        self.names = [b.name for b in resolved.bots]
        self.seed_fn = derive_seed
        # Games of more than two players are played at tables (stage "table").
        self.table_size = resolved.pool.table_size
        if self.table_size is not None:
            self.pool = table_plan(
                len(self.names),
                self.table_size,
                resolved.pool.legs,
                resolved.pool.rounds or 0,
                resolved.seed,
                derive_seed,
            )
        else:
            self.pool = pool_plan(
                len(self.names),
                resolved.pool.legs,
                resolved.pool.rounds or 0,
                resolved.seed,
                derive_seed,
            )
        self.tiebreak = tiebreak_of(resolved.game)
        game_cls = GAMES[resolved.game]  # checked when the tournament was configured
        # Rounds a match of the game's own length counts for progress and ETA (a
        # game of unknown length, like Liar's Dice, counts 1).
        self._default_steps = game_cls.default_steps or 1
        self._final_rounds = resolved.finals.rounds or game_cls.default_final_steps
        self.table_played: dict[str, TablePlayed] = {}
        self.pool_ids = {p.id for p in self.pool}
        self.finished: dict[str, tuple[MatchPlan, MatchOutcome]] = {}
        self.played: dict[str, Played] = {}
        self.in_flight: dict[str, tuple[MatchPlan, float]] = {}
        self.bracket: Bracket | None = None
        self.ranking: list[int] | None = None  # pool order once the pool is complete
        # Extra paired matches between adjacent bots of uncertain order (stage
        # "settle"), played in batches after the pool; settled: no more will come.
        self.settle_plans: list[MatchPlan] = []
        self.settled = self.table_size is not None or resolved.pool.settle_budget <= 0
        self.live_standings: list[Standing] = rank_pool(self.names, [], samples=0)
        self.live_tables: list[TableStanding] = self.table_standings()
        self._next_rank = 0.0
        self.started = time.monotonic()
        # Replays are written under a name unique to this session and renamed when
        # the match is recorded: a worker of a killed run that is still winding
        # down can never write into the file a resumed run is writing.
        self.session = f"{os.getpid()}-{os.urandom(3).hex()}"
        self.work_done_here = 0  # rounds finished in this session (for the ETA)
        self._base_job = self._match_config_base()
        # Called after each match is recorded (plain progress lines when no dashboard).
        self.on_finish: Callable[[MatchPlan, Any], None] | None = None

    # -- planning --------------------------------------------------------------

    def load(self) -> None:
        """Read what a previous session finished, and schedule the pool."""
        self.store.schedule(self.pool)
        finished = self.store.finished()
        for plan, outcome in finished:
            self._note(plan, outcome)
        scheduled = self.store.pending() + [plan for plan, _ in finished]
        self.settle_plans = sorted(
            (p for p in scheduled if p.stage == "settle"), key=lambda p: p.id
        )
        self._refresh_standings()

    def _note(self, plan: MatchPlan, outcome: MatchOutcome) -> None:
        self.finished[plan.id] = (plan, outcome)
        if plan.stage == "table":
            if not self.tiebreak[0]:
                self.tiebreak = tiebreak_of(self.cfg.game, outcome)
            self.table_played[plan.id] = table_played_of(plan, outcome, self.cfg.game)
        else:
            self.played[plan.id] = played_of(plan, outcome)

    def tables_played(self) -> list[TablePlayed]:
        return [self.table_played[p.id] for p in self.pool if p.id in self.table_played]

    def table_standings(self) -> list[TableStanding]:
        key, lower = self.tiebreak
        return rank_tables(self.names, self.tables_played(), self.table_size or 0, key, lower)

    def pool_played(self) -> list[Played]:
        """The pool's matches and the extra ones that settle adjacent orders."""
        plans = [*self.pool, *self.settle_plans]
        return [self.played[p.id] for p in plans if p.id in self.played]

    def pool_complete(self) -> bool:
        return all(p.id in self.finished for p in self.pool)

    def _refresh_standings(self) -> None:
        if self.table_size is not None:
            self.live_tables = self.table_standings()
        else:
            played = self.pool_played()
            self.live_standings = rank_pool(self.names, played, samples=0)
            if played:  # rank ranges only: the live view has no rating intervals
                rank_uncertainty(self.live_standings, played, LIVE_RANK_SAMPLES)

    def replan(self) -> list[MatchPlan]:
        """Schedule what the results so far make certain; return the pending matches."""
        if self.pool_complete() and not self.settled:
            self._settle()
            if not self.settled:
                return self.store.pending()
        if self.pool_complete() and self.cfg.finals.finalists >= 2:
            if self.ranking is None:
                self.ranking = [r.bot for r in rank_pool(self.names, self.pool_played(), 0)]
            extra = {p.id for p in self.settle_plans}
            finals = {
                k: v for k, v in self.played.items() if k not in self.pool_ids and k not in extra
            }
            f = self.cfg.finals
            self.bracket = build_bracket(
                self.ranking,
                f.finalists,
                f.best_of,
                self._final_rounds or 0,
                self.cfg.seed,
                self.seed_fn,
                finals,
            )
            self.store.schedule(self.bracket.needed)
        return self.store.pending()

    def _settle(self) -> None:
        """Once the last batch of extra matches is complete, schedule the next one:
        up to one round's worth of meetings (a pair of matches, seats swapped) that
        most sharpen the adjacent orders less certain than the configured
        confidence (``settle_pairs``; within the budget), or find that every order
        is settled (or the budget spent). The ranking weights every
        opponent equally however often they met, so the extra matches sharpen it
        without changing what it measures. A pure function of the results, so a
        resumed run schedules exactly the same matches."""
        batch = max((p.round for p in self.settle_plans), default=0)
        if any(p.id not in self.finished for p in self.settle_plans if p.round == batch):
            return
        pool = self.cfg.pool
        left = pool.settle_budget - len(self.settle_plans)
        pairs = settle_batch(self.names, self.pool_played(), pool.settle_confidence, left // 2)
        new: list[MatchPlan] = []
        for i, j in pairs:
            for leg in (1, 2):
                new.append(
                    MatchPlan(
                        id=f"settle-{batch + 1:02d}-{i + 1:02d}-{j + 1:02d}-{leg}",
                        stage="settle",
                        round=batch + 1,
                        tie=0,
                        game=leg,
                        seats=(i, j) if leg == 1 else (j, i),
                        seed=self.seed_fn(self.cfg.seed, "settle", batch + 1, i, j, leg),
                        rounds=pool.rounds or 0,
                    )
                )
        if not new:
            self.settled = True
            return
        self.store.schedule(new)
        self.settle_plans.extend(new)

    def complete(self) -> bool:
        if not self.pool_complete() or not self.settled:
            return False
        if self.cfg.finals.finalists < 2:
            return True
        return self.bracket is not None and self.bracket.complete

    # -- progress estimate -----------------------------------------------------

    def qualifiers(self) -> int:
        return min(self.cfg.finals.finalists, len(self.names))

    def work(self) -> tuple[int, int, int, int]:
        """(matches done, matches expected, rounds done, rounds expected). Finals
        are counted at their longest until decided ties say otherwise."""
        f = self.cfg.finals
        pool_n = len(self.pool) + len(self.settle_plans)
        q = self.qualifiers()
        max_games = (q - 1) * f.best_of if q >= 2 else 0
        if self.bracket is not None:
            saved = sum(
                f.best_of - len(t.games)
                for rnd in self.bracket.rounds
                for t in rnd
                if t.winner is not None and t.b is not None
            )
            max_games -= saved
        done_pool = sum(1 for p in [*self.pool, *self.settle_plans] if p.id in self.finished)
        done_finals = len(self.finished) - done_pool
        matches_total = pool_n + max_games
        pool_steps = self.cfg.pool.rounds or self._default_steps
        final_steps = self._final_rounds or self._default_steps
        rounds_done = done_pool * pool_steps + done_finals * final_steps
        rounds_total = pool_n * pool_steps + max_games * final_steps
        return len(self.finished), matches_total, rounds_done, rounds_total

    # -- running ---------------------------------------------------------------

    def _match_config_base(self) -> dict[str, Any]:
        return match_settings(
            self.cfg.game,
            self.cfg.tokens,
            self.cfg.params,
            self.cfg.limits,
            log_dir=str(self.out_dir / "logs"),
            idle_poll=self.idle_poll,
        )

    def job(self, plan: MatchPlan, confine: bool = False) -> Job:
        cfg = dict(self._base_job)
        cfg["seed"] = plan.seed
        cfg["rounds"] = plan.rounds or None  # None: the game's default
        part = f"{plan.id}.{self.session}.part{self.replay_suffix}"
        cfg["replay"] = str(self.out_dir / "replays" / part)
        bots = [
            {"command": self.cfg.bots[b].argv, "label": self.cfg.bots[b].name} for b in plan.seats
        ]
        return Job(id=plan.id, bots=bots, cfg=cfg, confine=confine)

    async def run(self, executor: Executor) -> None:
        """Play until the tournament is complete. Raises MatchFailed if a match
        cannot be played at all (the state stays resumable)."""
        (self.out_dir / "replays").mkdir(parents=True, exist_ok=True)
        # Partial replays of matches a previous session did not finish.
        for stale in (self.out_dir / "replays").glob("*.part.jsonl*"):
            stale.unlink(missing_ok=True)
        (self.out_dir / "logs").mkdir(parents=True, exist_ok=True)
        # A FIFO queue and one feeder per worker: matches start in schedule order
        # (trio would otherwise wake waiting tasks in no particular order).
        send, receive = trio.open_memory_channel[MatchPlan](math.inf)

        def launch() -> None:
            for plan in self.replan():
                if plan.id not in self.in_flight:
                    self.in_flight[plan.id] = (plan, time.monotonic())
                    send.send_nowait(plan)
            if not self.in_flight:
                if not self.complete():
                    raise RuntimeError("nothing left to play but the tournament is not complete")
                send.close()

        async def play(plan: MatchPlan) -> None:
            # While every worker has a match (in_flight counts this one and those
            # queued), each match keeps to its worker's share of the CPUs; the last
            # matches of a stage, and a final played alone, get the whole machine.
            confine = len(self.in_flight) >= executor.size
            outcome = await executor.submit(self.job(plan, confine))
            if outcome.replay:
                final = self.out_dir / "replays" / f"{plan.id}{self.replay_suffix}"
                os.replace(outcome.replay, final)
                # Relative to the output directory, so two runs of one
                # tournament in different places compare equal.
                outcome.replay = os.path.relpath(final, self.out_dir)
            self.store.record(plan, outcome)
            self.outcomes_here.append(outcome)
            del self.in_flight[plan.id]
            self._note(plan, outcome)
            self.work_done_here += plan.rounds or self._default_steps
            if self.on_finish is not None:
                self.on_finish(plan, self.played.get(plan.id) or self.table_played[plan.id])
            if plan.stage in ("pool", "table", "settle"):
                # The live table is for people: a few refreshes a second are
                # plenty, and a big pool would spend its time re-ranking.
                if self.pool_complete() or time.monotonic() >= self._next_rank:
                    self._refresh_standings()
                    self._next_rank = time.monotonic() + 0.5
                if self.pool_complete():
                    launch()
            else:
                launch()
            if len(self.in_flight) < executor.size:
                # A worker has nothing left to play: the matches still going that
                # keep to their worker's share of the CPUs may use them all now.
                await executor.spread()

        async def feed() -> None:
            async for plan in receive:
                await play(plan)

        launch()
        async with trio.open_nursery() as nursery:
            for _ in range(executor.size):
                nursery.start_soon(feed)
        self.replan()
        if self.complete():
            self.store.set("status", "complete")
