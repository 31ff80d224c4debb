"""The ladder: plays matches without end, validates new versions, keeps ratings.

Matches run on the tournament's executors (``tournament/executor.py`` worker
processes, or ``tournament/cluster.py`` on Dask), with the sandbox and limits of
``referee match``. Every match is a database row before it is handed to a worker
and its result is committed before anything counts it (see db.py).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import msgspec
import trio

from .. import faults as fault_kinds
from ..errors import UsageError
from ..outcome import MatchOutcome
from ..replay import replay_suffix
from ..tournament.config import match_settings
from ..tournament.executor import Executor, MatchFailed
from ..tournament.worker import Job
from . import metrics, moderation
from .config import CompetitionConfig
from .db import Store, Version
from .matchmaking import Rated, choose_pair, leaderboard_order, rate

STDERR_TAIL = 2000  # characters of a refused bot's stderr shown in the refusal


class ServerStopping(Exception):
    """The server stopped before a version's validation match was over."""

    def __init__(self, number: int) -> None:
        super().__init__(
            f"the server is stopping: version {number} is stored and is validated "
            "when the server starts again"
        )


class Entry(msgspec.Struct):
    """One row of the leaderboard."""

    rank: int
    rank_low: int  # the 95% range of the rank (1 = best), from the ratings' posterior
    rank_high: int
    order_prob: float | None  # share of the same draws with this row above the next
    bot: str
    owner: str | None
    version: int  # the version's number for its bot
    version_id: int
    created: str
    rating: float
    low: float
    high: float
    games: int
    wins: int
    draws: int
    losses: int
    faults: int
    # Taken off the ladder by the organiser (``referee admin disable``): it plays no
    # match; its rating stands on the matches it played.
    disabled: bool = False


def version_dir(data_dir: Path, sha256: str) -> Path:
    return data_dir / "versions" / sha256


def runnable_argv(data_dir: Path, version: Version) -> list[str]:
    """A version's command with its own files made absolute (stored relative, so the
    data directory can move), through the same resolution as ``referee match``."""
    from ..bot_command import resolve_command

    if version.sha256.startswith("sample:"):
        return list(version.command)
    root = version_dir(data_dir, version.sha256)
    argv = []
    for part in version.command:
        candidate = root / part
        if not os.path.isabs(part) and ".." not in Path(part).parts and candidate.is_file():
            argv.append(str(candidate))
        else:
            argv.append(part)
    return resolve_command(argv)


class Ladder:
    def __init__(
        self,
        store: Store,
        cfg: CompetitionConfig,
        data_dir: Path,
        executor: Executor,
        validator: Executor,
        seed: int,
    ) -> None:
        self.store = store
        self.cfg = cfg
        self.dir = data_dir
        self.executor = executor
        self.validator = validator
        self.seed = seed
        self.rng = random.Random(seed ^ int(time.time()))
        self.session = f"{os.getpid()}-{os.urandom(3).hex()}"
        self.leaderboard: list[Entry] = []
        self.rated: list[Rated] = []
        self.busy: set[int] = set()  # versions in a ladder match right now
        self.last_pair: frozenset[int] | None = None
        self.frozen = False  # finals: the ladder stops starting matches
        self.ladder_done = 0  # ladder matches finished in this session
        self.changed = trio.Event()  # set when a match finishes (for waiters)
        self.generation = 0  # counts changes of what the pages show
        # Every finished ladder match as (version0, version1, winner seat, faults0,
        # faults1): read from the database once, then kept up to date as matches end.
        self.results: list[tuple[int, int, int | None, int, int]] | None = None
        self._refresh_lock = trio.Lock()
        self._counts: tuple[int, dict[str, int]] | None = None
        self._base = self._match_config_base()
        self._nursery: trio.Nursery | None = None  # the ladder's tasks, once it runs
        # Validation matches waiting for a worker wait here, so the wait is measured.
        self._validation_slots = trio.Semaphore(max(1, getattr(validator, "size", 1)))

    # -- jobs ------------------------------------------------------------------

    def _match_config_base(self) -> dict[str, Any]:
        return match_settings(
            self.cfg.game, self.cfg.tokens, self.cfg.params, self.cfg.limits, idle_poll=False
        )

    def job(self, mid: int, v0: Version, v1: Version, seed: int, rounds: int) -> Job:
        cfg = dict(self._base)
        cfg["seed"] = seed
        cfg["rounds"] = rounds
        suffix = replay_suffix(self.cfg.replay_format)
        cfg["replay"] = str(self.dir / "replays" / f"m{mid}.{self.session}.part{suffix}")
        cfg["log_dir"] = str(self.dir / "logs" / f"m{mid}")
        bots = [
            {"command": runnable_argv(self.dir, v), "label": f"{v.bot_name} v{v.number}"}
            for v in (v0, v1)
        ]
        return Job(id=f"m{mid}", bots=bots, cfg=cfg)

    async def play(self, mid: int, executor: Executor | None = None) -> MatchOutcome:
        """Play match ``mid`` (a row already in the database) and record its result."""
        from ..match import derive_seed

        row = self.store.match(mid)
        assert row is not None
        v0, v1 = self.store.version(row.version0), self.store.version(row.version1)
        assert v0 is not None and v1 is not None
        seed = row.seed or derive_seed(self.seed, "match", mid)
        try:
            job = self.job(mid, v0, v1, seed, row.rounds)
        except UsageError as exc:
            self.store.set_match_status(mid, "failed")
            raise MatchFailed(str(exc)) from None
        self.store.set_match_status(mid, "running")
        self.generation += 1
        labels = [b["label"] for b in job.bots]
        try:
            outcome = await (executor or self.executor).submit(job)
        except MatchFailed as exc:
            self.store.set_match_status(mid, "failed")
            metrics.match_finished(mid, row.kind, "failed", labels, None, reason=str(exc))
            raise
        if outcome.replay:
            final = self.dir / "replays" / f"m{mid}{replay_suffix(self.cfg.replay_format)}"
            os.replace(outcome.replay, final)
            # Relative to the data directory, which may be moved or restored elsewhere.
            outcome.replay = os.path.relpath(final, self.dir)
        self.store.record_match(mid, outcome)
        metrics.match_finished(mid, row.kind, "done", labels, outcome.wall_s, outcome.winner)
        if row.kind == "ladder" and self.results is not None:
            s0, s1 = outcome.seats
            self.results.append(
                (
                    row.version0,
                    row.version1,
                    outcome.winner,
                    len(s0.verdict.faults),
                    len(s1.verdict.faults),
                )
            )
        return outcome

    # -- ratings ---------------------------------------------------------------

    async def refresh(self) -> None:
        """Recompute the ratings of the current versions and the leaderboard."""
        async with self._refresh_lock:
            # By bot name, so that rate()'s tie-break (the order given) is the name.
            current = sorted(self.store.current_versions(), key=lambda v: (v.bot_name, v.id))
            ids = [v.id for v in current]
            if self.results is None:
                self.results = self.store.ladder_results(None)
            # rate() keeps the results between current versions only.
            rated = await trio.to_thread.run_sync(rate, ids, list(self.results))
            by_id = {v.id: v for v in current}
            disabled = moderation.disabled_versions(self.store.conn)
            order = [rated[i] for i in leaderboard_order(rated)]
            board = []
            for rank, r in enumerate(order, start=1):
                v = by_id[r.version]
                board.append(
                    Entry(
                        rank=rank,
                        rank_low=r.rank_low,
                        rank_high=r.rank_high,
                        order_prob=r.order_prob,
                        bot=v.bot_name,
                        owner=v.owner,
                        version=v.number,
                        version_id=v.id,
                        created=v.created,
                        rating=r.rating,
                        low=r.low,
                        high=r.high,
                        games=r.games,
                        wins=r.wins,
                        draws=r.draws,
                        losses=r.losses,
                        faults=r.faults,
                        disabled=v.id in disabled,
                    )
                )
            self.rated, self.leaderboard = rated, board
            self.generation += 1

    def note_ratings(self, after_match: int) -> None:
        self.store.add_ratings(
            after_match,
            [(r.version, r.games, r.rating, r.low, r.high) for r in self.rated if r.games],
        )

    # -- the loop --------------------------------------------------------------

    def parallel(self) -> int:
        return self.executor.size

    async def run(self) -> None:
        (self.dir / "replays").mkdir(parents=True, exist_ok=True)
        (self.dir / "logs").mkdir(parents=True, exist_ok=True)
        for stale in (self.dir / "replays").glob("*.part.jsonl*"):
            stale.unlink(missing_ok=True)
        # A public copy is written to a part file and renamed (replay_public); a server
        # killed in between leaves the part file, which nothing else would remove.
        for public in (self.dir / "public", self.dir / "finals" / "public"):
            for stale in public.glob("*.part"):
                stale.unlink(missing_ok=True)
        self.store.requeue_interrupted()
        await self.refresh()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._revalidate)
            for _ in range(self.parallel()):
                nursery.start_soon(self._feed)

    async def _revalidate(self) -> None:
        """Versions whose validation the server did not finish (it was stopped)."""
        for version in self.store.versions_with_status("validating"):
            await self.validate(version)

    def _next_ladder_match(self) -> int | None:
        """A queued (interrupted) ladder or challenge match, else a new pairing.
        Versions the organiser disabled are never picked (read afresh each time:
        ``referee admin`` changes them from another process)."""
        unavailable = self.busy | moderation.disabled_versions(self.store.conn)
        for row in self.store.matches(status="queued", limit=50, ascending=True):
            if (
                row.kind in ("ladder", "challenge")
                and not {row.version0, row.version1} & unavailable
            ):
                self.store.set_match_status(row.id, "running")
                return row.id
        if self.frozen:
            return None
        pair = choose_pair(
            self.rated,
            self.rng,
            self.cfg.ladder.random_share,
            self.cfg.ladder.settled_width,
            self.last_pair,
            frozenset(unavailable),
        )
        if pair is None:
            return None
        from ..match import derive_seed

        mid = self.store.add_match("ladder", pair[0], pair[1], 0, self.cfg.ladder.rounds)
        # The seed follows from the competition seed and the match's number, so a
        # replayed match plays the very same game.
        seed = derive_seed(self.seed, "match", mid)
        self.store.conn.execute("UPDATE matches SET seed = ? WHERE id = ?", (seed, mid))
        self.last_pair = frozenset(pair)
        return mid

    async def _feed(self) -> None:
        while True:
            mid = self._next_ladder_match()
            if mid is None:
                # Nothing to pair (too few versions free, or frozen): wait for a change.
                with trio.move_on_after(1.0):
                    await self.changed.wait()
                continue
            row = self.store.match(mid)
            assert row is not None
            versions = {row.version0, row.version1}
            self.busy |= versions
            try:
                await self.play(mid)
            except MatchFailed as exc:
                print(f"referee serve: match {mid} could not be played: {exc}", flush=True)
            finally:
                self.busy -= versions
            if row.kind == "ladder":
                self.ladder_done += 1
                await self.refresh()
                self.note_ratings(mid)
            self._wake()

    def counts(self) -> dict[str, int]:
        """Matches by kind and status, counted once per change of the ladder."""
        if self._counts is None or self._counts[0] != self.generation:
            self._counts = (self.generation, self.store.counts())
        return self._counts[1]

    def touch(self) -> None:
        """Something the pages show changed (a version, the finals): pages made
        before are stale."""
        self.generation += 1

    def _wake(self) -> None:
        self.generation += 1
        self.changed.set()
        self.changed = trio.Event()

    # -- validation ------------------------------------------------------------

    def validation_opponent(self) -> Version | None:
        wanted = self.cfg.ladder.validation_opponent or self.cfg.bot[0].name
        for v in self.store.current_versions():
            if v.bot_name == wanted and v.owner_id is None:
                return v
        return None

    async def validate_detached(self, version: Version) -> dict[str, Any]:
        """``validate`` run among the ladder's own tasks, for a request to wait on:
        the client hanging up does not cut the validation short, and the server
        stopping does (the version stays "validating" and is validated when the
        server starts again: ``_revalidate``). ServerStopping if it stopped first."""
        nursery = self._nursery
        if nursery is None:  # the ladder is not running (yet)
            result: dict[str, Any] = {}
            with trio.CancelScope(shield=True):
                result = await self.validate(version)
            return result
        done = trio.Event()
        box: dict[str, Any] = {}

        async def job() -> None:
            try:
                box["result"] = await self.validate(version)
            except Exception as exc:  # handed to the request, not the ladder's nursery
                box["error"] = exc
            finally:
                done.set()

        nursery.start_soon(job)
        await done.wait()
        if "error" in box:
            raise box["error"]
        if "result" not in box:
            raise ServerStopping(version.number)
        return dict(box["result"])

    async def validate(self, version: Version) -> dict[str, Any]:
        """Play the validation match of a new version against a sample bot (short,
        the real limits) and activate or refuse the version. Returns the verdict."""
        from ..match import derive_seed

        opponent = self.validation_opponent()
        if opponent is None:
            reason = {"verdict": "refused", "message": "no validation opponent is configured"}
            self.store.set_version_status(
                version.id, "refused", msgspec.json.encode(reason).decode()
            )
            return reason
        mid = self.store.add_match(
            "validation", version.id, opponent.id, 0, self.cfg.ladder.validation_rounds
        )
        seed = derive_seed(self.seed, "match", mid)
        self.store.conn.execute("UPDATE matches SET seed = ? WHERE id = ?", (seed, mid))
        try:
            waiting_since = time.monotonic()
            async with self._validation_slots:  # the validator's workers, all busy?
                metrics.observe_validation_wait(time.monotonic() - waiting_since)
                outcome = await self.play(mid, self.validator)
        except MatchFailed as exc:
            result: dict[str, Any] = {
                "ok": False,
                "match": mid,
                "status": "not_started",
                "message": f"the validation match could not be played: {exc}",
            }
        else:
            result = judge_validation(outcome, mid)
        self.store.set_version_status(
            version.id,
            "active" if result["ok"] else "refused",
            None if result["ok"] else msgspec.json.encode(result).decode(),
        )
        if result["ok"]:
            await self.refresh()
            self._wake()
        else:
            self.touch()  # the bot's page lists the refused version
        return result


def judge_validation(outcome: MatchOutcome, mid: int) -> dict[str, Any]:
    """Whether seat 0 (the new version) passed its validation match: it must finish
    without being disqualified and without a fatal fault. Otherwise the refusal
    names the verdict, the first fault, its round and the bot's stderr tail."""
    verdict = outcome.seats[0].verdict
    found = verdict.faults
    fatal = [f for f in found if f.kind in fault_kinds.FATAL_FAULTS]
    ok = not verdict.disqualified and not fatal
    result: dict[str, Any] = {
        "ok": ok,
        "match": mid,
        "status": verdict.status,
        "rounds_played": outcome.steps,
        "faults": len(found),
    }
    if not ok:
        first = (fatal or found)[0] if (fatal or found) else None
        kind = first.kind if first is not None else verdict.status
        where = first.round if first is not None else verdict.round
        detail = first.detail if first is not None else ""
        result.update(
            fault=kind,
            round=where,
            detail=detail,
            stderr_tail=(verdict.stderr_head + verdict.stderr_tail)[-STDERR_TAIL:],
            message=f"validation match {mid}: {verdict.status} in round {where} ({kind}: {detail})",
        )
    return result
